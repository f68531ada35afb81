//! `nemotron-towers`: NVIDIA Nemotron 3.5 Transcribe's audio perception on any GPU through wgpu — the log-mel
//! front end, the ASR transformer encoder, the Sortformer diarizer with its speaker cache, the speaker fusion and
//! the projector to the language model — matching the upstream Transformers implementation to float precision.
//!
//! The front door is [`Model`]: load a checkpoint folder once, share it between threads, and call
//! [`AudioModel::encode_audio`] (every output of the audio module) or [`Diarizer::diarize_audio`] (who spoke when):
//!
//! ```no_run
//! use nemotron_towers::{Gpu, Model, ModelOptions, read_audio};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let gpu = Gpu::new()?;
//! let model = Model::load(&gpu, "path/to/checkpoint".as_ref(), &ModelOptions::default())?;
//! let samples = read_audio("speech.wav".as_ref())?;
//! match &model {
//!     Model::Transcribe(model) => {
//!         let out = model.encode_audio(&samples, &mut |_stage, _done, _total| {})?;
//!         println!("{} audio embeddings of width {}", out.audio_embeds.len() / 2688, 2688);
//!     }
//!     Model::Diarization(diarizer) => {
//!         let out = diarizer.diarize_audio(&samples, &mut |_stage, _done, _total| {})?;
//!         println!("{} speaker probabilities", out.speaker_probabilities.len());
//!     }
//! }
//! # Ok(())
//! # }
//! ```
//!
//! Below the front door, for users who need a part:
//! - [`audio`], [`raw_pcm`], [`frontend`]: audio input (files, or raw PCM streams → 16 kHz mono) and the log-mel
//!   front end.
//! - [`config`], [`checkpoint`]: `config.json` and memory-mapped safetensors (one file or sharded), in the release's
//!   NeMo names or the Transformers names.
//! - [`tower`], [`sortformer`]: one encoder tower, or the diarizer, on the GPU.
//! - [`streaming`]: live sessions ([`DiarizerSession`]: audio in any pieces, each frame's logits as soon as it
//!   is final) and segment events.
//! - `hub` (cargo feature `hub`, off by default): models by Hugging Face Hub id, fetched through the standard cache.
//! - [`manifest`]: NeMo-style JSON-lines manifests of recordings, for batch runs.
//! - [`word_timestamps`]: the word-timestamp head on the GPU, and the speaker-attributed forced alignment of a
//!   transcript on its logits ([`AudioModel::align`]).
//! - [`bench`](mod@bench): release-sized timings with random weights; [`tensor_file`]: safetensors in and out.
//!
//! The towers in f64 (the standard the GPU is tested against) and the golden files' recipes are test support: they
//! live in the workspace's `nemotron-testkit` crate.
//!
//! What needs no GPU is in the `nemotron-postprocess` crate, which this one builds on: segments from speaker
//! activity (upstream's threshold rule, NeMo's post-processing), RTTM / JSON / CSV, the DER/JER scorer, the forced
//! alignment itself and SRT/WebVTT subtitles.
//!
//! Nothing here reads the environment: settings are typed values ([`ModelOptions`], [`GpuOptions`]); the CLI reads
//! its environment variables through [`environment::gpu_options`] and [`MatmulOptions::from_env`].

#![warn(missing_docs)]

mod asr;
pub mod audio;
pub mod bench;
mod beside;
#[cfg(not(target_arch = "wasm32"))]
pub mod blocking;
pub mod checkpoint;
#[cfg_attr(feature = "test-support", allow(missing_docs))]
mod chunks;
pub mod config;
pub mod environment;
mod error;
pub mod frontend;
mod fusion;
#[cfg(feature = "hub")]
pub mod hub;
#[cfg(feature = "test-support")]
#[doc(hidden)]
pub mod internals;
pub mod manifest;
mod mel;
#[cfg_attr(feature = "test-support", allow(missing_docs))]
mod names;
mod pipeline;
pub mod raw_pcm;
pub mod sortformer;
mod speaker_cache;
pub mod streaming;
pub mod tensor_file;
mod torch_top_k;
pub mod tower;
#[cfg_attr(feature = "test-support", allow(missing_docs))]
mod weights;
pub mod word_timestamps;
mod workspace;

pub use audio::{AudioError, AudioOptions, Channel, read_audio};
pub use audio_kernels::{MatmulOptions, Precision, TensorCoreKernel};
pub use checkpoint::{Checkpoint, CheckpointError};
pub use config::{ConfigError, DiarizationConfig, EncoderConfig, ModelConfig, TranscribeConfig, WordTimestampConfig};
pub use error::{Error, Result};
pub use frontend::Features;
pub use gpu_core::{Gpu, GpuOptions};
/// The alignment types of [`AudioModel::align`]'s signature; the rest of the alignment is in `nemotron_postprocess`.
pub use nemotron_postprocess::alignment::{AlignOptions, Alignment, AlignmentError, AlignmentTokenizer};
pub use pipeline::{AudioModel, AudioOutputs, Diarization, Diarizer, Model, ModelOptions, Progress};
pub use streaming::{DiarizerSession, StreamOutput, StreamingMode};
