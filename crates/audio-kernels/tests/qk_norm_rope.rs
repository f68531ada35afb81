//! `qk_norm_rope` on the GPU against the f64 reference, with and without the q/k norm: partial and full
//! rotation, odd head counts, head_dim 16/24/64/128, batches of several sequences with a partial last one,
//! and positions up to 905 (the model's longest run is 828). The kernel works in place, so instead of
//! poisoning an output every element of q, k and v is compared.

use audio_kernels::reference;
use audio_kernels::{QkNorm, QkShape, RopeTable, qk_norm_rope};
use gpu_core::Recorder;
use gpu_core::blocking::Block;
use nemotron_testkit::{Rng, assert_close, f32_to_f64, fresh_seed, test_gpu};

const THETA: f64 = 10000.0;

#[derive(Clone, Copy, Debug)]
struct Shape {
    rows: usize,
    seq_len: usize,
    heads: usize,
    head_dim: usize,
    rot: usize,
}

const SHAPES: &[Shape] = &[
    Shape { rows: 1, seq_len: 1, heads: 1, head_dim: 16, rot: 16 },
    Shape { rows: 100, seq_len: 37, heads: 3, head_dim: 24, rot: 16 },
    Shape { rows: 77, seq_len: 30, heads: 3, head_dim: 64, rot: 64 },
    Shape { rows: 45, seq_len: 20, heads: 2, head_dim: 128, rot: 64 },
    Shape { rows: 905, seq_len: 905, heads: 1, head_dim: 128, rot: 64 },
    Shape { rows: 901, seq_len: 450, heads: 1, head_dim: 64, rot: 64 },
    // The word-timestamp head: 16 heads of 80, 40 rotary dims, two sequences of doubled frames.
    Shape { rows: 222, seq_len: 111, heads: 16, head_dim: 80, rot: 40 },
];

fn check(shape: Shape, with_norm: bool, seed: u64) {
    let Shape { rows, seq_len, heads, head_dim, rot } = shape;
    let gpu = test_gpu();
    let mut rng = Rng::new(seed);
    let qkv = rng.f32s(rows * 3 * heads * head_dim, 2.0);
    let params: Vec<Vec<f32>> = [1.0, 0.5, 1.0, 0.5].iter().map(|&scale| rng.f32s(head_dim, scale)).collect();

    let mut want = f32_to_f64(&qkv);
    let params64: Vec<Vec<f64>> = params.iter().map(|p| f32_to_f64(p)).collect();
    let norm64 = with_norm.then(|| (&params64[0][..], &params64[1][..], &params64[2][..], &params64[3][..]));
    let qk = QkShape { rows, seq_len, heads, head_dim };
    reference::qk_norm_rope(&mut want, norm64, qk, rot, THETA);

    // A table longer than the sequences, as the towers build one for their longest run.
    let table = RopeTable::new(gpu, seq_len + 3, rot, THETA).unwrap();
    let buffer = gpu.upload_f32("qkv", &qkv).unwrap();
    let norm_buffers: Vec<_> = params.iter().map(|p| gpu.upload_f32("norm", p).unwrap()).collect();
    let norm = QkNorm {
        q_weight: &norm_buffers[0],
        q_bias: &norm_buffers[1],
        k_weight: &norm_buffers[2],
        k_bias: &norm_buffers[3],
    };
    let mut rec = Recorder::new(gpu);
    qk_norm_rope(&mut rec, &buffer, &table, with_norm.then_some(&norm), qk).unwrap();
    rec.submit().unwrap();
    let got = gpu.read_f32(&buffer).block().unwrap();

    let d = heads * head_dim;
    let v_unchanged =
        (0..rows).all(|r| got[r * 3 * d + 2 * d..(r + 1) * 3 * d] == qkv[r * 3 * d + 2 * d..(r + 1) * 3 * d]);
    assert!(v_unchanged, "qk_norm_rope {shape:?} norm={with_norm} seed={seed}: v columns changed");
    assert_close(&format!("qk_norm_rope {shape:?} norm={with_norm} seed={seed}"), &got, &want, 1e-5);
}

#[test]
fn matches_reference_with_qk_norm() {
    let seed = fresh_seed();
    for (i, &shape) in SHAPES.iter().enumerate() {
        check(shape, true, seed + i as u64);
    }
}

#[test]
fn matches_reference_without_qk_norm() {
    let seed = fresh_seed();
    for (i, &shape) in SHAPES.iter().enumerate() {
        check(shape, false, seed + i as u64);
    }
}

#[test]
fn host_angles_follow_the_f32_recipe() {
    let (positions, rot) = (900, 64);
    let (cos, sin) = RopeTable::host_angles(positions, rot, THETA);
    let half = rot / 2;
    for pos in 0..positions {
        // inv_freq_0 = 1, so the f32 angle is the position itself.
        assert_eq!(cos[pos * half], (pos as f64).cos() as f32, "cos at position {pos}");
        assert_eq!(sin[pos * half], (pos as f64).sin() as f32, "sin at position {pos}");
        for i in 0..half {
            // The f32 angle differs from the exact one by at most a few ulps of ~900 rad.
            let exact = pos as f64 * THETA.powf(-2.0 * i as f64 / rot as f64);
            let error =
                (cos[pos * half + i] as f64 - exact.cos()).abs().max((sin[pos * half + i] as f64 - exact.sin()).abs());
            assert!(error < 2e-4, "position {pos} frequency {i}: off by {error:e}");
        }
    }
}

/// A shape from its four counts: `rows`, `seq_len`, `heads`, `head_dim`.
fn qk_shape(rows: usize, seq_len: usize, heads: usize, head_dim: usize) -> QkShape {
    QkShape { rows, seq_len, heads, head_dim }
}

#[test]
fn rejects_sequences_longer_than_the_table() {
    let gpu = test_gpu();
    let table = RopeTable::new(gpu, 10, 8, THETA).unwrap();
    let qkv = gpu.zeros("qkv", 11 * 3 * 16).unwrap();
    let mut rec = Recorder::new(gpu);
    let err = qk_norm_rope(&mut rec, &qkv, &table, None, qk_shape(11, 11, 1, 16)).unwrap_err();
    assert!(err.to_string().contains("seq_len 11") && err.to_string().contains("10 positions"), "{err}");
}

#[test]
fn rejects_bad_head_shapes() {
    let gpu = test_gpu();
    let table = RopeTable::new(gpu, 4, 8, THETA).unwrap();
    let qkv = gpu.zeros("qkv", 4 * 3 * 256).unwrap();
    let mut rec = Recorder::new(gpu);
    let err = qk_norm_rope(&mut rec, &qkv, &table, None, qk_shape(4, 4, 1, 256)).unwrap_err();
    assert!(err.to_string().contains("head_dim"), "{err}");
    let err = qk_norm_rope(&mut rec, &qkv, &table, None, qk_shape(4, 4, 1, 6)).unwrap_err();
    assert!(err.to_string().contains("rotated dims 8"), "{err}");
    let err = qk_norm_rope(&mut rec, &qkv, &table, None, qk_shape(5, 4, 64, 16)).unwrap_err();
    assert!(err.to_string().contains("qk_norm_rope qkv"), "{err}");
    assert!(RopeTable::new(gpu, 4, 7, THETA).is_err());
}
