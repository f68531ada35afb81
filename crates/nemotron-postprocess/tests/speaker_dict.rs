//! The default segments against upstream's `Nemotron3DiarizationProcessor.extract_speaker_dict` (transformers
//! 5.23.0, run by `scripts/diarization_expected.py`): on each reference case's logits and on small hand-made inputs,
//! our JSON equals upstream's, value for value and byte for byte. And the default rule still gives the segments
//! and RTTM it gave before post-processing existed.

use std::path::{Path, PathBuf};

use nemotron_postprocess::diarization::formats::{to_json, to_rttm};
use nemotron_postprocess::diarization::threshold_segments;
use safetensors::{Dtype, SafeTensors};
use serde_json::Value;

fn testdata(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata").join(path)
}

/// A reference case's f64 logits `[frames, 8]` and its valid frame count (the leading ones of its feature mask).
fn reference_logits(case: &str) -> (Vec<f64>, usize) {
    let bytes = std::fs::read(testdata(&format!("reference/{case}/reference.safetensors"))).unwrap();
    let file = SafeTensors::deserialize(&bytes).unwrap();
    let (logits, mask) = (file.tensor("speaker_logits").unwrap(), file.tensor("input_features_mask").unwrap());
    assert_eq!((logits.dtype(), mask.dtype()), (Dtype::F64, Dtype::I32), "{case}");
    let valid = mask.data().chunks_exact(4).take_while(|b| b.iter().any(|&x| x != 0)).count();
    (logits.data().chunks_exact(8).map(|b| f64::from_le_bytes(b.try_into().unwrap())).collect(), valid)
}

#[test]
fn reference_cases_match_extract_speaker_dict() {
    for (case, count) in [("tiny-chunks", 1343), ("tiny-release-chunks", 9961), ("diar-tiny", 1680)] {
        let (logits, valid) = reference_logits(case);
        let ours = to_json(&threshold_segments(&logits, 8, valid, 0.5));
        let upstream = std::fs::read_to_string(testdata(&format!("reference/{case}/speaker_dict.json"))).unwrap();
        let parsed: Value = serde_json::from_str(&ours).unwrap();
        assert_eq!(parsed, serde_json::from_str::<Value>(&upstream).unwrap(), "{case}: values");
        assert_eq!(parsed.as_array().unwrap().len(), count, "{case}");
        assert!(ours == upstream, "{case}: same values, other bytes");
    }
}

#[test]
fn hand_made_inputs_match_extract_speaker_dict() {
    let file = std::fs::read_to_string(testdata("postprocessing/extract_speaker_dict.json")).unwrap();
    let expected: Value = serde_json::from_str(&file).unwrap();
    for case in expected["cases"].as_array().unwrap() {
        let name = case["name"].as_str().unwrap();
        let rows = case["logits"].as_array().unwrap();
        let speakers = rows[0].as_array().unwrap().len();
        let logits: Vec<f64> = rows
            .iter()
            .flat_map(|row| row.as_array().unwrap().iter())
            .map(|v| match v.as_str() {
                Some("inf") => f64::INFINITY,
                Some("-inf") => f64::NEG_INFINITY,
                _ => v.as_f64().unwrap(),
            })
            .collect();
        // The masks here are ones then zeros, as the processor makes them.
        let valid = case["mask"].as_array().map_or(rows.len(), |m| m.iter().filter(|v| v.as_i64() == Some(1)).count());
        let threshold = case["threshold"].as_f64().unwrap();
        let ours: Value =
            serde_json::from_str(&to_json(&threshold_segments(&logits, speakers, valid, threshold))).unwrap();
        assert_eq!(ours, case["speaker_dict"], "{name}");
    }
}

/// The rule as `rttm::segments` had it before this change (`start = f0 × 0.01`, `duration = (f − f0) × 0.01`, on
/// the f32 logits the model returns), with its RTTM writer: the reference the default path must still equal.
fn todays_rttm(logits: &[f32], speakers: usize, valid_frames: usize, threshold: f64) -> String {
    let frames = (logits.len() / speakers).min(valid_frames);
    let mut out: Vec<(usize, f64, f64)> = Vec::new();
    for s in 0..speakers {
        let mut start = None;
        for f in 0..=frames {
            let active = f < frames && 1.0 / (1.0 + (-(logits[f * speakers + s] as f64)).exp()) > threshold;
            match (active, start) {
                (true, None) => start = Some(f),
                (false, Some(f0)) => {
                    out.push((s, f0 as f64 * 0.01, (f - f0) as f64 * 0.01));
                    start = None;
                }
                _ => {}
            }
        }
    }
    out.sort_by(|a, b| a.1.total_cmp(&b.1).then(a.0.cmp(&b.0)));
    out.iter()
        .map(|(s, start, dur)| format!("SPEAKER audio 1 {start:.2} {dur:.2} <NA> <NA> spk{s} <NA> <NA>\n"))
        .collect()
}

#[test]
fn the_default_rule_gives_todays_segments() {
    for case in ["tiny-chunks", "tiny-release-chunks", "diar-tiny"] {
        let (logits, valid) = reference_logits(case);
        let logits: Vec<f32> = logits.iter().map(|&l| l as f32).collect();
        for threshold in [0.5, 0.3, 0.62] {
            let ours = to_rttm("audio", &threshold_segments(&logits, 8, valid, threshold));
            assert!(ours == todays_rttm(&logits, 8, valid, threshold), "{case} at {threshold}");
        }
    }
}
