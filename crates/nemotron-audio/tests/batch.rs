//! Batch runs: a manifest of good, corrupt and missing entries; a diarized manifest against single runs, whatever
//! `--batch-size`; resuming with `--skip-existing`; `--shard`; folders; duplicate ids refused before any work.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use nemotron_testkit::towers::Checkpoint;
use serde_json::Value;

fn testdata(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata").join(path)
}

fn run(args: &[&str]) -> Output {
    let output = Command::new(env!("CARGO_BIN_EXE_nemotron-audio")).args(args).output().expect("the binary runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!stderr.contains("panicked"), "{args:?} panicked: {stderr}");
    for dump in ["Os {", "kind: ", " { code", "Error(", "Custom {", "\"/", ".partial"] {
        assert!(!stderr.contains(dump), "{args:?} printed `{dump}`: {stderr}");
    }
    output
}

fn lines(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

/// A folder with `good.wav` (6.4 s), `corrupt.wav` (not audio) and a manifest naming them, a missing file and an
/// MP3 by absolute path.
fn job(dir: &Path) -> PathBuf {
    std::fs::copy(testdata("reference/tiny-chunks/audio.wav"), dir.join("good.wav")).unwrap();
    std::fs::write(dir.join("corrupt.wav"), b"RIFF\x10\0\0\0WAVEfmt garbage garbage").unwrap();
    let mp3 = testdata("audio/signal.mp3");
    let manifest = dir.join("manifest.jsonl");
    let text = [
        r#"{"audio_filepath": "good.wav", "offset": 1.0, "duration": 2.0, "uniq_id": "good-part", "text": "hello"}"#
            .to_string(),
        r#"{"audio_filepath": "corrupt.wav"}"#.to_string(),
        String::new(),
        r#"{"audio_filepath": "missing.flac", "duration": null}"#.to_string(),
        format!(r#"{{"audio_filepath": "{}"}}"#, mp3.display()),
    ]
    .join("\n");
    std::fs::write(&manifest, text).unwrap();
    manifest
}

#[test]
fn a_manifest_of_good_bad_and_missing_entries() {
    let dir = tempfile::tempdir().unwrap();
    let manifest = job(dir.path());
    let out = dir.path().join("out");
    let args = ["encode", "--demo", "--manifest", manifest.to_str().unwrap(), "--out-dir", out.to_str().unwrap()];
    let output = run(&args);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("2 of 4 entries failed"), "{stderr}");
    assert!(stderr.contains("4 entries: 2 ok, 0 skipped, 2 failed"), "{stderr}");

    // The good entries' outputs: 2 s cut from 1 s in (200 valid frames), and the 0.5 s MP3.
    let good = Checkpoint::open(&out.join("good-part.safetensors")).unwrap();
    assert_eq!(good.f32("input_features_mask").unwrap().iter().filter(|&&m| m == 1.0).count(), 200);
    assert!(out.join("signal.safetensors").is_file());
    let names: Vec<String> =
        std::fs::read_dir(&out).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    assert_eq!(names.len(), 3, "only the two outputs and the manifest: {names:?}");

    let records = lines(&out.join("manifest.jsonl"));
    let statuses: Vec<&str> = records.iter().map(|r| r["status"].as_str().unwrap()).collect();
    assert_eq!(statuses, ["ok", "error", "error", "ok"]);
    assert_eq!(records[0]["text"], "hello", "input fields are kept");
    assert_eq!(records[0]["uniq_id"], "good-part");
    assert_eq!(records[0]["audio_seconds"].as_f64(), Some(2.0));
    assert_eq!(records[0]["outputs"][0].as_str().unwrap(), out.join("good-part.safetensors").to_str().unwrap());
    assert!(records[0]["error"].is_null());
    assert!(records[1]["error"].as_str().unwrap().contains("corrupt.wav"), "{}", records[1]["error"]);
    assert!(records[2]["error"].as_str().unwrap().contains("missing.flac"), "{}", records[2]["error"]);
    assert!(records[2]["audio_seconds"].is_null() && records[2]["outputs"].as_array().unwrap().is_empty());

    // Resuming: finished entries are skipped (their files untouched), failed ones tried again.
    let before = std::fs::metadata(out.join("good-part.safetensors")).unwrap().modified().unwrap();
    let output = run(&[&args[..], &["--skip-existing"]].concat());
    assert_eq!(output.status.code(), Some(1));
    let records = lines(&out.join("manifest.jsonl"));
    let statuses: Vec<&str> = records[4..].iter().map(|r| r["status"].as_str().unwrap()).collect();
    assert_eq!(statuses, ["skipped", "error", "error", "skipped"]);
    assert_eq!(std::fs::metadata(out.join("good-part.safetensors")).unwrap().modified().unwrap(), before);
}

#[test]
fn a_shard_takes_every_nth_entry() {
    let dir = tempfile::tempdir().unwrap();
    let manifest = job(dir.path());
    for (shard, expected) in [("0/2", vec!["good-part", "missing"]), ("1/2", vec!["corrupt", "signal"])] {
        let out = dir.path().join(shard.replace('/', "-of-"));
        run(&[
            "-q",
            "encode",
            "--demo",
            "--manifest",
            manifest.to_str().unwrap(),
            "--out-dir",
            out.to_str().unwrap(),
            "--shard",
            shard,
        ]);
        let ids: Vec<String> =
            lines(&out.join("manifest.jsonl")).iter().map(|r| r["uniq_id"].as_str().unwrap().to_owned()).collect();
        assert_eq!(ids, expected, "shard {shard}");
    }
    for bad in ["2/2", "1/0", "x/3"] {
        let output = run(&["encode", "--demo", "--manifest", "m", "--out-dir", "o", "--shard", bad]);
        assert_eq!(output.status.code(), Some(2), "--shard {bad}");
    }
}

#[test]
fn duplicate_ids_are_refused_before_any_work() {
    let dir = tempfile::tempdir().unwrap();
    let manifest = dir.path().join("m.jsonl");
    std::fs::write(&manifest, "{\"audio_filepath\": \"a/x.wav\"}\n{\"audio_filepath\": \"b/x.flac\"}\n").unwrap();
    let out = dir.path().join("out");
    let output =
        run(&["encode", "--demo", "--manifest", manifest.to_str().unwrap(), "--out-dir", out.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("line 2: uniq_id `x` is used by line 1 too"), "{stderr}");
    assert!(!out.exists(), "nothing was written");
}

#[test]
fn folders_with_and_without_recursion_diarize() {
    let dir = tempfile::tempdir().unwrap();
    let audio = dir.path().join("audio");
    std::fs::create_dir_all(audio.join("more")).unwrap();
    std::fs::copy(testdata("audio/source.wav"), audio.join("one.wav")).unwrap();
    std::fs::copy(testdata("audio/signal.flac"), audio.join("two.flac")).unwrap();
    std::fs::copy(testdata("audio/signal.ogg"), audio.join("more/three.ogg")).unwrap();
    std::fs::write(audio.join("notes.txt"), "not audio").unwrap();
    for (recursive, expected) in [(false, vec!["one", "two"]), (true, vec!["three", "one", "two"])] {
        let out = dir.path().join(format!("out-{recursive}"));
        let mut args =
            vec!["-q", "diarize", "--demo", "--audio", audio.to_str().unwrap(), "--out-dir", out.to_str().unwrap()];
        if recursive {
            args.push("--recursive");
        }
        let output = run(&args);
        assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
        let ids: Vec<String> =
            lines(&out.join("manifest.jsonl")).iter().map(|r| r["uniq_id"].as_str().unwrap().to_owned()).collect();
        assert_eq!(ids, expected);
        for id in expected {
            assert!(
                out.join(format!("{id}.rttm")).is_file() && out.join(format!("{id}.safetensors")).is_file(),
                "{id}"
            );
        }
    }
}

/// `diarize --manifest` runs its recordings side by side: a bad entry among good ones of different lengths (shorter
/// than a chunk, a few chunks, many) is reported, and each good one's outputs are those of its own single run.
#[test]
fn a_diarized_manifest_matches_single_runs_around_a_bad_entry() {
    let dir = tempfile::tempdir().unwrap();
    let model = testdata("reference/diar-tiny");
    let files = [
        ("long.wav", testdata("reference/diar-tiny/audio.wav")),
        ("short.mp3", testdata("audio/signal.mp3")),
        ("chunks.wav", testdata("reference/tiny-chunks/audio.wav")),
    ];
    for (name, source) in &files {
        std::fs::copy(source, dir.path().join(name)).unwrap();
    }
    std::fs::write(dir.path().join("corrupt.wav"), b"RIFF\x10\0\0\0WAVEfmt garbage garbage").unwrap();
    let manifest = dir.path().join("manifest.jsonl");
    let entries = ["long.wav", "corrupt.wav", "short.mp3", "chunks.wav"];
    let text: Vec<String> = entries.iter().map(|f| format!(r#"{{"audio_filepath": "{f}"}}"#)).collect();
    std::fs::write(&manifest, text.join("\n")).unwrap();
    let out = dir.path().join("out");
    let (model, out_dir) = (model.to_str().unwrap(), out.to_str().unwrap());
    let output =
        run(&["-q", "diarize", "--model", model, "--manifest", manifest.to_str().unwrap(), "--out-dir", out_dir]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("1 of 4 entries failed"), "{stderr}");
    let records = lines(&out.join("manifest.jsonl"));
    let statuses: Vec<&str> = records.iter().map(|r| r["status"].as_str().unwrap()).collect();
    assert_eq!(statuses, ["ok", "error", "ok", "ok"]);
    assert!(records[1]["error"].as_str().unwrap().contains("corrupt.wav"), "{}", records[1]["error"]);
    assert!(!out.join("corrupt.rttm").exists() && !out.join("corrupt.safetensors").exists());

    for (name, _) in &files {
        let id = name.split('.').next().unwrap();
        let (tensors, rttm) = (dir.path().join(format!("{id}.safetensors")), dir.path().join(format!("{id}.rttm")));
        let audio = dir.path().join(name);
        let single = ["-q", "diarize", "--model", model, "--audio", audio.to_str().unwrap()];
        let output =
            run(&[&single[..], &["--out", tensors.to_str().unwrap(), "--rttm", rttm.to_str().unwrap()]].concat());
        assert!(output.status.success(), "{id}: {}", String::from_utf8_lossy(&output.stderr));
        let (alone, batched) =
            (Checkpoint::open(&tensors).unwrap(), Checkpoint::open(&out.join(format!("{id}.safetensors"))).unwrap());
        for tensor in ["speaker_logits", "speaker_probabilities"] {
            let bits = |c: &Checkpoint| c.f32(tensor).unwrap().iter().map(|v| v.to_bits()).collect::<Vec<u32>>();
            let want = bits(&alone);
            assert!(!want.is_empty(), "{id}: {tensor} is empty");
            assert_eq!(bits(&batched), want, "{id}: {tensor}");
        }
        let read = |p: &Path| std::fs::read_to_string(p).unwrap();
        assert_eq!(read(&out.join(format!("{id}.rttm"))), read(&rttm), "{id}: segments");
    }
    // Two recordings side by side instead of the default eight: the same files.
    let two = dir.path().join("two");
    let args = ["-q", "diarize", "--model", model, "--manifest", manifest.to_str().unwrap(), "--batch-size", "2"];
    let output = run(&[&args[..], &["--out-dir", two.to_str().unwrap()]].concat());
    assert_eq!(output.status.code(), Some(1), "{}", String::from_utf8_lossy(&output.stderr));
    for (name, _) in &files {
        let id = name.split('.').next().unwrap();
        for file in [format!("{id}.safetensors"), format!("{id}.rttm")] {
            assert_eq!(std::fs::read(two.join(&file)).unwrap(), std::fs::read(out.join(&file)).unwrap(), "{file}");
        }
    }
    let output = run(&[&args[..6], &["--batch-size", "0", "--out-dir", "o"]].concat());
    assert_eq!(output.status.code(), Some(2), "--batch-size 0 is a usage error");
}
