//! Audio input: any common audio file (decoded with symphonia), standard input, or in-memory interleaved samples →
//! 16 kHz mono f32, the front end's input.
//!
//! Containers and codecs: WAV (PCM 8–32-bit integer, float 32/64, `WAVE_FORMAT_EXTENSIBLE`, RF64, μ-law, A-law,
//! IMA/MS ADPCM), FLAC, MP3, Ogg Vorbis, AAC (ADTS) and M4A/MP4 (AAC). One channel is picked or all are averaged
//! ([`Channel`]); a stretch can be cut out ([`AudioOptions::offset`], [`AudioOptions::duration`]); other rates go
//! through rubato's FFT resampler. Decoding files takes the `decode` feature (default); without it (a browser, which
//! decodes with its own decoders) only samples in memory are converted ([`to_16k_mono`]).

#[cfg(feature = "decode")]
mod decode;
mod resample;
#[cfg(feature = "decode")]
mod riff;

use std::fmt;
#[cfg(feature = "decode")]
use std::path::Path;
use std::str::FromStr;

pub use nemotron_postprocess::samples::SampleError;
pub use nemotron_postprocess::time::{MIN_SAMPLES, SAMPLE_RATE};
/// Input rates accepted. The resampler's FFT sizes grow with the rate's ratio to 16 kHz (1 Hz audio
/// would need a 16-million-point FFT per sample), so absurd rates are refused, not resampled.
pub const MIN_SAMPLE_RATE: u32 = 1_000;
/// Highest input rate accepted, in Hz (see [`MIN_SAMPLE_RATE`]).
pub const MAX_SAMPLE_RATE: u32 = 768_000;
/// Names in-memory audio in error messages.
const IN_MEMORY: &str = "in-memory audio";

/// Errors of audio input; each names the file (or "in-memory audio", or "standard input") and the problem.
#[derive(Debug, thiserror::Error)]
pub enum AudioError {
    /// The file could not be opened or read.
    #[error("cannot read {input}: {source}")]
    Read {
        /// The file path, or "standard input".
        input: String,
        /// The I/O error.
        source: std::io::Error,
    },

    /// No container format recognised the bytes, or the container is malformed.
    #[error("{input}: not a readable audio file (WAV, FLAC, MP3, Ogg Vorbis, AAC or M4A): {message}")]
    Format {
        /// The file path, or "standard input".
        input: String,
        /// What the demuxer said.
        message: String,
    },

    /// The container holds no audio track.
    #[error("{input}: the file holds no audio track")]
    NoAudioTrack {
        /// The file path, or "standard input".
        input: String,
    },

    /// The audio track is coded with a codec this build does not decode.
    #[error("unsupported codec {codec} in {input}")]
    UnsupportedCodec {
        /// The file path, or "standard input".
        input: String,
        /// The codec's name.
        codec: String,
    },

    /// The stream broke while being decoded.
    #[error("{input}: {codec} decoding failed at {seconds:.1} s: {message}")]
    Decode {
        /// The file path, or "standard input".
        input: String,
        /// The codec's name.
        codec: String,
        /// Where in the audio (seconds decoded before the failure).
        seconds: f64,
        /// What the decoder said.
        message: String,
    },

    /// [`Channel::Index`] past the channels the audio has.
    #[error("{input}: channel {channel} was asked for, but the audio has {channels} channel(s), numbered from 0")]
    NoSuchChannel {
        /// The file path, or "standard input".
        input: String,
        /// The channel asked for (0-based).
        channel: usize,
        /// The channels the audio has.
        channels: usize,
    },

    /// An offset or duration that is negative, not finite, or (duration) zero.
    #[error("{input}: {what} {value} s is not usable (offsets are finite and ≥ 0, durations finite and > 0)")]
    Cut {
        /// The file path, or "standard input".
        input: String,
        /// `offset` or `duration`.
        what: &'static str,
        /// The value given, in seconds.
        value: f64,
    },

    /// The offset lies at or past the end of the audio.
    #[error("{input}: offset {offset} s is at or past the end of the audio ({seconds:.3} s)")]
    OffsetPastEnd {
        /// The file path, or "standard input".
        input: String,
        /// The offset asked for, in seconds.
        offset: f64,
        /// The audio's length, in seconds.
        seconds: f64,
    },

    /// The channel count is zero or does not divide the number of samples.
    #[error("{input}: {samples} samples do not form whole frames of {channels} channels")]
    Channels {
        /// The file path, or "in-memory audio".
        input: String,
        /// Interleaved samples given (all channels).
        samples: usize,
        /// The channel count given.
        channels: usize,
    },

    /// A sample rate outside [`MIN_SAMPLE_RATE`]..=[`MAX_SAMPLE_RATE`].
    #[error("{input}: unsupported sample rate {rate} Hz (supported: {MIN_SAMPLE_RATE} to {MAX_SAMPLE_RATE} Hz)")]
    SampleRate {
        /// The file path, or "in-memory audio".
        input: String,
        /// The offending rate, in Hz.
        rate: u32,
    },

    /// No samples, fewer than [`MIN_SAMPLES`] once at 16 kHz, or a NaN or infinite sample (its index counts the
    /// interleaved samples of the input).
    #[error(transparent)]
    Samples(#[from] SampleError),

    /// rubato refused the conversion.
    #[error("{input}: resampling from {rate} Hz to 16 kHz failed: {message}")]
    Resample {
        /// The file path, or "in-memory audio".
        input: String,
        /// The input rate being converted from, in Hz.
        rate: u32,
        /// rubato's error, as text.
        message: String,
    },
}

/// Which channel of a multi-channel recording the model hears.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Channel {
    /// The mean of all channels.
    #[default]
    Mix,
    /// One channel, numbered from 0.
    Index(usize),
}

impl FromStr for Channel {
    type Err = String;

    /// `mix` or a channel number from 0.
    fn from_str(text: &str) -> Result<Self, String> {
        match text {
            "mix" => Ok(Channel::Mix),
            _ => {
                text.parse().map(Channel::Index).map_err(|_| format!("`{text}` is neither `mix` nor a channel number"))
            }
        }
    }
}

impl fmt::Display for Channel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Channel::Mix => f.write_str("mix"),
            Channel::Index(i) => write!(f, "{i}"),
        }
    }
}

/// How a recording is read: which channel, and which stretch of it.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct AudioOptions {
    /// The channel heard (default: the mean of all).
    pub channel: Channel,
    /// Seconds skipped at the start (default 0).
    pub offset: f64,
    /// Seconds kept after the offset (default: to the end). Decoding stops there.
    pub duration: Option<f64>,
}

/// Reads an audio file (any format in the [module list](self)) as 16 kHz mono samples, all channels averaged.
#[cfg(feature = "decode")]
pub fn read_audio(path: &Path) -> Result<Vec<f32>, AudioError> {
    read_audio_with(path, &AudioOptions::default())
}

/// Reads an audio file as 16 kHz mono samples, as `options` say.
#[cfg(feature = "decode")]
pub fn read_audio_with(path: &Path, options: &AudioOptions) -> Result<Vec<f32>, AudioError> {
    let input = path.display().to_string();
    let read_error = |source| AudioError::Read { input: input.clone(), source };
    let file = std::fs::File::open(path).map_err(read_error)?;
    // A pipe or device cannot seek, which some containers need: read it into memory like standard input.
    if !file.metadata().map_err(read_error)?.is_file() {
        return read_audio_from(file, &input, options);
    }
    let extension = path.extension().and_then(|e| e.to_str());
    finish(decode::decode(Box::new(file), extension, &input, options)?, &input)
}

/// Reads a whole audio file from `reader` (e.g. standard input) into memory, then decodes it as
/// [`read_audio_with`] does (some containers need to seek); `input` names it in errors.
#[cfg(feature = "decode")]
pub fn read_audio_from(
    mut reader: impl std::io::Read,
    input: &str,
    options: &AudioOptions,
) -> Result<Vec<f32>, AudioError> {
    let mut bytes = Vec::new();
    reader.read_to_end(&mut bytes).map_err(|source| AudioError::Read { input: input.to_owned(), source })?;
    read_audio_bytes(bytes, input, options)
}

/// Decodes an audio file held in memory as [`read_audio_with`] does; `input` names it in errors.
#[cfg(feature = "decode")]
pub fn read_audio_bytes(bytes: Vec<u8>, input: &str, options: &AudioOptions) -> Result<Vec<f32>, AudioError> {
    finish(decode::decode(Box::new(std::io::Cursor::new(bytes)), None, input, options)?, input)
}

/// Converts interleaved samples with `channels` channels at `rate` Hz to 16 kHz mono (channels averaged).
pub fn to_16k_mono(samples: &[f32], channels: usize, rate: u32) -> Result<Vec<f32>, AudioError> {
    if channels == 0 || !samples.len().is_multiple_of(channels) {
        return Err(AudioError::Channels { input: IN_MEMORY.to_owned(), samples: samples.len(), channels });
    }
    if let Some((index, &value)) = samples.iter().enumerate().find(|(_, v)| !v.is_finite()) {
        return Err(SampleError::NonFinite { input: IN_MEMORY.to_owned(), index, value }.into());
    }
    let mut mono = Vec::with_capacity(samples.len() / channels);
    for frame in samples.chunks_exact(channels) {
        mono.push(select(frame, Channel::Mix));
    }
    finish(Decoded { mono, rate }, IN_MEMORY)
}

/// The heard sample of one interleaved frame (the channel index already checked).
fn select(frame: &[f32], channel: Channel) -> f32 {
    match channel {
        Channel::Mix if frame.len() == 1 => frame[0],
        Channel::Mix => (frame.iter().map(|&x| f64::from(x)).sum::<f64>() / frame.len() as f64) as f32,
        Channel::Index(i) => frame[i],
    }
}

/// The heard channel at the source rate.
struct Decoded {
    mono: Vec<f32>,
    rate: u32,
}

/// Mono samples at the source rate → checked 16 kHz samples.
fn finish(decoded: Decoded, input: &str) -> Result<Vec<f32>, AudioError> {
    let Decoded { mono, rate } = decoded;
    if !(MIN_SAMPLE_RATE..=MAX_SAMPLE_RATE).contains(&rate) {
        return Err(AudioError::SampleRate { input: input.to_owned(), rate });
    }
    if mono.is_empty() {
        return Err(SampleError::Empty { input: input.to_owned() }.into());
    }
    let pcm = if rate == SAMPLE_RATE { mono } else { resample::resample(&mono, rate, input)? };
    if pcm.len() < MIN_SAMPLES {
        return Err(SampleError::TooShort { input: input.to_owned(), samples: pcm.len() }.into());
    }
    Ok(pcm)
}
