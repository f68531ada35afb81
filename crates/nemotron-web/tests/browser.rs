//! The package in a headless Chromium on WebGPU (`scripts/web-test.sh`), through its JS API, against the native run
//! of the same inputs (`testdata/web/`, written by `cargo xtask golden` from the code the CLI runs): the speaker
//! logits and probabilities to 1e-5 relative, the segments as `diarize --format json` writes them (as text, and as
//! objects the package writes back to the same text), a live session's events as `diarize --stream` prints them and
//! its segments as `diarize --stream --segments` writes them, known speakers enrolled and named as
//! `enroll` then `diarize --speakers` name them, each refusal with the CLI's sentence, and a diarization's progress and
//! its cancellation by an `AbortSignal`; of a sharded Transcribe checkpoint, only the files holding the diarizer are
//! named by `weightFiles` and read by `load`.

#![cfg(target_arch = "wasm32")]

use std::cell::RefCell;
use std::rc::Rc;

use js_sys::{Array, Float32Array, JSON, Object, Reflect, Uint8Array};
use nemotron_engine::SpeakerProfile;
use nemotron_towers::Checkpoint;
use nemotron_web::bindings::{Diarizer, Speakers, write_segments};
use wasm_bindgen::closure::Closure;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use wasm_bindgen_test::{wasm_bindgen_test, wasm_bindgen_test_configure};
use web_sys::{AbortController, DomException};

wasm_bindgen_test_configure!(run_in_browser);

static DEMO: &[u8] = include_bytes!("../../../testdata/web/demo.safetensors");
static DIAR_TINY: &[u8] = include_bytes!("../../../testdata/web/diar-tiny.safetensors");
static KNOWN_SPEAKERS: &[u8] = include_bytes!("../../../testdata/web/known-speakers.safetensors");
static ERRORS: &str = include_str!("../../../testdata/web/errors.json");
static DIAR_TINY_CONFIG: &str = include_str!("../../../testdata/reference/diar-tiny/config.json");
static DIAR_TINY_WEIGHTS: &[u8] = include_bytes!("../../../testdata/reference/diar-tiny/model.safetensors");
// The demo model's checkpoint: a Transcribe checkpoint (an ASR tower, fusion and word-timestamp head beside the
// diarizer).
static DEMO_CONFIG: &str = include_str!("../../../testdata/reference/tiny-release-chunks/config.json");
static DEMO_WEIGHTS: &[u8] = include_bytes!("../../../testdata/reference/tiny-release-chunks/model.safetensors");

fn get(object: &JsValue, key: &str) -> JsValue {
    Reflect::get(object, &key.into()).unwrap_or(JsValue::UNDEFINED)
}

fn file(name: &str, bytes: &[u8]) -> JsValue {
    let entry = Object::new();
    let _ = Reflect::set(&entry, &"name".into(), &name.into());
    let _ = Reflect::set(&entry, &"bytes".into(), &Uint8Array::from(bytes));
    entry.into()
}

fn expected_error(case: &str) -> String {
    let errors: serde_json::Value = serde_json::from_str(ERRORS).expect("errors.json is JSON");
    errors[case]["message"].as_str().expect("a message").to_string()
}

/// The message of the `Error` a promise rejected with.
fn message(rejection: JsValue) -> String {
    rejection.dyn_into::<js_sys::Error>().map(|e| String::from(e.message())).unwrap_or_else(|v| format!("{v:?}"))
}

async fn diar_tiny() -> Diarizer {
    let files =
        Array::of2(&file("config.json", DIAR_TINY_CONFIG.as_bytes()), &file("model.safetensors", DIAR_TINY_WEIGHTS));
    Diarizer::load(files, None).await.map_err(message).expect("diar-tiny loads")
}

#[wasm_bindgen_test]
async fn the_gpu_is_webgpus_adapter_with_its_own_limits() {
    let diarizer = Diarizer::demo(None).await.map_err(message).expect("the demo model loads");
    let info: JsValue = diarizer.info().into();
    assert_eq!(get(&info, "backend").as_string().as_deref(), Some("BrowserWebGpu"));
    assert!(get(&info, "summary").as_string().is_some_and(|s| !s.is_empty()));
    // WebGPU's default is 128 MiB; SwiftShader's adapter offers more, which the device asked for.
    assert!(get(&info, "maxStorageBufferBindingSize").as_f64().unwrap_or(0.0) > f64::from(128u32 << 20));
}

#[wasm_bindgen_test]
async fn a_truncated_checkpoint_is_refused_with_the_clis_sentence() {
    let errors: serde_json::Value = serde_json::from_str(ERRORS).expect("errors.json is JSON");
    let keep = errors["truncated_weights"]["keep_bytes"].as_u64().expect("a length") as usize;
    let files = Array::of2(
        &file("config.json", DIAR_TINY_CONFIG.as_bytes()),
        &file("model.safetensors", &DIAR_TINY_WEIGHTS[..keep]),
    );
    let refused = Diarizer::load(files, None).await.err().map(message);
    assert_eq!(refused, Some(expected_error("truncated_weights")));
}

#[wasm_bindgen_test]
async fn a_config_that_is_not_json_is_refused_with_the_clis_sentence() {
    let errors: serde_json::Value = serde_json::from_str(ERRORS).expect("errors.json is JSON");
    let config = errors["config_not_json"]["config"].as_str().expect("a config");
    let files = Array::of2(&file("config.json", config.as_bytes()), &file("model.safetensors", DIAR_TINY_WEIGHTS));
    let refused = Diarizer::load(files, None).await.err().map(message);
    assert_eq!(refused, Some(expected_error("config_not_json")));
}

#[wasm_bindgen_test]
async fn empty_audio_is_refused_with_the_clis_sentence() {
    let diarizer = Diarizer::demo(None).await.map_err(message).expect("the demo model loads");
    let refused = JsFuture::from(diarizer.diarize(Float32Array::new_with_length(0), JsValue::NULL)).await;
    assert_eq!(refused.err().map(message), Some(expected_error("empty_audio")));
}

/// The relative error (2-norm) of `found` against `expected`.
fn relative_error(found: &[f32], expected: &[f32]) -> f64 {
    assert_eq!(found.len(), expected.len());
    let diff: f64 = found.iter().zip(expected).map(|(a, b)| f64::from(a - b).powi(2)).sum::<f64>().sqrt();
    let norm: f64 = expected.iter().map(|b| f64::from(*b).powi(2)).sum::<f64>().sqrt();
    diff / norm.max(f64::MIN_POSITIVE)
}

/// Event objects as canonical JSON text (JS numbers: `1.2` for the CLI's `1.20`).
fn canonical(events: &[JsValue]) -> Vec<String> {
    events.iter().map(|e| JSON::stringify(e).ok().and_then(|s| s.as_string()).unwrap_or_default()).collect()
}

/// Everything the native run gave, on `diarizer`.
async fn matches_the_native_run(diarizer: Diarizer, golden: &[u8]) {
    let golden = Checkpoint::from_bytes("golden", golden.to_vec()).expect("a golden file");
    let samples = golden.f32("samples").expect("samples");
    let metadata = golden.metadata();
    let input = Float32Array::from(samples.as_slice());

    let activity = JsFuture::from(diarizer.speaker_activity(input.clone(), JsValue::UNDEFINED))
        .await
        .map_err(message)
        .expect("runs");
    for (key, tensor) in [("logits", "speaker_logits"), ("probabilities", "speaker_probabilities")] {
        let found = get(&activity, key).dyn_into::<Float32Array>().expect("a Float32Array").to_vec();
        let error = relative_error(&found, &golden.f32(tensor).expect("expected values"));
        assert!(error <= 1e-5, "{key}: {error:.3e} relative");
    }

    let options = || JSON::parse(r#"{"format": "json"}"#).expect("JSON");
    let json = JsFuture::from(diarizer.diarize(input.clone(), options())).await.map_err(message).expect("runs");
    assert_eq!(json.as_string().as_deref(), Some(metadata["segments_json"].as_str()));
    let both = JsFuture::from(diarizer.segments(input, options())).await.map_err(message).expect("runs");
    assert_eq!(get(&both, "text").as_string().as_deref(), Some(metadata["segments_json"].as_str()));
    let segments = Array::from(&get(&both, "segments"));
    assert!(segments.length() > 0, "no segment: the objects' round trip would be empty");
    let written = write_segments(segments, options()).map_err(message).expect("written");
    assert_eq!(written, metadata["segments_json"]);

    let live = diarizer.stream(JsValue::NULL).map_err(message).expect("a session");
    let piece: usize = metadata["stream_piece"].parse().expect("a piece size");
    let mut events = Vec::new();
    for chunk in samples.chunks(piece) {
        let pushed = JsFuture::from(live.push(Float32Array::from(chunk))).await.map_err(message).expect("pushed");
        events.extend(Array::from(&pushed).iter());
    }
    let last = JsFuture::from(live.end(options())).await.map_err(message).expect("ended");
    events.extend(Array::from(&last).iter());
    let expected: Vec<JsValue> = metadata["stream_events"].lines().map(|l| JSON::parse(l).expect("a line")).collect();
    assert_eq!(canonical(&events), canonical(&expected));
    assert_eq!(get(&last, "text").as_string().as_deref(), Some(metadata["stream_segments_json"].as_str()));
    let written = write_segments(Array::from(&get(&last, "segments")), options()).map_err(message).expect("written");
    assert_eq!(written, metadata["stream_segments_json"]);
}

#[wasm_bindgen_test]
async fn the_demo_model_matches_the_native_run() {
    let diarizer = Diarizer::demo(None).await.map_err(message).expect("the demo model loads");
    matches_the_native_run(diarizer, DEMO).await;
}

const DIARIZER_SHARD: &str = "model-00001-of-00003.safetensors";
const ASR_SHARD: &str = "model-00002-of-00003.safetensors";
const LM_SHARD: &str = "model-00003-of-00003.safetensors";

/// An index of the demo model's checkpoint laid out as a release's: its diarizer's and front end's tensors in
/// `DIARIZER_SHARD`, the ASR tower's, fusion's and word-timestamp head's in `ASR_SHARD`, a language model's in
/// `LM_SHARD`. The single file serves as `DIARIZER_SHARD` (a shard may hold tensors its index places elsewhere).
fn transcribe_index() -> String {
    let checkpoint = Checkpoint::from_bytes("demo", DEMO_WEIGHTS.to_vec()).expect("the demo checkpoint");
    let diarizer = |name: &str| {
        ["perception.encoder.diarization_model.", "perception.preprocessor."].iter().any(|p| name.starts_with(p))
    };
    let mut weight_map: serde_json::Map<String, serde_json::Value> = checkpoint
        .names()
        .map(|name| (name.to_owned(), (if diarizer(name) { DIARIZER_SHARD } else { ASR_SHARD }).into()))
        .collect();
    assert!(weight_map.values().any(|shard| shard == ASR_SHARD), "the demo model has more than a diarizer");
    weight_map.insert("language_model.lm_head.weight".into(), LM_SHARD.into());
    serde_json::json!({ "weight_map": weight_map }).to_string()
}

#[wasm_bindgen_test]
fn weight_files_names_the_diarizers_shards_and_refuses_with_the_clis_sentence() {
    let names = |files: Array| files.iter().map(|f| f.as_string().unwrap_or_default()).collect::<Vec<_>>();
    let index = transcribe_index();
    let found = Diarizer::weight_files(DEMO_CONFIG.into(), index.as_str().into()).map_err(message).expect("named");
    assert_eq!(names(found), [DIARIZER_SHARD]);
    // Bytes serve as well as text; without an index, the single file.
    let config = Uint8Array::from(DEMO_CONFIG.as_bytes());
    let found = Diarizer::weight_files(config.buffer().into(), JsValue::NULL).map_err(message).expect("named");
    assert_eq!(names(found), ["model.safetensors"]);
    let errors: serde_json::Value = serde_json::from_str(ERRORS).expect("errors.json is JSON");
    let not_json = errors["config_not_json"]["config"].as_str().expect("a config");
    let refused = Diarizer::weight_files(not_json.into(), index.as_str().into()).err().map(message);
    assert_eq!(refused, Some(expected_error("config_not_json")));
    let refused = Diarizer::weight_files(DEMO_CONFIG.into(), JsValue::from(7)).err().map(message);
    assert_eq!(refused.as_deref(), Some("index: neither a string, a Uint8Array nor an ArrayBuffer"));
}

/// Of the files handed over, the load reads only those `weightFiles` names: a Transcribe checkpoint loads with its
/// ASR shard's bytes unreadable (reading them throws), its language-model shard absent, and another file without
/// bytes, and its diarizer is the demo model's.
#[wasm_bindgen_test]
async fn a_load_reads_only_the_diarizers_files() {
    let unreadable = Object::new();
    let _ = Reflect::set(&unreadable, &"name".into(), &ASR_SHARD.into());
    let getter = Object::new();
    let throws = js_sys::Function::new_no_args("throw new Error('the ASR shard was read')");
    let _ = Reflect::set(&getter, &"get".into(), &throws);
    Object::define_property(&unreadable, &"bytes".into(), &getter);
    let other = Object::new();
    let _ = Reflect::set(&other, &"name".into(), &"README.md".into());
    let files = [
        file("config.json", DEMO_CONFIG.as_bytes()),
        file("model.safetensors.index.json", transcribe_index().as_bytes()),
        file(DIARIZER_SHARD, DEMO_WEIGHTS),
        unreadable.into(),
        other.into(),
    ];
    let diarizer = Diarizer::load(files.iter().collect(), None).await.map_err(message).expect("the diarizer loads");
    matches_the_native_run(diarizer, DEMO).await;
}

#[wasm_bindgen_test]
async fn diar_tiny_matches_the_native_run() {
    matches_the_native_run(diar_tiny().await, DIAR_TINY).await;
}

/// `{ name, samples }`.
fn clip(name: &str, samples: &[f32]) -> JsValue {
    let entry = Object::new();
    let _ = Reflect::set(&entry, &"name".into(), &name.into());
    let _ = Reflect::set(&entry, &"samples".into(), &Float32Array::from(samples));
    entry.into()
}

/// `{ ...json, speakers }`.
fn with_speakers(json: &str, speakers: &JsValue) -> JsValue {
    let options = JSON::parse(json).expect("JSON");
    let _ = Reflect::set(&options, &"speakers".into(), speakers);
    options
}

#[wasm_bindgen_test]
async fn known_speakers_match_the_native_run() {
    let diarizer = diar_tiny().await;
    let golden = Checkpoint::from_bytes("golden", KNOWN_SPEAKERS.to_vec()).expect("a golden file");
    let (samples, metadata) = (golden.f32("samples").expect("samples"), golden.metadata());
    let clips: Vec<(String, usize, usize)> = serde_json::from_str(&metadata["clips"]).expect("the clips");
    let entries: Array = clips.iter().map(|(name, start, end)| clip(name, &samples[*start..*end])).collect();
    let enrolled = JsFuture::from(diarizer.enroll(entries)).await.map_err(message).expect("enrolled");
    let names: Vec<String> = Array::from(&get(&enrolled, "names")).iter().filter_map(|n| n.as_string()).collect();
    assert_eq!(names, clips.iter().map(|(name, ..)| name.clone()).collect::<Vec<_>>());

    // The profile file's bytes read back natively are the clips; read back by the package, the same speakers.
    let to_bytes = |speakers: &JsValue| {
        let to_bytes: js_sys::Function = get(speakers, "toBytes").dyn_into().expect("a method");
        to_bytes.call0(speakers).map_err(message).expect("bytes").dyn_into::<Uint8Array>().expect("a Uint8Array")
    };
    let bytes = to_bytes(&enrolled).to_vec();
    let profile = SpeakerProfile::from_bytes(&bytes, "toBytes()").expect("a profile");
    let expected: Vec<(String, Vec<f32>)> =
        clips.iter().map(|(name, start, end)| (name.clone(), samples[*start..*end].to_vec())).collect();
    assert_eq!(profile.clips(), expected.as_slice());
    let native = SpeakerProfile::new(expected).expect("a profile").to_bytes().expect("bytes");
    assert!(bytes == native, "toBytes() is not the native profile file, byte for byte");
    let read_back: JsValue = Speakers::from_bytes(Uint8Array::from(bytes.as_slice()).into()).expect("read").into();
    assert_eq!(SpeakerProfile::from_bytes(&to_bytes(&read_back).to_vec(), "again").expect("a profile"), profile);

    let audio = Float32Array::from(&samples[..metadata["audio_samples"].parse::<usize>().expect("a length")]);
    let rttm = JsFuture::from(diarizer.diarize(audio.clone(), with_speakers("{}", &read_back))).await;
    assert_eq!(
        rttm.map_err(message).expect("diarized").as_string().as_deref(),
        Some(metadata["segments_rttm"].as_str())
    );
    // The profile file's bytes themselves serve as well; the named segment objects write the same text back.
    let both =
        JsFuture::from(diarizer.segments(audio.clone(), with_speakers("{}", &Uint8Array::from(bytes.as_slice()))))
            .await
            .map_err(message)
            .expect("diarized");
    assert_eq!(get(&both, "text").as_string().as_deref(), Some(metadata["segments_rttm"].as_str()));
    let segments = Array::from(&get(&both, "segments"));
    assert!(segments.iter().any(|s| get(&s, "name").as_string().as_deref() == Some("alice")), "no segment of alice");
    let written = write_segments(segments, JsValue::NULL).map_err(message).expect("written");
    assert_eq!(written, metadata["segments_rttm"]);

    let live = diarizer.stream(with_speakers("{}", &enrolled)).map_err(message).expect("a session");
    let piece: usize = metadata["stream_piece"].parse().expect("a piece size");
    let mut events = Vec::new();
    for chunk in audio.to_vec().chunks(piece) {
        let pushed = JsFuture::from(live.push(Float32Array::from(chunk))).await.map_err(message).expect("pushed");
        events.extend(Array::from(&pushed).iter());
    }
    let last = JsFuture::from(live.end(JsValue::NULL)).await.map_err(message).expect("ended");
    events.extend(Array::from(&last).iter());
    let expected: Vec<JsValue> = metadata["stream_events"].lines().map(|l| JSON::parse(l).expect("a line")).collect();
    assert_eq!(canonical(&events), canonical(&expected));
    assert_eq!(get(&last, "text").as_string().as_deref(), Some(metadata["stream_segments_rttm"].as_str()));
}

/// What a diarization with `onProgress` and `signal` gave: its result, the (done, chunks) reports it heard, and the
/// signal's controller, aborted at the report of `abort_at` chunks done (or before the call, with `Some(-1.0)`).
struct Watched {
    result: Result<JsValue, JsValue>,
    heard: Vec<(f64, f64)>,
    controller: AbortController,
}

async fn watched(call: impl FnOnce(JsValue) -> js_sys::Promise, options: &str, abort_at: Option<f64>) -> Watched {
    let controller = AbortController::new().expect("an AbortController");
    if abort_at == Some(-1.0) {
        controller.abort();
    }
    let heard = Rc::new(RefCell::new(Vec::new()));
    let on_progress = Closure::<dyn FnMut(f64, f64)>::new({
        let (heard, controller) = (heard.clone(), controller.clone());
        move |done, chunks| {
            heard.borrow_mut().push((done, chunks));
            if Some(done) == abort_at {
                controller.abort();
            }
        }
    });
    let options = JSON::parse(options).expect("JSON");
    let _ = Reflect::set(&options, &"onProgress".into(), on_progress.as_ref());
    let _ = Reflect::set(&options, &"signal".into(), &controller.signal());
    let result = JsFuture::from(call(options)).await;
    let heard = heard.borrow().clone();
    Watched { result, heard, controller }
}

impl Watched {
    /// Checks that the call was cancelled by its signal after the report of `at` chunks done.
    fn cancelled_at(self, at: usize, chunks: f64) {
        let rejection = self.result.expect_err("the aborted call is rejected");
        assert!(Object::is(&rejection, &self.controller.signal().reason()), "rejected with the signal's reason");
        let name = rejection.dyn_into::<DomException>().map(|e| e.name());
        assert_eq!(name.as_deref(), Ok("AbortError"));
        let before: Vec<(f64, f64)> = (0..at).map(|done| (done as f64, chunks)).collect();
        assert_eq!(self.heard, [before, vec![(at as f64, chunks)]].concat(), "no report after the abort");
    }
}

#[wasm_bindgen_test]
async fn progress_counts_the_chunks_and_an_aborted_diarization_rejects_with_abort_error() {
    let diarizer = diar_tiny().await;
    let golden = Checkpoint::from_bytes("golden", DIAR_TINY.to_vec()).expect("a golden file");
    let (samples, metadata) = (golden.f32("samples").expect("samples"), golden.metadata());
    let input = Float32Array::from(samples.as_slice());
    let json = Some(metadata["segments_json"].as_str());
    let diarize = |options| diarizer.diarize(input.clone(), options);

    let whole = watched(diarize, r#"{"format": "json"}"#, None).await;
    assert_eq!(whole.result.map_err(message).expect("diarized").as_string().as_deref(), json);
    let chunks = whole.heard.last().expect("a report").1;
    assert!(chunks >= 2.0, "{chunks} chunk: none to abort in the middle");
    let every: Vec<(f64, f64)> = (0..=chunks as usize).map(|done| (done as f64, chunks)).collect();
    assert_eq!(whole.heard, every, "(0, chunks) before the first step, then each step's count");

    watched(diarize, r#"{"format": "json"}"#, Some(1.0)).await.cancelled_at(1, chunks);
    let segments = |options| diarizer.segments(input.clone(), options);
    watched(segments, "{}", Some(0.0)).await.cancelled_at(0, chunks);
    let activity = |options| diarizer.speaker_activity(input.clone(), options);
    watched(activity, "{}", Some(1.0)).await.cancelled_at(1, chunks);
    // A signal aborted before the call rejects it at once.
    let early = watched(diarize, "{}", Some(-1.0)).await;
    assert!(Object::is(&early.result.expect_err("rejected"), &early.controller.signal().reason()));
    assert_eq!(early.heard, []);

    // The engine diarizes as before after the aborted calls.
    let again = watched(diarize, r#"{"format": "json"}"#, None).await;
    assert_eq!(again.result.map_err(message).expect("diarized").as_string().as_deref(), json);
    assert_eq!(again.heard, every);
}
