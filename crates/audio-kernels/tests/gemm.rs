//! `gemm` on the GPU against the f64 reference: every epilogue on shapes of 1, odd sizes, and sizes below, at and
//! above the 128×64 tile, with odd k (W words straddle rows: the general path) and even k (the word-aligned path);
//! GELU's accuracy on its own; and the buffer-size errors.

use audio_kernels::gemm::{KSplit, TILE_CANDIDATES, auto_slices, gemm_partials, tensor_cores_available};
use audio_kernels::reference;
use audio_kernels::{
    Activation, Epilogue, GemmShape, LAYER_NORM_EPS, LayerNormParams, MatmulOptions, MatmulPath, Precision,
    TensorCoreKernel, Weight, gemm, gemm_scaled, layer_norm,
};
use gpu_core::blocking::Block;
use gpu_core::{Gpu, GpuError, GpuOptions, Recorder};
use nemotron_testkit::{
    Rng, assert_close_to_scale, bf16_to_f64, error_against, f32_to_f64, fresh_seed, frobenius, poisoned, test_gpu,
    test_matmul,
};

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

/// f32 accumulation over k ≤ 5120 lands near 1e-7 of the terms' size; a wrong element or a missed k step is far
/// above this.
const TOLERANCE: f64 = 1e-5;

/// The fast precision rounds X to f16 (unit roundoff u = 2^-11): each term x·w is off by at most u of itself, and
/// over many random terms the product's relative error comes to at most u/√3 ≈ 2.8e-4 (1e-4 measured on lavapipe),
/// plus the tensor cores' own f32 accumulation and GELU's slope (≤ 1.13). Twice u leaves room for those; a missed k
/// step (√(T/k) ≥ 0.04 at the largest k) is far above it.
const FAST_TOLERANCE: f64 = 2.0 / 2048.0;

#[derive(Clone, Copy, Debug)]
struct Case {
    bias: bool,
    activation: Activation,
    accumulate: bool,
}

fn check(case: Case, n: usize, m: usize, k: usize, seed: u64) {
    check_on(test_gpu(), &test_matmul(), case, n, m, k, seed);
}

/// Checks one product against the reference at its path's tolerance; returns its relative error.
fn check_on(gpu: &Gpu, options: &MatmulOptions, case: Case, n: usize, m: usize, k: usize, seed: u64) -> f64 {
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
    let before: Vec<f64> = if case.accumulate { f32_to_f64(&y0) } else { vec![0.0; n * m] };
    let want: Vec<f64> = linear.iter().zip(&before).map(|(&v, b)| activate(v) + b).collect();
    // The output is a sum of terms that can cancel: the product, the bias and, with `accumulate`, the residual (for
    // n = m = k = 1, x·w + b or y₀ + x·w can be almost nothing). Rounding scales with the terms, so the error is
    // measured against the size of each (‖X·Wᵀ‖ + ‖bias‖ + ‖Y₀‖); where nothing cancels this is the size of the
    // output itself, and the gate is as strict as a plain relative error.
    let product = reference::linear(&f32_to_f64(&x), &bf16_to_f64(&w), None, n, m, k);
    let bias_rows: Vec<f64> = if case.bias { bias64.repeat(n) } else { Vec::new() };
    let scale = frobenius(&product) + frobenius(&bias_rows) + frobenius(&before);

    let xb = gpu.upload_f32("x", &x).unwrap();
    let wb = Weight::upload(gpu, "w", &w, m, k, options).unwrap();
    let path = wb.path();
    let bb = gpu.upload_f32("bias", &bias).unwrap();
    let yb = if case.accumulate { gpu.upload_f32("y", &y0).unwrap() } else { poisoned(gpu, "y", n * m) };
    let epilogue =
        Epilogue { bias: case.bias.then_some(&bb), activation: case.activation, accumulate: case.accumulate };
    let mut rec = Recorder::new(gpu);
    gemm(&mut rec, &xb, &wb, &yb, GemmShape { n, m, k }, &epilogue).unwrap();
    rec.submit().unwrap();
    let got = gpu.read_f32(&yb).block().unwrap();
    let what = format!("gemm ({path}) {case:?} n={n} m={m} k={k} seed={seed}");
    let tolerance = if matches!(path, MatmulPath::FastTensorCores(_)) { FAST_TOLERANCE } else { TOLERANCE };
    assert_close_to_scale(&what, &got, &want, scale, tolerance);
    error_against(&got, &want, scale)
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
    let wb = Weight::upload(gpu, "w", &[one], 1, 1, &test_matmul()).unwrap();
    let yb = poisoned(gpu, "y", n);
    let epilogue = Epilogue { activation: Activation::Gelu, ..Epilogue::default() };
    let mut rec = Recorder::new(gpu);
    gemm(&mut rec, &xb, &wb, &yb, GemmShape { n, m: 1, k: 1 }, &epilogue).unwrap();
    rec.submit().unwrap();
    let got = gpu.read_f32(&yb).block().unwrap();

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
        let err = gemm(&mut rec, &buffers[0], &w, &buffers[3], GemmShape { n, m, k }, &epilogue).unwrap_err();
        assert!(
            matches!(&err, GpuError::SizeMismatch { what, .. } if what.contains(&format!("`{short}`"))),
            "short `{short}` gave: {err}"
        );
    }
}

/// Three contexts in one process, one per precision, each running its own path: the f32 one on the shapes the
/// tensor-core paths would otherwise take (on adapters without cooperative matrices both run the f32 path).
#[test]
fn contexts_with_different_precision_each_take_their_own_path() {
    let seed = fresh_seed();
    let case = Case { bias: true, activation: Activation::Gelu, accumulate: false };
    for precision in [Precision::F32, Precision::Auto, Precision::Fast] {
        let gpu = Gpu::with_options(&nemotron_testkit::test_gpu_options()).block().unwrap();
        let options = MatmulOptions { precision, ..test_matmul() };
        let path = Weight::upload(&gpu, "probe", &[0; 64 * 64], 64, 64, &options).unwrap().path();
        let tensor_cores = tensor_cores_available(&gpu, options);
        match precision {
            Precision::F32 => assert_eq!(path, MatmulPath::F32),
            Precision::Auto | Precision::Fast => {
                assert_eq!(path != MatmulPath::F32, tensor_cores, "{path} with tensor cores {tensor_cores}")
            }
        }
        for (i, &(n, m, k)) in [(64, 64, 64), (70, 130, 1024), (97, 64, 5120)].iter().enumerate() {
            check_on(&gpu, &options, case, n, m, k, seed + i as u64);
        }
    }
}

/// Every tile configuration `Auto` may choose, not only the one it chooses on this device: with and without staging
/// subgroups, on shapes off the tiles and with partial last stages. On a device without cooperative matrices none is
/// available and this only checks that; CI runs it on Mesa's lavapipe with 8×8 matrices (`scripts/coop-lavapipe.sh`).
#[test]
fn every_tile_candidate_matches_the_reference() {
    let gpu = test_gpu();
    let seed = fresh_seed();
    let case = Case { bias: true, activation: Activation::Gelu, accumulate: true };
    let split = |tensor_core_kernel| MatmulOptions {
        precision: Precision::Auto,
        tensor_core_kernel,
        ..MatmulOptions::default()
    };
    let available = TILE_CANDIDATES
        .iter()
        .filter(|&&tiles| tensor_cores_available(gpu, split(TensorCoreKernel::Tiles(tiles))))
        .collect::<Vec<_>>();
    assert_eq!(available.is_empty(), !tensor_cores_available(gpu, split(TensorCoreKernel::Auto)));
    let names: Vec<String> = available.iter().map(|tiles| tiles.to_string()).collect();
    println!("tensor-core tiles on this device: {}", names.join(", "));
    for &&tiles in &available {
        let options = MatmulOptions {
            precision: Precision::Auto,
            tensor_core_kernel: TensorCoreKernel::Tiles(tiles),
            ..MatmulOptions::default()
        };
        for (i, &(n, m, k)) in [(33, 65, 128), (130, 200, 48), (257, 136, 1040)].iter().enumerate() {
            check_on(gpu, &options, case, n, m, k, seed + i as u64);
        }
    }
}

/// Devices with less workgroup memory: a tiling whose two stage buffers do not fit runs with one (the next stage held
/// in the staging invocations' registers between two barriers), as the largest tiles with X split do on the H200. At
/// 16 KiB that is the largest tiles with X split on 8×8 matrices (lavapipe) and the 2×2 and 2×1 tiles on 16×16 ones;
/// at 8 KiB on 8×8 matrices, tiles with and without staging subgroups and either precision. Every candidate that
/// fits runs against the reference, in both precisions, with a partial last stage and tiles off the shape.
#[test]
fn tilings_with_one_stage_buffer_match_the_reference() {
    let seed = fresh_seed();
    let case = Case { bias: true, activation: Activation::Gelu, accumulate: true };
    for cap in [16 << 10, 8 << 10] {
        let options = GpuOptions { max_workgroup_storage_size: Some(cap), ..nemotron_testkit::test_gpu_options() };
        let small = Gpu::with_options(&options).block().unwrap();
        for (tiles, precision) in TILE_CANDIDATES.iter().flat_map(|&t| [(t, Precision::Auto), (t, Precision::Fast)]) {
            let options = MatmulOptions {
                precision,
                tensor_core_kernel: TensorCoreKernel::Tiles(tiles),
                ..MatmulOptions::default()
            };
            if !tensor_cores_available(&small, options) {
                continue;
            }
            println!("{} KiB: {tiles} {precision:?}", cap >> 10);
            for (i, &(n, m, k)) in [(130, 200, 48), (257, 136, 1040)].iter().enumerate() {
                check_on(&small, &options, case, n, m, k, seed + i as u64);
            }
        }
    }
}

/// `Precision::Fast` on every tile candidate: X rounded to f16, each product once, within f16's rounding of the
/// reference (see [`FAST_TOLERANCE`]) on shapes of many outputs (the error is then a mean over many of them, as
/// steady as the reference), with partial last stages and tiles off the shape. Its error is above the split path's
/// gate, so the rounded kernel is the one that ran. Where the device has no tensor cores the fast precision runs the
/// f32 path, as `Auto` does.
#[test]
fn fast_precision_is_within_f16_rounding() {
    let gpu = test_gpu();
    let seed = fresh_seed();
    let case = Case { bias: true, activation: Activation::Gelu, accumulate: false };
    let shapes = [(33, 65, 128), (130, 200, 48), (257, 136, 1040), (97, 64, 5120)];
    let mut kernels: Vec<TensorCoreKernel> =
        TILE_CANDIDATES.iter().map(|&tiles| TensorCoreKernel::Tiles(tiles)).collect();
    kernels.push(TensorCoreKernel::Auto);
    for kernel in kernels {
        let options =
            MatmulOptions { precision: Precision::Fast, tensor_core_kernel: kernel, ..MatmulOptions::default() };
        let path = Weight::upload(gpu, "probe", &[0; 64 * 64], 64, 64, &options).unwrap().path();
        if !tensor_cores_available(gpu, options) {
            assert_eq!(path, MatmulPath::F32, "{kernel:?}: no tensor cores, the f32 path");
            continue;
        }
        assert_eq!(path, MatmulPath::FastTensorCores(kernel));
        for (i, &(n, m, k)) in shapes.iter().enumerate() {
            let error = check_on(gpu, &options, case, n, m, k, seed + i as u64);
            assert!(error > TOLERANCE, "{kernel:?} {n}×{m}×{k}: error {error:.2e}: X was not rounded to f16");
        }
    }
}

/// A device whose storage bindings barely hold X (65 × 1024 f32, 260 KiB, under a 300 KiB limit) still runs the
/// product on either path: the tensor-core path splits X while staging it, so it needs no buffer larger than X.
#[test]
fn a_product_whose_input_barely_fits_a_binding_runs() {
    let options = GpuOptions { max_storage_binding_size: Some(300 << 10), ..nemotron_testkit::test_gpu_options() };
    let small = Gpu::with_options(&options).block().unwrap();
    let case = Case { bias: true, activation: Activation::Gelu, accumulate: false };
    check_on(&small, &test_matmul(), case, 65, 64, 1024, fresh_seed());
}

/// `gemm_partials`: the slices it reports sum to the product, for splits that divide k evenly, unevenly, and into
/// more slices than k has stages (the extra slices are zeros).
#[test]
fn partial_products_sum_to_the_product() {
    let gpu = test_gpu();
    let seed = fresh_seed();
    for (i, &(n, m, k, splits)) in
        [(37, 64, 1280, 4), (130, 200, 528, 3), (5, 16, 48, 8), (64, 136, 256, 1)].iter().enumerate()
    {
        let mut rng = Rng::new(seed + i as u64);
        let x = rng.f32s(n * k, 1.0);
        let w = rng.bf16s(m * k, 3.0 / (k as f64).sqrt());
        let want = reference::linear(&f32_to_f64(&x), &bf16_to_f64(&w), None, n, m, k);
        let wb = Weight::upload(gpu, "w", &w, m, k, &test_matmul()).unwrap();
        let xb = gpu.upload_f32("x", &x).unwrap();
        let partials = poisoned(gpu, "partials", splits * n * m);
        let mut rec = Recorder::new(gpu);
        let slices = gemm_partials(&mut rec, &xb, &wb, &partials, GemmShape { n, m, k }, splits).unwrap();
        rec.submit().unwrap();
        let got = gpu.read_f32(&partials).block().unwrap();
        let sum: Vec<f32> = (0..n * m).map(|e| (0..slices).map(|s| got[s * n * m + e]).sum()).collect();
        let what = format!(
            "gemm_partials ({}) n={n} m={m} k={k} {slices} of {splits} slices seed={}",
            wb.path(),
            seed + i as u64
        );
        assert_close_to_scale(&what, &sum, &want, frobenius(&want), TOLERANCE);
    }
}

/// Stream-k (`KSplit::Stream`): the slices `gemm_partials` reports (as many as `auto_slices` announced) sum to the
/// product, for one tile cut among every workgroup, tiles cut mid-way between shares, shares of several whole tiles,
/// and a product too shallow to cut; slices a tile has no piece in must be zeros (the output starts poisoned).
#[test]
fn stream_k_pieces_sum_to_the_product() {
    let gpu = test_gpu();
    let seed = fresh_seed();
    let options = MatmulOptions { k_split: KSplit::Stream, ..test_matmul() };
    for (i, &(n, m, k)) in
        [(37, 64, 1280), (130, 200, 528), (257, 136, 80), (600, 384, 1280), (5, 3, 16)].iter().enumerate()
    {
        let mut rng = Rng::new(seed + i as u64);
        let x = rng.f32s(n * k, 1.0);
        let w = rng.bf16s(m * k, 3.0 / (k as f64).sqrt());
        let want = reference::linear(&f32_to_f64(&x), &bf16_to_f64(&w), None, n, m, k);
        let wb = Weight::upload(gpu, "w", &w, m, k, &options).unwrap();
        let announced = auto_slices(gpu, &wb, n);
        let xb = gpu.upload_f32("x", &x).unwrap();
        let partials = poisoned(gpu, "partials", announced * n * m);
        let mut rec = Recorder::new(gpu);
        let slices = gemm_partials(&mut rec, &xb, &wb, &partials, GemmShape { n, m, k }, 1).unwrap();
        rec.submit().unwrap();
        assert_eq!(slices, announced, "n={n} m={m} k={k}: slices written against announced");
        let got = gpu.read_f32(&partials).block().unwrap();
        let sum: Vec<f32> = (0..n * m).map(|e| (0..slices).map(|s| got[s * n * m + e]).sum()).collect();
        let what = format!("stream-k ({}) n={n} m={m} k={k} in {slices} slices seed={}", wb.path(), seed + i as u64);
        assert_close_to_scale(&what, &sum, &want, frobenius(&want), TOLERANCE);
    }
}

#[test]
fn mismatched_weight_shape_is_an_error() {
    let gpu = test_gpu();
    let w = Weight::upload(gpu, "w", &[0; 12], 3, 4, &test_matmul()).unwrap();
    let (x, y) = (gpu.zeros("x", 8).unwrap(), gpu.zeros("y", 8).unwrap());
    let shape = GemmShape { n: 2, m: 4, k: 3 };
    let err = gemm(&mut Recorder::new(gpu), &x, &w, &y, shape, &Epilogue::default()).unwrap_err();
    assert!(err.to_string().contains("is [3, 4], the product needs [4, 3]"), "{err}");
}

/// A product of a LayerNorm's output given the row scales the norm wrote gives the bits of the product that computes
/// them itself (on the f32 path, which does not read them, trivially the same).
#[test]
fn a_product_given_its_layer_norms_row_scales_gives_the_same_bits() {
    let gpu = test_gpu();
    let seed = fresh_seed();
    for (i, &(n, m, k)) in [(1, 7, 3), (65, 136, 257), (200, 256, 1280)].iter().enumerate() {
        let mut rng = Rng::new(seed + i as u64);
        let x: Vec<f32> = rng.f32s(n * k, 1.0).iter().enumerate().map(|(e, v)| v * (1 + e / k % 5) as f32).collect();
        let [xb, gamma, beta] = [x, rng.f32s(k, 2.0), rng.f32s(k, 0.5)].map(|v| gpu.upload_f32("input", &v).unwrap());
        let w = Weight::upload(gpu, "w", &rng.bf16s(m * k, 1.0 / (k as f64).sqrt()), m, k, &test_matmul()).unwrap();
        let (a, scales) = (poisoned(gpu, "a", n * k), poisoned(gpu, "scales", 2 * n));
        let (given, own) = (poisoned(gpu, "given", n * m), poisoned(gpu, "own", n * m));
        let mut rec = Recorder::new(gpu);
        let norm = LayerNormParams { weight: &gamma, bias: &beta, eps: LAYER_NORM_EPS };
        layer_norm(&mut rec, &xb, &norm, &a, n, k, Some(&scales)).unwrap();
        let epilogue = Epilogue { bias: None, activation: Activation::Gelu, accumulate: false };
        let shape = GemmShape { n, m, k };
        gemm_scaled(&mut rec, (&a, Some(&scales)), &w, &given, shape, &epilogue).unwrap();
        gemm(&mut rec, &a, &w, &own, shape, &epilogue).unwrap();
        rec.submit().unwrap();
        let (given, own) = (gpu.read_f32(&given).block().unwrap(), gpu.read_f32(&own).block().unwrap());
        let what = format!("n={n} m={m} k={k} ({}) seed={}", w.path(), seed + i as u64);
        assert!(own.iter().all(|v| v.is_finite()), "{what}");
        assert!(given.iter().zip(&own).all(|(a, b)| a.to_bits() == b.to_bits()), "{what}: the bits differ");
    }
}
