//! The functions the JS API calls, run natively (lavapipe in CI), against the native CLI path's values in
//! `testdata/web/`: what the browser test checks, where no browser is needed, so that the package's own logic is
//! tested whatever WebGPU can run.

#![cfg(not(target_arch = "wasm32"))]

use std::sync::Arc;

use nemotron_towers::Checkpoint;
use nemotron_web::diarizer::Loaded;
use nemotron_web::files::NamedFile;
use nemotron_web::options::{DiarizeOptions, StreamOptions};
use pollster::block_on;

static DEMO: &[u8] = include_bytes!("../../../testdata/web/demo.safetensors");
static DIAR_TINY: &[u8] = include_bytes!("../../../testdata/web/diar-tiny.safetensors");
static ERRORS: &str = include_str!("../../../testdata/web/errors.json");
static DIAR_TINY_CONFIG: &str = include_str!("../../../testdata/reference/diar-tiny/config.json");
static DIAR_TINY_WEIGHTS: &[u8] = include_bytes!("../../../testdata/reference/diar-tiny/model.safetensors");

fn diar_tiny_files(config: &[u8], weights: &[u8]) -> Vec<NamedFile> {
    vec![
        NamedFile { name: "config.json".into(), bytes: Arc::from(config) },
        NamedFile { name: "model.safetensors".into(), bytes: Arc::from(weights) },
    ]
}

fn relative_error(found: &[f32], expected: &[f32]) -> f64 {
    assert_eq!(found.len(), expected.len());
    let diff: f64 = found.iter().zip(expected).map(|(a, b)| f64::from(a - b).powi(2)).sum::<f64>().sqrt();
    let norm: f64 = expected.iter().map(|b| f64::from(*b).powi(2)).sum::<f64>().sqrt();
    diff / norm.max(f64::MIN_POSITIVE)
}

fn matches_the_native_run(loaded: &Loaded, golden: &[u8]) {
    let golden = Checkpoint::from_bytes("golden", golden.to_vec()).unwrap();
    let samples = golden.f32("samples").unwrap();
    let metadata = golden.metadata();
    let diarization = block_on(loaded.diarize(&samples)).unwrap();
    for (found, tensor) in
        [(&diarization.speaker_logits, "speaker_logits"), (&diarization.speaker_probabilities, "speaker_probabilities")]
    {
        let error = relative_error(found, &golden.f32(tensor).unwrap());
        assert!(error <= 1e-5, "{tensor}: {error:.3e} relative");
    }
    let options = DiarizeOptions::from_json(r#"{"format": "json"}"#).unwrap();
    assert_eq!(loaded.segments(&diarization, &options), metadata["segments_json"]);

    let mut live = loaded.stream(StreamOptions::from_json("null").unwrap()).unwrap();
    let piece: usize = metadata["stream_piece"].parse().unwrap();
    let mut lines = Vec::new();
    for chunk in samples.chunks(piece) {
        lines.extend(block_on(live.push(chunk)).unwrap());
    }
    lines.extend(block_on(live.end()).unwrap());
    assert_eq!(lines.join("\n"), metadata["stream_events"]);
}

#[test]
fn the_demo_model_matches_the_native_run() {
    matches_the_native_run(&block_on(Loaded::demo()).unwrap(), DEMO);
}

#[test]
fn diar_tiny_matches_the_native_run() {
    let loaded = block_on(Loaded::load(diar_tiny_files(DIAR_TINY_CONFIG.as_bytes(), DIAR_TINY_WEIGHTS))).unwrap();
    assert_eq!(loaded.description(), "Nemotron 3 Diarization checkpoint");
    matches_the_native_run(&loaded, DIAR_TINY);
}

#[test]
fn refusals_are_the_clis_sentences() {
    let errors: serde_json::Value = serde_json::from_str(ERRORS).unwrap();
    let expected = |case: &str| errors[case]["message"].as_str().unwrap().to_string();
    let keep = errors["truncated_weights"]["keep_bytes"].as_u64().unwrap() as usize;
    let truncated = diar_tiny_files(DIAR_TINY_CONFIG.as_bytes(), &DIAR_TINY_WEIGHTS[..keep]);
    assert_eq!(block_on(Loaded::load(truncated)).err().map(|e| e.sentence()), Some(expected("truncated_weights")));
    let config = errors["config_not_json"]["config"].as_str().unwrap();
    let not_json = diar_tiny_files(config.as_bytes(), DIAR_TINY_WEIGHTS);
    assert_eq!(block_on(Loaded::load(not_json)).err().map(|e| e.sentence()), Some(expected("config_not_json")));
    let demo = block_on(Loaded::demo()).unwrap();
    assert_eq!(block_on(demo.diarize(&[])).err().map(|e| e.sentence()), Some(expected("empty_audio")));
}
