//! The test recordings (`testdata/reference/*/audio.wav`: 16 kHz mono) as the model's samples, read without the
//! engine's audio readers, which live above the model crate its tests cannot depend on.

use std::path::Path;

use hound::{SampleFormat, WavReader};

/// The samples of a 16 kHz mono WAV, 32-bit float as stored and 16-bit integer as `x / 32768` (the bits the engine's
/// readers give for the same file). Panics, naming the file, on anything else: test recordings are 16 kHz mono, and
/// other rates or channel counts would need the engine's resampling or mixing.
pub fn read_wav(path: &Path) -> Vec<f32> {
    let shown = path.display();
    let mut reader = WavReader::open(path).unwrap_or_else(|e| panic!("cannot read {shown}: {e}"));
    let spec = reader.spec();
    assert!(
        spec.sample_rate == 16_000 && spec.channels == 1,
        "{shown}: {} Hz, {} channel(s); test recordings are 16 kHz mono",
        spec.sample_rate,
        spec.channels
    );
    let samples: Result<Vec<f32>, hound::Error> = match (spec.sample_format, spec.bits_per_sample) {
        (SampleFormat::Float, 32) => reader.samples::<f32>().collect(),
        (SampleFormat::Int, 16) => reader.samples::<i16>().map(|s| s.map(|s| f32::from(s) / 32_768.0)).collect(),
        (format, bits) => panic!("{shown}: {bits}-bit {format:?} samples; test recordings are 32-bit float or 16-bit"),
    };
    samples.unwrap_or_else(|e| panic!("cannot read {shown}: {e}"))
}
