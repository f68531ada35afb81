//! Inputs the fuzz targets (`fuzz/`) or their review turned up, each once a panic, an overflow or an unbounded
//! allocation, kept in `testdata/fuzz-regressions/<target>/` (`wav` for the audio target). Every file goes through
//! the same calls as its fuzz target and must come back as a value or a typed error; the known ones must give the
//! error named here.

use std::path::{Path, PathBuf};

use nemotron_engine::io::audio::{AudioError, AudioOptions, read_audio, read_audio_bytes};
use nemotron_engine::io::speakers::{ProfileError, SpeakerProfile};

fn inputs(target: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/fuzz-regressions").join(target);
    let mut files: Vec<PathBuf> =
        std::fs::read_dir(&dir).expect("regressions folder").map(|e| e.expect("entry").path()).collect();
    files.sort();
    assert!(!files.is_empty(), "no regression inputs in {}", dir.display());
    files
}

fn input(target: &str, name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/fuzz-regressions").join(target).join(name)
}

#[test]
fn wav_inputs_answer() {
    for path in inputs("wav") {
        let bytes = std::fs::read(&path).expect("read input");
        let _ = read_audio_bytes(bytes, "fuzz.wav", &AudioOptions::default());
    }
}

#[test]
fn absurd_sample_rates_are_refused_before_resampling() {
    // 1 Hz needed a 16-million-point FFT (1.5 GB, 9 s) for four samples; ~1 GHz a 16 GB allocation.
    for (name, rate) in [("rate-1-hz.wav", 1), ("rate-999999937-hz.wav", 999_999_937)] {
        let error = read_audio(&input("wav", name)).expect_err("accepted");
        assert!(matches!(error, AudioError::SampleRate { rate: r, .. } if r == rate), "{name}: {error}");
    }
}

#[test]
fn speaker_profile_inputs_answer() {
    for path in inputs("speaker_profile") {
        let bytes = std::fs::read(&path).expect("read input");
        let _ = SpeakerProfile::from_bytes(&bytes, "fuzz.safetensors");
    }
}

#[test]
fn profile_data_ending_near_two_to_the_64_is_refused() {
    // Eight 2^61−1-byte tensors under a profile's metadata: safetensors' unchecked `end + header` overflowed.
    let error =
        SpeakerProfile::read(&input("speaker_profile", "data-end-near-2-pow-64.safetensors")).expect_err("accepted");
    assert!(
        matches!(&error, ProfileError::Corrupt { message, .. } if message.contains("18446744073709551608 bytes of data")),
        "{error}"
    );
}
