//! Bytes → `audio::read_audio_bytes`: container probing (WAV/RF64, FLAC, MP3, Ogg, ADTS, MP4), decoding,
//! channel selection, resampling.
#![no_main]

use libfuzzer_sys::fuzz_target;
use nemotron_engine::io::audio::{AudioOptions, Channel, read_audio_bytes};

/// Longest audio decoded per input, in seconds: resampling scales with it, and longer inputs find
/// nothing shorter ones do not, they only slow the fuzzer down.
const MAX_SECONDS: f64 = 4.0;

fuzz_target!(|data: &[u8]| {
    // The first byte picks the channel (mix, or 0–2) and an offset, so those paths are explored too.
    let Some((&choice, bytes)) = data.split_first() else { return };
    let channel = match choice % 4 {
        0 => Channel::Mix,
        n => Channel::Index(usize::from(n - 1)),
    };
    let offset = f64::from(choice / 4) * 0.01;
    let options = AudioOptions { channel, offset, duration: Some(MAX_SECONDS) };
    let _ = read_audio_bytes(bytes.to_vec(), "fuzz.audio", &options);
});
