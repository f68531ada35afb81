//! The one load path: a load lists (and so checks) each tensor once, and builds its layers from exactly the tensors
//! it checked; the random model asks for the tensors a checkpoint of its config would be checked for.

use std::collections::HashMap;

use audio_kernels::Weight;
use gpu_core::GpuBuffer;
use nemotron_testkit::{test_gpu, test_matmul};

use super::*;
use crate::blocking::Block;
use crate::weights::WeightStore;

/// Counts the tensors a build asks its store for.
struct Counting<S> {
    inner: S,
    asked: HashMap<String, usize>,
}

impl<S> Counting<S> {
    fn ask(&mut self, name: &str) {
        *self.asked.entry(name.to_string()).or_default() += 1;
    }
}

impl<S: GpuWeights> WeightStore for Counting<S> {
    type Matrix = Weight;
    type Vector = GpuBuffer;
    fn matrix(&mut self, parts: &[String], part_shape: &[usize], rows: usize, cols: usize) -> Result<Weight> {
        parts.iter().for_each(|part| self.ask(part));
        self.inner.matrix(parts, part_shape, rows, cols)
    }
    fn vector(&mut self, name: &str, len: usize) -> Result<GpuBuffer> {
        self.ask(name);
        self.inner.vector(name, len)
    }
    fn transposed_conv(&mut self, name: &str, shape: [usize; 3]) -> Result<Weight> {
        self.ask(name);
        self.inner.transposed_conv(name, shape)
    }
}

impl<S: GpuWeights> GpuWeights for Counting<S> {
    fn gpu(&self) -> &Gpu {
        self.inner.gpu()
    }
}

/// How many times each name is listed.
fn tally<'a>(names: impl Iterator<Item = &'a String>) -> HashMap<String, usize> {
    let mut counts = HashMap::new();
    for name in names {
        *counts.entry(name.clone()).or_default() += 1;
    }
    counts
}

fn reference_case(case: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/reference").join(case)
}

#[test]
fn a_load_checks_each_tensor_once_and_builds_from_the_checked_ones() {
    let matmul = test_matmul();
    for (case, file, has_head) in [
        ("tiny-chunks", "model.safetensors", true),
        ("tiny-chunks", "model.hf.safetensors", true),
        ("diar-tiny", "model.safetensors", false),
    ] {
        let label = format!("{case}/{file}");
        let config = ModelConfig::from_file(&reference_case(case).join("config.json")).unwrap();
        let checkpoint = Checkpoint::open(&reference_case(case).join(file)).unwrap();
        let names = ModelNames::detect(&checkpoint).unwrap();
        let head = names.word_timestamp_names(&checkpoint).ok();
        assert_eq!(head.is_some(), has_head, "{label}: the word-timestamp head");
        let expected = expected_tensors(&config, &names, head).unwrap();
        let checked = tally(expected.iter().map(|(name, _)| name));
        assert!(checked.values().all(|&n| n == 1), "{label}: a tensor is listed (and checked) twice");
        let store = GpuStore::checked(test_gpu(), &checkpoint, &matmul, &expected).unwrap();
        let mut counting = Counting { inner: store, asked: HashMap::new() };
        let frontend = LogMel::new(None, None).unwrap();
        let parts = Parts { names: &names, head, frontend, source: checkpoint.dir(), lose_device_at_step_of: None };
        Model::build(&mut counting, config, parts).block().unwrap();
        assert_eq!(counting.asked, checked, "{label}: the layers are built from the checked tensors, each read once");
    }
}

#[test]
fn the_random_model_is_built_from_what_a_checkpoint_would_be_checked_for() {
    let config = ModelConfig::from_file(&reference_case("tiny-chunks").join("config.json")).unwrap();
    let names = ModelNames::nemo();
    let expected = expected_tensors(&config, &names, names.word_timestamps.as_ref()).unwrap();
    let matmul = test_matmul();
    let store = RandomStore { gpu: test_gpu(), rng: Rng::new(1), matmul: &matmul };
    let mut counting = Counting { inner: store, asked: HashMap::new() };
    let parts = Parts {
        names: &names,
        head: names.word_timestamps.as_ref(),
        frontend: LogMel::new(None, None).unwrap(),
        source: Path::new("random weights"),
        lose_device_at_step_of: None,
    };
    Model::build(&mut counting, config, parts).block().unwrap();
    assert_eq!(counting.asked, tally(expected.iter().map(|(name, _)| name)));
}
