//! `attention` on the GPU against the f64 reference: head dims at and below each padded size
//! (1, 20, 24, 33, 64, 80, 100, 128), sequences shorter than, equal to and longer than the tiles,
//! several sequences per batch, masks with one, some, all and no valid keys, sequences
//! beyond any fixed cap (2000 and 2001 rows), and the keys split among 1 to 6 workgroups per
//! query block (the same bits on every run).

use std::time::Instant;

use audio_kernels::attention;
use audio_kernels::attention::{KeySplits, attention_split};
use audio_kernels::reference;
use gpu_core::Recorder;
use nemotron_testkit::{Rng, assert_close, f32_to_f64, fresh_seed, poisoned, test_gpu};

/// f32 softmax and accumulation against an f64 reference.
const TOLERANCE: f64 = 1e-5;

/// q and k uniform in ±2.2 give scores with a standard deviation of about 1.6 whatever the head
/// dim: softmax neither flat nor one-hot.
const QK_SCALE: f64 = 2.2;

/// Which keys of one sequence are valid.
#[derive(Clone, Copy, Debug)]
enum Keys {
    All,
    One,
    None,
    /// A random-length valid prefix, as audio padding is.
    Prefix,
    /// Each key valid with probability 1/2.
    Scattered,
}

#[derive(Clone, Copy, Debug)]
struct Shape {
    seqs: usize,
    seq_len: usize,
    heads: usize,
    head_dim: usize,
}

impl Shape {
    const fn new(seqs: usize, seq_len: usize, heads: usize, head_dim: usize) -> Self {
        Self { seqs, seq_len, heads, head_dim }
    }

    fn rows(self) -> usize {
        self.seqs * self.seq_len
    }

    fn width(self) -> usize {
        self.heads * self.head_dim
    }
}

struct Inputs {
    qkv: Vec<f32>,
    key_valid: Vec<bool>,
}

/// Random q, k, v and, for sequence s, the mask `keys[s % keys.len()]`.
fn inputs(shape: Shape, keys: &[Keys], rng: &mut Rng) -> Inputs {
    let width = shape.width();
    let qkv = (0..shape.rows() * 3 * width)
        .map(|i| {
            let scale = if i % (3 * width) < 2 * width { QK_SCALE } else { 1.0 };
            (rng.uniform() * scale) as f32
        })
        .collect();
    let mut key_valid = Vec::with_capacity(shape.rows());
    for s in 0..shape.seqs {
        let valid_prefix = 1 + rng.below(shape.seq_len);
        key_valid.extend((0..shape.seq_len).map(|i| match keys[s % keys.len()] {
            Keys::All => true,
            Keys::One => i == shape.seq_len / 2,
            Keys::None => false,
            Keys::Prefix => i < valid_prefix,
            Keys::Scattered => rng.below(2) == 0,
        }));
    }
    Inputs { qkv, key_valid }
}

/// Runs the kernel on poisoned output and returns it with the GPU wall time (submit to readback).
fn run_gpu(shape: Shape, inputs: &Inputs) -> (Vec<f32>, f64) {
    run_split(shape, inputs, KeySplits::Auto)
}

fn run_split(shape: Shape, inputs: &Inputs, splits: KeySplits) -> (Vec<f32>, f64) {
    let gpu = test_gpu();
    let valid: Vec<u32> = inputs.key_valid.iter().map(|&v| v as u32).collect();
    let qkv = gpu.upload_f32("qkv", &inputs.qkv).unwrap();
    let key_valid = gpu.upload_u32("key_valid", &valid).unwrap();
    let out = poisoned(gpu, "out", shape.rows() * shape.width());
    let mut rec = Recorder::new(gpu);
    let dims = (shape.seqs, shape.seq_len, shape.heads, shape.head_dim);
    attention_split(&mut rec, [&qkv, &key_valid, &out], dims, splits).unwrap();
    let start = Instant::now();
    rec.submit().unwrap();
    let got = gpu.read_f32(&out).unwrap();
    (got, start.elapsed().as_secs_f64())
}

/// Checks one case against the reference and returns its inputs and GPU output.
fn check(shape: Shape, keys: &[Keys], seed: u64) -> (Inputs, Vec<f32>) {
    let inputs = inputs(shape, keys, &mut Rng::new(seed));
    let Shape { seqs, seq_len, heads, head_dim } = shape;
    let want = reference::attention(&f32_to_f64(&inputs.qkv), &inputs.key_valid, seqs, seq_len, heads, head_dim);
    let (got, seconds) = run_gpu(shape, &inputs);
    let what = format!("attention {shape:?} keys {keys:?} seed={seed} ({:.0} ms on the GPU)", seconds * 1e3);
    assert_close(&what, &got, &want, TOLERANCE);
    (inputs, got)
}

#[test]
fn matches_reference_on_odd_and_tile_sizes() {
    let seed = fresh_seed();
    let cases: &[(Shape, &[Keys])] = &[
        (Shape::new(1, 1, 1, 64), &[Keys::All]),
        (Shape::new(1, 5, 2, 32), &[Keys::Prefix]),
        (Shape::new(3, 37, 2, 24), &[Keys::All, Keys::One, Keys::Prefix]),
        (Shape::new(2, 70, 4, 64), &[Keys::Prefix, Keys::Scattered]),
        (Shape::new(1, 129, 10, 128), &[Keys::Prefix]),
        (Shape::new(2, 100, 3, 20), &[Keys::One, Keys::All]),
        (Shape::new(2, 33, 3, 1), &[Keys::Prefix, Keys::All]),
        (Shape::new(1, 40, 3, 33), &[Keys::Scattered]),
        (Shape::new(2, 48, 2, 100), &[Keys::All, Keys::Prefix]),
        // The word-timestamp head's 16 heads of 80 (padded to 128), and an odd sequence of its doubled frames.
        (Shape::new(2, 67, 16, 80), &[Keys::Prefix, Keys::All]),
        (Shape::new(3, 41, 3, 80), &[Keys::Scattered, Keys::One, Keys::None]),
    ];
    for (i, &(shape, keys)) in cases.iter().enumerate() {
        check(shape, keys, seed + i as u64);
    }
}

#[test]
fn sequence_without_valid_keys_averages_its_values() {
    let seed = fresh_seed();
    for (i, shape) in [Shape::new(2, 45, 2, 64), Shape::new(3, 17, 1, 128)].into_iter().enumerate() {
        let (inputs, got) = check(shape, &[Keys::None, Keys::Prefix], seed + i as u64);
        // Independently of the reference: each query of sequence 0 gets the mean of its v rows.
        let width = shape.width();
        let mean: Vec<f64> = (0..width)
            .map(|c| {
                (0..shape.seq_len).map(|r| inputs.qkv[r * 3 * width + 2 * width + c] as f64).sum::<f64>()
                    / shape.seq_len as f64
            })
            .collect();
        let want: Vec<f64> = (0..shape.seq_len).flat_map(|_| mean.iter().copied()).collect();
        assert_close(
            &format!("uniform attention {shape:?} seed={}", seed + i as u64),
            &got[..shape.seq_len * width],
            &want,
            TOLERANCE,
        );
    }
}

#[test]
fn split_keys_match_the_reference_and_repeat_bit_for_bit() {
    let seed = fresh_seed();
    // 6 key tiles, the last partial; masks with a prefix (later slices all masked) and none valid (all slices).
    let shape = Shape::new(2, 171, 3, 64);
    for (i, keys) in [[Keys::Prefix, Keys::Scattered], [Keys::None, Keys::One]].into_iter().enumerate() {
        let seed = seed + i as u64;
        let inputs = inputs(shape, &keys, &mut Rng::new(seed));
        let Shape { seqs, seq_len, heads, head_dim } = shape;
        let want = reference::attention(&f32_to_f64(&inputs.qkv), &inputs.key_valid, seqs, seq_len, heads, head_dim);
        for splits in [1, 2, 3, 4, 6] {
            let (got, _) = run_split(shape, &inputs, KeySplits::Fixed(splits));
            assert_close(
                &format!("attention {shape:?} keys {keys:?} in {splits} slices seed={seed}"),
                &got,
                &want,
                TOLERANCE,
            );
            let (again, _) = run_split(shape, &inputs, KeySplits::Fixed(splits));
            let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<u32>>();
            assert!(bits(&got) == bits(&again), "{splits} slices: two runs differ");
        }
    }
}

#[test]
fn long_sequences_have_no_length_cap() {
    let seed = fresh_seed();
    check(Shape::new(1, 2000, 2, 64), &[Keys::Prefix], seed);
    check(Shape::new(1, 2001, 1, 128), &[Keys::Scattered], seed + 1);
}

#[test]
fn rejects_short_buffers_and_wide_heads() {
    let gpu = test_gpu();
    let small = gpu.zeros("small", 10).unwrap();
    let big = gpu.zeros("big", 4096).unwrap();
    let mut rec = Recorder::new(gpu);
    let err = attention(&mut rec, &small, &big, &big, 1, 4, 2, 8).unwrap_err();
    assert!(err.to_string().contains("attention qkv"), "{err}");
    let err = attention(&mut rec, &big, &small, &big, 1, 16, 1, 8).unwrap_err();
    assert!(err.to_string().contains("attention key_valid"), "{err}");
    let err = attention(&mut rec, &big, &big, &small, 1, 4, 2, 8).unwrap_err();
    assert!(err.to_string().contains("attention output"), "{err}");
    let err = attention(&mut rec, &big, &big, &big, 1, 2, 1, 129).unwrap_err();
    assert!(err.to_string().contains("head_dim"), "{err}");
}
