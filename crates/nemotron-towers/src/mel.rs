//! The two constant tensors of the front end: the 400-tap analysis window and the [128, 257] mel filter
//! bank, computed the way the release built them (torch `hann_window`, librosa `filters.mel` with Slaney
//! scale and area normalisation) and rounded to bf16 as stored in `perception.preprocessor.featurizer.*`.

use half::bf16;

/// Samples per analysis window (25 ms at 16 kHz).
pub const WIN_LENGTH: usize = 400;
/// FFT length; the window is zero-padded to it, centred.
pub const N_FFT: usize = 512;
/// Frequency bins of the one-sided spectrum, 0..=N_FFT/2.
pub const N_BINS: usize = N_FFT / 2 + 1;
/// Mel filters (features per frame).
pub const N_MELS: usize = 128;

const SAMPLE_RATE_HZ: f64 = 16_000.0;
const F_MAX_HZ: f64 = SAMPLE_RATE_HZ / 2.0;

/// The release stores both tensors as bf16; rounding through f32 first reproduces the
/// `float32 → bfloat16` cast of tensors that were built in float32 (torch and librosa defaults).
fn round_to_bf16(x: f64) -> f32 {
    bf16::from_f32(x as f32).to_f32()
}

/// Symmetric Hann window of [`WIN_LENGTH`] taps (`torch.hann_window(400, periodic=False)`), bf16-rounded.
pub fn hann_window_bf16() -> Vec<f32> {
    let denominator = (WIN_LENGTH - 1) as f64;
    (0..WIN_LENGTH)
        .map(|n| round_to_bf16(0.5 - 0.5 * (2.0 * std::f64::consts::PI * n as f64 / denominator).cos()))
        .collect()
}

// Slaney mel scale: linear below 1 kHz (200/3 Hz per mel), logarithmic above (27 mels per factor 6.4).
const LINEAR_HZ_PER_MEL: f64 = 200.0 / 3.0;
const LOG_START_HZ: f64 = 1000.0;
const LOG_START_MEL: f64 = LOG_START_HZ / LINEAR_HZ_PER_MEL;

fn log_step() -> f64 {
    6.4f64.ln() / 27.0
}

fn hz_to_mel(hz: f64) -> f64 {
    if hz < LOG_START_HZ { hz / LINEAR_HZ_PER_MEL } else { LOG_START_MEL + (hz / LOG_START_HZ).ln() / log_step() }
}

fn mel_to_hz(mel: f64) -> f64 {
    if mel < LOG_START_MEL {
        mel * LINEAR_HZ_PER_MEL
    } else {
        LOG_START_HZ * ((mel - LOG_START_MEL) * log_step()).exp()
    }
}

/// Slaney-normalised triangular mel filters over 0–8000 Hz, row-major [`N_MELS`, `N_BINS`], bf16-rounded
/// (librosa `filters.mel(sr=16000, n_fft=512, n_mels=128, norm="slaney")`).
pub fn slaney_filterbank_bf16() -> Vec<f32> {
    let mel_max = hz_to_mel(F_MAX_HZ);
    // numpy `linspace(0, mel_max, N_MELS + 2)`: index times step, the last point exactly the end.
    let mel_step = mel_max / (N_MELS + 1) as f64;
    let edges_hz: Vec<f64> =
        (0..N_MELS + 2).map(|i| mel_to_hz(if i == N_MELS + 1 { mel_max } else { i as f64 * mel_step })).collect();
    let bin_hz = |bin: usize| F_MAX_HZ * bin as f64 / (N_BINS - 1) as f64;

    let mut bank = Vec::with_capacity(N_MELS * N_BINS);
    for m in 0..N_MELS {
        let (lower, centre, upper) = (edges_hz[m], edges_hz[m + 1], edges_hz[m + 2]);
        // Area normalisation: every filter integrates to the same value whatever its width.
        let area_norm = 2.0 / (upper - lower);
        bank.extend((0..N_BINS).map(|bin| {
            let hz = bin_hz(bin);
            let rising = (hz - lower) / (centre - lower);
            let falling = (upper - hz) / (upper - centre);
            // librosa stores the triangle in float32 before scaling it, so round there too.
            let triangle = rising.min(falling).max(0.0) as f32;
            round_to_bf16(f64::from(triangle) * area_norm)
        }));
    }
    bank
}

/// The non-zero span `[first, end)` of each filter row, so a frame costs ~2·257 multiply-adds instead
/// of 128·257 (the triangles barely overlap). Zero weights outside the span contribute nothing.
pub fn nonzero_spans(filterbank: &[f32]) -> Vec<(usize, usize)> {
    filterbank
        .chunks_exact(N_BINS)
        .map(|row| match row.iter().position(|&w| w != 0.0) {
            Some(first) => (first, N_BINS - row.iter().rev().position(|&w| w != 0.0).unwrap_or(0)),
            None => (0, 0),
        })
        .collect()
}
