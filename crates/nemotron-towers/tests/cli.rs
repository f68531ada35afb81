//! `nemotron-audio` run as a user runs it: real files in, files out, exit codes, one-line errors.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use audio_kernels::testing::assert_close;
use nemotron_towers::Checkpoint;
use nemotron_towers::rttm::{parse_rttm, segments};

fn testdata(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata").join(path)
}

fn run(args: &[&str]) -> Output {
    let output = Command::new(env!("CARGO_BIN_EXE_nemotron-audio")).args(args).output().expect("the binary runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!stderr.contains("panicked"), "nemotron-audio {args:?} panicked:\n{stderr}");
    output
}

fn ok(args: &[&str]) -> Output {
    let output = run(args);
    assert!(output.status.success(), "nemotron-audio {args:?} failed:\n{}", String::from_utf8_lossy(&output.stderr));
    output
}

/// Exit status 1 and an `error:` line naming `needle`.
fn fails(args: &[&str], needle: &str) {
    let output = run(args);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "nemotron-audio {args:?}: {stderr}");
    let line = stderr.lines().find(|l| l.starts_with("error: ")).unwrap_or_else(|| panic!("no error line in {stderr}"));
    assert!(line.contains(needle), "`{line}` should mention `{needle}`");
}

fn path_str(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn encode_from_features_writes_the_upstream_outputs() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.safetensors");
    let case = testdata("reference/tiny-chunks");
    let features = case.join("reference.safetensors");
    ok(&["--quiet", "encode", "--model", path_str(&case), "--features", path_str(&features), "--out", path_str(&out)]);
    let got = Checkpoint::open(&out).unwrap();
    let want = Checkpoint::open(&features).unwrap();
    for name in
        ["asr_last_hidden_state", "speaker_logits", "speaker_probabilities", "last_hidden_state", "audio_embeds"]
    {
        assert_close(&format!("cli {name}"), &got.f32(name).unwrap(), &want.f64(name).unwrap(), 1e-5);
        assert_eq!(got.tensor(name).unwrap().shape, want.tensor(name).unwrap().shape, "{name}");
    }
    assert_eq!(got.f32("input_features").unwrap(), want.f32("input_features").unwrap());
    assert_eq!(got.tensor("input_features_mask").unwrap().shape, [640]);
}

#[test]
fn encode_from_audio_with_the_bundled_model() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.safetensors");
    ok(&["encode", "--audio", path_str(&testdata("reference/tiny-chunks/audio.wav")), "--out", path_str(&out)]);
    let got = Checkpoint::open(&out).unwrap();
    // 6.37 s: 637 valid frames, 640 padded, 80 encoder frames, 80 tokens; tiny model widths.
    for (name, shape) in [
        ("input_features", vec![640, 128]),
        ("input_features_mask", vec![640]),
        ("asr_last_hidden_state", vec![80, 64]),
        ("speaker_logits", vec![640, 8]),
        ("speaker_probabilities", vec![80, 8]),
        ("last_hidden_state", vec![80, 64]),
        ("audio_embeds", vec![80, 48]),
    ] {
        assert_eq!(got.tensor(name).unwrap().shape, shape.as_slice(), "{name}");
        assert!(got.f32(name).unwrap().iter().all(|v| v.is_finite()), "{name} has non-finite values");
    }
}

#[test]
fn diarize_writes_rttm_plot_and_tensors_that_agree() {
    let dir = tempfile::tempdir().unwrap();
    let (out, rttm, plot) = (dir.path().join("d.safetensors"), dir.path().join("d.rttm"), dir.path().join("d.png"));
    let case = testdata("reference/diar-tiny");
    ok(&[
        "--quiet",
        "diarize",
        "--model",
        path_str(&case),
        "--audio",
        path_str(&case.join("audio.wav")),
        "--out",
        path_str(&out),
        "--rttm",
        path_str(&rttm),
        "--plot",
        path_str(&plot),
    ]);
    let logits = Checkpoint::open(&out).unwrap().f32("speaker_logits").unwrap();
    let parsed = parse_rttm(&std::fs::read_to_string(&rttm).unwrap()).unwrap();
    let expected = segments(&logits, 8, 913, 0.5);
    assert!(!parsed.is_empty(), "the random diarizer should mark some activity");
    assert_eq!(parsed.len(), expected.len());
    for (p, e) in parsed.iter().zip(&expected) {
        assert_eq!(p.speaker, e.speaker);
        assert!((p.start - e.start).abs() < 0.006 && (p.duration - e.duration).abs() < 0.006, "{p:?} vs {e:?}");
    }
    let png = std::fs::read(&plot).unwrap();
    assert!(png.starts_with(b"\x89PNG"), "the plot is a PNG");
}

#[test]
fn info_describes_the_adapter() {
    let output = ok(&["info"]);
    assert!(String::from_utf8_lossy(&output.stdout).contains("adapter:"));
}

#[test]
fn usage_errors_exit_2() {
    assert_eq!(run(&["encode", "--out", "x.safetensors"]).status.code(), Some(2));
    assert_eq!(run(&["frobnicate"]).status.code(), Some(2));
}

fn write_wav(path: &Path, samples: &[f32]) {
    let spec = hound::WavSpec {
        channels: 1,
        sample_rate: 16_000,
        bits_per_sample: 32,
        sample_format: hound::SampleFormat::Float,
    };
    let mut writer = hound::WavWriter::create(path, spec).unwrap();
    for &s in samples {
        writer.write_sample(s).unwrap();
    }
    writer.finalize().unwrap();
}

#[test]
fn bad_inputs_give_one_line_errors() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let out = d.join("out.safetensors");
    let o = path_str(&out);
    let text = d.join("notes.wav");
    std::fs::write(&text, "not audio").unwrap();
    let (empty, short, nan) = (d.join("empty.wav"), d.join("short.wav"), d.join("nan.wav"));
    write_wav(&empty, &[]);
    write_wav(&short, &[0.1; 100]);
    write_wav(&nan, &[0.0, f32::NAN, 0.0].repeat(100));
    fails(&["encode", "--audio", path_str(&d.join("missing.wav")), "--out", o], "missing.wav");
    fails(&["encode", "--audio", path_str(&text), "--out", o], "notes.wav");
    fails(&["encode", "--audio", path_str(&empty), "--out", o], "empty.wav");
    fails(&["encode", "--audio", path_str(&short), "--out", o], "short.wav");
    fails(&["encode", "--audio", path_str(&nan), "--out", o], "nan.wav");

    // A model directory whose weights are not safetensors, and one with an unknown config.
    let model = d.join("model");
    std::fs::create_dir(&model).unwrap();
    std::fs::copy(testdata("reference/tiny-chunks/config.json"), model.join("config.json")).unwrap();
    std::fs::write(model.join("model.safetensors"), b"\x10\x00\x00\x00\x00\x00\x00\x00{garbage}").unwrap();
    let wav = testdata("reference/tiny-chunks/audio.wav");
    fails(&["encode", "--model", path_str(&model), "--audio", path_str(&wav), "--out", o], "model.safetensors");
    std::fs::write(model.join("config.json"), r#"{"model_type":"whisper"}"#).unwrap();
    fails(&["encode", "--model", path_str(&model), "--audio", path_str(&wav), "--out", o], "whisper");

    // A features file with the wrong width, and one whose frame count is not a multiple of 8.
    let features = d.join("features.safetensors");
    let write = |frames: usize, bins: usize| {
        let data = vec![0.5f32; frames * bins];
        let mask = vec![1i32; frames];
        let tensors = vec![
            ("input_features".to_string(), nemotron_towers::tensor_file::Tensor::f32(vec![frames, bins], &data)),
            (
                "input_features_mask".to_string(),
                nemotron_towers::tensor_file::Tensor {
                    dtype: safetensors::Dtype::I32,
                    shape: vec![frames],
                    bytes: bytemuck::cast_slice(&mask).to_vec(),
                },
            ),
        ];
        nemotron_towers::tensor_file::write(&features, &tensors).unwrap();
    };
    write(16, 80);
    fails(&["encode", "--features", path_str(&features), "--out", o], "expected [frames, 128]");
    write(13, 128);
    fails(&["encode", "--features", path_str(&features), "--out", o], "multiple of 8");

    // A diarizer alone cannot encode.
    let diar = testdata("reference/diar-tiny");
    fails(&["encode", "--model", path_str(&diar), "--audio", path_str(&wav), "--out", o], "diarizer alone");
}
