//! `gemm` on the GPU against the f64 reference: every epilogue on shapes of 1, odd sizes, and sizes below, at and
//! above the 128×64 tile, with odd k (W words straddle rows: the general path) and even k (the word-aligned path);
//! GELU's accuracy on its own; and the buffer-size errors.

use audio_kernels::reference;
use audio_kernels::testing::{Rng, assert_close, bf16_to_f64, f32_to_f64, fresh_seed, poisoned, test_gpu};
use audio_kernels::{Activation, Epilogue, Weight, gemm, gemm_coop};
use gpu_core::{Gpu, GpuError, GpuOptions, Recorder, wgpu};

/// (n, m, k): the first five have odd k, the rest even k; the last three have k a multiple of 16 but not of 32 (a
/// partial last stage in the staged tensor-core kernel), with n and m off its 128-row and 128-column tiles.
const SHAPES: &[(usize, usize, usize)] = &[
    (1, 1, 1),
    (1, 7, 3),
    (3, 5, 7),
    (33, 65, 129),
    (65, 17, 255),
    (64, 64, 64),
    (128, 192, 576),
    (100, 8, 192),
    (70, 130, 1024),
    (200, 256, 1280),
    (97, 64, 5120),
    (5, 3, 16),
    (130, 200, 48),
    (257, 136, 80),
];

/// f32 accumulation over k ≤ 1280 lands near 1e-7; a wrong element or a missed k step is far above this.
const TOLERANCE: f64 = 1e-5;

#[derive(Clone, Copy, Debug)]
struct Case {
    bias: bool,
    activation: Activation,
    accumulate: bool,
}

fn check(case: Case, n: usize, m: usize, k: usize, seed: u64) {
    check_on(test_gpu(), case, n, m, k, seed);
}

fn check_on(gpu: &Gpu, case: Case, n: usize, m: usize, k: usize, seed: u64) {
    let mut rng = Rng::new(seed);
    let x = rng.f32s(n * k, 1.0);
    // Scaled so X·Wᵀ has unit spread: the activations see both signs and their curved region.
    let w = rng.bf16s(m * k, 3.0 / (k as f64).sqrt());
    let bias = rng.f32s(m, 0.5);
    let y0 = rng.f32s(n * m, 1.0);

    let bias64 = f32_to_f64(&bias);
    let linear = reference::linear(&f32_to_f64(&x), &bf16_to_f64(&w), case.bias.then_some(&bias64[..]), n, m, k);
    let activate: fn(f64) -> f64 = match case.activation {
        Activation::None => |v: f64| v,
        Activation::Gelu => reference::gelu,
        Activation::Relu => reference::relu,
    };
    let want: Vec<f64> = linear
        .iter()
        .zip(&y0)
        .map(|(&v, &before)| activate(v) + if case.accumulate { before as f64 } else { 0.0 })
        .collect();

    let xb = gpu.upload_f32("x", &x).unwrap();
    let wb = Weight::upload(gpu, "w", &w, m, k).unwrap();
    let path =
        if gemm_coop::usable(&wb) { format!("tensor cores, {}", gemm_coop::selected_kernel()) } else { "f32".into() };
    let bb = gpu.upload_f32("bias", &bias).unwrap();
    let yb = if case.accumulate { gpu.upload_f32("y", &y0).unwrap() } else { poisoned(gpu, "y", n * m) };
    let epilogue =
        Epilogue { bias: case.bias.then_some(&bb), activation: case.activation, accumulate: case.accumulate };
    let mut rec = Recorder::new(gpu);
    gemm(&mut rec, &xb, &wb, &yb, n, m, k, &epilogue).unwrap();
    rec.submit().unwrap();
    let got = gpu.read_f32(&yb).unwrap();
    assert_close(&format!("gemm ({path}) {case:?} n={n} m={m} k={k} seed={seed}"), &got, &want, TOLERANCE);
}

fn check_all_shapes(case: Case) {
    let seed = fresh_seed();
    for (i, &(n, m, k)) in SHAPES.iter().enumerate() {
        check(case, n, m, k, seed + i as u64);
    }
}

#[test]
fn plain_matches_reference() {
    check_all_shapes(Case { bias: false, activation: Activation::None, accumulate: false });
}

#[test]
fn bias_matches_reference() {
    check_all_shapes(Case { bias: true, activation: Activation::None, accumulate: false });
}

#[test]
fn bias_gelu_matches_reference() {
    check_all_shapes(Case { bias: true, activation: Activation::Gelu, accumulate: false });
}

#[test]
fn bias_relu_matches_reference() {
    check_all_shapes(Case { bias: true, activation: Activation::Relu, accumulate: false });
}

#[test]
fn accumulate_matches_reference() {
    check_all_shapes(Case { bias: false, activation: Activation::None, accumulate: true });
}

#[test]
fn accumulate_with_bias_matches_reference() {
    check_all_shapes(Case { bias: true, activation: Activation::None, accumulate: true });
}

/// GELU alone (k = 1, W = 1, so Y = GELU(X) exactly up to the activation): the implied erf error,
/// 2·|ΔY|/|x|, must stay ≤ 2e-7 beyond the rounding of the f32 result, from the far negative tail to huge values.
#[test]
fn gelu_matches_exact_erf_form() {
    let gpu = test_gpu();
    let seed = fresh_seed();
    let mut rng = Rng::new(seed);
    let mut x: Vec<f32> = (-10_000..=10_000).map(|i| i as f32 * 1e-3).collect();
    x.extend(rng.f32s(4096, 10.0));
    for big in [1e-30f32, 1e-6, 0.1, 1e3, 1e10, 1e30, f32::MAX] {
        x.extend([big, -big]);
    }
    let n = x.len();
    let one = half::bf16::from_f32(1.0).to_bits();

    let xb = gpu.upload_f32("x", &x).unwrap();
    let wb = Weight::upload(gpu, "w", &[one], 1, 1).unwrap();
    let yb = poisoned(gpu, "y", n);
    let epilogue = Epilogue { activation: Activation::Gelu, ..Epilogue::default() };
    let mut rec = Recorder::new(gpu);
    gemm(&mut rec, &xb, &wb, &yb, n, 1, 1, &epilogue).unwrap();
    rec.submit().unwrap();
    let got = gpu.read_f32(&yb).unwrap();

    let (mut worst_erf, mut worst_at) = (0.0f64, 0.0f32);
    for (&v, &g) in x.iter().zip(&got) {
        let want = reference::gelu(v as f64);
        let error = (g as f64 - want).abs();
        let rounding = want.abs() * f32::EPSILON as f64 + f32::MIN_POSITIVE as f64;
        assert!(error <= 0.5 * (v as f64).abs() * 2e-7 + rounding, "GELU({v:e}) = {g:e}, exact {want:e} (seed {seed})");
        if v != 0.0 && error / (0.5 * (v as f64).abs()) > worst_erf {
            (worst_erf, worst_at) = (error / (0.5 * (v as f64).abs()), v);
        }
    }
    eprintln!("GELU: largest implied erf error {worst_erf:.3e} at x = {worst_at:e}, f32 result rounding included");
}

#[test]
fn short_buffers_are_named() {
    let gpu = test_gpu();
    let (n, m, k) = (3usize, 5, 7);
    let sizes = [("x", n * k), ("w", (m * k).div_ceil(2)), ("bias", m), ("y", n * m)];
    for short in ["x", "w", "bias", "y"] {
        let buffers: Vec<_> = sizes
            .iter()
            .map(|&(label, words)| gpu.zeros(label, if label == short { words - 1 } else { words }).unwrap())
            .collect();
        let epilogue = Epilogue { bias: Some(&buffers[2]), ..Epilogue::default() };
        let mut rec = Recorder::new(gpu);
        let w = Weight::from_buffer(buffers[1].clone(), m, k);
        let err = gemm(&mut rec, &buffers[0], &w, &buffers[3], n, m, k, &epilogue).unwrap_err();
        assert!(
            matches!(&err, GpuError::SizeMismatch { what, .. } if what.contains(&format!("`{short}`"))),
            "short `{short}` gave: {err}"
        );
    }
}

/// The f32 path on the shapes the tensor-core path would otherwise take (on adapters without
/// cooperative matrices this repeats the f32 checks; on those with them it keeps the f32 path tested).
#[test]
fn f32_path_with_cooperative_matrices_disabled() {
    let options =
        GpuOptions { disabled_features: wgpu::Features::EXPERIMENTAL_COOPERATIVE_MATRIX, ..GpuOptions::from_env() };
    let gpu = Gpu::with_options(&options).unwrap();
    let seed = fresh_seed();
    let case = Case { bias: true, activation: Activation::Gelu, accumulate: false };
    for (i, &(n, m, k)) in [(64, 64, 64), (70, 130, 1024), (97, 64, 5120)].iter().enumerate() {
        check_on(&gpu, case, n, m, k, seed + i as u64);
    }
}

#[test]
fn a_split_too_large_for_a_binding_is_refused_with_the_limit_named() {
    // X (65 × 1024 f32, 260 KiB) fits 300 KiB bindings; the tensor-core path's split of it (rows padded to the
    // 64-row tile, 512 KiB) does not. That path holds the weight as f16, so it cannot fall back: the product is
    // refused with the limit named. (The towers never get here: their row cap is a multiple of the tile.) Without
    // the tensor-core path the product simply runs.
    let options = GpuOptions { max_storage_binding_size: Some(300 << 10), ..GpuOptions::from_env() };
    let small = Gpu::with_options(&options).unwrap();
    let case = Case { bias: true, activation: Activation::Gelu, accumulate: false };
    let (n, m, k) = (65, 64, 1024);
    let w = Weight::upload(&small, "w", &Rng::new(fresh_seed()).bf16s(m * k, 0.1), m, k).unwrap();
    if !gemm_coop::usable(&w) {
        check_on(&small, case, n, m, k, fresh_seed());
        return;
    }
    let x = small.zeros("x", n * k).unwrap();
    let y = small.zeros("y", n * m).unwrap();
    let mut rec = Recorder::new(&small);
    match gemm(&mut rec, &x, &w, &y, n, m, k, &Epilogue::default()) {
        Err(GpuError::LimitExceeded { what, limit: "max_storage_buffer_binding_size", .. }) => {
            assert!(what.contains("gemm split activations"), "{what}")
        }
        other => panic!("expected LimitExceeded, got {other:?}"),
    }
}

#[test]
fn mismatched_weight_shape_is_an_error() {
    let gpu = test_gpu();
    let w = Weight::upload(gpu, "w", &[0; 12], 3, 4).unwrap();
    let (x, y) = (gpu.zeros("x", 8).unwrap(), gpu.zeros("y", 8).unwrap());
    let err = gemm(&mut Recorder::new(gpu), &x, &w, &y, 2, 4, 3, &Epilogue::default()).unwrap_err();
    assert!(err.to_string().contains("is [3, 4], the product needs [4, 3]"), "{err}");
}
