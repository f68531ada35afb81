//! Reading the upstream reference cases under `testdata/reference/<case>/`, and broken copies of
//! the bundled model for the error tests.

#![allow(dead_code)] // each test binary uses a different part of this module

use std::ops::ControlFlow;
use std::path::PathBuf;

use safetensors::tensor::TensorView;
use safetensors::{Dtype, SafeTensors};

/// The front-end parts of one reference case.
pub struct ReferenceCase {
    pub name: &'static str,
    pub dir: PathBuf,
    pub waveform: Vec<f32>,
    /// `[frames, 128]`
    pub input_features: Vec<f32>,
    pub input_features_mask: Vec<i32>,
    /// The checkpoint's bf16 `perception.preprocessor.featurizer.window` and `.fb`, when it has them.
    pub window: Option<Vec<f32>>,
    pub filterbank: Option<Vec<f32>>,
}

pub const CASES: [&str; 3] = ["tiny-chunks", "tiny-release-chunks", "diar-tiny"];

pub fn case_dir(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../testdata/reference").join(name)
}

pub fn load(name: &'static str) -> ReferenceCase {
    let dir = case_dir(name);
    let reference_bytes = std::fs::read(dir.join("reference.safetensors")).expect("reference.safetensors");
    let reference = SafeTensors::deserialize(&reference_bytes).expect("parse reference.safetensors");
    let model_bytes = std::fs::read(dir.join("model.safetensors")).expect("model.safetensors");
    let model = SafeTensors::deserialize(&model_bytes).expect("parse model.safetensors");
    let optional = |key: &str| model.tensor(key).ok().map(|view| widen(key, &view));
    ReferenceCase {
        name,
        waveform: tensor_f32(&reference, "waveform"),
        input_features: tensor_f32(&reference, "input_features"),
        input_features_mask: tensor_i32(&reference, "input_features_mask"),
        window: optional("perception.preprocessor.featurizer.window"),
        filterbank: optional("perception.preprocessor.featurizer.fb"),
        dir,
    }
}

pub fn tensor_f32(tensors: &SafeTensors, key: &str) -> Vec<f32> {
    widen(key, &tensors.tensor(key).unwrap_or_else(|e| panic!("tensor {key}: {e}")))
}

/// A tensor widened to f32 (F32 or BF16 storage).
fn widen(key: &str, view: &TensorView) -> Vec<f32> {
    let bytes = view.data();
    match view.dtype() {
        Dtype::F32 => bytes.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect(),
        Dtype::BF16 => bytes.chunks_exact(2).map(|b| half::bf16::from_le_bytes([b[0], b[1]]).to_f32()).collect(),
        other => panic!("tensor {key}: unexpected dtype {other:?}"),
    }
}

pub fn tensor_i32(tensors: &SafeTensors, key: &str) -> Vec<i32> {
    let view = tensors.tensor(key).unwrap_or_else(|e| panic!("tensor {key}: {e}"));
    assert_eq!(view.dtype(), Dtype::I32, "tensor {key}");
    view.data().chunks_exact(4).map(|b| i32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect()
}

/// A model directory with the bundled model's config and `weights` as its `model.safetensors`.
pub fn model_dir(weights: &[u8]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::copy(case_dir("tiny-release-chunks").join("config.json"), dir.path().join("config.json"))
        .expect("copy config.json");
    std::fs::write(dir.path().join("model.safetensors"), weights).expect("write model.safetensors");
    dir
}

/// The bundled model's weights with `edit` applied to each (name, tensor); `None` drops it.
pub fn edited_weights(
    edit: impl Fn(
        &str,
        nemotron_testkit::towers::tensor_file::Tensor,
    ) -> Option<nemotron_testkit::towers::tensor_file::Tensor>,
) -> Vec<u8> {
    use nemotron_testkit::towers::tensor_file::{Tensor, serialize};
    let path = case_dir("tiny-release-chunks").join("model.safetensors");
    let checkpoint = nemotron_testkit::towers::Checkpoint::open(&path).expect("the bundled model opens");
    let tensors: Vec<(String, Tensor)> = checkpoint
        .names()
        .filter_map(|name| {
            let t = checkpoint.tensor(name).expect("listed tensor");
            let tensor = Tensor { dtype: t.dtype, shape: t.shape.to_vec(), bytes: t.bytes.to_vec() };
            edit(name, tensor).map(|t| (name.to_string(), t))
        })
        .collect();
    serialize(&tensors, Default::default()).expect("serialize")
}

/// The model settings tests run with: the matrix path of the environment (`NEMOTRON_PRECISION=f32` tests the f32
/// path on an adapter with tensor cores).
pub fn test_options() -> nemotron_testkit::towers::ModelOptions {
    nemotron_testkit::towers::ModelOptions { matmul: nemotron_testkit::test_matmul(), ..Default::default() }
}

/// The reference cases' tolerance against upstream's f64 outputs (relative error, docs/model.md §12).
pub const REFERENCE_TOLERANCE: f64 = 1e-5;

/// The standalone diarizer of reference case `diar-tiny` loaded on `gpu` with `options`, run on the case's own
/// features: its outputs and the case's reference file (upstream's f64 outputs).
pub fn diar_tiny_outputs(
    gpu: &nemotron_testkit::towers::Gpu,
    options: &nemotron_testkit::towers::ModelOptions,
) -> (nemotron_testkit::towers::Diarization, nemotron_testkit::towers::Checkpoint) {
    use nemotron_testkit::towers::blocking::Block;
    use nemotron_testkit::towers::{Checkpoint, Model, tensor_file::read_features};
    let dir = case_dir("diar-tiny");
    let Model::Diarization(diarizer) = Model::load(gpu, &dir, options).block().unwrap() else {
        panic!("diar-tiny is a diarization checkpoint")
    };
    let c = diarizer.config();
    let reference = dir.join("reference.safetensors");
    let features = read_features(&reference, c.encoder.mel_bins, c.encoder.subsampling).unwrap();
    let out = diarizer.diarize_features(features, &mut |_, _, _| ControlFlow::Continue(())).block().unwrap();
    (out, Checkpoint::open(&reference).unwrap())
}

/// The standalone diarizer of reference case `diar-tiny` on `gpu`, from the case's own features: its speaker logits
/// and probabilities against upstream's f64 outputs.
pub fn diarizer_matches_upstream(gpu: &nemotron_testkit::towers::Gpu) {
    use nemotron_testkit::assert_close;
    let (out, r) = diar_tiny_outputs(gpu, &test_options());
    let probabilities = r.f64("speaker_probabilities").unwrap();
    assert_close(
        "diar-tiny: speaker_logits",
        &out.speaker_logits,
        &r.f64("speaker_logits").unwrap(),
        REFERENCE_TOLERANCE,
    );
    assert_close("diar-tiny: speaker_probabilities", &out.speaker_probabilities, &probabilities, REFERENCE_TOLERANCE);
}
