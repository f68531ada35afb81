//! `nemotron-towers`: NVIDIA Nemotron 3.5 Transcribe's audio perception on any GPU through wgpu — the log-mel
//! front end, the ASR transformer encoder, the Sortformer diarizer with its speaker cache, the speaker fusion and
//! the projector to the language model — matching the upstream Transformers implementation to float precision.
//!
//! The front door is [`Model`]: load a checkpoint folder once, share it between threads, and call
//! [`AudioModel::encode_audio`] (every output of the audio module) or [`Diarizer::diarize_audio`] (who spoke when):
//!
//! ```no_run
//! use std::ops::ControlFlow;
//!
//! use nemotron_towers::blocking::Block; // native programs wait with `.block()`; in a browser, `.await`
//! use nemotron_towers::{Gpu, Model, ModelOptions};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let gpu = Gpu::new().block()?;
//! let model = Model::load(&gpu, "path/to/checkpoint".as_ref(), &ModelOptions::default()).block()?;
//! # let samples: Vec<f32> = Vec::new();
//! // 16 kHz mono samples, e.g. from `nemotron_engine::io::audio::read_audio`.
//! match &model {
//!     Model::Transcribe(model) => {
//!         let out = model.encode_audio(&samples, &mut |_stage, _done, _total| ControlFlow::Continue(())).block()?;
//!         println!("{} audio embeddings of width {}", out.audio_embeds.len() / 2688, 2688);
//!     }
//!     Model::Diarization(diarizer) => {
//!         let out = diarizer.diarize_audio(&samples, &mut |_stage, _done, _total| ControlFlow::Continue(())).block()?;
//!         println!("{} speaker probabilities", out.speaker_probabilities.len());
//!     }
//! }
//! # Ok(())
//! # }
//! ```
//!
//! Below the front door, for users who need a part:
//! - [`frontend`]: the log-mel front end, on 16 kHz mono samples (audio files and streams become those in the
//!   `nemotron-engine` crate's `io` module).
//! - [`config`], [`checkpoint`]: `config.json` and safetensors (one file or sharded; a folder's files,
//!   memory-mapped on native targets, or the same files handed over by name, read by one rule: [`CheckpointFiles`]),
//!   in the release's NeMo names or the Transformers names;
//!   [`weight_files`]: which of a checkpoint's files a load reads (what a loader fetching them one by one fetches).
//! - [`tower`], [`sortformer`]: one encoder tower, or the diarizer, on the GPU.
//! - [`streaming`]: live sessions ([`DiarizerSession`]: audio in any pieces, each frame's logits as soon as it
//!   is final).
//! - [`word_timestamps`]: the word-timestamp head on the GPU; [`AudioModel::word_timestamp_log_probs`] gives the
//!   log-probabilities the speaker-attributed forced alignment of a transcript reads (`nemotron_postprocess`'s
//!   `alignment`, which `nemotron-engine` runs on them).
//! - [`chunks`]: the chunk schedule of the ASR tower; [`tensor_file`]: safetensors in and out; [`synthetic`]:
//!   speech-like audio for runs without a recording (benchmarks, tests).
//!
//! The towers in f64 (the standard the GPU is tested against) and the golden files' recipes are test support: they
//! live in the workspace's `nemotron-testkit` crate.
//!
//! What needs no GPU is in the `nemotron-postprocess` crate, which this one builds on: segments from speaker
//! activity (upstream's threshold rule, NeMo's post-processing, live segment events), RTTM / JSON / CSV, the DER/JER
//! scorer, the forced alignment itself and SRT/WebVTT subtitles. The Hub client is `nemotron-engine`'s `hub` module,
//! the benchmarks `nemotron-bench`.
//!
//! Cargo feature `demo`: the tiny random-weight demo model, compiled in (the module `demo`).
//!
//! Cargo feature `parallel` (default): host work across cores (rayon, threads). Without it — the
//! `wasm32-unknown-unknown` build — the same work runs on the calling thread, with the same results.
//!
//! Nothing here reads the environment: settings are typed values ([`ModelOptions`], [`GpuOptions`]), which
//! `nemotron-engine`'s `EngineOptions::from_env` fills from the variables the CLI documents.

#![warn(missing_docs)]

mod asr;
mod beside;
#[cfg(not(target_arch = "wasm32"))]
pub mod blocking;
pub mod checkpoint;
pub mod chunks;
pub mod config;
#[cfg(feature = "demo")]
pub mod demo;
mod diarizer;
mod error;
pub mod frontend;
mod fusion;
#[cfg(feature = "test-support")]
#[doc(hidden)]
pub mod internals;
mod mel;
mod model;
#[cfg_attr(feature = "test-support", allow(missing_docs))]
mod names;
pub mod sortformer;
mod speaker_cache;
pub mod streaming;
pub mod synthetic;
pub mod tensor_file;
pub mod tower;
#[cfg_attr(feature = "test-support", allow(missing_docs))]
mod weights;
pub mod word_timestamps;

pub use audio_kernels::{MatmulOptions, Precision, TensorCoreKernel};
pub use checkpoint::{Checkpoint, CheckpointError, CheckpointFiles, NamedFiles};
pub use config::{ConfigError, DiarizationConfig, EncoderConfig, ModelConfig, TranscribeConfig, WordTimestampConfig};
pub use diarizer::{BatchLimits, Diarization, Diarizer, DiarizerBatch};
pub use error::{Error, Result, SampleError, error_sentence};
pub use frontend::Features;
pub use gpu_core::{Capability, Gpu, GpuOptions};
pub use model::{AudioModel, AudioOutputs, COMPILING_KERNELS, Model, ModelOptions, ModelParts, Progress, weight_files};
pub use streaming::{DiarizerSession, StreamOutput, StreamingMode};
