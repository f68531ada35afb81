//! Streaming modes, their names (the one parser every front end uses), and where upstream's processor
//! (`Nemotron3DiarizationProcessor`) cuts a stream into chunks for each of them.

use std::fmt;
use std::str::FromStr;

use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};

use crate::config::SpeakerCacheConfig;
use crate::frontend::{HOP_LENGTH, WIN_LENGTH};
use crate::mel::N_FFT;

/// Chunk and look-ahead of a streaming session, in encoder frames of 80 ms: each forward emits the chunk's
/// frames and attends to the look-ahead frames after them, which the next forward computes again.
///
/// The named modes parse ([`FromStr`], serde) from the latency names the front ends take — `low`, `very-low`,
/// `ultra-low` (the CLI's `--latency`, the server's `latency`, Python's `latency`), with `_` for `-` and upstream's
/// names (`low_latency`, …) as aliases — and are written ([`fmt::Display`], serde) by the first of them. A custom mode
/// is written `custom_<chunk>_<look-ahead>`, which no front end takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StreamingMode {
    /// `low_latency`: 9 frames of chunk, 4 of look-ahead (1.04 s of input latency).
    LowLatency,
    /// `very_low_latency`: (6, 2), 0.64 s.
    VeryLowLatency,
    /// `ultra_low_latency`: (3, 1), 0.32 s.
    UltraLowLatency,
    /// Any other chunk (at least 1 frame) and look-ahead.
    Custom {
        /// Encoder frames each forward makes final.
        chunk: usize,
        /// Encoder frames after the chunk that each forward attends to.
        lookahead: usize,
    },
}

impl StreamingMode {
    /// The modes upstream names (`DEFAULT_STREAMING_MODES`).
    pub const NAMED: [StreamingMode; 3] =
        [StreamingMode::LowLatency, StreamingMode::VeryLowLatency, StreamingMode::UltraLowLatency];

    /// `(chunk, look-ahead)` in encoder frames.
    pub fn frames(self) -> (usize, usize) {
        match self {
            StreamingMode::LowLatency => (9, 4),
            StreamingMode::VeryLowLatency => (6, 2),
            StreamingMode::UltraLowLatency => (3, 1),
            StreamingMode::Custom { chunk, lookahead } => (chunk, lookahead),
        }
    }

    /// Encoder rows of the mode's largest step with `cache`'s sizes: speaker cache, FIFO, chunk and look-ahead.
    pub(crate) fn step_rows(self, cache: &SpeakerCacheConfig) -> usize {
        let (chunk, lookahead) = self.frames();
        cache.cache_length + cache.fifo_length + chunk + lookahead
    }

    /// Upstream's name of the mode (`low_latency`, …); `custom_<chunk>_<look-ahead>` for the others.
    pub fn name(self) -> String {
        match self {
            StreamingMode::LowLatency => "low_latency".into(),
            StreamingMode::VeryLowLatency => "very_low_latency".into(),
            StreamingMode::UltraLowLatency => "ultra_low_latency".into(),
            StreamingMode::Custom { chunk, lookahead } => format!("custom_{chunk}_{lookahead}"),
        }
    }

    /// The latency name front ends take for a named mode (`low`, `very-low`, `ultra-low`); `None` for a custom one.
    pub fn latency_name(self) -> Option<&'static str> {
        LATENCY_NAMES.iter().find(|(mode, _)| *mode == self).map(|(_, names)| names[0])
    }

    /// Audio a frame waits for, at most, before it is final: chunk and look-ahead (`streaming_latency_ms`).
    pub fn latency_seconds(self) -> f64 {
        let (chunk, lookahead) = self.frames();
        ((chunk + lookahead) * ENCODER_FRAME_SAMPLES) as f64 / 16_000.0
    }

    /// Samples at 16 kHz of one chunk: the audio each forward makes final.
    pub fn chunk_samples(self) -> usize {
        self.frames().0 * ENCODER_FRAME_SAMPLES
    }
}

/// Samples of one 80 ms encoder frame (8 mel hops of 160 samples: the subsampling of the released models, which the
/// modes' latencies are stated in).
const ENCODER_FRAME_SAMPLES: usize = 8 * HOP_LENGTH;

/// The latency names of the named modes, the one written first (the order of [`StreamingMode::NAMED`]).
const LATENCY_NAMES: [(StreamingMode, &[&str]); 3] = [
    (StreamingMode::LowLatency, &["low", "low_latency"]),
    (StreamingMode::VeryLowLatency, &["very-low", "very_low", "very_low_latency"]),
    (StreamingMode::UltraLowLatency, &["ultra-low", "ultra_low", "ultra_low_latency"]),
];

/// A latency name that is no named streaming mode's.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("latency `{name}`: one of low, very-low, ultra-low")]
pub struct UnknownStreamingMode {
    /// The name given.
    pub name: String,
}

impl fmt::Display for StreamingMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.latency_name() {
            Some(name) => f.write_str(name),
            None => f.write_str(&self.name()),
        }
    }
}

impl FromStr for StreamingMode {
    type Err = UnknownStreamingMode;

    fn from_str(name: &str) -> Result<Self, Self::Err> {
        LATENCY_NAMES
            .iter()
            .find(|(_, names)| names.contains(&name))
            .map(|(mode, _)| *mode)
            .ok_or_else(|| UnknownStreamingMode { name: name.to_string() })
    }
}

impl Serialize for StreamingMode {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for StreamingMode {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct LatencyName;
        impl Visitor<'_> for LatencyName {
            type Value = StreamingMode;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a latency name: low, very-low or ultra-low")
            }
            fn visit_str<E: de::Error>(self, name: &str) -> Result<StreamingMode, E> {
                name.parse().map_err(E::custom)
            }
        }
        deserializer.deserialize_str(LatencyName)
    }
}

/// Where a mode's chunks fall in a stream, in 10 ms frames and samples at 16 kHz.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ChunkPlan {
    /// Mel frames of every chunk but the last, look-ahead included: `M = sub·(chunk + look-ahead)`.
    pub chunk_frames: usize,
    /// Mel frames between chunk starts, the frames each chunk but the last emits: `S = sub·chunk`.
    pub step_frames: usize,
    /// Look-ahead of every chunk but the last, in encoder frames.
    pub lookahead: usize,
}

impl ChunkPlan {
    pub fn new(mode: StreamingMode, subsampling: usize) -> Self {
        let (chunk, lookahead) = mode.frames();
        Self { chunk_frames: subsampling * (chunk + lookahead), step_frames: subsampling * chunk, lookahead }
    }

    /// First mel frame of chunk `index`.
    pub fn first_frame(&self, index: usize) -> usize {
        index * self.step_frames
    }

    /// The processor's cut of chunk `index` from a stream of `total` samples, when that is its last chunk
    /// (`None`: the chunk is a full one): the first chunk is centred, `[0, (M − 1)·160 + 200)`, later ones
    /// uncentred, `M·160 + 400` samples from `160·k·S − 256`, and the last one runs to the end.
    pub fn samples(&self, index: usize, total: Option<usize>) -> std::ops::Range<usize> {
        let (start, full_end) = match index {
            0 => (0, (self.chunk_frames - 1) * HOP_LENGTH + WIN_LENGTH / 2),
            _ => {
                let start = self.first_frame(index) * HOP_LENGTH - N_FFT / 2;
                (start, start + self.chunk_frames * HOP_LENGTH + WIN_LENGTH)
            }
        };
        start..total.unwrap_or(full_end)
    }

    /// Samples a stream must hold before chunk `index` runs as a full chunk (the processor's rule; the
    /// frames need 104 samples fewer for chunks after the first, but a stream that ends in between makes
    /// that chunk its last one, without look-ahead).
    pub fn trigger(&self, index: usize) -> usize {
        self.samples(index, None).end
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cuts_follow_the_processor() {
        // (mode, first chunk samples, later chunk samples, step samples): upstream's processor properties.
        for (mode, first, later, step) in [
            (StreamingMode::LowLatency, 16680, 17040, 11520),
            (StreamingMode::VeryLowLatency, 10280, 10640, 7680),
            (StreamingMode::UltraLowLatency, 5160, 5520, 3840),
        ] {
            let plan = ChunkPlan::new(mode, 8);
            assert_eq!(plan.samples(0, None), 0..first, "{mode:?}");
            for k in 1..4 {
                let cut = plan.samples(k, None);
                assert_eq!((cut.start, cut.len()), (k * step - 256, later), "{mode:?} chunk {k}");
                assert_eq!(plan.trigger(k), cut.end);
            }
            assert_eq!(plan.samples(2, Some(99_999)), 2 * step - 256..99_999);
        }
        assert_eq!(StreamingMode::Custom { chunk: 5, lookahead: 0 }.name(), "custom_5_0");
        assert!((StreamingMode::UltraLowLatency.latency_seconds() - 0.32).abs() < 1e-12);
    }

    #[test]
    fn every_named_mode_round_trips_through_its_names() {
        let written: Vec<String> = StreamingMode::NAMED.iter().map(StreamingMode::to_string).collect();
        assert_eq!(written, ["low", "very-low", "ultra-low"]);
        for (mode, names) in LATENCY_NAMES {
            assert_eq!(mode.to_string().parse::<StreamingMode>(), Ok(mode));
            let json = serde_json::to_string(&mode).unwrap();
            assert_eq!(json, format!("\"{mode}\""));
            assert_eq!(serde_json::from_str::<StreamingMode>(&json).unwrap(), mode);
            for name in names {
                assert_eq!(name.parse::<StreamingMode>(), Ok(mode), "{name}");
            }
        }
        // Today's aliases: Python's underscores, upstream's names.
        assert_eq!("very_low_latency".parse(), Ok(StreamingMode::VeryLowLatency));
        assert_eq!("ultra_low".parse(), Ok(StreamingMode::UltraLowLatency));
    }

    #[test]
    fn unknown_names_are_refused_with_the_accepted_ones() {
        for bad in ["", "medium", "Low", "very low", "custom_5_0"] {
            let error = bad.parse::<StreamingMode>().unwrap_err();
            assert_eq!(error.to_string(), format!("latency `{bad}`: one of low, very-low, ultra-low"));
            let json = serde_json::to_string(bad).unwrap();
            let message = serde_json::from_str::<StreamingMode>(&json).unwrap_err().to_string();
            assert!(message.starts_with(&error.to_string()), "{message}");
        }
        assert!(serde_json::from_str::<StreamingMode>("3").is_err());
        let custom = StreamingMode::Custom { chunk: 5, lookahead: 0 };
        assert_eq!(custom.to_string(), "custom_5_0");
        assert_eq!(serde_json::to_string(&custom).unwrap(), "\"custom_5_0\"");
    }
}
