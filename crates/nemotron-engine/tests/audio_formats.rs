//! Every container and codec the audio reader takes, from committed fixtures (`testdata/audio/`, made by
//! `scripts/make-audio-fixtures.sh` from one 0.5 s 16-bit 16 kHz signal of peak 0.39): each decodes to that signal
//! within its codec's error, standard input, channel choice and cuts work, and truncated or corrupt files give a
//! clear error or a shorter decode, never a panic or a hang. (Plain integer and float WAVs, written at test time,
//! are in `audio.rs`.)

use std::path::PathBuf;
use std::time::{Duration, Instant};

use nemotron_engine::io::audio::{
    AudioError, AudioOptions, Channel, read_audio, read_audio_bytes, read_audio_from, read_audio_with,
};

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../testdata/audio").join(name)
}

/// The signal every fixture was made from.
fn source() -> Vec<f32> {
    read_audio(&fixture("source.wav")).expect("source.wav")
}

/// (largest absolute difference, RMS of the difference / RMS of the signal) over `want`'s length.
fn errors(got: &[f32], want: &[f32]) -> (f64, f64) {
    assert!(got.len() >= want.len(), "{} samples decoded, {} expected", got.len(), want.len());
    let (mut max, mut diff2, mut sig2) = (0f64, 0f64, 0f64);
    for (g, w) in got.iter().zip(want) {
        let d = f64::from(*g) - f64::from(*w);
        max = max.max(d.abs());
        diff2 += d * d;
        sig2 += f64::from(*w) * f64::from(*w);
    }
    (max, (diff2 / sig2).sqrt())
}

/// What a codec may change. Bounds are the codec's own error with a margin over what was measured here.
enum Expect {
    /// Lossless: the same bits (24-bit, 64-bit float, RF64 and FLAC copies of 16-bit samples).
    Exact,
    /// Largest absolute error.
    MaxAbs(f64),
    /// RMS error relative to the signal's RMS, after `lead` samples the decoder puts first.
    Relative { bound: f64, lead: usize },
}

/// (file, decoded length, expectation, why).
const CASES: &[(&str, usize, Expect, &str)] = &[
    ("pcm-s24-extensible.wav", 8000, Expect::Exact, "WAVE_FORMAT_EXTENSIBLE, 24-bit integer"),
    ("float64.wav", 4000, Expect::Exact, "64-bit float, the first quarter second"),
    ("rf64.wav", 8000, Expect::Exact, "RF64 (ds64 chunk), 16-bit"),
    ("signal.flac", 8000, Expect::Exact, "FLAC is lossless"),
    // ffmpeg truncates 16 to 8 bits: at most one 8-bit step (2/256) off.
    ("pcm-u8.wav", 8000, Expect::MaxAbs(1.0 / 128.0 + 1e-6), "unsigned 8-bit"),
    // G.711 quantises with 16 steps per doubling of amplitude: at most |x|/32 ≈ 0.0123 at the 0.39 peak
    // (measured 0.0079).
    ("mulaw.wav", 8000, Expect::MaxAbs(0.0125), "μ-law"),
    ("alaw.wav", 8000, Expect::MaxAbs(0.0125), "A-law"),
    // 8 kHz μ-law resampled to 16 kHz; the signal lies under 4 kHz (measured 0.017).
    ("mulaw-8khz.wav", 8000, Expect::Relative { bound: 0.03, lead: 0 }, "8 kHz μ-law"),
    // 4-bit ADPCM (about 26 dB SNR; measured 0.050); the last block is padded.
    ("ima-adpcm.wav", 8164, Expect::Relative { bound: 0.08, lead: 0 }, "IMA ADPCM"),
    ("ms-adpcm.wav", 8144, Expect::Relative { bound: 0.08, lead: 0 }, "MS ADPCM"),
    // Perceptual coders at 64 kbit/s (MP3 measured 0.050, Vorbis q6 0.044); MP3's LAME tag gives the exact length.
    ("signal.mp3", 8000, Expect::Relative { bound: 0.08, lead: 0 }, "MP3"),
    ("signal.ogg", 8000, Expect::Relative { bound: 0.08, lead: 0 }, "Ogg Vorbis"),
    // AAC (measured 0.061): symphonia applies no edit list, so the encoder's 1024 priming samples come first
    // (ffmpeg's encoder; a documented limitation: AAC timings are 64 ms late).
    ("signal.aac", 9216, Expect::Relative { bound: 0.1, lead: 1024 }, "AAC in ADTS"),
    ("signal.m4a", 9216, Expect::Relative { bound: 0.1, lead: 1024 }, "AAC in M4A"),
];

#[test]
fn every_format_decodes_to_the_signal_within_its_codec_error() {
    let want = source();
    assert_eq!(want.len(), 8000);
    for (name, length, expect, what) in CASES {
        let got = read_audio(&fixture(name)).unwrap_or_else(|e| panic!("{what}: {e}"));
        assert_eq!(got.len(), *length, "{what}: length");
        let want = &want[..want.len().min(*length)];
        match expect {
            Expect::Exact => assert!(got[..want.len()] == *want, "{what}: samples differ"),
            Expect::MaxAbs(bound) => {
                let (max, _) = errors(&got, want);
                assert!(max <= *bound, "{what}: largest error {max:.3e} > {bound:.3e}");
            }
            Expect::Relative { bound, lead } => {
                let (_, relative) = errors(&got[*lead..], want);
                assert!(relative <= *bound, "{what}: relative error {relative:.3e} > {bound}");
            }
        }
    }
}

#[test]
fn codecs_without_a_decoder_are_named() {
    let error = read_audio(&fixture("signal.opus")).expect_err("Opus decoded");
    assert!(matches!(error, AudioError::UnsupportedCodec { .. }), "{error}");
    assert!(error.to_string().starts_with("unsupported codec Opus in ") && error.to_string().ends_with("signal.opus"));
}

#[test]
fn standard_input_decodes_as_the_file_does() {
    for name in ["signal.mp3", "signal.m4a", "rf64.wav", "signal.flac"] {
        let file = std::fs::File::open(fixture(name)).unwrap();
        let piped = read_audio_from(file, "standard input", &AudioOptions::default()).unwrap();
        assert_eq!(piped, read_audio(&fixture(name)).unwrap(), "{name}");
    }
}

#[test]
fn one_channel_or_the_mix() {
    // Left: the signal; right: the signal × −0.5 (sox rounds: within one 16-bit step).
    let signal = source();
    let read = |channel| read_audio_with(&fixture("stereo.wav"), &AudioOptions { channel, ..Default::default() });
    assert_eq!(read(Channel::Index(0)).unwrap(), signal);
    let step = 1.0 / 32768.0 + 1e-7;
    let (right, mix) = (read(Channel::Index(1)).unwrap(), read(Channel::Mix).unwrap());
    for (i, &s) in signal.iter().enumerate() {
        assert!((f64::from(right[i]) + 0.5 * f64::from(s)).abs() <= step, "right {i}");
        assert!((f64::from(mix[i]) - 0.25 * f64::from(s)).abs() <= step, "mix {i}");
    }
    let error = read(Channel::Index(2)).expect_err("channel 2 of 2");
    assert!(matches!(error, AudioError::NoSuchChannel { channel: 2, channels: 2, .. }), "{error}");
    assert_eq!("mix".parse::<Channel>(), Ok(Channel::Mix));
    assert_eq!("1".parse::<Channel>(), Ok(Channel::Index(1)));
    assert!("left".parse::<Channel>().is_err());
}

#[test]
fn offset_and_duration_cut_the_audio() {
    let signal = source();
    let options = AudioOptions { offset: 0.1, duration: Some(0.2), ..Default::default() };
    assert_eq!(read_audio_with(&fixture("source.wav"), &options).unwrap(), signal[1600..4800]);
    let to_end = AudioOptions { offset: 0.25, ..Default::default() };
    assert_eq!(read_audio_with(&fixture("signal.flac"), &to_end).unwrap(), signal[4000..]);
    let past = AudioOptions { offset: 0.6, ..Default::default() };
    let error = read_audio_with(&fixture("source.wav"), &past).expect_err("offset past the end");
    assert!(matches!(error, AudioError::OffsetPastEnd { .. }), "{error}");
    for bad in [
        AudioOptions { offset: -1.0, ..Default::default() },
        AudioOptions { duration: Some(0.0), ..Default::default() },
    ] {
        let error = read_audio_with(&fixture("source.wav"), &bad).expect_err("bad cut");
        assert!(matches!(error, AudioError::Cut { .. }), "{error}");
    }
}

/// Each fixture truncated (header only, a tenth, half, most) and corrupted (a run of garbage in the middle, the
/// first bytes overwritten): every answer comes in time, without a panic, and an error names the input.
#[test]
fn truncated_and_corrupt_files_give_clear_errors() {
    let mut names: Vec<&str> = CASES.iter().map(|c| c.0).collect();
    names.extend(["source.wav", "stereo.wav", "signal.opus"]);
    let started = Instant::now();
    let worker = std::thread::spawn(move || {
        let mut results = Vec::new();
        for name in names {
            let bytes = std::fs::read(fixture(name)).unwrap();
            let n = bytes.len();
            let mut variants: Vec<(String, Vec<u8>)> = [20, n / 10, n / 2, n * 9 / 10]
                .iter()
                .map(|&cut| (format!("{name} cut at {cut}"), bytes[..cut].to_vec()))
                .collect();
            let mut garbage = bytes.clone();
            let mut state = 0x9e37_79b9u32;
            for byte in &mut garbage[n / 3..n / 3 + n / 8] {
                state ^= state << 13;
                state ^= state >> 17;
                state ^= state << 5;
                *byte = state as u8;
            }
            variants.push((format!("{name} with garbage"), garbage));
            let mut head = bytes.clone();
            head[..16.min(n)].fill(0xA5);
            variants.push((format!("{name} with a broken head"), head));
            for (label, variant) in variants {
                let result = std::panic::catch_unwind(|| read_audio_bytes(variant, &label, &AudioOptions::default()));
                results.push((label, result.map(|r| r.map(|s| s.len()).map_err(|e| e.to_string()))));
            }
        }
        results
    });
    while !worker.is_finished() {
        assert!(started.elapsed() < Duration::from_secs(60), "decoding damaged files hangs");
        std::thread::sleep(Duration::from_millis(20));
    }
    for (label, result) in worker.join().unwrap() {
        match result {
            Err(_) => panic!("{label}: panicked"),
            Ok(Ok(samples)) => assert!(!label.ends_with("cut at 20"), "{label}: {samples} samples from a header"),
            Ok(Err(message)) => assert!(message.contains(&label) && !message.contains("{ "), "{label}: `{message}`"),
        }
    }
}
