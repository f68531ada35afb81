//! PCM handed over in memory: resampled and mixed like decoded files, and every unusable buffer refused with a
//! typed error of the right kind.

use nemotron_engine::{AudioError, Channel, EngineError, ErrorKind, Input, SampleError};

fn samples(input: Input) -> Vec<f32> {
    match input {
        Input::Samples(samples) => samples,
        Input::Features(_) => panic!("PCM gave features"),
    }
}

/// A deterministic, non-periodic signal of `n` samples.
fn signal(n: usize, seed: u32) -> Vec<f32> {
    let mut state = seed.wrapping_mul(2_654_435_761).max(1);
    (0..n)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 17;
            state ^= state << 5;
            (state as f32 / u32::MAX as f32) - 0.5
        })
        .collect()
}

#[test]
fn a_channel_is_taken_whole_and_the_mix_is_the_mean() {
    let (left, right) = (signal(1_601, 1), signal(1_601, 2));
    let picked = samples(Input::from_pcm(&[&left, &right], 16_000, Channel::Index(1)).unwrap());
    assert_eq!(picked, right);
    let mixed = samples(Input::from_pcm(&[&left, &right], 16_000, Channel::Mix).unwrap());
    assert_eq!(mixed.len(), left.len());
    for (i, &m) in mixed.iter().enumerate() {
        let mean = (f64::from(left[i]) + f64::from(right[i])) / 2.0;
        assert!((f64::from(m) - mean).abs() <= 1e-7, "sample {i}: {m} against {mean}");
    }
}

#[test]
fn other_rates_are_resampled_to_16_khz() {
    let audio = signal(8_001, 3);
    let input = Input::from_pcm(&[&audio], 8_000, Channel::Mix).unwrap();
    let seconds = input.seconds();
    assert!((seconds - 8_001.0 / 8_000.0).abs() < 2e-3, "{seconds} s");
}

#[test]
fn unusable_buffers_are_refused_by_kind() {
    let audio = signal(2_000, 4);
    let short = signal(1_999, 5);
    let mut poisoned = audio.clone();
    poisoned[777] = f32::NAN;
    let cases: [(&[&[f32]], u32, Channel, ErrorKind); 6] = [
        (&[], 16_000, Channel::Mix, ErrorKind::BadInput),
        (&[&audio, &short], 16_000, Channel::Mix, ErrorKind::BadInput),
        (&[&audio, &audio], 16_000, Channel::Index(2), ErrorKind::Usage),
        (&[&poisoned], 16_000, Channel::Mix, ErrorKind::BadInput),
        (&[&[]], 16_000, Channel::Mix, ErrorKind::BadInput),
        (&[&audio], 0, Channel::Mix, ErrorKind::BadInput),
    ];
    for (i, (planar, rate, channel, kind)) in cases.into_iter().enumerate() {
        match Input::from_pcm(planar, rate, channel) {
            Err(error @ EngineError::Audio(_)) => assert_eq!(error.kind(), kind, "case {i}: {error}"),
            other => panic!("case {i}: {:?}", other.map(|input| input.seconds())),
        }
    }
    match Input::from_pcm(&[&poisoned], 16_000, Channel::Mix) {
        Err(EngineError::Audio(AudioError::Samples(SampleError::NonFinite { index: 777, .. }))) => {}
        other => panic!("{:?}", other.map(|input| input.seconds())),
    }
}
