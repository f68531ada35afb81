//! Time to the first result in a headless Chromium on WebGPU (`scripts/web-test.sh`): a model's load compiles every
//! pipeline its calls take, so the first diarization after `load` costs about what the next ones do. Timed on
//! `diar-tiny`'s recording (9.13 s, the audio of the CLI comparison in `docs/browser.md`) for the demo model and
//! `diar-tiny`, through `speakerActivity`: the diarizer's front end and GPU work, where the compilation would show,
//! without the segment rules and writers of `diarize`, whose wasm code the browser runs unoptimised at its first calls
//! and optimises in the background (on a busy machine that alone made a first `diarize` of the demo model 1.7 times
//! the next ones). The times are printed (`-- --nocapture`).

#![cfg(target_arch = "wasm32")]

mod support;

use js_sys::{Array, Float32Array, Function, Uint8Array};
use nemotron_towers::Checkpoint;
use nemotron_web::bindings::Diarizer;
use support::{CompileStart, file, message, now};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;
use wasm_bindgen_test::{console_log, wasm_bindgen_test, wasm_bindgen_test_configure};

wasm_bindgen_test_configure!(run_in_browser);

static RECORDING: &[u8] = include_bytes!("../../../testdata/reference/diar-tiny/reference.safetensors");
static DIAR_TINY_CONFIG: &str = include_str!("../../../testdata/reference/diar-tiny/config.json");
static DIAR_TINY_WEIGHTS: &[u8] = include_bytes!("../../../testdata/reference/diar-tiny/model.safetensors");

/// How much longer than the steady state the first diarization may take: what is left of a first call's own costs
/// (the first wasm code runs unoptimised) and a busy machine's noise. Pipelines compiled at first use instead of at
/// load make it tens of times longer (SwiftShader compiles them on the CPU, about 2 s each).
const FIRST_OVER_STEADY: f64 = 1.5;

/// Loads a model (`load` given the progress callback), diarizes the recording four times, prints the times and
/// checks the first against the steady state: the median of the next three, which one slow call on a busy machine
/// does not move.
async fn first_and_steady<F>(model: &str, load: impl FnOnce(Function) -> F)
where
    F: std::future::Future<Output = Result<Diarizer, JsValue>>,
{
    let recording = Checkpoint::from_bytes("recording", RECORDING.to_vec()).expect("a safetensors file");
    let samples = Float32Array::from(recording.f32("waveform").expect("the waveform").as_slice());
    let compiling = CompileStart::default();
    let started = now();
    let diarizer = load(compiling.callback()).await.map_err(message);
    let loaded = now();
    let diarizer = diarizer.expect("the model loads");
    let compiling = compiling.started();
    let mut times = Vec::new();
    for _ in 0..4 {
        let start = now();
        let activity =
            JsFuture::from(diarizer.speaker_activity(samples.clone(), JsValue::UNDEFINED)).await.map_err(message);
        times.push(now() - start);
        activity.expect("diarized");
    }
    let seconds = samples.length() as f64 / 16_000.0;
    let mut next = times[1..].to_vec();
    next.sort_by(f64::total_cmp);
    let steady = next[1];
    console_log!(
        "{model}: load {:.2} s (kernels compiled in the last {:.2} s); {seconds:.2} s of audio diarized in {:.2} s \
         (first), then {:.2} s, {:.2} s, {:.2} s (steady {steady:.2} s: {:.2} s of audio per second)",
        loaded - started,
        loaded - compiling,
        times[0],
        times[1],
        times[2],
        times[3],
        seconds / steady,
    );
    assert!(
        times[0] <= FIRST_OVER_STEADY * steady,
        "{model}: the first diarization took {:.2} s, the next ones {steady:.2} s (median)",
        times[0],
    );
}

#[wasm_bindgen_test]
async fn the_demo_models_first_diarization_costs_what_the_next_do() {
    first_and_steady("demo model", |progress| Diarizer::demo(Some(progress))).await;
}

#[wasm_bindgen_test]
async fn diar_tinys_first_diarization_costs_what_the_next_do() {
    let config = Uint8Array::from(DIAR_TINY_CONFIG.as_bytes());
    let files =
        Array::of2(&file("config.json", &config), &file("model.safetensors", &Uint8Array::from(DIAR_TINY_WEIGHTS)));
    first_and_steady("diar-tiny", |progress| Diarizer::load(files, Some(progress))).await;
}
