//! What a task runs on: 16 kHz mono samples (decoded from a file, bytes, a reader, or PCM handed over), or log-mel
//! features from a features file.

#[cfg(feature = "decode")]
use std::io::Read;
use std::path::Path;

use nemotron_postprocess::time::FRAME_SECONDS;
use nemotron_towers::{Features, tensor_file};

use crate::error::EngineError;
#[cfg(feature = "decode")]
use crate::io::audio::AudioOptions;
use crate::io::audio::{self, AudioError, Channel, SAMPLE_RATE};

/// The model's input.
#[derive(Clone, Debug)]
pub enum Input {
    /// 16 kHz mono samples, finite.
    Samples(Vec<f32>),
    /// Log-mel features (`input_features` and its mask).
    Features(Features),
}

/// Names PCM handed over in memory in errors.
const IN_MEMORY: &str = "in-memory audio";

impl Input {
    /// Decodes an audio file: WAV, FLAC, MP3, Ogg Vorbis, AAC or M4A, any channel count, 1 to 768 kHz (resampled to
    /// 16 kHz mono), the channel and stretch `options` say.
    #[cfg(feature = "decode")]
    pub fn read_path(path: &Path, options: &AudioOptions) -> Result<Self, EngineError> {
        Ok(Input::Samples(audio::read_audio_with(path, options)?))
    }

    /// Decodes an audio file held in memory, as [`Input::read_path`] does; `name` names it in errors.
    #[cfg(feature = "decode")]
    pub fn read_bytes(bytes: Vec<u8>, name: &str, options: &AudioOptions) -> Result<Self, EngineError> {
        Ok(Input::Samples(audio::read_audio_bytes(bytes, name, options)?))
    }

    /// Reads a whole audio file from `reader` (e.g. standard input), then decodes it as [`Input::read_path`] does;
    /// `name` names it in errors.
    #[cfg(feature = "decode")]
    pub fn read_from(reader: impl Read, name: &str, options: &AudioOptions) -> Result<Self, EngineError> {
        Ok(Input::Samples(audio::read_audio_from(reader, name, options)?))
    }

    /// PCM handed over as one slice per channel at `sample_rate`, resampled to 16 kHz mono as decoded files are:
    /// the channel `channel` says, or the mean of all. Refused with a typed error: no channels, channels of
    /// different lengths, a channel the audio lacks, a value that is not finite, no samples, an unsupported rate.
    pub fn from_pcm(planar: &[&[f32]], sample_rate: u32, channel: Channel) -> Result<Self, EngineError> {
        let channels = planar.len();
        let length = planar.first().map_or(0, |c| c.len());
        if channels == 0 || planar.iter().any(|c| c.len() != length) {
            let samples = planar.iter().map(|c| c.len()).sum();
            return Err(AudioError::Channels { input: IN_MEMORY.into(), samples, channels }.into());
        }
        let samples = match channel {
            Channel::Index(index) if index >= channels => {
                return Err(AudioError::NoSuchChannel { input: IN_MEMORY.into(), channel: index, channels }.into());
            }
            Channel::Index(index) => audio::to_16k_mono(planar[index], 1, sample_rate)?,
            Channel::Mix => {
                let interleaved: Vec<f32> = (0..length).flat_map(|i| planar.iter().map(move |c| c[i])).collect();
                audio::to_16k_mono(&interleaved, channels, sample_rate)?
            }
        };
        Ok(Input::Samples(samples))
    }

    /// Reads `input_features [frames, mel_bins]` and `input_features_mask [frames]` from a safetensors file; the
    /// frames must be a multiple of `subsampling` (the model's config gives both numbers).
    pub fn read_features(path: &Path, mel_bins: usize, subsampling: usize) -> Result<Self, EngineError> {
        Ok(Input::Features(tensor_file::read_features(path, mel_bins, subsampling)?))
    }

    /// Seconds of audio it covers.
    pub fn seconds(&self) -> f64 {
        match self {
            Input::Samples(samples) => samples.len() as f64 / f64::from(SAMPLE_RATE),
            Input::Features(features) => features.valid as f64 * FRAME_SECONDS,
        }
    }
}
