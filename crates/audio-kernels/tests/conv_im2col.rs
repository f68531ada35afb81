//! `conv_im2col` on the GPU: exactly the reference im2col, and, multiplied on the CPU by the conv weight read as
//! `[out, 3c]`, the direct kernel-3 padding-1 Conv1d. Sequences of 1, 2 and 61 frames, 24 and 192 channels.

use audio_kernels::conv_im2col;
use audio_kernels::reference;
use gpu_core::Recorder;
use nemotron_testkit::{Rng, f32_to_f64, fresh_seed, poisoned, test_gpu};

fn check(n: usize, channels: usize, seed: u64) {
    let out = 40;
    let gpu = test_gpu();
    let mut rng = Rng::new(seed);
    let h = rng.f32s(n * channels, 2.0);
    let h64 = f32_to_f64(&h);
    let weight = f32_to_f64(&rng.f32s(out * channels * 3, 1.0));
    let bias = f32_to_f64(&rng.f32s(out, 0.5));

    let hb = gpu.upload_f32("h", &h).unwrap();
    let cols = poisoned(gpu, "cols", n * 3 * channels);
    let mut rec = Recorder::new(gpu);
    conv_im2col(&mut rec, &hb, &cols, n, channels).unwrap();
    rec.submit().unwrap();
    let got = f32_to_f64(&gpu.read_f32(&cols).unwrap());
    let what = format!("conv_im2col n={n} channels={channels} seed={seed}");
    assert!(got == reference::conv_im2col(&h64, n, channels), "{what}: differs from the reference im2col");

    let width = 3 * channels;
    let product: Vec<f64> = got
        .chunks(width)
        .flat_map(|row| {
            (0..out).map(|o| bias[o] + row.iter().zip(&weight[o * width..]).map(|(a, b)| a * b).sum::<f64>())
        })
        .collect();
    let want = reference::conv1d_k3(&h64, &weight, &bias, n, channels, out);
    let error = product.iter().zip(&want).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max);
    eprintln!("{what}: im2col GEMM vs direct conv, max abs difference {error:.3e}");
    assert!(error < 1e-12, "{what}: im2col GEMM differs from the direct conv by {error:e}");
}

#[test]
fn matches_reference_and_the_direct_conv() {
    let seed = fresh_seed();
    for (i, &(n, channels)) in [(1, 24), (2, 24), (61, 24), (1, 192), (2, 192), (61, 192)].iter().enumerate() {
        check(n, channels, seed + i as u64);
    }
}

#[test]
fn rejects_short_buffers() {
    let gpu = test_gpu();
    let h = gpu.zeros("h", 10).unwrap();
    let cols = gpu.zeros("cols", 29).unwrap();
    let mut rec = Recorder::new(gpu);
    let err = conv_im2col(&mut rec, &h, &cols, 5, 2).unwrap_err();
    assert!(err.to_string().contains("conv_im2col output"), "{err}");
}
