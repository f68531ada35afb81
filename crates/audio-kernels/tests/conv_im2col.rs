//! `conv_im2col` on the GPU: exactly the reference im2col, and, multiplied on the CPU by the conv weight read as
//! `[out, 3c]`, the direct kernel-3 padding-1 Conv1d of each sequence alone. Single sequences of 1, 2 and 61 frames,
//! and padded batches whose sequences are shorter than the batch's length (down to empty) or claim more rows than it
//! has; 24 and 192 channels.

use audio_kernels::reference;
use audio_kernels::{ConvBatch, conv_im2col};
use gpu_core::Recorder;
use gpu_core::blocking::Block;
use nemotron_testkit::{Rng, f32_to_f64, fresh_seed, poisoned, test_gpu};

fn check(lengths: &[usize], seq_len: usize, channels: usize, seed: u64) {
    let out = 40;
    let gpu = test_gpu();
    let mut rng = Rng::new(seed);
    let rows = lengths.len() * seq_len;
    let h = rng.f32s(rows * channels, 2.0);
    let h64 = f32_to_f64(&h);
    let weight = f32_to_f64(&rng.f32s(out * channels * 3, 1.0));
    let bias = f32_to_f64(&rng.f32s(out, 0.5));

    let hb = gpu.upload_f32("h", &h).unwrap();
    let lengths_gpu = gpu.upload_u32("lengths", &lengths.iter().map(|&l| l as u32).collect::<Vec<_>>()).unwrap();
    let cols = poisoned(gpu, "cols", rows * 3 * channels);
    let mut rec = Recorder::new(gpu);
    let batch = ConvBatch { sequences: lengths.len(), seq_len, lengths: &lengths_gpu };
    conv_im2col(&mut rec, &hb, &cols, batch, channels).unwrap();
    rec.submit().unwrap();
    let got = f32_to_f64(&gpu.read_f32(&cols).block().unwrap());
    let what = format!("conv_im2col lengths={lengths:?} of {seq_len} rows, channels={channels} seed={seed}");
    assert!(got == reference::conv_im2col(&h64, lengths, seq_len, channels), "{what}: differs from the reference");

    // Each sequence's real rows, multiplied by the weight, are the direct conv of those rows alone.
    let width = 3 * channels;
    for (s, &length) in lengths.iter().enumerate() {
        let length = length.min(seq_len);
        let first = s * seq_len;
        let product: Vec<f64> = got[first * width..(first + length) * width]
            .chunks(width)
            .flat_map(|row| {
                (0..out).map(|o| bias[o] + row.iter().zip(&weight[o * width..]).map(|(a, b)| a * b).sum::<f64>())
            })
            .collect();
        let alone = &h64[first * channels..(first + length) * channels];
        let want = reference::conv1d_k3(alone, &weight, &bias, length, channels, out);
        let error = product.iter().zip(&want).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max);
        eprintln!("{what}: sequence {s}: im2col GEMM vs direct conv, max abs difference {error:.3e}");
        assert!(error < 1e-12, "{what}: sequence {s}: im2col GEMM differs from the direct conv by {error:e}");
    }
}

#[test]
fn single_sequences_match_the_reference_and_the_direct_conv() {
    let seed = fresh_seed();
    for (i, &(n, channels)) in [(1, 24), (2, 24), (61, 24), (1, 192), (2, 192), (61, 192)].iter().enumerate() {
        check(&[n], n, channels, seed + i as u64);
    }
}

#[test]
fn padded_batches_convolve_each_sequence_alone() {
    let seed = fresh_seed();
    check(&[37, 5, 37, 0, 1, 36], 37, 24, seed);
    check(&[13, 2, 99], 13, 192, seed + 1);
}

#[test]
fn rejects_short_buffers() {
    let gpu = test_gpu();
    let h = gpu.zeros("h", 10).unwrap();
    let lengths = gpu.upload_u32("lengths", &[5]).unwrap();
    let cols = gpu.zeros("cols", 29).unwrap();
    let mut rec = Recorder::new(gpu);
    let batch = ConvBatch { sequences: 1, seq_len: 5, lengths: &lengths };
    let err = conv_im2col(&mut rec, &h, &cols, batch, 2).unwrap_err();
    assert!(err.to_string().contains("conv_im2col output"), "{err}");
    let batch = ConvBatch { sequences: 2, seq_len: 2, lengths: &lengths };
    let err = conv_im2col(&mut rec, &h, &gpu.zeros("cols", 24).unwrap(), batch, 2).unwrap_err();
    assert!(err.to_string().contains("sequence lengths"), "{err}");
}
