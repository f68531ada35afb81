//! `score` as a user runs it: pyannote.metrics' numbers through the CLI (JSON and table), errors naming the file
//! and line, and the README's tuning loop (diarize with flags, then score against a reference RTTM).

mod cli_support;

use cli_support::{fails, ok, path_str, run, testdata};
use serde_json::Value;

fn case(name: &str) -> String {
    path_str(&testdata("scoring/cases").join(name)).to_string()
}

fn json(args: &[&str]) -> Value {
    serde_json::from_slice(&ok(&[&["score", "--json"][..], args].concat()).stdout).expect("one JSON object")
}

fn close(what: &str, got: &Value, want: &Value) {
    match (got.as_f64(), want.as_f64()) {
        (Some(g), Some(w)) => assert!((g - w).abs() <= 1e-9, "{what}: {g} vs pyannote's {w}"),
        _ => assert_eq!(got, want, "{what}"),
    }
}

#[test]
fn json_output_matches_pyannote_metrics() {
    let expected: Value =
        serde_json::from_str(&std::fs::read_to_string(testdata("scoring/expected.json")).unwrap()).unwrap();
    for name in ["06-overlap-both", "09-empty-ref", "14-multi-file", "23-random-multi-file-uem"] {
        let case_json = expected["cases"].as_array().unwrap().iter().find(|c| c["name"] == name).unwrap();
        for setting in case_json["settings"].as_array().unwrap() {
            let collar = setting["collar"].as_f64().unwrap().to_string();
            let (r, h) = (case(&format!("{name}.ref.rttm")), case(&format!("{name}.hyp.rttm")));
            let mut args = vec!["--ref", &r, "--hyp", &h, "--collar", &collar];
            if setting["skip_overlap"] == true {
                args.push("--skip-overlap");
            }
            let uem = case_json["uem"].as_str().map(|u| path_str(&testdata("scoring").join(u)).to_string());
            if let Some(uem) = &uem {
                args.extend(["--uem", uem]);
            }
            let got = json(&args);
            let label = format!("{name} {args:?}");
            for key in ["der", "miss", "false_alarm", "confusion", "jer", "reference_speech", "missed_speech"] {
                close(&format!("{label} overall {key}"), &got[key], &setting["overall"][key]);
            }
            assert_eq!(got["collar"], setting["collar"]);
            let files = got["files"].as_array().unwrap();
            assert_eq!(files.len(), setting["files"].as_object().unwrap().len(), "{label}");
            for file in files {
                let want = &setting["files"][file["uri"].as_str().unwrap()];
                for key in ["der", "miss", "false_alarm", "confusion", "jer", "scored_seconds"] {
                    close(&format!("{label} {} {key}", file["uri"]), &file[key], &want[key]);
                }
                assert_eq!(file["mapping"], want["der_mapping"], "{label}");
            }
        }
    }
}

#[test]
fn the_table_has_a_line_per_file_and_says_what_is_undefined() {
    let text = String::from_utf8(
        ok(&["score", "--ref", &case("09-empty-ref.ref.rttm"), "--hyp", &case("09-empty-ref.hyp.rttm")]).stdout,
    )
    .unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "collar 0.25 s, overlap scored");
    assert!(lines[1].starts_with("file") && lines[1].contains("DER") && lines[1].contains("JER"), "{text}");
    // No reference speech: DER 100 % (pyannote's rule), the other rates undefined, JER 100 %.
    assert!(lines[2].starts_with("rec1") && lines[2].contains("100.00%") && lines[2].contains("n/a"), "{text}");
    assert!(lines[3].starts_with("overall"), "{text}");
    let multi = String::from_utf8(
        ok(&[
            "score",
            "--ref",
            &case("14-multi-file.ref.rttm"),
            "--hyp",
            &case("14-multi-file.hyp.rttm"),
            "--collar",
            "0",
        ])
        .stdout,
    )
    .unwrap();
    let names: Vec<&str> = multi.lines().skip(2).map(|l| l.split_whitespace().next().unwrap()).collect();
    assert_eq!(names, ["rec_a", "rec_b", "rec_c", "rec_d", "overall"]);
    assert!(multi.contains("spk0 → alice"), "{multi}");
}

#[test]
fn bad_files_are_named_with_their_line() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.rttm");
    std::fs::write(&bad, "SPEAKER rec1 1 0.0 1.0 <NA> <NA> a <NA> <NA>\nSPEAKER rec1 1 x 1.0 <NA> <NA> b <NA> <NA>\n")
        .unwrap();
    let good = case("01-identical.ref.rttm");
    let message =
        fails(&["score", "--ref", &good, "--hyp", path_str(&bad)], "bad.rttm, line 2: start `x` is not a number");
    assert_eq!(message.lines().count(), 1, "{message}");
    fails(&["score", "--ref", path_str(&dir.path().join("none.rttm")), "--hyp", &good], "none.rttm");
    let uem = dir.path().join("bad.uem");
    std::fs::write(&uem, "rec1 1 0 5\nrec1 1 4\n").unwrap();
    fails(
        &["score", "--ref", &good, "--hyp", &good, "--uem", path_str(&uem)],
        "bad.uem, line 2: a UEM line has 4 fields",
    );
    std::fs::write(&uem, "other 1 0 5\n").unwrap();
    fails(&["score", "--ref", &good, "--hyp", &good, "--uem", path_str(&uem)], "no line for file `rec1`");
    for args in [&["score", "--ref", &good][..], &["score", "--ref", &good, "--hyp", &good, "--collar", "-1"]] {
        assert_eq!(run(args).status.code(), Some(2), "{args:?}");
    }
}

#[test]
fn the_readme_tuning_loop_runs() {
    let dir = tempfile::tempdir().unwrap();
    let audio = testdata("reference/tiny-chunks/audio.wav");
    let (reference, hypothesis) = (dir.path().join("call.ref.rttm"), dir.path().join("call.rttm"));
    let yaml = testdata("postprocessing/yaml/parameters.yaml");
    let diarize = ["-q", "diarize", "--demo", "--audio", path_str(&audio)];
    // The bundled model's default segments stand in for a reference.
    ok(&[&diarize[..], &["--segments", path_str(&reference)]].concat());
    let tuned = ["--postprocessing", path_str(&yaml), "--min-duration-off", "0.5", "--max-speakers", "2"];
    ok(&[&diarize[..], &tuned, &["--segments", path_str(&hypothesis)]].concat());
    // The bundled model's segments are 10–50 ms long: 0.25 s collars would leave nothing to score.
    let scores = json(&["--ref", path_str(&reference), "--hyp", path_str(&hypothesis), "--collar", "0"]);
    assert_eq!(scores["files"][0]["uri"], "audio");
    let der = scores["der"].as_f64().unwrap();
    assert!(der > 0.0 && der.is_finite() && scores["reference_speech"].as_f64() > Some(0.0), "{scores}");
}
