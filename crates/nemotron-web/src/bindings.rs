//! The JS API: [`Diarizer`] (an engine), [`Speakers`] (a known speakers' profile), [`LiveDiarization`] (a live
//! session) and [`write_segments`], converting JS values to and from what [`crate::diarizer`] takes and gives. Every error is a rejected promise (or a thrown `Error`
//! for the synchronous `stream` and `writeSegments`) whose message is [`WebError::sentence`], except a cancelled
//! diarization's, which rejects with its `AbortSignal`'s reason (`crate::steps`); a panic would be a bug, reported on
//! the console by the panic hook.

use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;

use js_sys::{Array, ArrayBuffer, Float32Array, Function, JSON, Object, Promise, Reflect, Uint8Array};
use nemotron_engine::{Capability, Engine, EngineError, LiveSession, Segment, SpeakerProfile};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::future_to_promise;

use crate::diarizer::{self, Segments};
use crate::error::WebError;
use crate::options::{DiarizeOptions, StreamOptions, TextOptions};
use crate::steps::Steps;

/// Runs when the module is instantiated: a panic (a bug) is reported on the console with its message.
#[wasm_bindgen(start)]
fn start() {
    console_error_panic_hook::set_once();
}

pub(crate) fn rejected(error: WebError) -> JsValue {
    js_sys::Error::new(&error.sentence()).into()
}

/// A message of the package's own about an argument, as a JS `Error`.
pub(crate) fn own_error(name: &str, problem: &str) -> JsValue {
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

/// An options argument's `speakers` (a [`Speakers`], or a profile file's bytes) and the other options as JSON text.
fn speakers_and_options(options: &JsValue) -> Result<(Option<SpeakerProfile>, String), JsValue> {
    let speakers = match options.is_object() {
        true => Reflect::get(options, &"speakers".into()).unwrap_or(JsValue::UNDEFINED),
        false => JsValue::UNDEFINED,
    };
    if speakers.is_undefined() || speakers.is_null() {
        return Ok((None, options_json(options)?));
    }
    // A `Speakers` is read through its `toBytes()`: a JS object hands the Rust value it wraps over only by giving
    // it up, and the page keeps using its profile.
    let to_bytes = Reflect::get(&speakers, &"toBytes".into()).ok().and_then(|f| f.dyn_into::<Function>().ok());
    let bytes = match to_bytes {
        Some(to_bytes) => to_bytes.call0(&speakers)?,
        None => speakers,
    };
    let bytes = bytes_of(&bytes).ok_or_else(|| {
        own_error("speakers", "neither a Speakers object nor a profile file's bytes (a Uint8Array or an ArrayBuffer)")
    })?;
    let profile = SpeakerProfile::from_bytes(&bytes.to_vec(), "speakers").map_err(|e| rejected(engine_error(e)))?;
    let rest = Object::assign(&Object::new(), options.unchecked_ref());
    let _ = Reflect::delete_property(&rest, &"speakers".into());
    Ok((Some(profile), options_json(&rest)?))
}

/// `diarize`'s and `segments`' options: `onProgress` and `signal`, the known speakers, and the rest read, or the
/// rejection of a call whose signal was aborted before it started.
fn diarize_options(options: &JsValue) -> Result<(Steps, Option<SpeakerProfile>, DiarizeOptions), JsValue> {
    let (steps, rest) = Steps::take(options)?;
    steps.start()?;
    let (speakers, rest) = speakers_and_options(&rest)?;
    Ok((steps, speakers, DiarizeOptions::from_json(&rest).map_err(rejected)?))
}

/// `speakerActivity`'s options: `onProgress` and `signal`, and nothing else.
fn activity_options(options: &JsValue) -> Result<Steps, JsValue> {
    let (steps, rest) = Steps::take(options)?;
    let rest = options_json(&rest)?;
    if !matches!(rest.as_str(), "null" | "{}") {
        return Err(own_error("options", &format!("speakerActivity takes onProgress and signal only, not {rest}")));
    }
    steps.start()?;
    Ok(steps)
}

fn engine_error(error: impl Into<EngineError>) -> WebError {
    WebError::Engine(error.into())
}

/// A `Uint8Array`, or an `ArrayBuffer` viewed without a copy.
pub(crate) fn bytes_of(value: &JsValue) -> Option<Uint8Array> {
    if let Some(view) = value.dyn_ref::<Uint8Array>() {
        return Some(view.clone());
    }
    value.dyn_ref::<ArrayBuffer>().map(|buffer| Uint8Array::new(buffer))
}

pub(crate) fn report(progress: Option<&Function>, fraction: f64, stage: Option<String>) {
    if let Some(progress) = progress {
        // A throwing callback is the page's business: the load goes on.
        let stage = stage.map_or(JsValue::UNDEFINED, JsValue::from);
        let _ = progress.call2(&JsValue::NULL, &JsValue::from_f64(fraction), &stage);
    }
}

/// The engine's load stages as `progress(fraction, "stage k/n")`, their steps spread over the fractions from
/// `start` to 1.
pub(crate) fn stages(progress: Option<&Function>, start: f64) -> impl FnMut(&str, u64, u64) + '_ {
    move |stage, done, all| {
        let fraction = start + (1.0 - start) * done as f64 / all.max(1) as f64;
        report(progress, fraction, Some(format!("{stage} {done}/{all}")));
    }
}

pub(crate) fn set(object: &Object, key: &str, value: impl Into<JsValue>) {
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

/// Segments as `{ speaker, start, end }` objects (seconds), with `name` where `names` names the speaker's slot.
fn segment_objects(segments: &[Segment], names: &[Option<String>]) -> Array {
    segments
        .iter()
        .map(|s| {
            let object = Object::new();
            set(&object, "speaker", s.speaker as u32);
            if let Some(name) = names.get(s.speaker).and_then(Option::as_deref) {
                set(&object, "name", name);
            }
            set(&object, "start", s.start);
            set(&object, "end", s.end);
            JsValue::from(object)
        })
        .collect()
}

/// Speaker numbers a segment with a `name` may have: far above any diarizer's slots, and a bound on the names'
/// table, which has one entry per number below the highest named one.
const NAMED_SPEAKERS: usize = 1 << 16;

/// Segments of `{ speaker, start, end }` objects, some with a `name` (what [`segment_objects`] makes, or the page's
/// own), and each speaker's name.
fn segments_of(objects: &Array) -> Result<(Vec<Segment>, Vec<Option<String>>), JsValue> {
    let invalid = |i: u32, field: &str| {
        own_error(&format!("segments[{i}]"), &format!("`{field}` is not a number of the kind a segment has"))
    };
    let (mut segments, mut names) = (Vec::new(), Vec::<Option<String>>::new());
    for (i, object) in (0..).zip(objects.iter()) {
        let number = |field: &str| Reflect::get(&object, &field.into()).ok().and_then(|v| v.as_f64());
        let speaker = number("speaker").filter(|k| k.fract() == 0.0 && (0.0..=f64::from(u32::MAX)).contains(k));
        let speaker = speaker.ok_or_else(|| invalid(i, "speaker"))? as usize;
        let start = number("start").filter(|t| t.is_finite()).ok_or_else(|| invalid(i, "start"))?;
        let end = number("end").filter(|t| t.is_finite()).ok_or_else(|| invalid(i, "end"))?;
        segments.push(Segment { speaker, start, end });
        let Some(name) = Reflect::get(&object, &"name".into()).ok().and_then(|v| v.as_string()) else {
            continue;
        };
        if speaker >= NAMED_SPEAKERS {
            return Err(own_error(&format!("segments[{i}]"), &format!("a named speaker is below {NAMED_SPEAKERS}")));
        }
        if names.len() <= speaker {
            names.resize(speaker + 1, None);
        }
        match &names[speaker] {
            Some(earlier) if *earlier != name => {
                let problem = format!("speaker {speaker} is named `{name}` here and `{earlier}` before");
                return Err(own_error(&format!("segments[{i}]"), &problem));
            }
            _ => names[speaker] = Some(name),
        }
    }
    Ok((segments, names))
}

/// `{ segments, text }`.
fn segments_result(result: &Segments) -> Object {
    let object = Object::new();
    set(&object, "segments", segment_objects(&result.segments, &result.names));
    set(&object, "text", result.text.as_str());
    object
}

/// The segments `[{ speaker, name?, start, end }]` as `diarize --segments - --format` writes them: `format` `rttm`
/// (default), `json` or `csv`, `uri` the RTTM file id (default `audio`); a speaker's `name` (one per speaker) as
/// `diarize --speakers` writes it. The writers are the CLI's.
#[wasm_bindgen(js_name = writeSegments)]
pub fn write_segments(segments: Array, options: JsValue) -> Result<String, JsValue> {
    let options = TextOptions::from_json(&options_json(&options)?).map_err(rejected)?;
    let (segments, names) = segments_of(&segments)?;
    Ok(nemotron_engine::write_named_segments(&segments, options.format, &options.uri, &names))
}

/// Known speakers: each name with its 16 kHz clip, in enrollment order (`Diarizer.enroll`, `Speakers.fromBytes`);
/// the `speakers` option of `diarize`, `segments` and `stream`.
#[wasm_bindgen]
pub struct Speakers {
    profile: SpeakerProfile,
}

#[wasm_bindgen]
impl Speakers {
    /// The profile of a file's bytes (`Uint8Array` or `ArrayBuffer`) that `toBytes` or `nemotron-audio enroll`
    /// wrote.
    #[wasm_bindgen(js_name = fromBytes)]
    pub fn from_bytes(bytes: JsValue) -> Result<Speakers, JsValue> {
        let bytes = bytes_of(&bytes).ok_or_else(|| own_error("bytes", "neither a Uint8Array nor an ArrayBuffer"))?;
        let profile = SpeakerProfile::from_bytes(&bytes.to_vec(), "bytes").map_err(|e| rejected(engine_error(e)))?;
        Ok(Speakers { profile })
    }

    /// The profile file's bytes (what `nemotron-audio enroll --out` writes, and `--speakers` reads).
    #[wasm_bindgen(js_name = toBytes)]
    pub fn to_bytes(&self) -> Result<Uint8Array, JsValue> {
        let bytes = self.profile.to_bytes().map_err(|e| rejected(engine_error(e)))?;
        Ok(Uint8Array::from(bytes.as_slice()))
    }

    /// The speakers' names, in enrollment order.
    #[wasm_bindgen(getter)]
    pub fn names(&self) -> Array {
        self.profile.names().map(JsValue::from).collect()
    }
}

/// The clips of `[{ name, samples }]` (samples a `Float32Array` of 16 kHz mono audio).
fn clips_of(speakers: &Array) -> Result<Vec<(String, Vec<f32>)>, JsValue> {
    let mut clips = Vec::new();
    for (i, entry) in (0..).zip(speakers.iter()) {
        let name = Reflect::get(&entry, &"name".into()).ok().and_then(|name| name.as_string());
        let samples = Reflect::get(&entry, &"samples".into()).ok().and_then(|s| s.dyn_into::<Float32Array>().ok());
        match (name, samples) {
            (Some(name), Some(samples)) => clips.push((name, samples.to_vec())),
            _ => {
                let problem = "each entry needs a `name` string and its `samples` (a Float32Array)";
                return Err(own_error(&format!("speakers[{i}]"), problem));
            }
        }
    }
    Ok(clips)
}

/// A diarization model on the GPU.
#[wasm_bindgen]
pub struct Diarizer {
    engine: Rc<Engine>,
}

#[wasm_bindgen]
impl Diarizer {
    /// The built-in demo model (random weights: its outputs are meaningless); `progress(fraction, stage)` hears of
    /// the kernels compiled.
    pub async fn demo(progress: Option<Function>) -> Result<Diarizer, JsValue> {
        let engine = diarizer::demo(&mut stages(progress.as_ref(), 0.0)).await.map_err(rejected)?;
        report(progress.as_ref(), 1.0, None);
        Ok(Diarizer { engine: Rc::new(engine) })
    }

    /// `{ description, speakers, adapter, backend, driver, subgroups, maxStorageBufferBindingSize,
    /// maxComputeWorkgroupStorageSize, summary, gpuMemory, gpuPeakMemory }`: the model and the GPU adapter it runs
    /// on; the bytes its GPU buffers (weights, workspaces) hold now and held at most at once.
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
        set(&info, "gpuMemory", gpu.memory_in_use() as f64);
        set(&info, "gpuPeakMemory", gpu.peak_memory() as f64);
        info
    }

    /// Enrolls known speakers from `[{ name, samples }]` (16 kHz mono clips of at least 1 s, one voice each) as
    /// `nemotron-audio enroll` does: a [`Speakers`] once each clip is found to speak in a slot of its own.
    pub fn enroll(&self, speakers: Array) -> Promise {
        let (engine, clips) = (self.engine.clone(), clips_of(&speakers));
        future_to_promise(async move {
            let profile = diarizer::enroll(&engine, clips?).await.map_err(rejected)?;
            Ok(Speakers { profile }.into())
        })
    }

    /// Who spoke when in 16 kHz mono `samples`: the segments as text, `format` `rttm` (default), `json` or `csv`,
    /// by the CLI's segment flags in camelCase (`threshold`, `onset`, `padOnset`, `maxSpeakers`, …; `uri` names
    /// the RTTM file id); `speakers` (a [`Speakers`] or a profile file's bytes) names the enrolled speakers, as
    /// `diarize --speakers` does; `onProgress(done, chunks)` hears of the steps and `signal` (an `AbortSignal`)
    /// cancels the rest (`crate::steps`).
    pub fn diarize(&self, samples: Float32Array, options: JsValue) -> Promise {
        let (engine, samples, options) = (self.engine.clone(), samples.to_vec(), diarize_options(&options));
        future_to_promise(async move {
            let (steps, speakers, options) = options?;
            let mut progress = steps.progress();
            let segments = diarizer::segments(&engine, samples, &options, speakers.as_ref(), &mut progress).await;
            Ok(segments.map_err(|e| steps.rejected(e))?.text.into())
        })
    }

    /// [`Diarizer::diarize`]'s segments as objects too: `{ segments: [{ speaker, name?, start, end }], text }`
    /// (`name` for an enrolled speaker).
    pub fn segments(&self, samples: Float32Array, options: JsValue) -> Promise {
        let (engine, samples, options) = (self.engine.clone(), samples.to_vec(), diarize_options(&options));
        future_to_promise(async move {
            let (steps, speakers, options) = options?;
            let mut progress = steps.progress();
            let segments = diarizer::segments(&engine, samples, &options, speakers.as_ref(), &mut progress).await;
            Ok(segments_result(&segments.map_err(|e| steps.rejected(e))?).into())
        })
    }

    /// The diarizer's outputs on 16 kHz mono `samples`: `{ logits: Float32Array [frames × speakers] at 10 ms,
    /// probabilities: Float32Array [rows × speakers] at the encoder rate, speakers, frames }`; `options`
    /// `{ onProgress, signal }` as [`Diarizer::diarize`]'s.
    #[wasm_bindgen(js_name = speakerActivity)]
    pub fn speaker_activity(&self, samples: Float32Array, options: JsValue) -> Promise {
        let (engine, samples, steps) = (self.engine.clone(), samples.to_vec(), activity_options(&options));
        future_to_promise(async move {
            let steps = steps?;
            let mut progress = steps.progress();
            let diarized = diarizer::speaker_activity(&engine, samples, None, &mut progress).await;
            let diarized = diarized.map_err(|e| steps.rejected(e))?;
            let activity = Object::new();
            set(&activity, "logits", Float32Array::from(diarized.logits()));
            set(&activity, "probabilities", Float32Array::from(diarized.probabilities()));
            set(&activity, "speakers", diarized.speakers() as u32);
            set(&activity, "frames", diarized.frames() as u32);
            Ok(activity.into())
        })
    }

    /// A live session: `latency` `low` (default), `very-low` or `ultra-low`, and the segment flags of its events;
    /// `speakers` (a [`Speakers`] or a profile file's bytes) names the enrolled speakers, as
    /// `diarize --stream --speakers` does (the session is first pushed the enrolled clips, with the first samples).
    pub fn stream(&self, options: JsValue) -> Result<LiveDiarization, JsValue> {
        let (speakers, options) = speakers_and_options(&options)?;
        let options = StreamOptions::from_json(&options).map_err(rejected)?;
        let session = match speakers {
            None => Session::Live(Box::new(diarizer::stream(&self.engine, &options).map_err(rejected)?)),
            Some(profile) => {
                let engine = self.engine.clone();
                Session::Starting(Box::pin(
                    async move { diarizer::stream_with_speakers(&engine, &options, &profile).await },
                ))
            }
        };
        Ok(LiveDiarization { live: Rc::new(async_lock::Mutex::new(Some(session))) })
    }
}

impl From<Engine> for Diarizer {
    fn from(engine: Engine) -> Self {
        Diarizer { engine: Rc::new(engine) }
    }
}

/// A live session, or its start: a session with known speakers is pushed the enrolled clips first, which the first
/// push awaits (`stream` itself returns at once).
enum Session {
    Starting(Pin<Box<dyn Future<Output = Result<LiveSession, WebError>>>>),
    Live(Box<LiveSession>),
}

impl Session {
    async fn started(self) -> Result<LiveSession, WebError> {
        match self {
            Session::Starting(start) => start.await,
            Session::Live(live) => Ok(*live),
        }
    }
}

/// A live diarization session (`Diarizer.stream`).
#[wasm_bindgen]
pub struct LiveDiarization {
    /// `None` once ended (or when its start failed). Pushes take turns: a second waits for the first.
    live: Rc<async_lock::Mutex<Option<Session>>>,
}

#[wasm_bindgen]
impl LiveDiarization {
    /// Feeds 16 kHz mono samples (any number); the events they made final, as `diarize --stream` prints them:
    /// `{ event: "start", speaker, name?, time }`, `{ event: "end", speaker, name?, time, start, end }` (`name` for
    /// an enrolled speaker).
    pub fn push(&self, samples: Float32Array) -> Promise {
        let (live, samples) = (self.live.clone(), samples.to_vec());
        future_to_promise(async move {
            let mut slot = live.lock().await;
            let session = slot.take().ok_or_else(|| rejected(WebError::Ended))?;
            let mut session = session.started().await.map_err(rejected)?;
            let pushed = diarizer::push(&mut session, &samples).await;
            *slot = Some(Session::Live(Box::new(session)));
            Ok(event_objects(pushed.map_err(rejected)?)?.into())
        })
    }

    /// Ends the stream: the last events, an array that also carries the whole stream's segments (as a regular
    /// expression's match carries its `index`): `segments` (`[{ speaker, name?, start, end }]`, by start then
    /// speaker) and `text`, as `diarize --stream --segments` writes them in `format` (`rttm`, default, `json` or
    /// `csv`; `uri` the RTTM file id).
    pub fn end(&self, options: JsValue) -> Promise {
        let (live, options) = (self.live.clone(), options_json(&options));
        future_to_promise(async move {
            let options = TextOptions::from_json(&options?).map_err(rejected)?;
            let session = live.lock().await.take().ok_or_else(|| rejected(WebError::Ended))?;
            let session = session.started().await.map_err(rejected)?;
            let ended = diarizer::end(session, &options).await.map_err(rejected)?;
            let events = event_objects(ended.events)?;
            set(&events, "segments", segment_objects(&ended.segments.segments, &ended.segments.names));
            set(&events, "text", ended.segments.text.as_str());
            Ok(events.into())
        })
    }
}
