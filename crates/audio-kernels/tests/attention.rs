//! `attention` on the GPU against the f64 reference, through both kernels: the f32 one (in both its variants: query
//! groups exchanging through subgroups where the device has them, and through workgroup memory, run on a second
//! context with subgroups masked, which must give the same bits) and, where the device has cooperative matrices (the
//! H200; Mesa's lavapipe in CI's coop run), the tensor-core one. Head dims at and below
//! each padded size (1, 20, 24, 33, 64, 80, 100, 128), sequences shorter than, equal to and longer than the tiles,
//! several sequences per batch, masks with one, some, all and no valid keys, sequences beyond any fixed cap (2000
//! and 2001 rows), rows of q, k and v at very different scales, the f32 kernel's keys split among 1 to 6 workgroups
//! per query block and the tensor-core kernel's every workgroup size (the same bits on every run), with its products
//! split (f32-accurate) or once over operands rounded to f16 (the fast precision, within f16's rounding).

use gpu_core::blocking::Block;
use std::sync::OnceLock;
use std::time::Instant;

use audio_kernels::attention::tensor_core::{Products, SUBGROUP_CANDIDATES, attention_coop, available};
use audio_kernels::attention::{Exchange, KeySplits, attention_split};
use audio_kernels::reference;
use audio_kernels::{AttentionShape, Precision, QkNorm, QkPrologue, QkShape, RopeTable, attention, rotary_attention};
use gpu_core::{Capability, Gpu, GpuOptions, Recorder};
use nemotron_testkit::{Rng, assert_close, f32_to_f64, fresh_seed, poisoned, test_gpu, test_gpu_options};

/// f32 softmax and accumulation against an f64 reference.
const TOLERANCE: f64 = 1e-5;

/// The tensor-core kernel over rounded operands: q, k, v and the probabilities each rounded to f16 (unit roundoff
/// u = 2^-11). A score is then off by about 1.3u here (q and k of [`QK_SCALE`]: u·|q||k|/√head_dim), each probability
/// by that and u, the output by u more: a few u in all (1u to 2u measured on lavapipe). 4u leaves room; a key block
/// missed or taken twice is far above.
const ROUNDED_TOLERANCE: f64 = 4.0 / 2048.0;

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

/// An attention shape from its four counts, for the case lists.
const fn shape_of(seqs: usize, seq_len: usize, heads: usize, head_dim: usize) -> AttentionShape {
    AttentionShape { seqs, seq_len, heads, head_dim }
}

struct Inputs {
    qkv: Vec<f32>,
    key_valid: Vec<bool>,
}

/// Random q, k, v and, for sequence s, the mask `keys[s % keys.len()]`.
fn inputs(shape: AttentionShape, keys: &[Keys], rng: &mut Rng) -> Inputs {
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

/// The test adapter with subgroups masked: the f32 kernel's workgroup-memory variant runs there.
fn without_subgroups() -> &'static Gpu {
    static GPU: OnceLock<Gpu> = OnceLock::new();
    GPU.get_or_init(|| {
        let options = GpuOptions { masked_capabilities: vec![Capability::Subgroups], ..test_gpu_options() };
        let gpu = Gpu::with_options(&options).block().unwrap_or_else(|e| panic!("GPU tests need an adapter: {e}"));
        assert_eq!(Exchange::of(gpu.profile()), Exchange::WorkgroupMemory);
        gpu
    })
}

/// Which kernel runs a case.
#[derive(Clone, Copy, Debug)]
enum Kernel {
    /// The f32 kernel as the test device runs it (subgroup shuffles where it has subgroups of 8 lanes or more).
    F32(KeySplits),
    /// The f32 kernel exchanging through workgroup memory ([`without_subgroups`]).
    F32WithoutSubgroups(KeySplits),
    /// The tensor-core kernel with this many subgroups per workgroup (`None`: the launcher's choice), key slices and
    /// products.
    TensorCores(Option<usize>, KeySplits, Products),
}

impl Kernel {
    fn tolerance(self) -> f64 {
        match self {
            Kernel::TensorCores(_, _, Products::Rounded) => ROUNDED_TOLERANCE,
            _ => TOLERANCE,
        }
    }
}

/// The kernels `attention` may take on this device at this shape: the f32 one in both variants, and the tensor-core
/// one with either products where it runs.
fn kernels(gpu: &Gpu, shape: AttentionShape) -> Vec<Kernel> {
    let mut kernels = vec![Kernel::F32(KeySplits::Auto), Kernel::F32WithoutSubgroups(KeySplits::Auto)];
    if available(gpu, shape.head_dim) {
        kernels.push(Kernel::TensorCores(None, KeySplits::Auto, Products::Split));
        kernels.push(Kernel::TensorCores(None, KeySplits::Auto, Products::Rounded));
    }
    kernels
}

/// Runs a kernel on poisoned output and returns it with the GPU wall time (submit to readback).
fn run(shape: AttentionShape, inputs: &Inputs, kernel: Kernel) -> (Vec<f32>, f64) {
    let gpu = match kernel {
        Kernel::F32WithoutSubgroups(_) => without_subgroups(),
        _ => test_gpu(),
    };
    let valid: Vec<u32> = inputs.key_valid.iter().map(|&v| v as u32).collect();
    let qkv = gpu.upload_f32("qkv", &inputs.qkv).unwrap();
    let key_valid = gpu.upload_u32("key_valid", &valid).unwrap();
    let out = poisoned(gpu, "out", shape.rows() * shape.width());
    let mut rec = Recorder::new(gpu);
    match kernel {
        Kernel::F32(splits) | Kernel::F32WithoutSubgroups(splits) => {
            attention_split(&mut rec, [&qkv, &key_valid, &out], shape, splits).unwrap()
        }
        Kernel::TensorCores(subgroups, splits, products) => {
            attention_coop(&mut rec, [&qkv, &key_valid, &out], shape, None, (subgroups, splits), products).unwrap()
        }
    }
    let start = Instant::now();
    rec.submit().unwrap();
    let got = gpu.read_f32(&out).block().unwrap();
    (got, start.elapsed().as_secs_f64())
}

fn want(shape: AttentionShape, inputs: &Inputs) -> Vec<f64> {
    reference::attention(&f32_to_f64(&inputs.qkv), &inputs.key_valid, shape)
}

/// Checks one case against the reference on every kernel and returns its inputs and each kernel's output.
fn check(shape: AttentionShape, keys: &[Keys], seed: u64) -> (Inputs, Vec<Vec<f32>>) {
    let inputs = inputs(shape, keys, &mut Rng::new(seed));
    let want = want(shape, &inputs);
    let mut outputs = Vec::new();
    for kernel in kernels(test_gpu(), shape) {
        let (got, seconds) = run(shape, &inputs, kernel);
        let what = format!("attention {kernel:?} {shape:?} keys {keys:?} seed={seed} ({:.0} ms)", seconds * 1e3);
        assert_close(&what, &got, &want, kernel.tolerance());
        outputs.push(got);
    }
    // The two exchanges combine the same values in the same order.
    assert!(bits(&outputs[0]) == bits(&outputs[1]), "{shape:?} seed={seed}: the f32 kernel's variants differ");
    (inputs, outputs)
}

fn bits(values: &[f32]) -> Vec<u32> {
    values.iter().map(|x| x.to_bits()).collect()
}

#[test]
fn matches_reference_on_odd_and_tile_sizes() {
    let seed = fresh_seed();
    let cases: &[(AttentionShape, &[Keys])] = &[
        (shape_of(1, 1, 1, 64), &[Keys::All]),
        (shape_of(1, 5, 2, 32), &[Keys::Prefix]),
        (shape_of(3, 37, 2, 24), &[Keys::All, Keys::One, Keys::Prefix]),
        (shape_of(2, 70, 4, 64), &[Keys::Prefix, Keys::Scattered]),
        (shape_of(1, 129, 10, 128), &[Keys::Prefix]),
        (shape_of(2, 100, 3, 20), &[Keys::One, Keys::All]),
        (shape_of(2, 33, 3, 1), &[Keys::Prefix, Keys::All]),
        (shape_of(1, 40, 3, 33), &[Keys::Scattered]),
        (shape_of(2, 48, 2, 100), &[Keys::All, Keys::Prefix]),
        // The word-timestamp head's 16 heads of 80 (padded to 128), and an odd sequence of its doubled frames.
        (shape_of(2, 67, 16, 80), &[Keys::Prefix, Keys::All]),
        (shape_of(3, 41, 3, 80), &[Keys::Scattered, Keys::One, Keys::None]),
    ];
    for (i, &(shape, keys)) in cases.iter().enumerate() {
        check(shape, keys, seed + i as u64);
    }
}

#[test]
fn sequence_without_valid_keys_averages_its_values() {
    let seed = fresh_seed();
    for (i, shape) in [shape_of(2, 45, 2, 64), shape_of(3, 17, 1, 128)].into_iter().enumerate() {
        let (inputs, outputs) = check(shape, &[Keys::None, Keys::Prefix], seed + i as u64);
        // Independently of the reference: each query of sequence 0 gets the mean of its v rows.
        let width = shape.width();
        let mean: Vec<f64> = (0..width)
            .map(|c| {
                (0..shape.seq_len).map(|r| inputs.qkv[r * 3 * width + 2 * width + c] as f64).sum::<f64>()
                    / shape.seq_len as f64
            })
            .collect();
        let want: Vec<f64> = (0..shape.seq_len).flat_map(|_| mean.iter().copied()).collect();
        for (got, kernel) in outputs.iter().zip(kernels(test_gpu(), shape)) {
            assert_close(
                &format!("uniform attention {kernel:?} {shape:?} seed={}", seed + i as u64),
                &got[..shape.seq_len * width],
                &want,
                kernel.tolerance(),
            );
        }
    }
}

#[test]
fn split_keys_match_the_reference_and_repeat_bit_for_bit() {
    let seed = fresh_seed();
    // 6 key tiles, the last partial; masks with a prefix (later slices all masked) and none valid (all slices).
    let shape = shape_of(2, 171, 3, 64);
    for (i, keys) in [[Keys::Prefix, Keys::Scattered], [Keys::None, Keys::One]].into_iter().enumerate() {
        let seed = seed + i as u64;
        let inputs = inputs(shape, &keys, &mut Rng::new(seed));
        let want = want(shape, &inputs);
        for splits in [1, 2, 3, 4, 6] {
            let mut outputs = Vec::new();
            for kernel in [Kernel::F32(KeySplits::Fixed(splits)), Kernel::F32WithoutSubgroups(KeySplits::Fixed(splits))]
            {
                let (got, _) = run(shape, &inputs, kernel);
                let what = format!("attention {shape:?} keys {keys:?} {kernel:?} seed={seed}");
                assert_close(&what, &got, &want, TOLERANCE);
                let (again, _) = run(shape, &inputs, kernel);
                assert!(bits(&got) == bits(&again), "{kernel:?}: two runs differ");
                outputs.push(got);
            }
            assert!(bits(&outputs[0]) == bits(&outputs[1]), "{splits} slices: the f32 kernel's variants differ");
        }
    }
}

/// Every workgroup size of the tensor-core kernel, with its keys in one to four slices, on shapes off its blocks,
/// twice each (the same bits). On a device without cooperative matrices the kernel is refused with an error naming
/// them; CI runs this on Mesa's lavapipe with 8×8 matrices (`scripts/coop-lavapipe.sh`).
#[test]
fn tensor_core_workgroup_sizes_and_splits_match_the_reference_and_repeat_bit_for_bit() {
    let gpu = test_gpu();
    let seed = fresh_seed();
    let shape = shape_of(2, 75, 3, 40);
    let inputs = inputs(shape, &[Keys::Prefix, Keys::Scattered], &mut Rng::new(seed));
    if !available(gpu, shape.head_dim) {
        let qkv = gpu.upload_f32("qkv", &inputs.qkv).unwrap();
        let mut rec = Recorder::new(gpu);
        for products in [Products::Split, Products::Rounded] {
            let splits = (None, KeySplits::Auto);
            let err = attention_coop(&mut rec, [&qkv, &qkv, &qkv], shape, None, splits, products).unwrap_err();
            assert!(err.to_string().contains("cooperative matrices"), "{err}");
        }
        return;
    }
    let want = want(shape, &inputs);
    let products = [Products::Split, Products::Rounded];
    for (subgroups, products) in SUBGROUP_CANDIDATES.into_iter().flat_map(|n| products.map(|p| (n, p))) {
        for splits in [1, 2, 4] {
            let kernel = Kernel::TensorCores(Some(subgroups), KeySplits::Fixed(splits), products);
            let (got, _) = run(shape, &inputs, kernel);
            assert_close(&format!("attention {shape:?} {kernel:?} seed={seed}"), &got, &want, kernel.tolerance());
            let (again, _) = run(shape, &inputs, kernel);
            assert!(bits(&got) == bits(&again), "{kernel:?}: two runs differ");
        }
    }
}

/// Rows of q and k scaled by 10^0 .. 10^-6, rows of v by 10^-6 .. 10^6, one row of v zero: the tensor-core kernel
/// scales each row by its own power of two and must take each off again. (q and k only shrink, so that the scores
/// stay small and the softmax well conditioned.)
#[test]
fn rows_at_very_different_scales_keep_their_precision() {
    let seed = fresh_seed();
    let shape = shape_of(1, 70, 2, 64);
    let mut inputs = inputs(shape, &[Keys::All], &mut Rng::new(seed));
    let width = shape.width();
    for row in 0..shape.seq_len {
        let scales =
            [10f32.powi(-((row % 7) as i32)), 10f32.powi(-((row % 5) as i32)), 10f32.powi((row % 13) as i32 - 6)];
        for (c, x) in inputs.qkv[row * 3 * width..(row + 1) * 3 * width].iter_mut().enumerate() {
            *x = if row == 11 && c >= 2 * width { 0.0 } else { *x * scales[c / width] };
        }
    }
    let want = want(shape, &inputs);
    for kernel in kernels(test_gpu(), shape) {
        let (got, _) = run(shape, &inputs, kernel);
        let what = format!("attention {kernel:?} rows at scales 1e-6 .. 1e6 seed={seed}");
        assert_close(&what, &got, &want, kernel.tolerance());
    }
}

/// The tensor-core kernel's first pass takes each row's maximum from cheap scores (q's and k's f16 hi halves alone,
/// rounded as `attention_operands.wgsl` splits them); where the exact maximum passes it by more than the kernel's
/// `MAX_LEAD` (1.0: else f16 overflows) or falls short by more than `MAX_LAG` (8: else the probabilities lose
/// precision as f16 subnormals), the second pass runs again with the exact maxima. Each check alone fails this test.
/// Large q against keys that are all the same vector make both happen (the host emulation below checks that the
/// cheap maximum errs by more than 1.5 for many rows) while the softmax stays
/// exactly uniform, so the result is well conditioned: every row is the mean of its valid v rows. Keys split among
/// workgroups (the small grids) and not (the long sequence), head dims 128 and 80 (16×16 matrices only), 64 and 40.
#[test]
fn scores_beyond_the_cheap_maximum_take_the_exact_one() {
    let seed = fresh_seed();
    let hi = |x: f32| f32::from_bits((x.to_bits() + 0x1000) & 0xffff_e000) as f64;
    let shapes = [
        shape_of(1, 150, 2, 128),
        shape_of(2, 70, 3, 80),
        shape_of(1, 150, 2, 64),
        shape_of(2, 70, 3, 40),
        shape_of(1, 1100, 1, 64),
    ];
    for (i, shape) in shapes.into_iter().enumerate() {
        let mut rng = Rng::new(seed + i as u64);
        let mut inputs = inputs(shape, &[Keys::All, Keys::Prefix], &mut rng);
        let (width, d) = (shape.width(), shape.head_dim);
        let key: Vec<f32> = (0..width).map(|_| (rng.uniform() * 300.0) as f32).collect();
        for row in inputs.qkv.chunks_mut(3 * width) {
            row[..width].iter_mut().for_each(|q| *q *= 300.0 / QK_SCALE as f32);
            row[width..2 * width].copy_from_slice(&key);
        }
        // Rows (per head) whose exact score passes the cheap one by more than 1.5.
        let key = &key;
        let leads = inputs
            .qkv
            .chunks(3 * width)
            .flat_map(|row| {
                (0..shape.heads).map(move |h| {
                    let (q, k) = (&row[h * d..(h + 1) * d], &key[h * d..(h + 1) * d]);
                    let exact: f64 = q.iter().zip(k).map(|(&a, &b)| a as f64 * b as f64).sum();
                    let cheap: f64 = q.iter().zip(k).map(|(&a, &b)| hi(a) * hi(b)).sum();
                    (exact - cheap) / (d as f64).sqrt()
                })
            })
            .filter(|&lead| lead > 1.5)
            .count();
        assert!(leads * 4 > shape.rows() * shape.heads, "{shape:?}: only {leads} rows lead by more than 1.5");
        let want = want(shape, &inputs);
        for kernel in kernels(test_gpu(), shape) {
            let (got, _) = run(shape, &inputs, kernel);
            let what = format!("attention {kernel:?} {shape:?} large uniform scores seed={}", seed + i as u64);
            assert_close(&what, &got, &want, kernel.tolerance());
        }
    }
}

#[test]
fn long_sequences_have_no_length_cap() {
    let seed = fresh_seed();
    check(shape_of(1, 2000, 2, 64), &[Keys::Prefix], seed);
    check(shape_of(1, 2001, 1, 128), &[Keys::Scattered], seed + 1);
}

#[test]
fn rejects_short_buffers_and_wide_heads() {
    let gpu = test_gpu();
    let small = gpu.zeros("small", 10).unwrap();
    let big = gpu.zeros("big", 4096).unwrap();
    let mut rec = Recorder::new(gpu);
    let err = attention(&mut rec, [&small, &big, &big], shape_of(1, 4, 2, 8), Precision::Auto).unwrap_err();
    assert!(err.to_string().contains("attention qkv"), "{err}");
    let err = attention(&mut rec, [&big, &small, &big], shape_of(1, 16, 1, 8), Precision::Auto).unwrap_err();
    assert!(err.to_string().contains("attention key_valid"), "{err}");
    let err = attention(&mut rec, [&big, &big, &small], shape_of(1, 4, 2, 8), Precision::Auto).unwrap_err();
    assert!(err.to_string().contains("attention output"), "{err}");
    let err = attention(&mut rec, [&big, &big, &big], shape_of(1, 2, 1, 129), Precision::Auto).unwrap_err();
    assert!(err.to_string().contains("head_dim"), "{err}");
    // Empty batches record nothing, on every kernel.
    for precision in [Precision::Auto, Precision::F32, Precision::Fast] {
        for empty in [shape_of(0, 4, 2, 64), shape_of(3, 0, 2, 64), shape_of(3, 0, 2, 128)] {
            attention(&mut rec, [&small, &small, &small], empty, precision).unwrap();
        }
    }
    assert_eq!(rec.dispatches(), 0);
}

/// `rotary_attention` (q/k norm + RoPE, then attention) against the f64 references of both steps, through the f32
/// kernels (`qk_norm_rope` in place, then the f32 attention) and, where the device has it, the tensor-core kernel
/// with the norm and rotation applied by its operand pass (qkv then left as it was), there also from q/k/v in two
/// slices of a split product (added on the way in) and over rounded operands: head dims 20 to 128, partial and full rotation, with and
/// without the norm, several sequences with partial masks.
#[test]
fn rotary_attention_matches_norm_rope_then_attention() {
    let gpu = test_gpu();
    let seed = fresh_seed();
    let cases = [
        (shape_of(2, 75, 3, 40), 20, true),
        (shape_of(1, 130, 2, 128), 64, true),
        (shape_of(3, 41, 2, 64), 64, false),
        (shape_of(2, 111, 3, 80), 40, true),
        (shape_of(1, 33, 1, 24), 24, true),
    ];
    for (i, &(shape, rot, with_norm)) in cases.iter().enumerate() {
        let case_seed = seed + i as u64;
        let mut rng = Rng::new(case_seed);
        let inputs = inputs(shape, &[Keys::Prefix, Keys::Scattered, Keys::All], &mut rng);
        let AttentionShape { seq_len, head_dim, .. } = shape;
        let params: Vec<Vec<f32>> = [1.0, 0.5, 1.0, 0.5].iter().map(|&scale| rng.f32s(head_dim, scale)).collect();
        // The same q/k/v as two slices of a product: a random part and the rest.
        let first = rng.f32s(inputs.qkv.len(), 1.0);
        let sliced: Vec<f32> = first.iter().cloned().chain(inputs.qkv.iter().zip(&first).map(|(x, a)| x - a)).collect();
        let table = RopeTable::new(gpu, seq_len + 5, rot, 10_000.0).unwrap();
        let norm_buffers: Vec<_> = params.iter().map(|p| gpu.upload_f32("norm", p).unwrap()).collect();
        let norm = QkNorm {
            q_weight: &norm_buffers[0],
            q_bias: &norm_buffers[1],
            k_weight: &norm_buffers[2],
            k_bias: &norm_buffers[3],
        };
        let valid: Vec<u32> = inputs.key_valid.iter().map(|&v| v as u32).collect();
        let key_valid = gpu.upload_u32("key_valid", &valid).unwrap();
        let tensor_cores = available(gpu, head_dim);
        let runs = [(None, 1), (Some(Products::Split), 1), (Some(Products::Split), 2), (Some(Products::Rounded), 2)];
        for (on_tensor_cores, slices) in runs.into_iter().filter(|&(tc, _)| tc.is_none() || tensor_cores) {
            let values = if slices == 1 { &inputs.qkv } else { &sliced };
            let rows = values.len() / slices;
            let summed: Vec<f64> = (0..rows).map(|e| (0..slices).map(|s| values[s * rows + e] as f64).sum()).collect();
            let mut rotated = summed;
            let params64: Vec<Vec<f64>> = params.iter().map(|p| f32_to_f64(p)).collect();
            let norm64 = with_norm.then(|| (&params64[0][..], &params64[1][..], &params64[2][..], &params64[3][..]));
            reference::qk_norm_rope(&mut rotated, norm64, QkShape::from(shape), rot, 10_000.0);
            let want = reference::attention(&rotated, &inputs.key_valid, shape);

            let prologue = QkPrologue { rope: &table, norm: with_norm.then_some(&norm), slices };
            let qkv = gpu.upload_f32("qkv", values).unwrap();
            let out = poisoned(gpu, "out", shape.rows() * shape.width());
            let mut rec = Recorder::new(gpu);
            if let Some(products) = on_tensor_cores {
                let splits = (None, KeySplits::Auto);
                attention_coop(&mut rec, [&qkv, &key_valid, &out], shape, Some(&prologue), splits, products).unwrap();
            } else {
                rotary_attention(&mut rec, [&qkv, &key_valid, &out], &prologue, shape, Precision::F32).unwrap();
                let two = QkPrologue { slices: 2, ..prologue };
                let err =
                    rotary_attention(&mut rec, [&qkv, &key_valid, &out], &two, shape, Precision::F32).unwrap_err();
                assert!(err.to_string().contains("not in 2 slices"), "{err}");
            }
            rec.submit().unwrap();
            let what = format!(
                "{shape:?} rot={rot} norm={with_norm} tensor cores={on_tensor_cores:?} slices={slices} seed={case_seed}"
            );
            let tolerance = if on_tensor_cores == Some(Products::Rounded) { ROUNDED_TOLERANCE } else { TOLERANCE };
            assert_close(&what, &gpu.read_f32(&out).block().unwrap(), &want, tolerance);
            if on_tensor_cores.is_some() {
                let kept = gpu.read_f32(&qkv).block().unwrap();
                assert!(kept.iter().zip(values).all(|(a, b)| a.to_bits() == b.to_bits()), "{what}: qkv written");
            }
        }
    }
}

/// Batches of many short sequences whose operand planes outgrow a storage binding (capped here at 256 KiB) run on the
/// tensor cores as groups of (sequence, head) pairs, q and k normalised and rotated on the way in: the same bits as
/// in one dispatch on the uncapped device, and the reference's values. The cases' planes take several groups, the
/// last one short (on lavapipe: 7 of 28 pairs and 15 of 42).
#[test]
fn batches_whose_planes_outgrow_a_binding_run_in_groups_with_the_same_bits() {
    let gpu = test_gpu();
    let capped_options = GpuOptions { max_storage_binding_size: Some(256 << 10), ..test_gpu_options() };
    let capped =
        Gpu::with_options(&capped_options).block().unwrap_or_else(|e| panic!("GPU tests need an adapter: {e}"));
    let seed = fresh_seed();
    // (shape, q/k/v slices): each case's qkv fits the capped binding, its planes do not.
    let cases = [(shape_of(300, 1, 2, 16), 2), (shape_of(64, 3, 3, 24), 1)];
    for (i, &(shape, slices)) in cases.iter().enumerate() {
        if !available(gpu, shape.head_dim) {
            eprintln!("no tensor-core attention on this device");
            return;
        }
        let case_seed = seed + i as u64;
        let mut rng = Rng::new(case_seed);
        let inputs = inputs(shape, &[Keys::Prefix, Keys::Scattered, Keys::All, Keys::None], &mut rng);
        let head_dim = shape.head_dim;
        let params: Vec<Vec<f32>> = [1.0, 0.5, 1.0, 0.5].iter().map(|&scale| rng.f32s(head_dim, scale)).collect();
        let first = rng.f32s(inputs.qkv.len(), 1.0);
        let values: Vec<f32> = match slices {
            1 => inputs.qkv.clone(),
            _ => first.iter().cloned().chain(inputs.qkv.iter().zip(&first).map(|(x, a)| x - a)).collect(),
        };
        let mut rotated = f32_to_f64(&inputs.qkv);
        let params64: Vec<Vec<f64>> = params.iter().map(|p| f32_to_f64(p)).collect();
        let norm64 = Some((&params64[0][..], &params64[1][..], &params64[2][..], &params64[3][..]));
        reference::qk_norm_rope(&mut rotated, norm64, QkShape::from(shape), head_dim, 10_000.0);
        let want = reference::attention(&rotated, &inputs.key_valid, shape);
        for products in [Products::Split, Products::Rounded] {
            let outputs: Vec<Vec<f32>> = [gpu, &capped]
                .into_iter()
                .map(|device| {
                    let table = RopeTable::new(device, shape.seq_len, head_dim, 10_000.0).unwrap();
                    let norm_buffers: Vec<_> = params.iter().map(|p| device.upload_f32("norm", p).unwrap()).collect();
                    let norm = QkNorm {
                        q_weight: &norm_buffers[0],
                        q_bias: &norm_buffers[1],
                        k_weight: &norm_buffers[2],
                        k_bias: &norm_buffers[3],
                    };
                    let prologue = QkPrologue { rope: &table, norm: Some(&norm), slices };
                    let valid: Vec<u32> = inputs.key_valid.iter().map(|&v| v as u32).collect();
                    let key_valid = device.upload_u32("key_valid", &valid).unwrap();
                    let qkv = device.upload_f32("qkv", &values).unwrap();
                    let out = poisoned(device, "out", shape.rows() * shape.width());
                    let mut rec = Recorder::new(device);
                    let buffers = [&qkv, &key_valid, &out];
                    attention_coop(&mut rec, buffers, shape, Some(&prologue), (None, KeySplits::Auto), products)
                        .unwrap();
                    rec.submit().unwrap();
                    device.read_f32(&out).block().unwrap()
                })
                .collect();
            let what = format!("{shape:?} slices={slices} {products:?} seed={case_seed}");
            let tolerance = if products == Products::Rounded { ROUNDED_TOLERANCE } else { TOLERANCE };
            assert_close(&format!("{what} (capped)"), &outputs[1], &want, tolerance);
            assert!(bits(&outputs[0]) == bits(&outputs[1]), "{what}: groups changed the bits");
        }
    }
}
