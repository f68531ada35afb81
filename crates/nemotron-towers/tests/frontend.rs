//! The log-mel front end against the upstream reference cases, and its normalisation against a direct
//! f64 formula.

mod common;

use nemotron_towers::frontend::{
    Features, FrontendError, LogMel, N_MELS, first_sample_needed, hann_window_bf16, slaney_filterbank_bf16,
};

/// Max |Δ| allowed between our log-mel and the reference's `input_features`.
const FEATURE_TOLERANCE: f64 = 1e-3;

fn max_abs_diff(a: &[f32], b: &[f32]) -> f64 {
    a.iter().zip(b).map(|(&x, &y)| (f64::from(x) - f64::from(y)).abs()).fold(0.0, f64::max)
}

fn rel_frobenius(actual: &[f32], expected: &[f32]) -> f64 {
    let diff: f64 = actual.iter().zip(expected).map(|(&x, &y)| (f64::from(x) - f64::from(y)).powi(2)).sum();
    let norm: f64 = expected.iter().map(|&y| f64::from(y).powi(2)).sum();
    (diff / norm).sqrt()
}

/// Computes the case's features with `front_end` and checks values, frame count and mask.
fn check_against_reference(case: &common::ReferenceCase, front_end: &LogMel, label: &str) {
    let features = front_end.compute(&case.waveform).expect("log-mel");
    assert_eq!(features.data.len(), case.input_features.len(), "{} ({label}): feature count", case.name);
    assert_eq!(features.frames * N_MELS, features.data.len());
    let expected_mask: Vec<bool> = case.input_features_mask.iter().map(|&m| m != 0).collect();
    assert_eq!(features.mask(), expected_mask, "{} ({label}): mask", case.name);

    let max_abs = max_abs_diff(&features.data, &case.input_features);
    let rel = rel_frobenius(&features.data, &case.input_features);
    println!(
        "{} ({label}): {} frames, V = {}, max |Δ| = {max_abs:.3e}, rel. Frobenius = {rel:.3e}",
        case.name, features.frames, features.valid
    );
    assert!(max_abs <= FEATURE_TOLERANCE, "{} ({label}): max |Δ| {max_abs:.3e} > {FEATURE_TOLERANCE:e}", case.name);
}

#[test]
fn reference_features_with_checkpoint_window_and_filterbank() {
    let mut checked = 0;
    for name in common::CASES {
        let case = common::load(name);
        let (Some(window), Some(filterbank)) = (&case.window, &case.filterbank) else { continue };
        let front_end = LogMel::new(Some(window), Some(filterbank)).expect("checkpoint tensors");
        check_against_reference(&case, &front_end, "checkpoint window/fb");
        checked += 1;
    }
    assert_eq!(checked, 2, "both transcribe cases carry the front-end tensors");
}

#[test]
fn reference_features_with_computed_window_and_filterbank() {
    let front_end = LogMel::new(None, None).expect("computed tensors");
    for name in common::CASES {
        check_against_reference(&common::load(name), &front_end, "computed window/fb");
    }
}

#[test]
fn computed_window_and_filterbank_equal_the_checkpoint() {
    let case = common::load("tiny-chunks");
    let window = case.window.expect("checkpoint window");
    let filterbank = case.filterbank.expect("checkpoint fb");
    for (what, computed, stored) in
        [("window", hann_window_bf16(), window), ("filter bank", slaney_filterbank_bf16(), filterbank)]
    {
        assert_eq!(computed.len(), stored.len(), "{what} length");
        // Exact equality of values (the release's fb holds a −0.0 at [0, 0], which equals our +0.0).
        let differing: Vec<usize> = (0..stored.len()).filter(|&i| computed[i] != stored[i]).collect();
        println!(
            "{what}: {} of {} values differ, max |Δ| = {:.3e}",
            differing.len(),
            stored.len(),
            max_abs_diff(&computed, &stored)
        );
        let examples: Vec<_> = differing.iter().take(5).map(|&i| (i, computed[i], stored[i])).collect();
        assert!(
            differing.is_empty(),
            "computed bf16 {what} differs from the checkpoint's at (index, ours, theirs) {examples:?}"
        );
    }
}

#[test]
fn frame_counts_mask_and_tokens_follow_the_sample_count() {
    let front_end = LogMel::new(None, None).expect("front end");
    // (samples, V, F8, tokens)
    for (samples, valid, frames, tokens) in [
        (0, 0, 8, 0),
        (159, 0, 8, 0),
        (160, 1, 8, 1),
        (1279, 7, 8, 1),
        (1280, 8, 16, 1),
        (1281, 8, 16, 1),
        (1440, 9, 16, 2),
    ] {
        let signal: Vec<f32> = (0..samples).map(|i| (i as f32 * 0.37).sin()).collect();
        let features = front_end.compute(&signal).expect("log-mel");
        assert_eq!((features.valid, features.frames, features.tokens()), (valid, frames, tokens), "{samples} samples");
        assert_eq!(features.mask().iter().filter(|&&m| m).count(), valid);
        assert!(features.data[..valid * N_MELS].iter().all(|x| x.is_finite() && *x != 0.0), "{samples}: valid rows");
        assert!(features.data[valid * N_MELS..].iter().all(|&x| x == 0.0), "{samples}: rows from V on are zero");
    }
}

#[test]
fn frames_of_a_piece_are_the_frames_of_the_whole_recording() {
    let front_end = LogMel::new(None, None).expect("front end");
    let case = common::load("diar-tiny");
    let recording = &case.waveform[..30_000];
    let whole = front_end.compute(recording).expect("log-mel");
    let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    // (first frame, frames, first sample of the piece): from the start, mid-recording from the earliest sample
    // the frames need or later pieces' exact start, and the last frames (window past the end).
    for (first, count, piece_start) in [(0, 5, 0), (0, 187, 0), (72, 104, first_sample_needed(72)), (100, 3, 0)]
        .into_iter()
        .chain([(150, 37, first_sample_needed(150)), (1, 1, 0)])
    {
        let rows = front_end.frames(&recording[piece_start..], piece_start, first..first + count).expect("frames");
        let want = &whole.data[first * N_MELS..(first + count) * N_MELS];
        assert_eq!(bits(&rows), bits(want), "frames {first}..{} from sample {piece_start}", first + count);
    }
    match front_end.frames(&recording[11_000..], 11_000, 70..80) {
        Err(FrontendError::SamplesBefore { frame: 70, needed: 10_999, first_sample: 11_000 }) => {}
        other => panic!("expected SamplesBefore, got {other:?}"),
    }
}

#[test]
fn silence_hits_the_log_guard() {
    let features = LogMel::new(None, None).expect("front end").compute(&[0.0; 1600]).expect("log-mel");
    let guard = 2f32.powi(-24).ln();
    assert!(features.data[..features.valid * N_MELS].iter().all(|&x| x == guard));
}

#[test]
fn rejects_misshapen_or_non_finite_tensors() {
    let window = hann_window_bf16();
    let filterbank = slaney_filterbank_bf16();
    assert!(matches!(
        LogMel::new(Some(&window[..399]), None),
        Err(FrontendError::Shape { expected: 400, got: 399, .. })
    ));
    assert!(matches!(
        LogMel::new(None, Some(&filterbank[1..])),
        Err(FrontendError::Shape { expected: 32896, got: 32895, .. })
    ));
    let mut poisoned = filterbank.clone();
    poisoned[77] = f32::NAN;
    let error = LogMel::new(Some(&window), Some(&poisoned)).err().expect("NaN filter bank accepted");
    assert!(matches!(error, FrontendError::NonFinite { index: 77, .. }), "{error}");
}

/// Deterministic values in [-10, 10): the test needs spread, not randomness.
fn pseudo_random(count: usize, seed: u64) -> Vec<f32> {
    let mut state = seed;
    (0..count)
        .map(|_| {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            ((state >> 40) as f64 / (1u64 << 24) as f64 * 20.0 - 10.0) as f32
        })
        .collect()
}

/// Per-bin mean and unbiased std + 1e-5 over the first `valid` rows, straight from the definition.
fn normalized_directly(data: &[f32], frames: usize, valid: usize) -> Vec<f32> {
    let mut out = vec![0.0f32; frames * N_MELS];
    for m in 0..N_MELS {
        let column: Vec<f64> = (0..valid).map(|t| f64::from(data[t * N_MELS + m])).collect();
        let mean = column.iter().sum::<f64>() / valid as f64;
        let variance = column.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / (valid.max(2) - 1) as f64;
        let std = variance.sqrt() + 1e-5;
        for (t, x) in column.iter().enumerate() {
            out[t * N_MELS + m] = ((x - mean) / std) as f32;
        }
    }
    out
}

#[test]
fn normalization_matches_the_direct_f64_formula() {
    // The last two are long enough to be split among threads.
    for (frames, valid, seed) in
        [(8, 1, 1), (8, 7, 2), (16, 9, 3), (640, 637, 4), (20_000, 19_003, 5), (9_000, 9_000, 6)]
    {
        let mut data = pseudo_random(frames * N_MELS, seed);
        data[valid * N_MELS..].fill(0.0);
        let features = Features { data, frames, valid };
        let expected = normalized_directly(&features.data, frames, valid);
        let actual = features.normalized();
        let max_abs = max_abs_diff(&actual, &expected);
        println!("normalize frames={frames} V={valid}: max |Δ| = {max_abs:.3e}");
        assert!(max_abs <= 1e-6, "frames={frames} V={valid}: max |Δ| {max_abs:.3e}");
        assert!(actual[valid * N_MELS..].iter().all(|&x| x == 0.0), "padding stays zero");
    }
}

/// A range normalised in one call (split among threads when long) gives the bits of its pieces normalised apart.
#[test]
fn normalization_of_a_range_equals_its_pieces() {
    let (frames, valid) = (30_000, 28_777);
    let mut data = pseudo_random(frames * N_MELS, 7);
    data[valid * N_MELS..].fill(0.0);
    let features = Features { data, frames, valid };
    let normalization = features.normalization();
    let range = 1_234..29_999;
    let whole = normalization.apply(&features, range.clone());
    let pieces: Vec<f32> = range
        .clone()
        .step_by(997)
        .flat_map(|start| normalization.apply(&features, start..(start + 997).min(range.end)))
        .collect();
    assert_eq!(whole.len(), range.len() * N_MELS);
    assert!(whole.iter().zip(&pieces).all(|(a, b)| a.to_bits() == b.to_bits()));
    assert!(whole[(valid - range.start) * N_MELS..].iter().all(|&x| x == 0.0), "padding stays zero");
}

#[test]
fn normalization_of_an_utterance_without_valid_frames_is_zero() {
    let features = Features { data: vec![0.0; 8 * N_MELS], frames: 8, valid: 0 };
    assert!(features.normalized().iter().all(|&x| x == 0.0));
}
