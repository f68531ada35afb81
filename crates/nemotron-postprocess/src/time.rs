//! The model's clock: 16 kHz audio, one mel frame every 160 samples, so the diarizer's logits and every segment
//! time live on a 10 ms grid.

/// The only rate the model takes.
pub const SAMPLE_RATE: u32 = 16_000;

/// Samples between mel frames (10 ms at 16 kHz).
pub const HOP_LENGTH: usize = 160;

/// The fewest samples the model takes: one hop, or no mel frame is valid.
pub const MIN_SAMPLES: usize = HOP_LENGTH;

/// Duration of one logit frame (the mel hop: 160 samples at 16 kHz).
pub const FRAME_SECONDS: f64 = 0.01;

/// Time of 10 ms frame `i`: `i / 100` rounded once, which is what upstream's `round(i * 0.01, 2)` gives
/// (`i as f64 * 0.01` can be one ulp off).
pub fn frame_time(i: usize) -> f64 {
    i as f64 / 100.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frame_times_are_the_nearest_hundredths() {
        for i in 0..100_000 {
            assert_eq!(frame_time(i), format!("{}.{:02}", i / 100, i % 100).parse::<f64>().unwrap());
        }
    }

    #[test]
    fn a_frame_is_one_mel_hop() {
        assert_eq!(FRAME_SECONDS, HOP_LENGTH as f64 / f64::from(SAMPLE_RATE));
    }
}
