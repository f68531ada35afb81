//! A load of only the diarizer ([`ModelParts::Diarizer`]) of a Transcribe checkpoint: a diarization model whose
//! diarization is the whole model's, bit for bit, which holds less GPU memory and compiles fewer pipelines; the
//! other parts' tensors are neither checked nor read, so their shard need not even be there.

mod common;

use std::collections::HashMap;
use std::ops::ControlFlow;
use std::sync::Arc;

use common::{case_dir, test_options};
use gpu_core::Gpu;
use nemotron_testkit::test_gpu_options;
use nemotron_towers::blocking::Block;
use nemotron_towers::checkpoint::{CONFIG_FILE, CheckpointFiles, INDEX_FILE, NamedFiles};
use nemotron_towers::tensor_file::{Tensor, read_features, serialize};
use nemotron_towers::{Checkpoint, Diarization, Model, ModelOptions, ModelParts};

const CASE: &str = "tiny-release-chunks";

/// The prefixes of the diarizer's tensors (the front end's, the Sortformer's and its head's) in the release's names.
const DIARIZER_PREFIXES: [&str; 2] = ["perception.encoder.diarization_model.", "perception.preprocessor."];

fn diarizer_only() -> ModelOptions {
    ModelOptions { parts: ModelParts::Diarizer, ..test_options() }
}

/// A GPU context of its own, so that its memory and pipelines are one model's alone.
fn own_gpu() -> Gpu {
    Gpu::with_options(&test_gpu_options()).block().expect("GPU tests need an adapter")
}

/// The model's diarization of the case's own features.
fn diarize(model: &Model) -> Diarization {
    let c = model.diarizer().config();
    let reference = case_dir(CASE).join("reference.safetensors");
    let features = read_features(&reference, c.encoder.mel_bins, c.encoder.subsampling).unwrap();
    model.diarizer().diarize_features(features, &mut |_, _, _| ControlFlow::Continue(())).block().unwrap()
}

fn bits(values: &[f32]) -> Vec<u32> {
    values.iter().map(|v| v.to_bits()).collect()
}

#[test]
fn the_diarizer_of_a_transcribe_checkpoint_loads_alone_with_the_same_bits_in_less_memory_and_fewer_kernels() {
    let (whole_gpu, diarizer_gpu) = (own_gpu(), own_gpu());
    let whole = Model::load(&whole_gpu, &case_dir(CASE), &test_options()).block().unwrap();
    let alone = Model::load(&diarizer_gpu, &case_dir(CASE), &diarizer_only()).block().unwrap();
    assert!(matches!(whole, Model::Transcribe(_)), "{CASE} is a Transcribe checkpoint");
    assert!(matches!(alone, Model::Diarization(_)), "{CASE}'s diarizer alone loads as a diarization model");
    let (whole_bytes, alone_bytes) = (whole_gpu.memory_in_use(), diarizer_gpu.memory_in_use());
    assert!(alone_bytes < whole_bytes, "the diarizer alone holds {alone_bytes} bytes, the whole model {whole_bytes}");

    let no_progress = &mut |_: &str, _, _| ControlFlow::Continue(());
    whole.compile_kernels(no_progress).block().unwrap();
    alone.compile_kernels(no_progress).block().unwrap();
    let (whole_kernels, alone_kernels) = (whole_gpu.pipeline_labels(), diarizer_gpu.pipeline_labels());
    assert!(
        alone_kernels.len() < whole_kernels.len(),
        "the diarizer alone compiled {} pipelines, the whole model {}",
        alone_kernels.len(),
        whole_kernels.len()
    );
    let missing: Vec<_> = alone_kernels.iter().filter(|label| !whole_kernels.contains(label)).collect();
    assert!(missing.is_empty(), "the diarizer alone compiled pipelines the whole model does not: {missing:?}");

    let (want, got) = (diarize(&whole), diarize(&alone));
    assert_eq!(bits(&got.speaker_logits), bits(&want.speaker_logits), "speaker logits");
    assert_eq!(bits(&got.speaker_probabilities), bits(&want.speaker_probabilities), "speaker probabilities");
}

/// The case's checkpoint sharded in two by an index: the diarizer's tensors in one shard, every other tensor (the
/// ASR tower, the fusion and projector, the word-timestamp head) in `other.safetensors`, which is not handed over.
fn without_the_other_shard() -> CheckpointFiles {
    let checkpoint = Checkpoint::open(&case_dir(CASE).join("model.safetensors")).unwrap();
    let mut shards: HashMap<&str, Vec<(String, Tensor)>> = HashMap::new();
    let mut weight_map = HashMap::new();
    for name in checkpoint.names() {
        let t = checkpoint.tensor(name).unwrap();
        let tensor = Tensor { dtype: t.dtype, shape: t.shape.to_vec(), bytes: t.bytes.to_vec() };
        let diarizer = DIARIZER_PREFIXES.iter().any(|prefix| name.starts_with(prefix));
        let shard = if diarizer { "diarizer.safetensors" } else { "other.safetensors" };
        shards.entry(shard).or_default().push((name.to_string(), tensor));
        weight_map.insert(name.to_string(), shard);
    }
    assert!(shards.contains_key("other.safetensors"), "{CASE} has tensors besides the diarizer's");
    let index = serde_json::json!({ "weight_map": weight_map }).to_string();
    let config = std::fs::read(case_dir(CASE).join(CONFIG_FILE)).unwrap();
    let diarizer_shard = serialize(&shards["diarizer.safetensors"], HashMap::new()).unwrap();
    let files = [(CONFIG_FILE, config), (INDEX_FILE, index.into_bytes()), ("diarizer.safetensors", diarizer_shard)];
    let files = files.into_iter().map(|(name, bytes)| (name.to_string(), Arc::<[u8]>::from(bytes)));
    CheckpointFiles::Named(NamedFiles::new(files).unwrap())
}

#[test]
fn a_diarizer_only_load_reads_no_shard_without_diarizer_tensors() {
    let files = without_the_other_shard();
    let gpu = own_gpu();
    let error = match Model::from_files(&gpu, &files, &test_options()).block() {
        Ok(_) => panic!("the whole model loaded without the shard of its ASR tower"),
        Err(error) => error.to_string(),
    };
    assert!(error.contains("other.safetensors"), "the whole model's load names the missing shard: {error}");

    let alone = Model::from_files(&gpu, &files, &diarizer_only()).block().unwrap();
    let Model::Diarization(_) = &alone else { panic!("the diarizer alone loads as a diarization model") };
    let from_folder = Model::load(&gpu, &case_dir(CASE), &diarizer_only()).block().unwrap();
    let (want, got) = (diarize(&from_folder), diarize(&alone));
    assert_eq!(bits(&got.speaker_logits), bits(&want.speaker_logits), "speaker logits");
}
