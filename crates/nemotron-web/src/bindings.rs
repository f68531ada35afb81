//! The JS API: [`Diarizer`] (an engine), [`LiveDiarization`] (a live session) and [`write_segments`], converting JS
//! values to and from what [`crate::diarizer`] takes and gives. Every error is a rejected promise (or a thrown `Error`
//! for the synchronous `stream` and `writeSegments`) whose message is [`WebError::sentence`]; a panic would be a bug,
//! reported on the console by the panic hook.

use std::rc::Rc;
use std::sync::Arc;

use js_sys::{Array, ArrayBuffer, Float32Array, Function, JSON, Object, Promise, Reflect, Uint8Array};
use nemotron_engine::{Capability, Engine, LiveSession, Segment};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::future_to_promise;

use crate::diarizer::{self, NamedFile, Segments};
use crate::error::WebError;
use crate::options::{DiarizeOptions, StreamOptions, TextOptions};

/// Runs when the module is instantiated: a panic (a bug) is reported on the console with its message.
#[wasm_bindgen(start)]
fn start() {
    console_error_panic_hook::set_once();
}

fn rejected(error: WebError) -> JsValue {
    js_sys::Error::new(&error.sentence()).into()
}

/// A message of the package's own about an argument, as a JS `Error`.
fn own_error(name: &str, problem: &str) -> JsValue {
    rejected(WebError::Argument { name: name.into(), problem: problem.into() })
}

/// An options argument as JSON text (`undefined` and `null` are `null`: every default).
fn options_json(options: &JsValue) -> Result<String, JsValue> {
    if options.is_undefined() || options.is_null() {
        return Ok("null".into());
    }
    let text = JSON::stringify(options).map_err(|_| rejected(WebError::Options("not a JSON object".into())))?;
    Ok(text.as_string().unwrap_or_else(|| "null".into()))
}

/// The bytes of a `{ name, bytes }` entry (a `Uint8Array` or an `ArrayBuffer`, viewed without a copy).
fn entry_bytes(name: &str, entry: &JsValue) -> Result<Uint8Array, JsValue> {
    let bytes = Reflect::get(entry, &"bytes".into()).unwrap_or(JsValue::UNDEFINED);
    if let Some(view) = bytes.dyn_ref::<Uint8Array>() {
        return Ok(view.clone());
    }
    match bytes.dyn_ref::<ArrayBuffer>() {
        Some(buffer) => Ok(Uint8Array::new(buffer)),
        None => Err(own_error(name, "its `bytes` are neither a Uint8Array nor an ArrayBuffer")),
    }
}

/// Copies each file once into wasm memory (each into its own shared buffer, which the checkpoint then reads in
/// place), telling `progress` of the bytes copied, as a fraction of one half (the other is the upload).
fn named_files(files: &Array, progress: Option<&Function>) -> Result<Vec<NamedFile>, JsValue> {
    let mut entries = Vec::new();
    for entry in files.iter() {
        let name = Reflect::get(&entry, &"name".into()).ok().and_then(|name| name.as_string());
        let Some(name) = name else {
            return Err(own_error("files", "each entry needs a `name` string and `bytes`"));
        };
        let bytes = entry_bytes(&name, &entry)?;
        entries.push((name, bytes));
    }
    let total: f64 = entries.iter().map(|(_, bytes)| f64::from(bytes.length())).sum();
    let mut copied = 0.0;
    let mut named = Vec::with_capacity(entries.len());
    for (name, view) in entries {
        // One allocation of the final size, filled from JS: the bytes are in wasm memory once.
        let mut bytes: Arc<[u8]> = std::iter::repeat_n(0u8, view.length() as usize).collect();
        if let Some(slot) = Arc::get_mut(&mut bytes) {
            view.copy_to(slot);
        }
        copied += f64::from(view.length());
        report(progress, 0.5 * copied / total.max(1.0), None);
        named.push((name, bytes));
    }
    Ok(named)
}

fn report(progress: Option<&Function>, fraction: f64, stage: Option<String>) {
    if let Some(progress) = progress {
        // A throwing callback is the page's business: the load goes on.
        let stage = stage.map_or(JsValue::UNDEFINED, JsValue::from);
        let _ = progress.call2(&JsValue::NULL, &JsValue::from_f64(fraction), &stage);
    }
}

/// The engine's load stages as `progress(fraction, "stage k/n")`, their steps spread over the fractions from
/// `start` to 1.
fn stages(progress: Option<&Function>, start: f64) -> impl FnMut(&str, u64, u64) + '_ {
    move |stage, done, all| {
        let fraction = start + (1.0 - start) * done as f64 / all.max(1) as f64;
        report(progress, fraction, Some(format!("{stage} {done}/{all}")));
    }
}

fn set(object: &Object, key: &str, value: impl Into<JsValue>) {
    let _ = Reflect::set(object, &key.into(), &value.into());
}

/// `diarize --stream`'s event lines as objects (the same fields).
fn event_objects(lines: Vec<String>) -> Result<Array, JsValue> {
    let events = Array::new();
    for line in lines {
        events.push(&JSON::parse(&line)?);
    }
    Ok(events)
}

/// Segments as `{ speaker, start, end }` objects (seconds).
fn segment_objects(segments: &[Segment]) -> Array {
    segments
        .iter()
        .map(|s| {
            let object = Object::new();
            set(&object, "speaker", s.speaker as u32);
            set(&object, "start", s.start);
            set(&object, "end", s.end);
            JsValue::from(object)
        })
        .collect()
}

/// Segments of `{ speaker, start, end }` objects (what [`segment_objects`] makes, or the page's own).
fn segments_of(objects: &Array) -> Result<Vec<Segment>, JsValue> {
    let invalid = |i: u32, field: &str| {
        own_error(&format!("segments[{i}]"), &format!("`{field}` is not a number of the kind a segment has"))
    };
    let mut segments = Vec::new();
    for (i, object) in (0..).zip(objects.iter()) {
        let number = |field: &str| Reflect::get(&object, &field.into()).ok().and_then(|v| v.as_f64());
        let speaker = number("speaker").filter(|k| k.fract() == 0.0 && (0.0..=f64::from(u32::MAX)).contains(k));
        let speaker = speaker.ok_or_else(|| invalid(i, "speaker"))? as usize;
        let start = number("start").filter(|t| t.is_finite()).ok_or_else(|| invalid(i, "start"))?;
        let end = number("end").filter(|t| t.is_finite()).ok_or_else(|| invalid(i, "end"))?;
        segments.push(Segment { speaker, start, end });
    }
    Ok(segments)
}

/// `{ segments, text }`.
fn segments_result(result: &Segments) -> Object {
    let object = Object::new();
    set(&object, "segments", segment_objects(&result.segments));
    set(&object, "text", result.text.as_str());
    object
}

/// The segments `[{ speaker, start, end }]` as `diarize --segments - --format` writes them: `format` `rttm`
/// (default), `json` or `csv`, `uri` the RTTM file id (default `audio`). The writers are the CLI's.
#[wasm_bindgen(js_name = writeSegments)]
pub fn write_segments(segments: Array, options: JsValue) -> Result<String, JsValue> {
    let options = TextOptions::from_json(&options_json(&options)?).map_err(rejected)?;
    Ok(nemotron_engine::write_segments(&segments_of(&segments)?, options.format, &options.uri))
}

/// A diarization model on the GPU.
#[wasm_bindgen]
pub struct Diarizer {
    engine: Rc<Engine>,
}

#[wasm_bindgen]
impl Diarizer {
    /// Loads a checkpoint from `[{ name, bytes }]` (`config.json` with `model.safetensors`, or with
    /// `model.safetensors.index.json` and its shards); `progress(fraction, stage)` hears of the load: the files
    /// copied (the first half, stage undefined), then the kernels compiled (stage `"compiling kernels k/n"`).
    pub async fn load(files: Array, progress: Option<Function>) -> Result<Diarizer, JsValue> {
        let files = named_files(&files, progress.as_ref())?;
        let engine = diarizer::load(files, &mut stages(progress.as_ref(), 0.5)).await.map_err(rejected)?;
        report(progress.as_ref(), 1.0, None);
        Ok(Diarizer { engine: Rc::new(engine) })
    }

    /// The built-in demo model (random weights: its outputs are meaningless); `progress(fraction, stage)` hears of
    /// the kernels compiled.
    pub async fn demo(progress: Option<Function>) -> Result<Diarizer, JsValue> {
        let engine = diarizer::demo(&mut stages(progress.as_ref(), 0.0)).await.map_err(rejected)?;
        report(progress.as_ref(), 1.0, None);
        Ok(Diarizer { engine: Rc::new(engine) })
    }

    /// `{ description, speakers, adapter, backend, driver, subgroups, maxStorageBufferBindingSize,
    /// maxComputeWorkgroupStorageSize, summary }`: the model and the GPU adapter it runs on.
    pub fn info(&self) -> Object {
        let gpu = self.engine.gpu();
        let (adapter, limits) = (gpu.adapter_info(), gpu.limits());
        let info = Object::new();
        set(&info, "description", self.engine.description());
        set(&info, "speakers", self.engine.diarizer().config().speakers as u32);
        set(&info, "adapter", adapter.name.as_str());
        set(&info, "backend", format!("{:?}", adapter.backend));
        set(&info, "driver", adapter.driver.as_str());
        set(&info, "subgroups", gpu.profile().has(Capability::Subgroups));
        set(&info, "maxStorageBufferBindingSize", limits.max_storage_buffer_binding_size as f64);
        set(&info, "maxComputeWorkgroupStorageSize", limits.max_compute_workgroup_storage_size);
        set(&info, "summary", gpu.describe());
        info
    }

    /// Who spoke when in 16 kHz mono `samples`: the segments as text, `format` `rttm` (default), `json` or `csv`,
    /// by the CLI's segment flags in camelCase (`threshold`, `onset`, `padOnset`, `maxSpeakers`, …; `uri` names
    /// the RTTM file id).
    pub fn diarize(&self, samples: Float32Array, options: JsValue) -> Promise {
        let (engine, samples, options) = (self.engine.clone(), samples.to_vec(), options_json(&options));
        future_to_promise(async move {
            let options = DiarizeOptions::from_json(&options?).map_err(rejected)?;
            Ok(diarizer::segments(&engine, samples, &options).await.map_err(rejected)?.text.into())
        })
    }

    /// [`Diarizer::diarize`]'s segments as objects too: `{ segments: [{ speaker, start, end }], text }`.
    pub fn segments(&self, samples: Float32Array, options: JsValue) -> Promise {
        let (engine, samples, options) = (self.engine.clone(), samples.to_vec(), options_json(&options));
        future_to_promise(async move {
            let options = DiarizeOptions::from_json(&options?).map_err(rejected)?;
            Ok(segments_result(&diarizer::segments(&engine, samples, &options).await.map_err(rejected)?).into())
        })
    }

    /// The diarizer's outputs on 16 kHz mono `samples`: `{ logits: Float32Array [frames × speakers] at 10 ms,
    /// probabilities: Float32Array [rows × speakers] at the encoder rate, speakers, frames }`.
    #[wasm_bindgen(js_name = speakerActivity)]
    pub fn speaker_activity(&self, samples: Float32Array) -> Promise {
        let (engine, samples) = (self.engine.clone(), samples.to_vec());
        future_to_promise(async move {
            let diarized = diarizer::speaker_activity(&engine, samples).await.map_err(rejected)?;
            let activity = Object::new();
            set(&activity, "logits", Float32Array::from(diarized.logits()));
            set(&activity, "probabilities", Float32Array::from(diarized.probabilities()));
            set(&activity, "speakers", diarized.speakers() as u32);
            set(&activity, "frames", diarized.frames() as u32);
            Ok(activity.into())
        })
    }

    /// A live session: `latency` `low` (default), `very-low` or `ultra-low`, and the segment flags of its events.
    pub fn stream(&self, options: JsValue) -> Result<LiveDiarization, JsValue> {
        let options = StreamOptions::from_json(&options_json(&options)?).map_err(rejected)?;
        let live = diarizer::stream(&self.engine, options).map_err(rejected)?;
        Ok(LiveDiarization { live: Rc::new(async_lock::Mutex::new(Some(live))) })
    }
}

/// A live diarization session (`Diarizer.stream`).
#[wasm_bindgen]
pub struct LiveDiarization {
    /// `None` once ended. Pushes take turns: a second waits for the first.
    live: Rc<async_lock::Mutex<Option<LiveSession>>>,
}

#[wasm_bindgen]
impl LiveDiarization {
    /// Feeds 16 kHz mono samples (any number); the events they made final, as `diarize --stream` prints them:
    /// `{ event: "start", speaker, time }`, `{ event: "end", speaker, time, start, end }`.
    pub fn push(&self, samples: Float32Array) -> Promise {
        let (live, samples) = (self.live.clone(), samples.to_vec());
        future_to_promise(async move {
            let mut live = live.lock().await;
            let live = live.as_mut().ok_or_else(|| rejected(WebError::Ended))?;
            Ok(event_objects(diarizer::push(live, &samples).await.map_err(rejected)?)?.into())
        })
    }

    /// Ends the stream: the last events, an array that also carries the whole stream's segments (as a regular
    /// expression's match carries its `index`): `segments` (`[{ speaker, start, end }]`, by start then speaker) and
    /// `text`, as `diarize --stream --segments` writes them in `format` (`rttm`, default, `json` or `csv`; `uri` the
    /// RTTM file id).
    pub fn end(&self, options: JsValue) -> Promise {
        let (live, options) = (self.live.clone(), options_json(&options));
        future_to_promise(async move {
            let options = TextOptions::from_json(&options?).map_err(rejected)?;
            let live = live.lock().await.take().ok_or_else(|| rejected(WebError::Ended))?;
            let ended = diarizer::end(live, &options).await.map_err(rejected)?;
            let events = event_objects(ended.events)?;
            set(&events, "segments", segment_objects(&ended.segments.segments));
            set(&events, "text", ended.segments.text.as_str());
            Ok(events.into())
        })
    }
}
