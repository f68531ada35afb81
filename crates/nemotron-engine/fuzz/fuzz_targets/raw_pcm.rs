//! Bytes → `raw_pcm::RawDecoder` in pieces: the first byte picks the format and where the stream is cut.
#![no_main]

use libfuzzer_sys::fuzz_target;
use nemotron_engine::io::raw_pcm::{RawDecoder, RawFormat};

fuzz_target!(|data: &[u8]| {
    let Some((&control, bytes)) = data.split_first() else { return };
    let format = if control & 1 == 0 { RawFormat::S16le } else { RawFormat::F32le };
    let step = usize::from(control >> 1).max(1);
    let mut whole = RawDecoder::new(format);
    let expected = whole.decode(bytes);
    let mut pieces = RawDecoder::new(format);
    let got: Vec<f32> = bytes.chunks(step).flat_map(|piece| pieces.decode(piece)).collect();
    let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(&got), bits(&expected));
    assert_eq!(whole.finish().is_ok(), bytes.len() % format.bytes() == 0);
});
