//! `Precision::Fast` (activations rounded to f16, each product once on the tensor cores) on the upstream reference
//! cases: every output's relative error against upstream's f64 outputs is at most upstream's own when Transformers
//! runs the model in bf16 (`model.to(torch.bfloat16)`), the figures `scripts/upstream_bf16_errors.py` wrote into each
//! case's `bf16_errors.json`. Both are whole-tensor errors, speaker-activity flips included. Where the device has
//! tensor cores (CI: Mesa's lavapipe with 8×8 matrices) the error is also above the f32-accurate tolerance, so the
//! rounded kernels are the ones that ran; elsewhere the fast precision is the f32 path.

mod common;

use std::ops::ControlFlow;

use common::{REFERENCE_TOLERANCE, case_dir, diar_tiny_outputs, test_options};
use nemotron_testkit::{rel_frobenius, test_gpu};
use nemotron_towers::blocking::Block;
use nemotron_towers::tensor_file::read_features;
use nemotron_towers::{Checkpoint, Model, ModelOptions, Precision};

use audio_kernels::gemm::tensor_cores_available;

fn fast() -> ModelOptions {
    let mut options = test_options();
    options.matmul.precision = Precision::Fast;
    options
}

/// Upstream's bf16 error of `output` in case `name` (`bf16_errors.json`'s top level).
fn bf16_error(name: &str, output: &str) -> f64 {
    let path = case_dir(name).join("bf16_errors.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let errors: serde_json::Value = serde_json::from_str(&text).expect("bf16_errors.json parses");
    errors[output].as_f64().unwrap_or_else(|| panic!("{}: no `{output}`", path.display()))
}

/// Checks one output of case `name` against its f64 reference and upstream's bf16 error.
fn check(name: &str, output: &str, got: &[f32], want: &[f64]) {
    assert_eq!(got.len(), want.len(), "{name}: {output}: length");
    let (error, bf16) = (rel_frobenius(got, want), bf16_error(name, output));
    eprintln!("{name}: {output}: fast {error:.3e}, upstream bf16 {bf16:.3e}");
    assert!(error <= bf16, "{name}: {output}: relative error {error:.3e} above upstream bf16's {bf16:.3e}");
    if tensor_cores_available(test_gpu(), fast().matmul) {
        assert!(error > REFERENCE_TOLERANCE, "{name}: {output}: error {error:.3e}: the f16 products did not run");
    }
}

fn transcribe_case(name: &str) {
    let dir = case_dir(name);
    let Model::Transcribe(model) = Model::load(test_gpu(), &dir, &fast()).block().unwrap() else {
        panic!("{name} is a Transcribe checkpoint")
    };
    let c = model.config();
    let features = read_features(&dir.join("reference.safetensors"), c.asr.mel_bins, c.asr.subsampling).unwrap();
    let out = model.encode_features(features, &mut |_, _, _| ControlFlow::Continue(())).block().unwrap();
    let head = model.word_timestamp_logits(&out).block().unwrap();
    let r = Checkpoint::open(&dir.join("reference.safetensors")).unwrap();
    let want = |key: &str| r.f64(key).unwrap();
    check(name, "asr_last_hidden_state", &out.asr_hidden, &want("asr_last_hidden_state"));
    check(name, "speaker_logits", &out.speaker_logits, &want("speaker_logits"));
    check(name, "speaker_probabilities", &out.speaker_probabilities, &want("speaker_probabilities"));
    check(name, "last_hidden_state", &out.fused, &want("last_hidden_state"));
    check(name, "audio_embeds", &out.audio_embeds, &want("audio_embeds"));
    check(name, "word_timestamp_hidden_states", &head.hidden, &want("word_timestamp_hidden_states"));
    check(name, "word_timestamp_logits", &head.logits, &want("word_timestamp_logits"));
}

#[test]
fn tiny_chunks_within_upstream_bf16() {
    transcribe_case("tiny-chunks");
}

#[test]
fn tiny_release_chunks_within_upstream_bf16() {
    transcribe_case("tiny-release-chunks");
}

#[test]
fn diar_tiny_within_upstream_bf16() {
    let (out, r) = diar_tiny_outputs(test_gpu(), &fast());
    check("diar-tiny", "speaker_logits", &out.speaker_logits, &r.f64("speaker_logits").unwrap());
    check("diar-tiny", "speaker_probabilities", &out.speaker_probabilities, &r.f64("speaker_probabilities").unwrap());
}
