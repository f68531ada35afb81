//! `diarize`'s segments as a user gets them: upstream's JSON byte for byte, NeMo's post-processing from flags and
//! YAML files, RTTM / JSON / CSV to files or standard output, the file id, the timeline, and the usage errors.

mod cli_support;

use std::path::Path;

use cli_support::{fails, ok, path_str, run, testdata};
use nemotron_engine::Origin;
use nemotron_testkit::postprocess::diarization::formats::{to_csv, to_rttm};
use nemotron_testkit::postprocess::diarization::{FrameGrid, PostProcessing, threshold_segments};
use nemotron_testkit::towers::Checkpoint;

/// The diar-tiny reference case: its checkpoint, its features (913 valid 10 ms frames: 115 encoder rows).
fn diar_tiny() -> (String, String) {
    let case = testdata("reference/diar-tiny");
    (path_str(&case).to_string(), path_str(&case.join("reference.safetensors")).to_string())
}

fn stdout(args: &[&str]) -> String {
    String::from_utf8(ok(args).stdout).expect("UTF-8 output")
}

#[test]
fn json_segments_are_upstreams_extract_speaker_dict() {
    for case in ["diar-tiny", "tiny-chunks"] {
        let dir = testdata(&format!("reference/{case}"));
        let features = dir.join("reference.safetensors");
        let args = ["-q", "diarize", "--model", path_str(&dir), "--features", path_str(&features)];
        let json = stdout(&[&args[..], &["--segments", "-", "--format", "json"]].concat());
        let upstream = std::fs::read_to_string(dir.join("speaker_dict.json")).unwrap();
        assert!(json == upstream, "{case}: `diarize --format json` differs from upstream's speaker_dict.json");
    }
}

/// A value each segment setting takes, as a flag's text.
fn sample(name: &str) -> String {
    match name {
        "threshold" | "onset" | "offset" => "0.4".into(),
        "pad_onset" | "pad_offset" => "-0.05".into(),
        "min_duration_on" | "min_duration_off" => "0.1".into(),
        "postprocessing" => path_str(&testdata("postprocessing/yaml/parameters.yaml")).into(),
        "max_speakers" => "1".into(),
        other => panic!("no sample value for the setting `{other}`: add one"),
    }
}

/// Each segment setting a program on this machine gives (the library's list) is a `diarize` flag: in `--help`, and
/// taken.
#[test]
fn every_segment_setting_is_a_flag() {
    let (model, features) = diar_tiny();
    let help = stdout(&["diarize", "--help"]);
    let args = ["-q", "diarize", "--model", &model, "--features", &features, "--segments", "-"];
    for name in Origin::Local.names() {
        let flag = format!("--{}", name.replace('_', "-"));
        assert!(help.contains(&format!("{flag} <")), "no {flag} in\n{help}");
        let rttm = stdout(&[&args[..], &[&flag, &sample(name)]].concat());
        assert!(rttm.starts_with("SPEAKER "), "{flag}: {rttm}");
    }
}

#[test]
fn postprocessing_flags_apply_nemos_chain_to_the_probabilities() {
    let (model, features) = diar_tiny();
    let dir = tempfile::tempdir().unwrap();
    let (tensors, csv) = (dir.path().join("d.safetensors"), dir.path().join("d.csv"));
    let flags = ["--onset", "0.6", "--offset", "0.4", "--pad-onset", "0.05", "--min-duration-on", "0.1"];
    let args = ["-q", "diarize", "--model", &model, "--features", &features, "--out", path_str(&tensors)];
    ok(&[&args[..], &flags, &["--max-speakers", "3", "--segments", path_str(&csv)]].concat());
    let probabilities = Checkpoint::open(&tensors).unwrap().f32("speaker_probabilities").unwrap();
    let settings = PostProcessing {
        onset: 0.6,
        offset: 0.4,
        pad_onset: 0.05,
        min_duration_on: 0.1,
        max_speakers: Some(3),
        ..PostProcessing::default()
    };
    let want = settings.segments(&probabilities, 8, 115, FrameGrid::sortformer(8));
    assert!(!want.is_empty());
    let mut speakers: Vec<usize> = want.iter().map(|s| s.speaker).collect();
    speakers.sort_unstable();
    speakers.dedup();
    assert!(speakers.len() <= 3, "{speakers:?}");
    assert_eq!(std::fs::read_to_string(&csv).unwrap(), to_csv(&want));
}

#[test]
fn yaml_files_apply_and_flags_override_them() {
    let (model, features) = diar_tiny();
    let dir = tempfile::tempdir().unwrap();
    let tensors = dir.path().join("d.safetensors");
    let nemo = testdata("postprocessing/yaml/parameters.yaml");
    let args = ["-q", "diarize", "--model", &model, "--features", &features, "--out", path_str(&tensors)];
    let rttm = stdout(
        &[
            &args[..],
            &["--postprocessing", path_str(&nemo), "--min-duration-off", "0.1", "--segments", "-", "--uri", "call 7"],
        ]
        .concat(),
    );
    let probabilities = Checkpoint::open(&tensors).unwrap().f32("speaker_probabilities").unwrap();
    let settings = PostProcessing { min_duration_off: 0.1, ..PostProcessing::read_nemo_yaml(&nemo).unwrap() };
    let want = settings.segments(&probabilities, 8, 115, FrameGrid::sortformer(8));
    assert_eq!(rttm, to_rttm("call_7", &want));
    assert!(rttm.starts_with("SPEAKER call_7 1 "), "{rttm}");

    // The top-level layout reads the same as NeMo's when the values are the same.
    let top = dir.path().join("top.yaml");
    let text = std::fs::read_to_string(&nemo).unwrap().replace("parameters:\n", "").replace("\n  ", "\n");
    std::fs::write(&top, text).unwrap();
    let again = stdout(
        &[&args[..], &["--postprocessing", path_str(&top), "--min-duration-off", "0.1", "--segments", "-"]].concat(),
    );
    assert_eq!(again, to_rttm("reference", &want));

    // An unknown key: an error naming it and the file, before any work.
    let typo = dir.path().join("typo.yaml");
    std::fs::write(&typo, "parameters:\n  onset: 0.6\n  min_duration_of: 0.2\n").unwrap();
    let args = ["diarize", "--demo", "--features", &features, "--postprocessing", path_str(&typo)];
    let message = fails(&args, "unknown key `min_duration_of`");
    assert!(message.contains("typo.yaml"), "{message}");
}

#[test]
fn formats_follow_the_extension_and_the_file_id_the_input() {
    let (model, features) = diar_tiny();
    let dir = tempfile::tempdir().unwrap();
    let base = ["-q", "diarize", "--model", &model, "--features", &features];
    // With no output flag, RTTM goes to standard output, named after the input file.
    let default = stdout(&base);
    assert!(default.starts_with("SPEAKER reference 1 0.00 "), "{default}");
    assert_eq!(stdout(&[&base[..], &["--segments", "-"]].concat()), default);
    let (json, csv, other) = (dir.path().join("s.json"), dir.path().join("s.csv"), dir.path().join("s.txt"));
    for path in [&json, &csv, &other] {
        ok(&[&base[..], &["--segments", path_str(path)]].concat());
    }
    assert!(std::fs::read_to_string(&json).unwrap().starts_with("[\n{\"Start\": 0.0, "));
    assert!(std::fs::read_to_string(&csv).unwrap().starts_with("start,end,duration,speaker\n0.00,"));
    assert_eq!(std::fs::read_to_string(&other).unwrap(), default);
    ok(&[&base[..], &["--segments", path_str(&other), "--format", "csv"]].concat());
    assert_eq!(std::fs::read_to_string(&other).unwrap(), std::fs::read_to_string(&csv).unwrap());
    // --rttm is RTTM whatever the extension.
    ok(&[&base[..], &["--rttm", path_str(&json)]].concat());
    assert_eq!(std::fs::read_to_string(&json).unwrap(), default);
}

#[test]
fn the_timeline_shows_the_thresholds_and_decodes() {
    let (model, features) = diar_tiny();
    let dir = tempfile::tempdir().unwrap();
    let plot = dir.path().join("t.png");
    let args = ["-q", "diarize", "--model", &model, "--features", &features, "--plot", path_str(&plot)];
    ok(&[&args[..], &["--onset", "0.6", "--offset", "0.45"]].concat());
    let image = image::open(&plot).unwrap();
    assert_eq!((image.width(), image.height()), (1200, 110 + 36 * 8));
}

#[test]
fn impossible_settings_are_usage_errors() {
    let features = testdata("reference/diar-tiny/reference.safetensors");
    let base = ["diarize", "--demo", "--features", path_str(&features)];
    for extra in [
        &["--onset", "1.5"][..],
        &["--offset", "-0.1"],
        &["--threshold", "0.5", "--onset", "0.6"],
        &["--rttm", "a.rttm", "--segments", "b.rttm"],
        &["--rttm", "a.rttm", "--format", "json"],
        &["--format", "xml"],
        &["--max-speakers", "0"],
        &["--min-duration-on", "-1"],
        &["--pad-onset", "inf"],
        &["--uri", " "],
    ] {
        let output = run(&[&base[..], extra].concat());
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{extra:?}: {stderr}");
        assert!(!Path::new("a.rttm").exists() && !Path::new("b.rttm").exists(), "nothing was written");
    }
}

#[test]
fn standard_output_carries_the_segments_alone() {
    let (model, features) = diar_tiny();
    let dir = tempfile::tempdir().unwrap();
    let tensors = dir.path().join("d.safetensors");
    let args = ["diarize", "--model", &model, "--features", &features, "--out", path_str(&tensors)];
    let output = ok(&[&args[..], &["--segments", "-", "--format", "csv"]].concat());
    let logits = Checkpoint::open(&tensors).unwrap().f32("speaker_logits").unwrap();
    let want = to_csv(&threshold_segments(&logits, 8, 913, 0.5));
    assert_eq!(String::from_utf8(output.stdout).unwrap(), want, "standard output holds the CSV and nothing else");
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(stderr.contains(&format!("wrote {}: ", tensors.display())), "the success line goes to stderr: {stderr}");
}

/// `--out-dir`: each entry's segments in --format, named by the entry's id and made by the same rule as a single
/// run's (post-processing flags included); --skip-existing looks for the file of that format.
#[test]
fn batch_runs_write_each_entrys_segments_by_the_same_rule() {
    let (model, _) = diar_tiny();
    let dir = tempfile::tempdir().unwrap();
    let (one, two, out) = (dir.path().join("one.wav"), dir.path().join("two.wav"), dir.path().join("out"));
    std::fs::copy(testdata("reference/diar-tiny/audio.wav"), &one).unwrap();
    std::fs::copy(testdata("reference/tiny-chunks/audio.wav"), &two).unwrap();
    let flags = ["--onset", "0.6", "--offset", "0.4", "--pad-offset", "0.05", "--min-duration-on", "0.1"];
    let batch = ["-q", "diarize", "--model", &model, "--audio", path_str(&one), path_str(&two)];
    let batch = [&batch[..], &flags, &["--max-speakers", "2", "--out-dir", path_str(&out)]].concat();
    ok(&[&batch[..], &["--format", "csv"]].concat());
    for (wav, id) in [(&one, "one"), (&two, "two")] {
        let single = dir.path().join(format!("{id}-single.csv"));
        let args = ["-q", "diarize", "--model", &model, "--audio", path_str(wav), "--segments", path_str(&single)];
        ok(&[&args[..], &flags, &["--max-speakers", "2"]].concat());
        let batch_csv = std::fs::read_to_string(out.join(format!("{id}.csv"))).unwrap();
        assert!(batch_csv.lines().count() > 1, "{id}: the random diarizer should mark some activity");
        assert_eq!(batch_csv, std::fs::read_to_string(&single).unwrap(), "{id}");
        assert!(out.join(format!("{id}.safetensors")).is_file() && !out.join(format!("{id}.rttm")).exists());
    }
    // Resuming: the CSV files exist, so nothing runs again; asking for JSON runs both entries.
    let resumed = run(&[&batch[..], &["--format", "csv", "--skip-existing"]].concat());
    assert!(String::from_utf8_lossy(&resumed.stderr).is_empty(), "-q run");
    ok(&[&batch[..], &["--format", "json", "--skip-existing"]].concat());
    let statuses: Vec<String> = std::fs::read_to_string(out.join("manifest.jsonl"))
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str::<serde_json::Value>(line).unwrap()["status"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(statuses, ["ok", "ok", "skipped", "skipped", "ok", "ok"]);
    for id in ["one", "two"] {
        let json = std::fs::read_to_string(out.join(format!("{id}.json"))).unwrap();
        assert!(json.starts_with("[\n{\"Start\": "), "{id}: {json}");
    }
    // Single-file outputs and a file id do not mix with --out-dir.
    for extra in [&["--segments", "x.csv"][..], &["--rttm", "x.rttm"], &["--uri", "x"]] {
        let output = run(&[&batch[..], extra].concat());
        assert_eq!(output.status.code(), Some(2), "{extra:?}: {}", String::from_utf8_lossy(&output.stderr));
    }
}

/// Standard output that cannot take the data (here a full disk, as a closed pipe under `… | head`) is a one-line
/// error, not a panic.
#[test]
fn a_standard_output_that_fails_is_an_error() {
    let (model, features) = diar_tiny();
    let reference = testdata("scoring/cases/06-overlap-both.ref.rttm");
    for (args, what) in [
        (vec!["-q", "diarize", "--model", &model, "--features", &features], "the segments"),
        (vec!["score", "--ref", path_str(&reference), "--hyp", path_str(&reference)], "the scores"),
    ] {
        let full = std::fs::File::create("/dev/full").unwrap();
        let output =
            std::process::Command::new(env!("CARGO_BIN_EXE_nemotron-audio")).args(&args).stdout(full).output().unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(1), "{args:?}: {stderr}");
        assert!(stderr.starts_with(&format!("error: cannot write {what} to standard output: ")), "{stderr}");
    }
}
