//! One GEMM through `audio-kernels` alone (the GPU layer comes re-exported as `audio_kernels::gpu_core`), against an
//! f64 product computed here, with the output poisoned first so an element the kernel leaves unwritten fails.

use audio_kernels::gpu_core::blocking::Block;
use audio_kernels::gpu_core::{Gpu, GpuOptions, Recorder};
use audio_kernels::random::Rng;
use audio_kernels::{Epilogue, GemmShape, MatmulOptions, Weight, gemm};

/// f32 accumulation over k = 96 lands near 1e-7 of the product's size; a wrong element or a missed k step is far
/// above this.
const TOLERANCE: f64 = 1e-5;

/// A bf16 bit pattern's value: the upper half of an f32's bits, exactly.
fn bf16_value(bits: u16) -> f64 {
    f64::from(f32::from_bits(u32::from(bits) << 16))
}

#[test]
fn one_gemm_matches_an_f64_reference() {
    let gpu = Gpu::with_options(&GpuOptions::default())
        .block()
        .unwrap_or_else(|e| panic!("the test needs an adapter (install mesa-vulkan-drivers for lavapipe): {e}"));
    eprintln!("{}", gpu.describe());
    // Off the kernels' tiles in every dimension: the edges are written too.
    let (n, m, k) = (37, 50, 96);
    let mut rng = Rng::new(11);
    let x = rng.f32s(n * k, 1.0);
    let w = rng.bf16s(m * k, 1.0 / (k as f64).sqrt());

    // y[r, c] = Σ_i x[r, i] · w[c, i], in f64 from the values the GPU reads.
    let want: Vec<f64> = (0..n)
        .flat_map(|r| {
            let (x, w) = (&x, &w);
            (0..m).map(move |c| (0..k).map(|i| f64::from(x[r * k + i]) * bf16_value(w[c * k + i])).sum::<f64>())
        })
        .collect();

    let xb = gpu.upload_f32("x", &x).expect("uploading x");
    let weight = Weight::upload(&gpu, "w", &w, m, k, &MatmulOptions::default()).expect("uploading w");
    let y = gpu.upload_f32("y", &vec![f32::NAN; n * m]).expect("uploading the poisoned y");
    let mut rec = Recorder::new(&gpu);
    gemm(&mut rec, &xb, &weight, &y, GemmShape { n, m, k }, &Epilogue::default()).expect("recording the product");
    rec.submit().expect("submitting the product");
    let got = gpu.read_f32(&y).block().expect("reading y back");

    assert_eq!(got.len(), want.len());
    let error: f64 = got.iter().zip(&want).map(|(&g, &w)| (f64::from(g) - w).powi(2)).sum::<f64>().sqrt();
    let size: f64 = want.iter().map(|w| w * w).sum::<f64>().sqrt();
    let relative = error / size;
    // NaN (an unwritten element) compares false, so it fails here too.
    assert!(relative <= TOLERANCE, "gemm ({}) n={n} m={m} k={k}: relative error {relative:e}", weight.path());
}
