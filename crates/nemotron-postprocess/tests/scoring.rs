//! The scorer against pyannote.metrics 4.2.0 on the 28 RTTM pairs of `testdata/scoring/cases/` (overlap, collars,
//! speakers missing on either side, empty files, UEMs, 1 µs slivers, label sorting, self-overlap), each with
//! collars 0, 0.25 and 0.5 s and with and without skip_overlap: `testdata/scoring/expected.json`, written by
//! `scripts/diarization_expected.py`. DER, its parts, the mapping and JER agree to 1e-9.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use nemotron_postprocess::diarization::rttm::{read_rttm, read_uem};
use nemotron_postprocess::diarization::scoring::{Components, ScoreOptions, score};
use serde_json::Value;

const TOLERANCE: f64 = 1e-9;

fn scoring(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/scoring").join(path)
}

fn close(what: &str, got: f64, want: &Value) {
    let want = want.as_f64().unwrap_or_else(|| panic!("{what}: expected value {want} is not a number"));
    assert!((got - want).abs() <= TOLERANCE, "{what}: {got} vs pyannote's {want}");
}

fn close_rate(what: &str, got: Option<f64>, want: &Value) {
    match got {
        None => assert!(want.is_null(), "{what}: undefined here, {want} in pyannote"),
        Some(got) => close(what, got, want),
    }
}

fn components(what: &str, c: &Components, want: &Value) {
    close(&format!("{what} reference_speech"), c.reference_speech, &want["reference_speech"]);
    close(&format!("{what} correct"), c.correct, &want["correct"]);
    close(&format!("{what} missed_speech"), c.missed, &want["missed_speech"]);
    close(&format!("{what} false_alarm_speech"), c.false_alarm, &want["false_alarm_speech"]);
    close(&format!("{what} confusion_speech"), c.confusion, &want["confusion_speech"]);
    close(&format!("{what} der"), c.der(), &want["der"]);
    close_rate(&format!("{what} miss"), c.miss_rate(), &want["miss"]);
    close_rate(&format!("{what} false_alarm"), c.false_alarm_rate(), &want["false_alarm"]);
    close_rate(&format!("{what} confusion"), c.confusion_rate(), &want["confusion"]);
}

#[test]
fn every_case_matches_pyannote_metrics() {
    let expected: Value = serde_json::from_str(&std::fs::read_to_string(scoring("expected.json")).unwrap()).unwrap();
    let cases = expected["cases"].as_array().unwrap();
    assert_eq!(cases.len(), 28);
    let mut checked = 0;
    for case in cases {
        let name = case["name"].as_str().unwrap();
        let reference = read_rttm(&scoring(case["ref"].as_str().unwrap())).unwrap();
        let hypothesis = read_rttm(&scoring(case["hyp"].as_str().unwrap())).unwrap();
        let uem = case["uem"].as_str().map(|path| read_uem(&scoring(path)).unwrap());
        for setting in case["settings"].as_array().unwrap() {
            let options = ScoreOptions {
                collar: setting["collar"].as_f64().unwrap(),
                skip_overlap: setting["skip_overlap"].as_bool().unwrap(),
            };
            let label = format!("{name} (collar {}, skip_overlap {})", options.collar, options.skip_overlap);
            let result = score(&reference, &hypothesis, uem.as_deref(), &options).unwrap();
            let files = setting["files"].as_object().unwrap();
            let uris: Vec<&str> = result.files.iter().map(|f| f.uri.as_str()).collect();
            assert_eq!(uris, files.keys().map(String::as_str).collect::<Vec<_>>(), "{label}: files");
            for file in &result.files {
                let what = format!("{label} {}", file.uri);
                let want = &files[&file.uri];
                components(&what, &file.components, want);
                close(&format!("{what} scored_seconds"), file.scored_seconds, &want["scored_seconds"]);
                let mapping: BTreeMap<&str, &str> =
                    file.mapping.iter().map(|(h, r)| (h.as_str(), r.as_str())).collect();
                let want_mapping: BTreeMap<&str, &str> = want["der_mapping"]
                    .as_object()
                    .unwrap()
                    .iter()
                    .map(|(h, r)| (h.as_str(), r.as_str().unwrap()))
                    .collect();
                assert_eq!(mapping, want_mapping, "{what}: mapping");
                close(&format!("{what} jer"), file.jer(), &want["jer"]);
                close(&format!("{what} jer_speaker_count"), file.speakers.len() as f64, &want["jer_speaker_count"]);
                let speakers = want["jer_speakers"].as_object().unwrap();
                assert_eq!(file.speakers.len(), speakers.len(), "{what}: reference speakers");
                for s in &file.speakers {
                    let w = &speakers[&s.reference];
                    assert_eq!(s.hypothesis.as_deref(), w["hyp"].as_str(), "{what} {}: JER mapping", s.reference);
                    close(&format!("{what} {}: jer", s.reference), s.jer, &w["jer"]);
                }
                checked += 1;
            }
            let overall = &setting["overall"];
            components(&format!("{label} overall"), &result.total, overall);
            close(&format!("{label} overall jer"), result.jer(), &overall["jer"]);
        }
    }
    assert!(checked > 150, "{checked} file scores checked");
}

#[test]
fn a_file_outside_the_uem_is_refused() {
    let reference = read_rttm(&scoring("cases/14-multi-file.ref.rttm")).unwrap();
    let uem = nemotron_postprocess::diarization::rttm::parse_uem("rec_a 1 0 10\n", "part.uem").unwrap();
    let error = score(&reference, &[], Some(&uem), &ScoreOptions::default()).unwrap_err().to_string();
    assert!(error.contains("the UEM has no line for file `rec_b`"), "{error}");
    let error = score(&[], &[], None, &ScoreOptions { collar: -1.0, skip_overlap: false }).unwrap_err();
    assert!(error.to_string().contains("collar = -1"), "{error}");
}
