//! Audio input: WAV decoding of every supported format, down-mixing, resampling and the error cases.

use std::f64::consts::PI;
use std::path::Path;

use hound::{SampleFormat, WavSpec, WavWriter};
use nemotron_engine::io::audio::{AudioError, MIN_SAMPLES, SAMPLE_RATE, SampleError, read_audio, to_16k_mono};

fn spec(channels: u16, sample_rate: u32, bits_per_sample: u16, sample_format: SampleFormat) -> WavSpec {
    WavSpec { channels, sample_rate, bits_per_sample, sample_format }
}

fn write_int_wav(path: &Path, spec: WavSpec, samples: &[i32]) {
    let mut writer = WavWriter::create(path, spec).expect("create WAV");
    for &sample in samples {
        match spec.bits_per_sample {
            8 => writer.write_sample(sample as i8),
            16 => writer.write_sample(sample as i16),
            _ => writer.write_sample(sample),
        }
        .expect("write sample");
    }
    writer.finalize().expect("finalize WAV");
}

fn write_float_wav(path: &Path, spec: WavSpec, samples: &[f32]) {
    let mut writer = WavWriter::create(path, spec).expect("create WAV");
    samples.iter().for_each(|&s| writer.write_sample(s).expect("write sample"));
    writer.finalize().expect("finalize WAV");
}

/// The reference cases of `testdata/reference/` (their `audio.wav` and the waveform upstream read from it).
const CASES: [&str; 3] = ["tiny-chunks", "tiny-release-chunks", "diar-tiny"];

/// The f32 `waveform` of a reference case's `reference.safetensors`.
fn reference_waveform(dir: &Path) -> Vec<f32> {
    let bytes = std::fs::read(dir.join("reference.safetensors")).expect("reference.safetensors");
    let tensors = safetensors::SafeTensors::deserialize(&bytes).expect("parse reference.safetensors");
    let view = tensors.tensor("waveform").expect("tensor waveform");
    assert_eq!(view.dtype(), safetensors::Dtype::F32, "waveform dtype");
    view.data().chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect()
}

#[test]
fn reference_wav_files_equal_their_waveforms() {
    for name in CASES {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/reference").join(name);
        let waveform = reference_waveform(&dir);
        let samples = read_audio(&dir.join("audio.wav")).expect("read audio.wav");
        assert_eq!(samples.len(), waveform.len(), "{name}: length");
        assert!(samples.iter().zip(&waveform).all(|(a, b)| a.to_bits() == b.to_bits()), "{name}: samples differ");
    }
}

#[test]
fn integer_wavs_decode_to_full_scale_fractions() {
    let dir = tempfile::tempdir().expect("temp dir");
    for bits in [8u16, 16, 24, 32] {
        let full_scale = 1i64 << (bits - 1);
        // Extremes, zero, and a few values in between, repeated past the 160-sample minimum.
        let pattern = [-full_scale, -full_scale / 3, -1, 0, 1, full_scale / 5, full_scale - 1];
        let ints: Vec<i32> = pattern.iter().cycle().take(7 * 30).map(|&v| v as i32).collect();
        let path = dir.path().join(format!("int{bits}.wav"));
        write_int_wav(&path, spec(1, SAMPLE_RATE, bits, SampleFormat::Int), &ints);

        let samples = read_audio(&path).expect("read integer WAV");
        assert_eq!(samples.len(), ints.len(), "{bits}-bit length");
        for (&sample, &int) in samples.iter().zip(&ints) {
            let expected = (f64::from(int) / full_scale as f64) as f32;
            assert_eq!(sample, expected, "{bits}-bit sample {int}");
        }
    }
}

#[test]
fn channels_are_averaged() {
    let left: Vec<f32> = (0..400).map(|i| (i as f32 * 0.01).sin()).collect();
    let right: Vec<f32> = (0..400).map(|i| (i as f32 * 0.03).cos() * 0.5).collect();
    let interleaved: Vec<f32> = left.iter().zip(&right).flat_map(|(&l, &r)| [l, r]).collect();
    let expected: Vec<f32> =
        left.iter().zip(&right).map(|(&l, &r)| ((f64::from(l) + f64::from(r)) / 2.0) as f32).collect();
    assert_eq!(to_16k_mono(&interleaved, 2, SAMPLE_RATE).expect("stereo"), expected);

    // Three channels through a 16-bit file: the mean of (a, 2a, 3a) is 2a.
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("three.wav");
    let ints: Vec<i32> = (0..300)
        .flat_map(|i| {
            let a = i * 10 - 1500;
            [a, 2 * a, 3 * a]
        })
        .collect();
    write_int_wav(&path, spec(3, SAMPLE_RATE, 16, SampleFormat::Int), &ints);
    let samples = read_audio(&path).expect("read 3-channel WAV");
    let expected: Vec<f32> = (0..300).map(|i| (f64::from(2 * (i * 10 - 1500)) / 32768.0) as f32).collect();
    assert_eq!(samples.len(), expected.len());
    assert!(samples.iter().zip(&expected).all(|(a, b)| (a - b).abs() <= 1e-7), "3-channel mean");
}

/// A 1 kHz sine of amplitude 0.5 resampled to 16 kHz must match the same sine sampled at 16 kHz
/// (same frequency, amplitude and phase: the resampler's delay is trimmed) away from the clip edges.
#[test]
fn resampling_keeps_a_sine() {
    const AMPLITUDE: f64 = 0.5;
    const FREQUENCY: f64 = 1000.0;
    let sine = |rate: u32, count: usize| -> Vec<f32> {
        (0..count).map(|n| (AMPLITUDE * (2.0 * PI * FREQUENCY * n as f64 / f64::from(rate)).sin()) as f32).collect()
    };
    for rate in [48_000u32, 44_100, 22_050, 11_025, 8_000] {
        let input = sine(rate, rate as usize / 2);
        let output = to_16k_mono(&input, 1, rate).expect("resample");
        assert_eq!(output.len(), 8000, "{rate} Hz: half a second at 16 kHz");
        let expected = sine(SAMPLE_RATE, output.len());
        let interior = 800..output.len() - 800;
        let max_abs = output[interior.clone()]
            .iter()
            .zip(&expected[interior])
            .map(|(&a, &b)| (f64::from(a) - f64::from(b)).abs())
            .fold(0.0, f64::max);
        println!("{rate} Hz → 16 kHz: max |Δ| against the ideal sine = {max_abs:.3e}");
        assert!(max_abs <= 1e-5, "{rate} Hz: max |Δ| {max_abs:.3e}");
    }
}

/// A 10 kHz tone cannot exist at 16 kHz: the anti-aliasing filter must remove it, not fold it to 6 kHz.
#[test]
fn resampling_removes_content_above_8_khz() {
    let input: Vec<f32> =
        (0..24_000).map(|n| (0.5 * (2.0 * PI * 10_000.0 * n as f64 / 48_000.0).sin()) as f32).collect();
    let output = to_16k_mono(&input, 1, 48_000).expect("resample");
    let interior = &output[800..output.len() - 800];
    let rms = (interior.iter().map(|&x| f64::from(x).powi(2)).sum::<f64>() / interior.len() as f64).sqrt();
    println!("10 kHz at 48 kHz → 16 kHz: residual rms {rms:.3e} (input rms 0.354)");
    assert!(rms <= 1e-4, "aliased residual rms {rms:.3e}");
}

#[test]
fn float_wav_at_another_rate_is_resampled() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("stereo-8k.wav");
    let frames = 4000;
    let interleaved: Vec<f32> = (0..frames)
        .flat_map(|n| {
            let x = (n as f32 * 0.05).sin() * 0.25;
            [x, x]
        })
        .collect();
    write_float_wav(&path, spec(2, 8_000, 32, SampleFormat::Float), &interleaved);
    let samples = read_audio(&path).expect("read 8 kHz stereo WAV");
    assert_eq!(samples.len(), 2 * frames);
}

fn message(error: &AudioError) -> String {
    error.to_string()
}

#[test]
fn empty_short_and_non_finite_audio_are_rejected() {
    let empty = to_16k_mono(&[], 1, SAMPLE_RATE).expect_err("empty accepted");
    assert!(matches!(empty, AudioError::Samples(SampleError::Empty { .. })), "{empty}");
    assert!(message(&empty).contains("in-memory audio"));

    let one = to_16k_mono(&[0.5], 1, SAMPLE_RATE).expect_err("1 sample accepted");
    assert!(matches!(one, AudioError::Samples(SampleError::TooShort { samples: 1, .. })), "{one}");
    let short = to_16k_mono(&[0.1; MIN_SAMPLES - 1], 1, SAMPLE_RATE).expect_err("159 samples accepted");
    assert!(matches!(short, AudioError::Samples(SampleError::TooShort { .. })), "{short}");
    assert_eq!(to_16k_mono(&[0.1; MIN_SAMPLES], 1, SAMPLE_RATE).expect("160 samples").len(), MIN_SAMPLES);

    for bad in [f32::NAN, f32::INFINITY, f32::NEG_INFINITY] {
        let mut samples = vec![0.0f32; 1000];
        samples[321] = bad;
        let error = to_16k_mono(&samples, 1, SAMPLE_RATE).expect_err("non-finite accepted");
        assert!(matches!(error, AudioError::Samples(SampleError::NonFinite { index: 321, .. })), "{error}");
    }

    let ragged = to_16k_mono(&[0.0; 401], 2, SAMPLE_RATE).expect_err("partial stereo frame accepted");
    assert!(matches!(ragged, AudioError::Channels { samples: 401, channels: 2, .. }), "{ragged}");
    let no_rate = to_16k_mono(&[0.0; 400], 1, 0).expect_err("0 Hz accepted");
    assert!(matches!(no_rate, AudioError::SampleRate { rate: 0, .. }), "{no_rate}");
}

#[test]
fn bad_files_are_rejected_with_their_path() {
    let dir = tempfile::tempdir().expect("temp dir");

    let text = dir.path().join("notes.wav");
    std::fs::write(&text, "this is not audio").expect("write text file");
    let error = read_audio(&text).expect_err("text file accepted");
    assert!(matches!(error, AudioError::Format { .. }), "{error}");
    assert!(message(&error).contains("notes.wav"), "{error}");

    let missing = read_audio(&dir.path().join("missing.wav")).expect_err("missing file accepted");
    assert!(matches!(missing, AudioError::Read { .. }), "{missing}");

    let empty = dir.path().join("empty.wav");
    write_float_wav(&empty, spec(1, SAMPLE_RATE, 32, SampleFormat::Float), &[]);
    let error = read_audio(&empty).expect_err("empty WAV accepted");
    assert!(
        matches!(error, AudioError::Samples(SampleError::Empty { .. })) && message(&error).contains("empty.wav"),
        "{error}"
    );

    let nan = dir.path().join("nan.wav");
    write_float_wav(&nan, spec(1, SAMPLE_RATE, 32, SampleFormat::Float), &[0.0, 0.1, f32::NAN, 0.2]);
    let error = read_audio(&nan).expect_err("NaN WAV accepted");
    assert!(
        matches!(error, AudioError::Samples(SampleError::NonFinite { index: 2, .. }))
            && message(&error).contains("nan.wav"),
        "{error}"
    );
}
