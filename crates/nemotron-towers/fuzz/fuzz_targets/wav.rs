//! Bytes → `audio::read_wav_from`: RIFF/WAV parsing, sample decoding, down-mixing, resampling.
#![no_main]

use std::io::Cursor;

use libfuzzer_sys::fuzz_target;
use nemotron_towers::audio::read_wav_from;

/// Longest audio decoded per input, in seconds: resampling scales with it, and longer inputs find
/// nothing shorter ones do not, they only slow the fuzzer down.
const MAX_SECONDS: u64 = 4;

fuzz_target!(|data: &[u8]| {
    if let Ok(reader) = hound::WavReader::new(Cursor::new(data)) {
        let rate = u64::from(reader.spec().sample_rate);
        if u64::from(reader.duration()) > MAX_SECONDS * rate.max(1) {
            return;
        }
    }
    let _ = read_wav_from(Cursor::new(data), "fuzz.wav");
});
