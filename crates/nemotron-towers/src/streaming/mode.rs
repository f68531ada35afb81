//! Streaming modes, and where upstream's processor (`Nemotron3DiarizationProcessor`) cuts a stream into
//! chunks for each of them.

use crate::frontend::{HOP_LENGTH, WIN_LENGTH};
use crate::mel::N_FFT;

/// Chunk and look-ahead of a streaming session, in encoder frames of 80 ms: each forward emits the chunk's
/// frames and attends to the look-ahead frames after them, which the next forward computes again.
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

    /// Upstream's name of the mode (`low_latency`, …); `custom_<chunk>_<look-ahead>` for the others.
    pub fn name(self) -> String {
        match self {
            StreamingMode::LowLatency => "low_latency".into(),
            StreamingMode::VeryLowLatency => "very_low_latency".into(),
            StreamingMode::UltraLowLatency => "ultra_low_latency".into(),
            StreamingMode::Custom { chunk, lookahead } => format!("custom_{chunk}_{lookahead}"),
        }
    }

    /// The named mode called `name` upstream.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::NAMED.into_iter().find(|mode| mode.name() == name)
    }

    /// Audio a frame waits for, at most, before it is final: chunk and look-ahead (`streaming_latency_ms`).
    pub fn latency_seconds(self) -> f64 {
        let (chunk, lookahead) = self.frames();
        (chunk + lookahead) as f64 * 0.08
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
        assert_eq!(StreamingMode::from_name("very_low_latency"), Some(StreamingMode::VeryLowLatency));
        assert_eq!(StreamingMode::Custom { chunk: 5, lookahead: 0 }.name(), "custom_5_0");
        assert!((StreamingMode::UltraLowLatency.latency_seconds() - 0.32).abs() < 1e-12);
    }
}
