//! The functions the JS API calls, run natively (lavapipe in CI), against the native CLI path's values in
//! `testdata/web/`: what the browser test checks, where no browser is needed, so that the package's own calls are
//! tested whatever WebGPU can run.

#![cfg(not(target_arch = "wasm32"))]

use std::collections::HashMap;
use std::ops::ControlFlow;
use std::path::Path;
use std::sync::Arc;

use nemotron_towers::Checkpoint;
use nemotron_web::diarizer::{self, NamedFile, Segments};
use nemotron_web::options::{DiarizeOptions, StreamOptions, TextOptions};
use pollster::block_on;

static DEMO: &[u8] = include_bytes!("../../../testdata/web/demo.safetensors");
static DIAR_TINY: &[u8] = include_bytes!("../../../testdata/web/diar-tiny.safetensors");
static KNOWN_SPEAKERS: &[u8] = include_bytes!("../../../testdata/web/known-speakers.safetensors");
static ERRORS: &str = include_str!("../../../testdata/web/errors.json");
static DIAR_TINY_CONFIG: &str = include_str!("../../../testdata/reference/diar-tiny/config.json");
static DIAR_TINY_WEIGHTS: &[u8] = include_bytes!("../../../testdata/reference/diar-tiny/model.safetensors");

fn diar_tiny_files(config: &[u8], weights: &[u8]) -> Vec<NamedFile> {
    vec![("config.json".into(), Arc::from(config)), ("model.safetensors".into(), Arc::from(weights))]
}

/// A diarization's progress heard by nobody, which lets every step run.
fn go_on(_stage: &str, _done: usize, _all: usize) -> ControlFlow<()> {
    ControlFlow::Continue(())
}

fn relative_error(found: &[f32], expected: &[f32]) -> f64 {
    assert_eq!(found.len(), expected.len());
    let diff: f64 = found.iter().zip(expected).map(|(a, b)| f64::from(a - b).powi(2)).sum::<f64>().sqrt();
    let norm: f64 = expected.iter().map(|b| f64::from(*b).powi(2)).sum::<f64>().sqrt();
    diff / norm.max(f64::MIN_POSITIVE)
}

fn json() -> TextOptions {
    TextOptions::from_json(r#"{"format": "json"}"#).unwrap()
}

fn matches_the_native_run(engine: &nemotron_engine::Engine, golden: &[u8]) {
    let golden = Checkpoint::from_bytes("golden", golden.to_vec()).unwrap();
    let samples = golden.f32("samples").unwrap();
    let metadata = golden.metadata();
    let diarized = block_on(diarizer::speaker_activity(engine, samples.clone(), None, &mut go_on)).unwrap();
    for (found, tensor) in [(diarized.logits(), "speaker_logits"), (diarized.probabilities(), "speaker_probabilities")]
    {
        let error = relative_error(found, &golden.f32(tensor).unwrap());
        assert!(error <= 1e-5, "{tensor}: {error:.3e} relative");
    }
    let options = DiarizeOptions::from_json(r#"{"format": "json"}"#).unwrap();
    let Segments { segments, text, .. } =
        block_on(diarizer::segments(engine, samples.clone(), &options, None, &mut go_on)).unwrap();
    assert_eq!(text, metadata["segments_json"]);
    assert!(!segments.is_empty(), "no segment: the comparison of the objects would be empty");
    assert_eq!(nemotron_engine::write_segments(&segments, options.text.format, "audio"), text);

    let mut live = diarizer::stream(engine, &StreamOptions::from_json("null").unwrap()).unwrap();
    let piece: usize = metadata["stream_piece"].parse().unwrap();
    let mut lines = Vec::new();
    for chunk in samples.chunks(piece) {
        lines.extend(block_on(diarizer::push(&mut live, chunk)).unwrap());
    }
    let ended = block_on(diarizer::end(live, &json())).unwrap();
    lines.extend(ended.events);
    assert_eq!(lines.join("\n"), metadata["stream_events"]);
    assert_eq!(ended.segments.text, metadata["stream_segments_json"]);
}

#[test]
fn the_demo_model_matches_the_native_run() {
    let mut last = None;
    let engine = block_on(diarizer::demo(&mut |stage, done, all| last = Some((stage.to_string(), done, all))));
    let (stage, done, all) = last.expect("the load reports the kernels' compilation");
    assert_eq!((stage.as_str(), done), (nemotron_engine::COMPILING_KERNELS, all));
    assert!(all > 0, "the demo model compiles its kernels at load");
    matches_the_native_run(&engine.unwrap(), DEMO);
}

#[test]
fn diar_tiny_matches_the_native_run() {
    let engine =
        block_on(diarizer::load(diar_tiny_files(DIAR_TINY_CONFIG.as_bytes(), DIAR_TINY_WEIGHTS), &mut |_, _, _| {}))
            .unwrap();
    assert_eq!(engine.description(), "Nemotron 3 Diarization checkpoint");
    matches_the_native_run(&engine, DIAR_TINY);
}

#[test]
fn known_speakers_match_the_native_run() {
    let engine =
        block_on(diarizer::load(diar_tiny_files(DIAR_TINY_CONFIG.as_bytes(), DIAR_TINY_WEIGHTS), &mut |_, _, _| {}))
            .unwrap();
    let golden = Checkpoint::from_bytes("golden", KNOWN_SPEAKERS.to_vec()).unwrap();
    let (samples, metadata) = (golden.f32("samples").unwrap(), golden.metadata());
    let clips: Vec<(String, usize, usize)> = serde_json::from_str(&metadata["clips"]).unwrap();
    let clips = clips.into_iter().map(|(name, start, end)| (name, samples[start..end].to_vec())).collect();
    let profile = block_on(diarizer::enroll(&engine, clips)).unwrap();
    assert_eq!(profile.names().collect::<Vec<_>>(), ["alice", "bob"]);
    let audio = &samples[..metadata["audio_samples"].parse::<usize>().unwrap()];

    let options = DiarizeOptions::from_json("null").unwrap();
    let named = block_on(diarizer::segments(&engine, audio.to_vec(), &options, Some(&profile), &mut go_on)).unwrap();
    assert_eq!(named.text, metadata["segments_rttm"]);
    assert_eq!(named.names.iter().flatten().count(), 2, "{:?}", named.names);

    let options = StreamOptions::from_json("null").unwrap();
    let mut live = block_on(diarizer::stream_with_speakers(&engine, &options, &profile)).unwrap();
    let mut lines = Vec::new();
    for chunk in audio.chunks(metadata["stream_piece"].parse().unwrap()) {
        lines.extend(block_on(diarizer::push(&mut live, chunk)).unwrap());
    }
    let ended = block_on(diarizer::end(live, &TextOptions::from_json("null").unwrap())).unwrap();
    lines.extend(ended.events);
    assert_eq!(lines.join("\n"), metadata["stream_events"]);
    assert_eq!(ended.segments.text, metadata["stream_segments_rttm"]);
}

/// What a load by URL fetches after `config.json` and the index: of a Transcribe checkpoint's shards, only the one
/// holding its diarizer's tensors (the package loads nothing else); without an index, the single file.
#[test]
fn a_load_by_url_fetches_only_the_shards_of_the_diarizer() {
    let case = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/reference/tiny-release-chunks");
    let checkpoint = Checkpoint::open(&case.join("model.safetensors")).unwrap();
    let diarizer = |name: &str| {
        ["perception.encoder.diarization_model.", "perception.preprocessor."].iter().any(|p| name.starts_with(p))
    };
    let shard = |name: &str| if diarizer(name) { "diarizer.safetensors" } else { "other.safetensors" };
    let weight_map: HashMap<&str, &str> = checkpoint.names().map(|name| (name, shard(name))).collect();
    assert!(weight_map.values().any(|shard| *shard == "other.safetensors"), "the case has more than a diarizer");
    let index = serde_json::json!({ "weight_map": weight_map }).to_string();
    let config: Arc<[u8]> = std::fs::read(case.join("config.json")).unwrap().into();
    let files = vec![
        ("config.json".into(), config.clone()),
        ("model.safetensors.index.json".into(), Arc::from(index.as_bytes())),
    ];
    assert_eq!(diarizer::weight_files(files).unwrap(), ["diarizer.safetensors"]);
    assert_eq!(diarizer::weight_files(vec![("config.json".into(), config)]).unwrap(), ["model.safetensors"]);
}

#[test]
fn refusals_are_the_clis_sentences() {
    let errors: serde_json::Value = serde_json::from_str(ERRORS).unwrap();
    let expected = |case: &str| errors[case]["message"].as_str().unwrap().to_string();
    let keep = errors["truncated_weights"]["keep_bytes"].as_u64().unwrap() as usize;
    let truncated = diar_tiny_files(DIAR_TINY_CONFIG.as_bytes(), &DIAR_TINY_WEIGHTS[..keep]);
    assert_eq!(
        block_on(diarizer::load(truncated, &mut |_, _, _| {})).err().map(|e| e.sentence()),
        Some(expected("truncated_weights"))
    );
    let config = errors["config_not_json"]["config"].as_str().unwrap();
    let not_json = diar_tiny_files(config.as_bytes(), DIAR_TINY_WEIGHTS);
    assert_eq!(
        block_on(diarizer::load(not_json.clone(), &mut |_, _, _| {})).err().map(|e| e.sentence()),
        Some(expected("config_not_json"))
    );
    // A load by URL refuses it before fetching the weights, with the same sentence.
    assert_eq!(diarizer::weight_files(not_json).err().map(|e| e.sentence()), Some(expected("config_not_json")));
    let demo = block_on(diarizer::demo(&mut |_, _, _| {})).unwrap();
    let refused = block_on(diarizer::speaker_activity(&demo, Vec::new(), None, &mut go_on)).err().map(|e| e.sentence());
    assert_eq!(refused, Some(expected("empty_audio")));
    let twice = [diar_tiny_files(DIAR_TINY_CONFIG.as_bytes(), DIAR_TINY_WEIGHTS), diar_tiny_files(b"{}", b"")].concat();
    let refused = block_on(diarizer::load(twice, &mut |_, _, _| {})).err().map(|e| e.sentence());
    assert_eq!(refused.as_deref(), Some("config.json: handed over twice"));
}
