//! Rate conversion to 16 kHz with rubato's FFT resampler (a windowed-sinc anti-aliasing filter applied in the
//! frequency domain), whose start-up delay it trims, so the output stays aligned with the input.

use rubato::audioadapter_buffers::direct::InterleavedSlice;
use rubato::{Fft, FixedSync, Resampler, ResamplerConstructionError, WindowFunction};

use super::{AudioError, SAMPLE_RATE};

/// Input frames per resampler call, roughly (rounded up to whole FFT blocks).
const RESAMPLER_CHUNK: usize = 1024;

/// `mono` at `rate` Hz → 16 kHz.
pub(super) fn resample(mono: &[f32], rate: u32, input: &str) -> Result<Vec<f32>, AudioError> {
    log::info!("{input}: resampling {} samples from {rate} Hz to {SAMPLE_RATE} Hz", mono.len());
    let failed = |message: String| AudioError::Resample { input: input.to_owned(), rate, message };
    let wide: Vec<f64> = mono.iter().map(|&x| f64::from(x)).collect();
    let buffer = InterleavedSlice::new(wide.as_slice(), 1, wide.len()).map_err(|e| failed(e.to_string()))?;
    let mut resampler = fft_resampler(rate).map_err(|e| failed(e.to_string()))?;
    let resampled = resampler.process_all(&buffer, wide.len(), None).map_err(|e| failed(e.to_string()))?;
    Ok(resampled.take_data().into_iter().map(|x| x as f32).collect())
}

/// rubato's FFT resampler trims `fft_size_out / 2` output frames of delay, but its anti-aliasing filter is
/// centred on input frame `⌊fft_size_in / 2⌋`: unless both sizes are even the output leads the input by a
/// fraction of a sample (0.18 samples at 16 kHz from 44.1 kHz). The sizes are `blocks × rate / gcd`, so
/// an even number of blocks keeps the output aligned.
fn fft_resampler(rate: u32) -> Result<Fft<f64>, ResamplerConstructionError> {
    let block_in = (rate / gcd(rate, SAMPLE_RATE)) as usize;
    let blocks = 2 * RESAMPLER_CHUNK.div_ceil(2 * block_in);
    Fft::new_custom(
        rate as usize,
        SAMPLE_RATE as usize,
        blocks * block_in,
        1,
        1,
        WindowFunction::BlackmanHarris2,
        FixedSync::Input,
    )
}

fn gcd(a: u32, b: u32) -> u32 {
    if b == 0 { a } else { gcd(b, a % b) }
}
