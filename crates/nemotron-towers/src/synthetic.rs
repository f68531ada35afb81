//! Synthetic speech-like audio, for what runs the model without a recording: the benchmarks (`nemotron-bench`, with
//! [`Model::random`](crate::Model::random)'s weights) and the tests' long recordings.

use audio_kernels::random::Rng;

/// [`synthetic_audio`] with its own generator, seeded.
pub fn seeded_audio(seconds: f64, seed: u64) -> Vec<f32> {
    synthetic_audio(seconds, &mut Rng::new(seed))
}

/// Synthetic speech-like audio: a few drifting harmonics and noise, 16 kHz.
pub fn synthetic_audio(seconds: f64, rng: &mut Rng) -> Vec<f32> {
    (0..(seconds * 16_000.0) as usize)
        .map(|i| {
            let t = i as f64 / 16_000.0;
            let f0 = 140.0 + 40.0 * (0.3 * t).sin();
            let voiced: f64 = (1..6).map(|h| (2.0 * std::f64::consts::PI * f0 * h as f64 * t).sin() / h as f64).sum();
            (0.2 * voiced * (0.5 + 0.5 * (1.7 * t).sin()) + 0.02 * rng.uniform()) as f32
        })
        .collect()
}
