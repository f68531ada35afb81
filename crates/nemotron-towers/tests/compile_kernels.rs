//! The pipelines a model compiles ahead of its first call ([`Model::compile_kernels`]) are every pipeline its calls
//! then take (none is compiled later), and no more: a fresh context running the same calls without compiling first
//! ends with the same set. The calls are what the front ends run: diarization of a short and a 40 s recording, a live
//! session of every named mode, and with a Transcribe checkpoint encoding, the word-timestamp head and its
//! log-probabilities. It runs on the test adapter and on it with subgroups masked (the f32 attention's other exchange);
//! `NEMOTRON_PRECISION=f32` runs it on the f32 path where the adapter has tensor cores; where it has them, the fast
//! precision's pipelines are checked too.

mod common;

use std::ops::ControlFlow;
use std::path::Path;

use audio_kernels::gemm::tensor_cores_available;
use common::test_options;
use gpu_core::{Capability, Gpu, GpuOptions};
use nemotron_testkit::{test_gpu, test_gpu_options};
use nemotron_towers::blocking::Block;
use nemotron_towers::synthetic::seeded_audio;
use nemotron_towers::{COMPILING_KERNELS, Model, ModelOptions, Precision, StreamingMode};

fn load(gpu: &Gpu, case: &str, options: &ModelOptions) -> Model {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/reference").join(case);
    Model::load(gpu, &dir, options).block().unwrap_or_else(|e| panic!("loading {case}: {e}"))
}

fn fresh_gpu(options: &GpuOptions) -> Gpu {
    Gpu::with_options(options).block().expect("GPU tests need an adapter")
}

fn run_every_call(model: &Model) {
    let recordings = [seeded_audio(2.5, 1), seeded_audio(40.0, 2)];
    for samples in &recordings {
        model.diarizer().diarize_audio(samples, &mut |_, _, _| ControlFlow::Continue(())).block().unwrap();
    }
    for mode in StreamingMode::NAMED {
        let mut session = model.diarizer().session(mode).unwrap();
        session.push(&recordings[1][..16_000 * 6]).block().unwrap();
        session.finish().block().unwrap();
    }
    if let Model::Transcribe(m) = model {
        for samples in &recordings {
            let outputs = m.encode_audio(samples, &mut |_, _, _| ControlFlow::Continue(())).block().unwrap();
            if m.word_timestamp_head().is_ok() {
                m.word_timestamp_logits(&outputs).block().unwrap();
                m.word_timestamp_log_probs(&outputs, &[0, 1, 2], &mut |_, _| Ok(())).block().unwrap();
            }
        }
    }
}

#[test]
fn a_model_compiles_at_load_every_pipeline_its_calls_take_and_no_more() {
    let masked = GpuOptions { masked_capabilities: vec![Capability::Subgroups], ..test_gpu_options() };
    for options in [test_gpu_options(), masked] {
        for case in ["diar-tiny", "tiny-release-chunks"] {
            let case = format!("{case} (masked: {:?})", options.masked_capabilities);
            compiles_what_its_calls_take(&options, &test_options(), &case);
        }
    }
}

/// The fast precision's f16 products are other pipelines than the split ones: a model loaded with it compiles those.
#[test]
fn a_fast_model_compiles_at_load_every_pipeline_its_calls_take() {
    let mut fast = test_options();
    fast.matmul.precision = Precision::Fast;
    if !tensor_cores_available(test_gpu(), fast.matmul) {
        eprintln!("no tensor cores: the fast precision is the f32 path, which the test above covers");
        return;
    }
    compiles_what_its_calls_take(&test_gpu_options(), &fast, "tiny-release-chunks (fast)");
}

fn compiles_what_its_calls_take(options: &GpuOptions, model_options: &ModelOptions, case: &str) {
    let dir = case.split(' ').next().unwrap_or(case);
    let gpu = fresh_gpu(options);
    let model = load(&gpu, dir, model_options);
    let mut reported = Vec::new();
    let mut progress = |stage: &str, done, all| {
        reported.push((stage.to_string(), done, all));
        ControlFlow::Continue(())
    };
    model.compile_kernels(&mut progress).block().unwrap();
    let compiled = gpu.pipeline_labels();
    let listed: Vec<String> = model.kernels().iter().map(|k| k.label()).collect();
    assert!(listed.iter().all(|label| compiled.contains(label)), "{case}: a listed pipeline was not compiled");
    let all = listed.len();
    assert_eq!(reported.first(), Some(&(COMPILING_KERNELS.to_string(), 0, all)), "{case}");
    assert_eq!(reported.last(), Some(&(COMPILING_KERNELS.to_string(), all, all)), "{case}");
    assert_eq!(reported.len(), all + 1, "{case}: one report per pipeline and the end");
    run_every_call(&model);
    assert_eq!(gpu.pipeline_labels(), compiled, "{case}: a call compiled a pipeline the load had not");

    let lazy = fresh_gpu(options);
    run_every_call(&load(&lazy, dir, model_options));
    assert_eq!(lazy.pipeline_labels(), compiled, "{case}: the load compiled pipelines no call took");
}
