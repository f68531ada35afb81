//! `layer_norm` on the GPU against the f64 reference: widths below, at, and above the
//! workgroup sizes (128 invocations a row up to 512 values, 256 above), odd widths, one row, and a row with a large
//! mean.

use audio_kernels::reference;
use audio_kernels::{LAYER_NORM_EPS, LayerNormParams, Residual, layer_norm, residual_layer_norm};
use gpu_core::Recorder;
use gpu_core::blocking::Block;
use nemotron_testkit::{
    Rng, assert_close, assert_close_to_scale, f32_to_f64, fresh_seed, frobenius, poisoned, test_gpu,
};

fn check(rows: usize, width: usize, offset: f64, seed: u64) {
    let gpu = test_gpu();
    let mut rng = Rng::new(seed);
    let x: Vec<f32> = rng.f32s(rows * width, 2.0).iter().map(|v| v + offset as f32).collect();
    let weight = rng.f32s(width, 1.0);
    let bias = rng.f32s(width, 0.5);
    let want =
        reference::layer_norm(&f32_to_f64(&x), &f32_to_f64(&weight), &f32_to_f64(&bias), width, LAYER_NORM_EPS as f64);

    let xb = gpu.upload_f32("x", &x).unwrap();
    let wb = gpu.upload_f32("weight", &weight).unwrap();
    let bb = gpu.upload_f32("bias", &bias).unwrap();
    let yb = poisoned(gpu, "y", rows * width);
    let mut rec = Recorder::new(gpu);
    let norm = LayerNormParams { weight: &wb, bias: &bb, eps: LAYER_NORM_EPS };
    layer_norm(&mut rec, &xb, &norm, &yb, rows, width, None).unwrap();
    rec.submit().unwrap();
    let got = gpu.read_f32(&yb).block().unwrap();
    assert_close(&format!("layer_norm rows={rows} width={width} offset={offset} seed={seed}"), &got, &want, 1e-6);
}

#[test]
fn matches_reference_on_odd_and_tile_sizes() {
    let seed = fresh_seed();
    for (i, &(rows, width)) in
        [(1, 1), (1, 8), (3, 7), (6, 128), (17, 255), (5, 256), (9, 257), (4, 513), (33, 1280), (2, 3001)]
            .iter()
            .enumerate()
    {
        check(rows, width, 0.0, seed + i as u64);
    }
}

#[test]
fn rows_with_a_large_mean_keep_precision() {
    check(7, 512, 300.0, fresh_seed());
}

/// `residual_layer_norm`: x += Σ partials + bias (checked against the size of the terms, which can cancel), then
/// the LayerNorm of the new x as stored in f32 (checked as a plain relative error: normalised rows cannot cancel;
/// the rounding of the stored residual itself is what the first check measures).
fn check_residual(rows: usize, width: usize, slices: usize, offset: f64, seed: u64) {
    let gpu = test_gpu();
    let mut rng = Rng::new(seed);
    let x: Vec<f32> = rng.f32s(rows * width, 2.0).iter().map(|v| v + offset as f32).collect();
    let partials = rng.f32s(slices * rows * width, 1.0);
    let add_bias = rng.f32s(width, 0.5);
    let (weight, bias) = (rng.f32s(width, 1.0), rng.f32s(width, 0.5));
    let slice = rows * width;
    let sum: Vec<f64> = (0..slice).map(|e| (0..slices).map(|s| partials[s * slice + e] as f64).sum()).collect();
    let want_x: Vec<f64> = (0..slice).map(|e| x[e] as f64 + sum[e] + add_bias[e % width] as f64).collect();
    let terms = frobenius(&f32_to_f64(&x))
        + frobenius(&f32_to_f64(&partials))
        + frobenius(&f32_to_f64(&add_bias)) * (rows as f64).sqrt();

    let [xb, pb, ab, wb, bb] = [&x, &partials, &add_bias, &weight, &bias].map(|v| gpu.upload_f32("input", v).unwrap());
    let yb = poisoned(gpu, "y", rows * width);
    let mut rec = Recorder::new(gpu);
    let residual = Residual { stream: &xb, partials: &pb, slices, bias: &ab };
    let norm = LayerNormParams { weight: &wb, bias: &bb, eps: LAYER_NORM_EPS };
    residual_layer_norm(&mut rec, &residual, &norm, &yb, rows, width, None).unwrap();
    rec.submit().unwrap();
    let what = format!("residual_layer_norm rows={rows} width={width} slices={slices} offset={offset} seed={seed}");
    let got_x = gpu.read_f32(&xb).block().unwrap();
    assert_close_to_scale(&format!("{what}: residual"), &got_x, &want_x, terms, 1e-6);
    let want_y = reference::layer_norm(
        &f32_to_f64(&got_x),
        &f32_to_f64(&weight),
        &f32_to_f64(&bias),
        width,
        LAYER_NORM_EPS as f64,
    );
    assert_close(&format!("{what}: normalised"), &gpu.read_f32(&yb).block().unwrap(), &want_y, 1e-6);
}

#[test]
fn residual_matches_reference_on_odd_and_tile_sizes() {
    let seed = fresh_seed();
    for (i, &(rows, width, slices)) in
        [(1, 1, 1), (3, 7, 2), (17, 255, 3), (9, 257, 4), (4, 513, 2), (33, 1280, 1), (2, 3001, 5)].iter().enumerate()
    {
        check_residual(rows, width, slices, 0.0, seed + i as u64);
    }
    check_residual(7, 512, 3, 300.0, seed + 99);
}

#[test]
fn rejects_short_buffers() {
    let gpu = test_gpu();
    let x = gpu.zeros("x", 10).unwrap();
    let w = gpu.zeros("w", 5).unwrap();
    let mut rec = Recorder::new(gpu);
    let norm = LayerNormParams { weight: &w, bias: &w, eps: LAYER_NORM_EPS };
    let err = layer_norm(&mut rec, &x, &norm, &x, 3, 5, None).unwrap_err();
    assert!(err.to_string().contains("layer_norm input"), "{err}");
}

/// With row scales asked for, both entries write the same output bits and, per row, a power of two 2^r and its
/// inverse that bring the row's largest magnitude into [2^14, 2^15) (1 for a row of zeros): what the tensor-core
/// GEMM's own `row_scales` pass gives (tests/gemm.rs checks that the product's bits do not change).
#[test]
fn row_scales_written_with_the_output_bring_each_row_into_range() {
    let gpu = test_gpu();
    let seed = fresh_seed();
    for (i, &(rows, width, slices)) in [(1, 1, 1), (5, 257, 2), (33, 1280, 3), (3, 3001, 1)].iter().enumerate() {
        let mut rng = Rng::new(seed + i as u64);
        // Rows of very different sizes; the last row constant, so with a zero bias its output is all zeros.
        let mut x: Vec<f32> = rng.f32s(rows * width, 1.0);
        for (r, row) in x.chunks_mut(width).enumerate() {
            row.iter_mut().for_each(|v| *v *= 10f32.powi(r as i32 % 7 - 3));
        }
        x[(rows - 1) * width..].fill(0.25);
        let weight: Vec<f32> = rng.f32s(width, 1.0).iter().map(|v| v * 10f32.powi(i as i32 - 2)).collect();
        let bias = vec![0.0; width];
        let partials = vec![0.0; slices * rows * width];
        let [wb, bb, pb] = [&weight, &bias, &partials].map(|v| gpu.upload_f32("input", v).unwrap());
        let norm = LayerNormParams { weight: &wb, bias: &bb, eps: LAYER_NORM_EPS };
        for residual in [false, true] {
            let run = |scales: Option<&gpu_core::GpuBuffer>| {
                let (xb, yb) = (gpu.upload_f32("x", &x).unwrap(), poisoned(gpu, "y", rows * width));
                let mut rec = Recorder::new(gpu);
                if residual {
                    let terms = Residual { stream: &xb, partials: &pb, slices, bias: &bb };
                    residual_layer_norm(&mut rec, &terms, &norm, &yb, rows, width, scales)
                } else {
                    layer_norm(&mut rec, &xb, &norm, &yb, rows, width, scales)
                }
                .unwrap();
                rec.submit().unwrap();
                gpu.read_f32(&yb).block().unwrap()
            };
            let scales = poisoned(gpu, "scales", 2 * rows);
            let (with, without) = (run(Some(&scales)), run(None));
            let what = format!("rows={rows} width={width} residual={residual} seed={}", seed + i as u64);
            assert!(with.iter().zip(&without).all(|(a, b)| a.to_bits() == b.to_bits()), "{what}: outputs differ");
            let scales = gpu.read_f32(&scales).block().unwrap();
            for (r, row) in with.chunks(width).enumerate() {
                let (scale, inverse) = (scales[2 * r], scales[2 * r + 1]);
                let largest = row.iter().fold(0.0f32, |m, v| m.max(v.abs()));
                assert_eq!(scale * inverse, 1.0, "{what}: row {r}: {scale} and {inverse}");
                assert_eq!(scale.to_bits() & 0x007f_ffff, 0, "{what}: row {r}: {scale} is no power of two");
                if largest == 0.0 {
                    assert_eq!(scale, 1.0, "{what}: row {r} of zeros");
                } else {
                    let scaled = largest as f64 * scale as f64;
                    assert!((16384.0..32768.0).contains(&scaled), "{what}: row {r}: {largest} × {scale}");
                }
            }
        }
    }
}
