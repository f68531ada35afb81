//! `nemotron-towers`: NVIDIA Nemotron 3.5 Transcribe's audio perception on any GPU through wgpu.
//!
//! - [`audio`], [`frontend`]: WAV input (any channel count, 1 to 768 kHz → 16 kHz mono) and the
//!   log-mel front end.
//! - [`config`]: `config.json` of Transcribe and standalone diarization checkpoints.
//! - [`checkpoint`], [`names`], [`weights`]: memory-mapped safetensors in the release's NeMo
//!   names or the Transformers names, checked against the config before any GPU work.
//! - [`tower`]: the transformer encoder on the GPU (ASR tower and Sortformer encoder);
//!   [`asr`] runs it over a recording in chunks, [`sortformer`] adds the head and the
//!   [`speaker_cache`].
//! - [`reference`]: the same towers in f64 on the CPU, the standard the GPU is tested against.
//! - [`golden`]: generated test data (`cargo xtask golden`).

pub mod asr;
pub mod audio;
pub mod bench;
pub mod checkpoint;
pub mod chunks;
pub mod config;
mod error;
pub mod frontend;
pub mod fusion;
pub mod golden;
mod mel;
pub mod names;
pub mod pipeline;
pub mod reference;
pub mod rttm;
pub mod sortformer;
pub mod speaker_cache;
pub mod tensor_file;
pub mod timeline;
pub mod tower;
pub mod weights;

pub use asr::AsrEncoder;
pub use checkpoint::{Checkpoint, CheckpointError};
pub use config::{ConfigError, DiarizationConfig, EncoderConfig, ModelConfig, TranscribeConfig};
pub use error::{Error, Result};
pub use sortformer::Sortformer;
pub use tower::{InputKind, Sequence, Tower};
