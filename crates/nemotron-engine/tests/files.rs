//! A checkpoint folder's files handed over by name (what a browser has) load the folder's model: the same outputs,
//! bit for bit, and the same refusals, naming the file without the folder.

use std::ops::ControlFlow;
use std::path::PathBuf;
use std::sync::Arc;

use nemotron_engine::{
    Engine, EngineOptions, Input, ModelOptions, ModelParts, ModelSource, NamedFiles, error_sentence,
};

fn case(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../testdata/reference").join(name)
}

fn diar_tiny() -> PathBuf {
    case("diar-tiny")
}

fn load(source: &ModelSource) -> Result<Engine, nemotron_engine::EngineError> {
    Engine::load(source, &EngineOptions::default(), &mut |_, _, _| {})
}

/// The named files of diar-tiny's folder, `model.safetensors` cut to `weights` bytes.
fn files(weights: usize) -> ModelSource {
    files_of(&diar_tiny(), weights)
}

/// The named files of the single-file checkpoint in `dir`, `model.safetensors` cut to `weights` bytes.
fn files_of(dir: &std::path::Path, weights: usize) -> ModelSource {
    let read = |name: &str| std::fs::read(dir.join(name)).unwrap();
    let mut model = read("model.safetensors");
    model.truncate(weights);
    let named = [("config.json", read("config.json")), ("model.safetensors", model)]
        .map(|(name, bytes)| (name.to_string(), Arc::<[u8]>::from(bytes)));
    ModelSource::Files(NamedFiles::new(named).unwrap())
}

#[test]
fn files_handed_over_load_the_folders_model() {
    let (folder, named) = (load(&ModelSource::Folder(diar_tiny())).unwrap(), load(&files(usize::MAX)).unwrap());
    assert_eq!(named.description(), "Nemotron 3 Diarization checkpoint");
    let samples: Vec<f32> = (0..16_000).map(|i| 0.1 * (i as f32 * 0.02).sin()).collect();
    let diarize = |engine: &Engine| {
        engine.diarize(Input::Samples(samples.clone()), &mut |_, _, _| ControlFlow::Continue(())).unwrap()
    };
    let (a, b) = (diarize(&folder), diarize(&named));
    assert!(!a.logits().is_empty());
    assert_eq!(a.logits(), b.logits());
    assert_eq!(a.probabilities(), b.probabilities());
}

#[test]
fn a_broken_checkpoint_is_refused_with_the_folders_sentence() {
    let dir = tempfile::tempdir().unwrap();
    let weights = std::fs::read(diar_tiny().join("model.safetensors")).unwrap();
    std::fs::copy(diar_tiny().join("config.json"), dir.path().join("config.json")).unwrap();
    std::fs::write(dir.path().join("model.safetensors"), &weights[..4_096]).unwrap();
    let folder = load(&ModelSource::Folder(dir.path().to_path_buf())).err().map(|e| error_sentence(&e)).unwrap();
    let named = load(&files(4_096)).err().map(|e| error_sentence(&e)).unwrap();
    assert_eq!(named, folder.replace(&format!("{}/", dir.path().display()), ""));
    assert!(named.starts_with("model.safetensors: not a safetensors file"), "{named}");
}

#[test]
fn the_diarizer_alone_of_a_transcribe_checkpoint_is_described_as_such() {
    let source = files_of(&case("tiny-release-chunks"), usize::MAX);
    let whole = load(&source).unwrap();
    assert_eq!(whole.description(), "Nemotron 3.5 Transcribe checkpoint");
    let options = EngineOptions {
        model: ModelOptions { parts: ModelParts::Diarizer, ..ModelOptions::default() },
        ..EngineOptions::default()
    };
    let alone = Engine::load(&source, &options, &mut |_, _, _| {}).unwrap();
    assert_eq!(alone.description(), "Nemotron 3.5 Transcribe checkpoint (its diarizer)");
    assert!(matches!(alone.model(), nemotron_towers::Model::Diarization(_)), "only the diarizer is loaded");
}
