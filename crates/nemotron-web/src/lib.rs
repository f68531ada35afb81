//! `nemotron-web`: Nemotron speaker diarization in the browser, on WebGPU — a wasm-bindgen package
//! (`scripts/web-build.sh DIR` builds it into `DIR/pkg/`):
//!
//! ```js
//! import init, { Diarizer, writeSegments } from "./pkg/nemotron_web.js";
//! await init();
//! const d = await Diarizer.load([{ name: "config.json", bytes }, { name: "model.safetensors", bytes }], f => {});
//! const byUrl = await Diarizer.fromUrl("https://example.org/diar/", {}); // kept: ModelCache.list(), .clear()
//! const json = await d.diarize(samples16k, { format: "json" });   // = `diarize --segments - --format json`
//! await d.diarize(samples16k, { onProgress: (done, chunks) => {}, signal }); // progress; an abort stops it
//! const { segments, text } = await d.segments(samples16k, {});    // the same, as objects too
//! const rttm = writeSegments(segments, { format: "rttm" });        // the CLI's writer
//! const live = d.stream({ latency: "low" });                         // = `diarize --stream --latency low`
//! const events = await live.push(samples16k);                        // its event lines, as objects
//! const last = await live.end({ format: "json" });                  // last.segments, last.text: the whole stream's
//! const speakers = await d.enroll([{ name: "alice", samples }]);    // = `enroll --speaker alice=CLIP`
//! const named = await d.diarize(samples16k, { speakers });           // = `diarize --speakers FILE`
//! const bytes = speakers.toBytes();                                  // the profile file; Speakers.fromBytes(bytes)
//! ```
//!
//! The package is a binding of `nemotron-engine`, the front door every front end calls, and owns no model logic: a
//! checkpoint is handed over as named files, read by the engine with the rule of a checkpoint folder (a standalone
//! Nemotron 3 Diarization checkpoint or a Transcribe checkpoint, whose diarizer runs; one file or shards with their
//! index; only the files the load reads are copied in, and `Diarizer.weightFiles` names them for a caller that reads
//! files only when needed), or fetched by URL (`Diarizer.fromUrl`) and kept in the browser's Cache Storage
//! (`model_cache`, wasm32 only, by the rules of [`url_rules`]); `Diarizer.demo()` loads the built-in tiny model with
//! random weights.
//! Options are the CLI's `diarize` flags in camelCase ([`options`]); segments are written by the CLI's writers. A
//! refusal rejects the promise with a JS `Error` whose message is the CLI's sentence for the same problem
//! ([`WebError::sentence`]).
//!
//! The calls are plain async Rust on the engine ([`diarizer`]), the same on native targets, where its tests run; the
//! JS bindings (wasm32 only) convert values. A diarization's `onProgress` and `signal` are the engine's progress
//! callback, which cancels the steps left once the `AbortSignal` is aborted. The npm package's entry (`npm/index.js`)
//! adds `createWorkerDiarizer()`: the same calls posted to a dedicated Web Worker (`npm/worker.js`) that runs this
//! module there.

#![warn(missing_docs)]

#[cfg(target_arch = "wasm32")]
pub mod bindings;
pub mod diarizer;
mod error;
#[cfg(target_arch = "wasm32")]
pub mod model_cache;
#[cfg(target_arch = "wasm32")]
mod model_files;
#[cfg(target_arch = "wasm32")]
mod model_url;
pub mod options;
#[cfg(target_arch = "wasm32")]
mod steps;
pub mod url_rules;

pub use error::WebError;
