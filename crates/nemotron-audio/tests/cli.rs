//! `nemotron-audio` run as a user runs it: real files in, files out, exit codes, one-line errors.

mod cli_support;
#[path = "../../nemotron-towers/tests/common/mod.rs"]
mod common;

use std::path::Path;
use std::process::Command;

use cli_support::{fails, ok, path_str, run, testdata};
use common::{edited_weights, model_dir};
use hound::{SampleFormat, WavSpec};
use nemotron_testkit::assert_close;
use nemotron_testkit::postprocess::diarization::rttm::parse_rttm;
use nemotron_testkit::postprocess::diarization::threshold_segments;
use nemotron_testkit::towers::Checkpoint;
use nemotron_testkit::towers::tensor_file::Tensor;

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
    ok(&[
        "encode",
        "--demo",
        "--audio",
        path_str(&testdata("reference/tiny-chunks/audio.wav")),
        "--out",
        path_str(&out),
    ]);
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
    let parsed = parse_rttm(&std::fs::read_to_string(&rttm).unwrap(), "d.rttm").unwrap();
    let expected = threshold_segments(&logits, 8, 913, 0.5);
    assert!(!parsed.is_empty(), "the random diarizer should mark some activity");
    assert_eq!(parsed.len(), expected.len());
    for (p, e) in parsed.iter().zip(&expected) {
        assert_eq!((p.uri.as_str(), p.speaker.clone()), ("audio", format!("spk{}", e.speaker)));
        assert!((p.start - e.start).abs() < 0.006 && (p.duration - e.duration()).abs() < 0.006, "{p:?} vs {e:?}");
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
    let wav = testdata("reference/tiny-chunks/audio.wav");
    for args in [
        &["encode", "--out", "x.safetensors"][..],
        &["frobnicate"],
        &["encode", "--demo", "--audio", path_str(&wav), "--features", "f.safetensors", "--out", "x.safetensors"],
        &["diarize", "--demo", "--audio", path_str(&wav), "--threshold", "1.5"],
        &["diarize", "--demo", "--audio", path_str(&wav), "--threshold", "NaN"],
        &["bench", "--repeats", "0"],
        // No input at all, for each command that reads one.
        &["encode", "--demo", "--out", "x.safetensors"],
        &["diarize", "--demo", "--out-dir", "never-made"],
        &["align", "--demo", "--transcript", "hello"],
    ] {
        let output = run(args);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "nemotron-audio {args:?}: {stderr}");
        assert!(stderr.lines().any(|l| l.starts_with("error: ")), "nemotron-audio {args:?}: {stderr}");
    }
}

#[test]
fn a_model_must_be_named_or_the_demo_asked_for() {
    let wav = testdata("reference/tiny-chunks/audio.wav");
    let output = run(&["encode", "--audio", path_str(&wav), "--out", "x.safetensors"]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("--model with a Hugging Face Hub id")
            && stderr.contains("checkpoint folder")
            && stderr.contains("--demo"),
        "the refusal says what to pass: {stderr}"
    );
    assert!(!Path::new("x.safetensors").exists(), "nothing was written");
}

/// The demo model is compiled in: a copy of the binary run from an unrelated folder finds it, and says (at warn
/// level, without `RUST_LOG`) that its weights are random.
#[test]
fn the_demo_model_travels_with_the_binary() {
    let dir = tempfile::tempdir().unwrap();
    let binary = dir.path().join("nemotron-audio");
    std::fs::copy(env!("CARGO_BIN_EXE_nemotron-audio"), &binary).unwrap();
    std::fs::copy(testdata("reference/tiny-chunks/audio.wav"), dir.path().join("speech.wav")).unwrap();
    let output = Command::new(&binary)
        .args(["encode", "--demo", "--audio", "speech.wav", "--out", "out.safetensors"])
        .current_dir(dir.path())
        .env_remove("RUST_LOG")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(stderr.contains("random weights"), "the demo warns: {stderr}");
    assert_eq!(
        Checkpoint::open(&dir.path().join("out.safetensors")).unwrap().tensor("audio_embeds").unwrap().shape,
        [80, 48]
    );
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
    let (one, infinite) = (d.join("one.wav"), d.join("infinite.wav"));
    write_wav(&one, &[0.25]);
    write_wav(&infinite, &[0.0, 0.1, f32::INFINITY].repeat(100));
    fails(&["encode", "--demo", "--audio", path_str(&d.join("missing.wav")), "--out", o], "missing.wav");
    fails(&["encode", "--demo", "--audio", path_str(&text), "--out", o], "notes.wav");
    fails(&["encode", "--demo", "--audio", path_str(&empty), "--out", o], "empty.wav");
    fails(&["encode", "--demo", "--audio", path_str(&short), "--out", o], "short.wav");
    fails(&["encode", "--demo", "--audio", path_str(&nan), "--out", o], "nan.wav: sample 1 is NaN");
    fails(&["encode", "--demo", "--audio", path_str(&one), "--out", o], "one.wav: 1 samples at 16 kHz");
    fails(&["diarize", "--demo", "--audio", path_str(&infinite)], "infinite.wav: sample 2 is inf");

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
    let write_with = |frames: usize, bins: usize, bad: f32, valid: usize| {
        let mut data = vec![0.5f32; frames * bins];
        data[bins + 3] = bad;
        let mask: Vec<i32> = (0..frames).map(|i| (i < valid) as i32).collect();
        let tensors = vec![
            (
                "input_features".to_string(),
                nemotron_testkit::towers::tensor_file::Tensor::f32(vec![frames, bins], &data),
            ),
            (
                "input_features_mask".to_string(),
                nemotron_testkit::towers::tensor_file::Tensor {
                    dtype: safetensors::Dtype::I32,
                    shape: vec![frames],
                    bytes: bytemuck::cast_slice(&mask).to_vec(),
                },
            ),
        ];
        nemotron_testkit::towers::tensor_file::write(&features, &tensors).unwrap();
    };
    let write = |frames: usize, bins: usize| write_with(frames, bins, 0.5, frames);
    write(16, 80);
    fails(&["encode", "--demo", "--features", path_str(&features), "--out", o], "expected [frames, 128]");
    write(13, 128);
    fails(&["encode", "--demo", "--features", path_str(&features), "--out", o], "multiple of 8");
    write_with(16, 128, f32::NAN, 16);
    fails(
        &["encode", "--demo", "--features", path_str(&features), "--out", o],
        "input_features value 131 is not finite",
    );
    write_with(16, 128, f32::NEG_INFINITY, 16);
    fails(&["diarize", "--demo", "--features", path_str(&features)], "input_features value 131 is not finite");
    write_with(16, 128, 0.5, 0);
    fails(&["encode", "--demo", "--features", path_str(&features), "--out", o], "no valid frame");

    // A diarizer alone cannot encode.
    let diar = testdata("reference/diar-tiny");
    fails(&["encode", "--model", path_str(&diar), "--audio", path_str(&wav), "--out", o], "diarizer alone");
}

#[test]
fn broken_model_files_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.safetensors");
    let wav = testdata("reference/tiny-chunks/audio.wav");
    let encode = |model: &Path, needle: &str| {
        fails(&["encode", "--model", path_str(model), "--audio", path_str(&wav), "--out", path_str(&out)], needle);
    };
    let real = std::fs::read(testdata("reference/tiny-release-chunks/model.safetensors")).unwrap();
    let truncated = model_dir(&real[..real.len() / 2]);
    encode(truncated.path(), "model.safetensors: not a safetensors file");
    let huge_header = model_dir(&[&(1u64 << 62).to_le_bytes()[..], b"{}"].concat());
    encode(huge_header.path(), "model.safetensors: not a safetensors file");
    let header = r#"{"w":{"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,16]}}"#;
    let huge_tensor = model_dir(&[&(header.len() as u64).to_le_bytes()[..], header.as_bytes(), &[0; 16]].concat());
    encode(huge_tensor.path(), "model.safetensors: not a safetensors file");

    let integer = "perception.encoder.asr_encoder.layers.1.attn.w_qkv.weight";
    let i32_weights = model_dir(&edited_weights(|name, t| match name == integer {
        true => Some(Tensor { dtype: safetensors::Dtype::I32, bytes: vec![0; t.bytes.len() * 2], ..t }),
        false => Some(t),
    }));
    encode(i32_weights.path(), &format!("tensor `{integer}` has dtype I32"));
    let projector = "perception.proj.weight";
    let misshaped = model_dir(&edited_weights(|name, t| match name == projector {
        true => Some(Tensor { shape: vec![t.shape[1], t.shape[0]], ..t }),
        false => Some(t),
    }));
    encode(misshaped.path(), &format!("tensor `{projector}` has shape [64, 48], expected [48, 64]"));
    let unrelated = model_dir(&edited_weights(|name, t| name.starts_with("perception.proj").then_some(t)));
    encode(unrelated.path(), "cannot tell the tensor naming scheme (no audio tensors found");
}

#[test]
fn bad_configs_name_the_field() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.safetensors");
    let wav = testdata("reference/tiny-chunks/audio.wav");
    let model = model_dir(&std::fs::read(testdata("reference/tiny-release-chunks/model.safetensors")).unwrap());
    let config = std::fs::read_to_string(model.path().join("config.json")).unwrap();
    let asr_hidden = r#""hidden_size": 64,"#;
    for (from, to, needle) in [
        (asr_hidden, r#""hidden_size": 0,"#, "asr_config.hidden_size = 0 (must be 1..="),
        (r#""num_attention_heads": 4,"#, r#""num_attention_heads": 5,"#, "5 heads do not divide hidden_size 64"),
        (r#""partial_rotary_factor": 0.5,"#, r#""partial_rotary_factor": 0.5625,"#, "rotary dimensions 9"),
        (r#""num_hidden_layers": 2,"#, r#""num_hidden_layers": 1000000,"#, "num_hidden_layers = 1000000"),
        // Valid, but the checkpoint has 2 layers: the missing tensors are listed, not thousands of lines.
        (r#""num_hidden_layers": 2,"#, r#""num_hidden_layers": 400,"#, "asr_encoder.layers.2.norm1.weight"),
    ] {
        assert!(config.contains(from), "the bundled config has `{from}`");
        std::fs::write(model.path().join("config.json"), config.replacen(from, to, 1)).unwrap();
        let args = ["encode", "--model", path_str(model.path()), "--audio", path_str(&wav), "--out", path_str(&out)];
        let message = fails(&args, needle);
        assert!(message.lines().count() < 20, "{} lines of error for `{to}`", message.lines().count());
    }
}

#[test]
fn bench_refuses_weights_the_device_cannot_hold_before_making_them() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("config.json");
    // Valid sizes, but one layer's q/k/v weight is 6 GiB: past any storage binding (they are
    // addressed with 32 bits).
    let wide = r#"{"hidden_size":32768,"num_attention_heads":256,"num_hidden_layers":1}"#;
    // The word-timestamp head reads the ASR states, so its width must match (checked before any weight is made).
    let config_json = format!(
        r#"{{"model_type":"nemo_speechlm","audio_config":{{"asr_config":{wide}}},"word_timestamp_config":{wide}}}"#
    );
    std::fs::write(&config, config_json).unwrap();
    fails(
        &["bench", "--config", path_str(&config), "--seconds", "1", "--repeats", "1"],
        "random weight `perception.encoder.asr_encoder.layers.0.attn.w_qkv.weight` (6442450944 bytes)",
    );
}

#[test]
fn bench_refuses_a_diarization_config() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("config.json");
    std::fs::write(&config, r#"{"model_type":"nemotron3_diarization"}"#).unwrap();
    fails(&["bench", "--config", path_str(&config), "--repeats", "1"], "bench needs a Transcribe config");
}

fn write_int_wav(path: &Path, channels: u16, rate: u32, bits: u16, samples: &[i32]) {
    let spec = WavSpec { channels, sample_rate: rate, bits_per_sample: bits, sample_format: SampleFormat::Int };
    let mut writer = hound::WavWriter::create(path, spec).unwrap();
    for &s in samples {
        match bits {
            8 => writer.write_sample(s as i8),
            16 => writer.write_sample(s as i16),
            _ => writer.write_sample(s),
        }
        .unwrap();
    }
    writer.finalize().unwrap();
}

/// A 16-bit mono WAV written byte by byte, with a `LIST` chunk of odd size (so a pad byte
/// follows it) and a `fact` chunk before the data and an `id3 ` chunk after it.
fn write_wav_with_extra_chunks(path: &Path, samples: &[i32]) {
    let chunk = |id: &[u8; 4], body: &[u8]| {
        let pad: &[u8] = if body.len() % 2 == 1 { &[0] } else { &[] };
        [&id[..], &(body.len() as u32).to_le_bytes(), body, pad].concat()
    };
    let fmt =
        [&1u16.to_le_bytes()[..], &1u16.to_le_bytes(), &16_000u32.to_le_bytes(), &32_000u32.to_le_bytes()].concat();
    let fmt = [fmt, 2u16.to_le_bytes().to_vec(), 16u16.to_le_bytes().to_vec()].concat();
    let info = [&b"INFO"[..], &chunk(b"ISFT", b"nemotron test\0")].concat();
    let data: Vec<u8> = samples.iter().flat_map(|&s| (s as i16).to_le_bytes()).collect();
    let body = [
        &b"WAVE"[..],
        &chunk(b"fmt ", &fmt),
        &chunk(b"LIST", &info),
        &chunk(b"fact", &(samples.len() as u32).to_le_bytes()),
        &chunk(b"data", &data),
        &chunk(b"id3 ", b"ID3\x03\0\0\0\0\0\0"),
    ]
    .concat();
    std::fs::write(path, [&b"RIFF"[..], &(body.len() as u32).to_le_bytes(), &body].concat()).unwrap();
}

fn encode_features(audio: &Path, out: &Path) -> (Vec<f32>, usize) {
    ok(&["--quiet", "encode", "--demo", "--audio", path_str(audio), "--out", path_str(out)]);
    let file = Checkpoint::open(out).unwrap();
    let valid = file.f32("input_features_mask").unwrap().iter().filter(|&&m| m == 1.0).count();
    for name in ["asr_last_hidden_state", "speaker_logits", "last_hidden_state", "audio_embeds"] {
        assert!(file.f32(name).unwrap().iter().all(|v| v.is_finite()), "{}: {name} is not finite", audio.display());
    }
    (file.f32("input_features").unwrap(), valid)
}

#[test]
fn unusual_but_valid_wavs_encode() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let out = d.join("out.safetensors");
    // 1.5 s of a 16-bit signal; every other format below decodes to exactly the same samples.
    let signal: Vec<i32> =
        (0..24_000).map(|i| (9000.0 * (i as f64 * 0.11).sin() + 3000.0 * (i as f64 * 0.013).sin()) as i32).collect();
    let plain = d.join("plain.wav");
    write_int_wav(&plain, 1, 16_000, 16, &signal);
    let (want, valid) = encode_features(&plain, &out);
    assert_eq!(valid, 150);

    let quantized: Vec<i32> = signal.iter().map(|&s| s >> 8).collect();
    let (eight, sixteen) = (d.join("8-bit.wav"), d.join("16-bit-of-8.wav"));
    write_int_wav(&eight, 1, 16_000, 8, &quantized);
    write_int_wav(&sixteen, 1, 16_000, 16, &quantized.iter().map(|&s| s << 8).collect::<Vec<_>>());
    assert_eq!(encode_features(&eight, &out), encode_features(&sixteen, &out), "8-bit");

    let (bits24, stereo, extra) = (d.join("24-bit.wav"), d.join("stereo.wav"), d.join("extra-chunks.wav"));
    write_int_wav(&bits24, 1, 16_000, 24, &signal.iter().map(|&s| s << 8).collect::<Vec<_>>());
    // (s + k, s − k) averages to exactly s.
    let interleaved: Vec<i32> =
        signal.iter().enumerate().flat_map(|(i, &s)| [s + (i % 7) as i32 * 100, s - (i % 7) as i32 * 100]).collect();
    write_int_wav(&stereo, 2, 16_000, 16, &interleaved);
    write_wav_with_extra_chunks(&extra, &signal);
    for path in [bits24, stereo, extra] {
        assert_eq!(encode_features(&path, &out), (want.clone(), valid), "{}", path.display());
    }

    // Other rates are resampled: the same duration, so the same frame count.
    for rate in [8_000, 48_000] {
        let path = d.join(format!("{rate}.wav"));
        let samples: Vec<i32> = (0..rate * 3 / 2)
            .map(|i| (9000.0 * (2.0 * std::f64::consts::PI * 440.0 * i as f64 / rate as f64).sin()) as i32)
            .collect();
        write_int_wav(&path, 1, rate, 16, &samples);
        let (_, valid) = encode_features(&path, &out);
        assert_eq!(valid, 150, "{rate} Hz");
    }
}

#[test]
fn one_frame_recordings_encode_and_diarize() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.safetensors");
    // (samples, mel frames, encoder frames, audio tokens): one 80 ms token, and one 10 ms frame.
    for (samples, frames, encoder_frames, tokens) in [(1280, 16, 2, 1), (160, 8, 1, 1)] {
        let wav = dir.path().join(format!("{samples}.wav"));
        write_wav(&wav, &(0..samples).map(|i| (i as f32 * 0.05).sin() * 0.3).collect::<Vec<_>>());
        ok(&["--quiet", "encode", "--demo", "--audio", path_str(&wav), "--out", path_str(&out)]);
        let got = Checkpoint::open(&out).unwrap();
        for (name, shape) in [
            ("input_features", vec![frames, 128]),
            ("asr_last_hidden_state", vec![encoder_frames, 64]),
            ("speaker_probabilities", vec![encoder_frames, 8]),
            ("audio_embeds", vec![tokens, 48]),
        ] {
            assert_eq!(got.tensor(name).unwrap().shape, shape.as_slice(), "{samples} samples: {name}");
            assert!(got.f32(name).unwrap().iter().all(|v| v.is_finite()), "{samples} samples: {name}");
        }
        let rttm = dir.path().join("out.rttm");
        ok(&[
            "--quiet",
            "diarize",
            "--demo",
            "--audio",
            path_str(&wav),
            "--out",
            path_str(&out),
            "--rttm",
            path_str(&rttm),
        ]);
        assert_eq!(Checkpoint::open(&out).unwrap().tensor("speaker_logits").unwrap().shape, [frames, 8]);
        parse_rttm(&std::fs::read_to_string(&rttm).unwrap(), "out.rttm").unwrap();
    }
}

#[test]
fn bench_times_a_corpus_diarized_side_by_side_and_the_module_over_each_file() {
    let config = testdata("reference/tiny-chunks/config.json");
    let args = ["--seconds", "1", "--repeats", "1", "--corpus", "3", "--corpus-seconds", "2", "--corpus-batch", "2"];
    let output = ok(&[&["bench", "--config", path_str(&config)][..], &args[..]].concat());
    let stdout = String::from_utf8_lossy(&output.stdout);
    for case in ["corpus-3x2s-diarization-batch2", "corpus-3x2s-module"] {
        let line = stdout.lines().find(|l| l.starts_with(case)).unwrap_or_else(|| panic!("no {case}: {stdout}"));
        assert!(line.contains("x realtime"), "{line}");
    }
    // The tiny model's steps on lavapipe split nothing by the batch's rows: a recording side by side gets its bits
    // alone (`tests/diarize_many.rs` in nemotron-towers checks the same through the library).
    let line = "corpus: a recording side by side with 1 other(s) against alone: speaker logits bit-identical";
    assert!(stdout.lines().any(|l| l == line), "no `{line}`: {stdout}");
    let without = ok(&[
        &["bench", "--config", path_str(&config)][..],
        &["--seconds", "1", "--repeats", "1", "--corpus", "0"][..],
    ]
    .concat());
    assert!(!String::from_utf8_lossy(&without.stdout).contains("corpus-"), "--corpus 0 runs no corpus case");
}
