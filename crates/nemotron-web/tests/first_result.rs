//! Time to the first result in a headless Chromium on WebGPU (`scripts/web-test.sh`): a model's load compiles every
//! pipeline its calls take, so the first diarization after the load compiles none and costs about what the next ones
//! do. Run through the async functions the JS bindings call (`nemotron_web::diarizer`), which lets the test count the
//! pipelines on the model's GPU context. Timed on `diar-tiny`'s recording (9.13 s, the audio of the CLI comparison in
//! `docs/browser.md`) for the demo model and `diar-tiny`, each diarization what `Diarizer.diarize` does: front end,
//! GPU work, the segment rules and the RTTM writer (about 1,700 to 2,000 segments for these random models, so the
//! post-processing is no small part). The times are printed (`-- --nocapture`).

#![cfg(target_arch = "wasm32")]

mod support;

use std::ops::ControlFlow;
use std::sync::Arc;

use nemotron_engine::Engine;
use nemotron_towers::Checkpoint;
use nemotron_web::WebError;
use nemotron_web::diarizer::{self, NamedFile};
use nemotron_web::options::DiarizeOptions;
use support::now;
use wasm_bindgen_test::{console_log, wasm_bindgen_test, wasm_bindgen_test_configure};

wasm_bindgen_test_configure!(run_in_browser);

static RECORDING: &[u8] = include_bytes!("../../../testdata/reference/diar-tiny/reference.safetensors");
static DIAR_TINY_CONFIG: &[u8] = include_bytes!("../../../testdata/reference/diar-tiny/config.json");
static DIAR_TINY_WEIGHTS: &[u8] = include_bytes!("../../../testdata/reference/diar-tiny/model.safetensors");

/// How much longer than the steady state the first diarization may take. What is asserted exactly is that it
/// compiles no pipeline; this bound only catches a first call gone slow for another reason. What is left of a first
/// call's own costs (the browser runs wasm code unoptimised at its first calls and optimises it in the background)
/// and a busy machine's noise made it 1.04–1.50× the median of the next three on 2 cores with builds running beside;
/// one pipeline compiled at first use adds about 2 s (SwiftShader compiles on the CPU), all of them tens of times
/// the steady state.
const FIRST_OVER_STEADY: f64 = 3.0;

/// The models timed.
#[derive(Clone, Copy)]
enum Model {
    Demo,
    DiarTiny,
}

impl Model {
    fn name(self) -> &'static str {
        match self {
            Self::Demo => "demo model",
            Self::DiarTiny => "diar-tiny",
        }
    }

    /// What `Diarizer.demo` and `Diarizer.load` do.
    async fn load(self, progress: diarizer::LoadProgress<'_>) -> Result<Engine, WebError> {
        match self {
            Self::Demo => diarizer::demo(progress).await,
            Self::DiarTiny => {
                let files: Vec<NamedFile> = vec![
                    ("config.json".into(), Arc::from(DIAR_TINY_CONFIG)),
                    ("model.safetensors".into(), Arc::from(DIAR_TINY_WEIGHTS)),
                ];
                diarizer::load(files, progress).await
            }
        }
    }
}

/// Loads a model, diarizes the recording four times, prints the times and
/// checks that no diarization compiled a pipeline, and the first's time against the steady state: the median of the
/// next three, which one slow call on a busy machine does not move.
async fn first_and_steady(model: Model) {
    let (load, model) = (model, model.name());
    let recording = Checkpoint::from_bytes("recording", RECORDING.to_vec()).expect("a safetensors file");
    let samples = recording.f32("waveform").expect("the waveform");
    let mut compiling = None;
    let started = now();
    let engine = load
        .load(&mut |stage, _, _| {
            if stage.starts_with(nemotron_engine::COMPILING_KERNELS) && compiling.is_none() {
                compiling = Some(now());
            }
        })
        .await;
    let loaded = now();
    let engine = engine.unwrap_or_else(|e| panic!("{model}: the model does not load: {e}"));
    let compiling = compiling.expect("the load reports its kernels' compilation");
    let compiled_at_load = engine.gpu().pipelines_compiled();
    let options = DiarizeOptions::from_json("null").expect("the default options");
    let mut times = Vec::new();
    for call in 0..4 {
        let start = now();
        let segments = diarizer::segments(&engine, samples.clone(), &options, None, &mut go_on).await;
        times.push(now() - start);
        let segments = segments.unwrap_or_else(|e| panic!("{model}: diarization {call} failed: {e}"));
        if call == 0 {
            console_log!("{model}: {} segments", segments.text.lines().count());
        }
        assert_eq!(
            engine.gpu().pipelines_compiled(),
            compiled_at_load,
            "{model}: diarization {call} compiled pipelines the load did not"
        );
    }
    let seconds = samples.len() as f64 / 16_000.0;
    let mut next = times[1..].to_vec();
    next.sort_by(f64::total_cmp);
    let steady = next[1];
    console_log!(
        "{model}: load {:.2} s (kernels compiled in the last {:.2} s, {compiled_at_load} pipelines); {seconds:.2} s of \
         audio diarized in {:.2} s (first), then {:.2} s, {:.2} s, {:.2} s (steady {steady:.2} s: {:.2} s of audio \
         per second)",
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

/// A diarization's progress heard by nobody, which lets every step run.
fn go_on(_stage: &str, _done: usize, _all: usize) -> ControlFlow<()> {
    ControlFlow::Continue(())
}

#[wasm_bindgen_test]
async fn the_demo_models_first_diarization_costs_what_the_next_do() {
    first_and_steady(Model::Demo).await;
}

#[wasm_bindgen_test]
async fn diar_tinys_first_diarization_costs_what_the_next_do() {
    first_and_steady(Model::DiarTiny).await;
}
