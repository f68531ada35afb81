//! Speaker-attributed forced alignment against upstream's `align_word_timestamps`: every run of both reference
//! cases' `word_timestamps.json` (with diarization, single speaker, untagged), from the project's own GPU logits and
//! speaker logits: the same tokens, words, speakers, tag mapping, failed tags and diarization segments, the times
//! within 1e-6 s.

mod common;

use std::ops::ControlFlow;

use common::{case_dir, test_options};
use nemotron_towers::blocking::Block;

use nemotron_postprocess::alignment::{self, AlignOptions, Alignment, AlignmentTokenizer, Frames, SpeakerLogits};
use nemotron_testkit::test_gpu;
use nemotron_towers::tensor_file::read_features;
use nemotron_towers::{AudioOutputs, Model};
use serde_json::Value;

const TIME_TOLERANCE: f64 = 1e-6;

fn close(got: f64, want: &Value) -> bool {
    want.as_f64().is_some_and(|w| (got - w).abs() <= TIME_TOLERANCE)
}

fn timestamp_close(got: (f64, f64), want: &Value) -> bool {
    close(got.0, &want[0]) && close(got.1, &want[1])
}

/// Every difference between our result and upstream's, and whether all times are bit-identical.
fn differences(got: &Alignment, want: &Value) -> (Vec<String>, bool) {
    let mut problems = Vec::new();
    let mut exact = true;
    let chunks = want["chunks"].as_array().expect("chunks");
    if got.chunks.len() != chunks.len() {
        problems.push(format!("{} words, upstream {}", got.chunks.len(), chunks.len()));
    }
    for (g, w) in got.chunks.iter().zip(chunks) {
        let speaker = g.speaker.map_or(Value::Null, Value::from);
        if g.text != w["text"] || speaker != w["speaker"] || !timestamp_close(g.timestamp, &w["timestamp"]) {
            problems.push(format!("word {g:?} vs {w}"));
        }
        exact &= Value::from(vec![g.timestamp.0, g.timestamp.1]) == w["timestamp"];
    }
    let segments = want["diarization"].as_array().expect("diarization");
    if got.diarization.len() != segments.len() {
        problems.push(format!("{} segments, upstream {}", got.diarization.len(), segments.len()));
    }
    for (g, w) in got.diarization.iter().zip(segments) {
        if g.speaker != w["speaker"] || !timestamp_close(g.timestamp, &w["timestamp"]) {
            problems.push(format!("segment {g:?} vs {w}"));
        }
        exact &= Value::from(vec![g.timestamp.0, g.timestamp.1]) == w["timestamp"];
    }
    let ours = serde_json::to_value(got).expect("serialises");
    for key in ["speaker_tag_to_diarization_speaker", "failed_speakers"] {
        if ours[key] != want[key] {
            problems.push(format!("{key}: {} vs {}", ours[key], want[key]));
        }
    }
    // The mapping's order is the streams' order, which the alignment tokens (listed stream by stream) check.
    (problems, exact)
}

fn encode(case: &str) -> (Box<nemotron_towers::AudioModel>, AudioOutputs) {
    let Model::Transcribe(model) = Model::load(test_gpu(), &case_dir(case), &test_options()).block().unwrap() else {
        panic!("{case} is a Transcribe checkpoint")
    };
    let c = model.config();
    let features =
        read_features(&case_dir(case).join("reference.safetensors"), c.asr.mel_bins, c.asr.subsampling).unwrap();
    let outputs = model.encode_features(features, &mut |_, _, _| ControlFlow::Continue(())).block().unwrap();
    (model, outputs)
}

fn check_case(case: &str) {
    let json: Value =
        serde_json::from_slice(&std::fs::read(case_dir(case).join("word_timestamps.json")).unwrap()).unwrap();
    let tokenizer = AlignmentTokenizer::from_dir(&case_dir(case).join("alignment_tokenizer")).unwrap();
    let (model, outputs) = encode(case);
    let head = model.word_timestamp_logits(&outputs).block().unwrap();
    let c = model.config();
    let vocab = c.word_timestamps.vocab_size;
    let frames = Frames {
        padded_mel: outputs.features.frames,
        valid_mel: outputs.features.valid,
        head: head.logits.len() / vocab,
        subsampling: c.asr.subsampling,
    };
    assert_eq!(frames.head, json["head_frames"].as_u64().unwrap() as usize, "{case}: head frames");
    let arguments = &json["arguments"];
    let options = AlignOptions {
        language: arguments["language"].as_str().map(str::to_string),
        speaker_activity_threshold: arguments["speaker_activity_threshold"].as_f64().unwrap(),
        max_word_duration: arguments["max_word_duration"].as_f64().unwrap(),
        max_word_frames: arguments["max_word_frames"].as_u64().unwrap() as usize,
        dropped_tokens: Vec::new(),
    };
    let mut failures = Vec::new();
    for run in json["runs"].as_array().unwrap() {
        let name = run["name"].as_str().unwrap();
        let transcript = run["transcript"].as_str().unwrap();
        let streams = alignment::tokenize(&tokenizer, transcript, vocab, &options).unwrap();
        let tokens: Vec<Value> = streams
            .iter()
            .flat_map(|s| s.units.iter().map(move |u| serde_json::json!([s.tag, u.text, u.ids])))
            .collect();
        assert_eq!(Value::from(tokens), run["alignment_tokens"], "{case} {name}: alignment tokens");
        let speakers = run["speaker_logits"]
            .as_bool()
            .unwrap()
            .then_some(SpeakerLogits { logits: &outputs.speaker_logits, speakers: c.diarization.speakers });
        let result = alignment::align(&tokenizer, transcript, &head.logits, vocab, frames, speakers, &options).unwrap();
        let (problems, exact) = differences(&result, &run["result"]);
        eprintln!(
            "{case} {name}: {} words, {} segments, mapping {:?}, failed {:?}; times bit-identical: {exact}; {}",
            result.chunks.len(),
            result.diarization.len(),
            result.speaker_tag_to_diarization_speaker,
            result.failed_speakers,
            if problems.is_empty() {
                "same as upstream".to_string()
            } else {
                format!("{} differences", problems.len())
            }
        );
        failures.extend(problems.into_iter().take(10).map(|p| format!("{case} {name}: {p}")));
    }
    assert!(failures.is_empty(), "differences from upstream:\n{}", failures.join("\n"));
}

#[test]
fn tiny_chunks_alignment_matches_upstream() {
    check_case("tiny-chunks");
}

#[test]
fn tiny_release_chunks_alignment_matches_upstream() {
    check_case("tiny-release-chunks");
}
