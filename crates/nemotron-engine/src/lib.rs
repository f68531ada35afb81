//! `nemotron-engine`: the front door of Nemotron 3.5 Transcribe's audio perception on any GPU — what every front end
//! (the `nemotron-audio` CLI, the server, the Python package, the browser package) needs, in one place: resolve a
//! model ([`ModelSource`]: a checkpoint folder, its files handed over by name, a Hugging Face Hub id, the built-in
//! demo), read an input ([`Input`]: any audio file, bytes, PCM in memory, or a features file), run a task on an
//! [`Engine`] — [`Engine::encode`], [`Engine::diarize`], [`Engine::align`], [`Engine::stream`] — and produce each
//! output format's bytes exactly as the CLI writes them. Front ends only parse their own arguments and print or send.
//! Batch runs read NeMo manifests with [`read_manifest`], as the CLI's `--manifest` does. What turns files and streams
//! into samples, and profiles and outputs into files, is the [`io`] module (audio decoding and resampling, raw PCM,
//! manifests, known speakers' profiles, files written whole); the Hub client is the `hub` module (feature `hub`).
//!
//! Everything that waits for the GPU is a future underneath (`Engine::load_async`, `Engine::diarize_async`,
//! `LiveSession::push_async`, …: what a browser awaits); the blocking forms without `_async` (native targets) wait
//! for those.
//!
//! Errors are one [`EngineError`], each keeping the library's error as its source, classified by
//! [`EngineError::kind`] (a usage error, bad input, not found, GPU, I/O, cancelled).
//!
//! A task's [`Progress`] callback hears of each step (stage, steps done, steps in all) and answers with a
//! [`std::ops::ControlFlow`]: `Break` cancels the task at that step, which then runs nothing more, frees what its
//! steps held and ends with an error of [`ErrorKind::Cancelled`]; the engine takes the next task as if none had been
//! cancelled.
//!
//! Cargo features: `decode` and `parallel` (default: audio files decoded, the model's host work on all cores; the
//! `wasm32-unknown-unknown` build takes neither), `hub` (models by Hub id), `demo` (the tiny random-weight demo
//! model, compiled in; the examples below run on it, so their outputs are meaningless), `clap` ([`SegmentSettings`]
//! as the CLI's flags), `schema` (`Origin::json_schema`, for the server's OpenAPI document).
//!
//! # Encode
//! Every output of the audio module, as the `encode` command's safetensors file:
//! ```
//! # fn main() -> Result<(), nemotron_engine::EngineError> {
//! use std::ops::ControlFlow;
//!
//! use nemotron_engine::{Engine, EngineOptions, Input, ModelSource};
//!
//! let engine = Engine::load(&ModelSource::Demo, &EngineOptions::default(), &mut |_file, _done, _total| {})?;
//! let tone: Vec<f32> = (0..4_000).map(|i| 0.1 * (i as f32 * 0.05).sin()).collect();
//! let encoding = engine.encode(Input::Samples(tone), false, &mut |_stage, _done, _total| ControlFlow::Continue(()))?;
//! let names: Vec<&str> = encoding.tensors().iter().map(|(name, _, _)| *name).collect();
//! assert_eq!(names[0], "input_features");
//! assert!(!encoding.to_safetensors()?.is_empty());
//! # Ok(())
//! # }
//! ```
//!
//! # Diarize
//! Who spoke when, as RTTM (or JSON, CSV), by the rule a [`SegmentSettings`] asks for:
//! ```
//! # fn main() -> Result<(), nemotron_engine::EngineError> {
//! use std::ops::ControlFlow;
//!
//! use nemotron_engine::{Channel, Engine, EngineOptions, Input, ModelSource, SegmentFormat, SegmentSettings};
//!
//! let engine = Engine::load(&ModelSource::Demo, &EngineOptions::default(), &mut |_, _, _| {})?;
//! let left: Vec<f32> = (0..8_000).map(|i| 0.1 * (i as f32 * 0.03).sin()).collect();
//! let input = Input::from_pcm(&[&left, &left], 8_000, Channel::Mix)?; // resampled to 16 kHz mono
//! // Progress: (stage, chunks done, chunks); `ControlFlow::Break` would cancel the steps left.
//! let diarized = engine.diarize(input, &mut |_stage, _done, _chunks| ControlFlow::Continue(()))?;
//! let settings = SegmentSettings { threshold: Some(0.4), ..SegmentSettings::default() };
//! let segments = diarized.segments(&settings)?;
//! let rttm = nemotron_engine::write_segments(&segments, SegmentFormat::Rttm, "tone");
//! assert_eq!(rttm.lines().count(), segments.len());
//! # Ok(())
//! # }
//! ```
//!
//! # Align
//! Speaker-attributed word timestamps of a transcript, as JSON and subtitles:
//! ```
//! # fn main() -> Result<(), nemotron_engine::EngineError> {
//! use std::ops::ControlFlow;
//!
//! use nemotron_engine::{AlignRequest, Engine, EngineOptions, Input, ModelSource};
//!
//! let engine = Engine::load(&ModelSource::Demo, &EngineOptions::default(), &mut |_, _, _| {})?;
//! let tone: Vec<f32> = (0..8_000).map(|i| 0.1 * (i as f32 * 0.02).sin()).collect();
//! let request = AlignRequest { transcript: "<spk:0> hello world".into(), language: None };
//! let aligned = engine.align(Input::Samples(tone), &request, &mut |_, _, _| ControlFlow::Continue(()))?;
//! assert_eq!(aligned.words().len(), 2);
//! assert!(aligned.to_json()?.contains("\"chunks\""));
//! assert!(aligned.to_srt().starts_with("1\n"));
//! # Ok(())
//! # }
//! ```
//!
//! # Stream
//! A live session: audio in pieces of any size, one event per segment start and end as soon as it is final:
//! ```
//! # fn main() -> Result<(), nemotron_engine::EngineError> {
//! use nemotron_engine::{Engine, EngineOptions, ModelSource, SegmentSettings, StreamingMode, event_json_line};
//!
//! let engine = Engine::load(&ModelSource::Demo, &EngineOptions::default(), &mut |_, _, _| {})?;
//! let mut session = engine.stream(StreamingMode::UltraLowLatency, &SegmentSettings::default())?;
//! let tone: Vec<f32> = (0..8_000).map(|i| 0.1 * (i as f32 * 0.04).sin()).collect();
//! let mut events = Vec::new();
//! for piece in tone.chunks(1_600) {
//!     events.extend(session.push(piece)?);
//! }
//! let (last, segments) = session.finish()?;
//! events.extend(last);
//! let ends = events.iter().filter(|e| event_json_line(e).starts_with(r#"{"event":"end""#)).count();
//! assert_eq!(ends, segments.len());
//! # Ok(())
//! # }
//! ```
//!
//! A stream that arrives as raw PCM bytes (standard input, a socket) goes through a [`RawDecoder`], which joins the
//! samples that straddle two pieces and says at the end whether the stream stopped inside one:
//! ```
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use nemotron_engine::{RawDecoder, RawFormat};
//!
//! let mut decoder = RawDecoder::new(RawFormat::S16le);
//! let bytes: Vec<u8> = [16_384i16, -32_768].iter().flat_map(|s| s.to_le_bytes()).collect();
//! let mut samples = decoder.decode(&bytes[..3]); // one sample and a half
//! samples.extend(decoder.decode(&bytes[3..]));
//! assert_eq!(samples, [0.5, -1.0]);
//! decoder.finish()?; // no byte left over
//! # Ok(())
//! # }
//! ```

#![warn(missing_docs)]

#[cfg(feature = "demo")]
mod demo;
mod engine;
mod environment;
mod error;
#[cfg(feature = "hub")]
pub mod hub;
mod input;
pub mod io;
mod known_speakers;
mod live;
pub mod output;
#[cfg(not(target_arch = "wasm32"))]
mod read_ahead;
mod results;
mod speaker_dict;
mod tasks;

#[cfg(feature = "hub")]
pub use engine::fetch;
#[cfg(not(target_arch = "wasm32"))]
pub use engine::open_gpu;
pub use engine::{DownloadProgress, Engine, EngineOptions, ModelSource};
pub use environment::UnknownSetting;
pub use error::{EngineError, ErrorKind};
#[cfg(feature = "hub")]
pub use hub::{HubError, RepoId};
pub use input::Input;
pub use io::audio::{AudioError, AudioOptions, Channel, SampleError};
pub use io::manifest::{ManifestEntry, ManifestError, read_manifest};
pub use io::raw_pcm::{PartialSample, RawDecoder, RawFormat};
pub use io::speakers::{ProfileError, SpeakerError, SpeakerProfile};
pub use known_speakers::EnrollmentError;
pub use live::{LiveRecording, LiveSession, event_json_line};
#[cfg(feature = "demo")]
pub use nemotron_towers::demo::LABEL as DEMO_LABEL;
pub use results::{Aligned, Diarized, Encoding, write_named_segments, write_segments};
pub use speaker_dict::SpeakerDictEntry;
pub use tasks::{AlignRequest, DiarizeBatch, batch_limits};

// What the front ends (the CLI, the server, the Python package) need of the libraries below the engine, all here,
// by where it comes from: front ends import these from the engine, never from the libraries themselves.

// The model crate: options, the GPU, features, streaming modes.
pub use nemotron_towers::streaming::UnknownStreamingMode;
pub use nemotron_towers::{
    BatchLimits, COMPILING_KERNELS, Capability, CheckpointError, ConfigError, Error as TowersError, Features, Gpu,
    GpuOptions, MatmulOptions, ModelConfig, ModelOptions, ModelParts, NamedFiles, Precision, Progress, StreamingMode,
    error_sentence,
};
// The checkpoint folder's files, for a front end that fetches them one by one (the browser).
pub use nemotron_towers::checkpoint::{CONFIG_FILE, INDEX_FILE, SINGLE_FILE};
pub use nemotron_towers::{CheckpointFiles, weight_files};

// The post-processing crate: segments, their rules and formats, live segment events and the word alignment.
pub use nemotron_postprocess::alignment::{Alignment, WordChunk};
pub use nemotron_postprocess::diarization::{
    NemoParameters, Origin, PostProcessing, Segment, SegmentEvent, SegmentFormat, SegmentRule, SegmentSettings,
};
pub use nemotron_postprocess::time::FRAME_SECONDS;

/// Diarization error rates (`nemotron-audio score`): RTTM and UEM files read, each file scored as NIST's `md-eval`.
pub mod scoring {
    pub use nemotron_postprocess::diarization::rttm::{read_rttm, read_uem};
    pub use nemotron_postprocess::diarization::scoring::{Components, FileScore, Score, ScoreOptions, score};
}
