//! Every kernel family's launcher on a device created without subgroups, f16 shaders and cooperative matrices
//! (`GpuOptions::masked_capabilities`), as WebGPU in a browser without those features and wgpu's GL backend are:
//! every f32-path launcher (attention's among them, exchanging through workgroup memory) runs and matches its f64
//! reference with its usual tolerance, and the tensor-core attention refuses with `GpuError::MissingCapability` naming
//! the kernel and a masked capability, before any pipeline is built (no validation error reaches the device). Small
//! shapes: this runs on lavapipe in every `cargo test`.

use gpu_core::blocking::Block;
use std::sync::OnceLock;

use audio_kernels::attention::tensor_core::{Products, attention_coop};
use audio_kernels::attention::{KeySplits, attention_split};
use audio_kernels::{
    Activation, AttentionShape, ConvBatch, Epilogue, GemmShape, LAYER_NORM_EPS, LayerNormParams, MatmulOptions,
    MatmulPath, Precision, QkNorm, QkPrologue, QkShape, RopeTable, RowPairs, Weight, attention, conv_im2col,
    gather_rows, gemm, layer_norm, log_softmax_gather, qk_norm_rope, reference, rotary_attention, speaker_fusion,
    speaker_table,
};
use gpu_core::{Capability, Gpu, GpuError, GpuOptions, Recorder};
use nemotron_testkit::{
    Rng, assert_close, assert_close_to_scale, bf16_to_f64, f32_to_f64, fresh_seed, frobenius, poisoned,
    test_gpu_options,
};

/// The RoPE base of the towers.
const THETA: f64 = 10000.0;

/// One context per test binary with every optional capability masked.
fn masked_gpu() -> &'static Gpu {
    static GPU: OnceLock<Gpu> = OnceLock::new();
    GPU.get_or_init(|| {
        let options = GpuOptions { masked_capabilities: Capability::ALL.to_vec(), ..test_gpu_options() };
        let gpu = Gpu::with_options(&options).block().unwrap_or_else(|e| panic!("GPU tests need an adapter: {e}"));
        for capability in Capability::ALL {
            assert!(!gpu.profile().has(capability), "{capability:?} was masked but is reported");
        }
        gpu
    })
}

/// The launcher must have recorded its work: every f32-path kernel runs without the optional capabilities.
fn ran(result: gpu_core::Result<()>, kernel: &str) {
    if let Err(error) = result {
        panic!("{kernel} on a masked device: {error}");
    }
}

/// The launcher must have refused with the typed error naming `kernel` and a masked capability, leaving no device
/// error behind.
fn refused(result: gpu_core::Result<()>, kernel: &str) {
    let error = result.expect_err(kernel);
    let GpuError::MissingCapability { kernel: named, capability } = &error else {
        panic!("{kernel}: refused without naming a missing capability: {error}");
    };
    assert_eq!(named, kernel, "{error}");
    assert!(Capability::ALL.contains(capability), "{error}");
    let message = error.to_string();
    assert!(message.contains(kernel) && message.contains(&capability.to_string()), "{message}");
    masked_gpu().check_faults().expect("a refused kernel leaves no device error");
}

#[test]
fn layer_norm_runs_and_matches() {
    let gpu = masked_gpu();
    let (rows, width) = (5, 257);
    let mut rng = Rng::new(fresh_seed());
    let (x, weight, bias) = (rng.f32s(rows * width, 2.0), rng.f32s(width, 1.0), rng.f32s(width, 0.5));
    let want =
        reference::layer_norm(&f32_to_f64(&x), &f32_to_f64(&weight), &f32_to_f64(&bias), width, LAYER_NORM_EPS as f64);
    let [xb, wb, bb] = [&x, &weight, &bias].map(|v| gpu.upload_f32("input", v).unwrap());
    let yb = poisoned(gpu, "y", rows * width);
    let mut rec = Recorder::new(gpu);
    let norm = LayerNormParams { weight: &wb, bias: &bb, eps: LAYER_NORM_EPS };
    ran(layer_norm(&mut rec, &xb, &norm, &yb, rows, width, None), "layer_norm");
    rec.submit().unwrap();
    assert_close("masked layer_norm", &gpu.read_f32(&yb).block().unwrap(), &want, 1e-6);
}

/// The weight stays on the f32 path (no tensor cores to take), which needs none of the masked capabilities.
#[test]
fn gemm_takes_the_f32_path_and_matches() {
    let gpu = masked_gpu();
    let (n, m, k) = (33, 65, 128);
    let mut rng = Rng::new(fresh_seed());
    let x = rng.f32s(n * k, 1.0);
    let w = rng.bf16s(m * k, 3.0 / (k as f64).sqrt());
    let bias = rng.f32s(m, 0.5);
    let bias64 = f32_to_f64(&bias);
    let linear = reference::linear(&f32_to_f64(&x), &bf16_to_f64(&w), Some(&bias64), n, m, k);
    let want: Vec<f64> = linear.iter().map(|&v| reference::gelu(v)).collect();
    let product = reference::linear(&f32_to_f64(&x), &bf16_to_f64(&w), None, n, m, k);
    let scale = frobenius(&product) + frobenius(&bias64.repeat(n));

    let options = MatmulOptions { precision: Precision::Auto, ..MatmulOptions::default() };
    let wb = Weight::upload(gpu, "w", &w, m, k, &options).unwrap();
    assert_eq!(wb.path(), MatmulPath::F32, "no tensor cores on a masked device");
    let (xb, bb) = (gpu.upload_f32("x", &x).unwrap(), gpu.upload_f32("bias", &bias).unwrap());
    let yb = poisoned(gpu, "y", n * m);
    let epilogue = Epilogue { bias: Some(&bb), activation: Activation::Gelu, accumulate: false };
    let mut rec = Recorder::new(gpu);
    ran(gemm(&mut rec, &xb, &wb, &yb, GemmShape { n, m, k }, &epilogue), "gemm");
    rec.submit().unwrap();
    assert_close_to_scale("masked gemm", &gpu.read_f32(&yb).block().unwrap(), &want, scale, 1e-5);
}

/// The f32 attention exchanges through workgroup memory without subgroups: `attention`, the split keys and
/// `rotary_attention` run and match; the tensor-core kernel (subgroups, f16 matrices) names what is missing.
#[test]
fn f32_attention_runs_and_matches_and_the_tensor_core_one_names_the_capability() {
    let gpu = masked_gpu();
    // seq_len off the tiles, head_dim off the 16-byte groups.
    let shape = AttentionShape { seqs: 2, seq_len: 40, heads: 2, head_dim: 62 };
    let AttentionShape { seq_len, head_dim, .. } = shape;
    let (rows, width) = (shape.rows(), shape.width());
    let mut rng = Rng::new(fresh_seed());
    let qkv = rng.f32s(rows * 3 * width, 2.2);
    let valid: Vec<bool> = (0..rows).map(|r| r % seq_len < 30).collect();
    let want = reference::attention(&f32_to_f64(&qkv), &valid, shape);
    // rotary_attention rotates q and k (all of each head) first.
    let mut rotated = f32_to_f64(&qkv);
    reference::qk_norm_rope(&mut rotated, None, QkShape::from(shape), head_dim, THETA);
    let want_rotary = reference::attention(&rotated, &valid, shape);
    let qkv_buffer = gpu.upload_f32("qkv", &qkv).unwrap();
    let key_valid = gpu.upload_u32("key_valid", &valid.iter().map(|&v| v as u32).collect::<Vec<_>>()).unwrap();
    let table = RopeTable::new(gpu, seq_len, head_dim, THETA).unwrap();
    let prologue = QkPrologue { rope: &table, norm: None, slices: 1 };
    for entry in 0..4 {
        let out = poisoned(gpu, "out", rows * width);
        let buffers = [&qkv_buffer, &key_valid, &out];
        let mut rec = Recorder::new(gpu);
        let (kernel, result, want) = match entry {
            0 => ("attention", attention(&mut rec, buffers, shape, Precision::Auto), &want),
            1 => ("attention", attention_split(&mut rec, buffers, shape, KeySplits::Fixed(2)), &want),
            2 => (
                "attention_coop",
                attention_coop(&mut rec, buffers, shape, None, (None, KeySplits::Auto), Products::Split),
                &want,
            ),
            _ => ("attention", rotary_attention(&mut rec, buffers, &prologue, shape, Precision::Auto), &want_rotary),
        };
        if entry == 2 {
            refused(result, kernel);
            continue;
        }
        ran(result, kernel);
        rec.submit().unwrap();
        assert_close(&format!("masked {kernel} (entry {entry})"), &gpu.read_f32(&out).block().unwrap(), want, 1e-5);
    }
}

#[test]
fn qk_norm_rope_runs_and_matches() {
    let gpu = masked_gpu();
    let shape = QkShape { rows: 45, seq_len: 20, heads: 2, head_dim: 128 };
    let QkShape { rows, seq_len, heads, head_dim } = shape;
    let rot = 64;
    let mut rng = Rng::new(fresh_seed());
    let qkv = rng.f32s(rows * 3 * heads * head_dim, 2.0);
    let params: Vec<Vec<f32>> = [1.0, 0.5, 1.0, 0.5].iter().map(|&scale| rng.f32s(head_dim, scale)).collect();
    let mut want = f32_to_f64(&qkv);
    let params64: Vec<Vec<f64>> = params.iter().map(|p| f32_to_f64(p)).collect();
    let norm64 = (&params64[0][..], &params64[1][..], &params64[2][..], &params64[3][..]);
    reference::qk_norm_rope(&mut want, Some(norm64), shape, rot, THETA);
    let table = RopeTable::new(gpu, seq_len, rot, THETA).unwrap();
    let buffer = gpu.upload_f32("qkv", &qkv).unwrap();
    let p: Vec<_> = params.iter().map(|p| gpu.upload_f32("norm", p).unwrap()).collect();
    let norm = QkNorm { q_weight: &p[0], q_bias: &p[1], k_weight: &p[2], k_bias: &p[3] };
    let mut rec = Recorder::new(gpu);
    let result = qk_norm_rope(&mut rec, &buffer, &table, Some(&norm), shape);
    ran(result, "qk_norm_rope");
    rec.submit().unwrap();
    assert_close("masked qk_norm_rope", &gpu.read_f32(&buffer).block().unwrap(), &want, 1e-5);
}

#[test]
fn conv_im2col_runs_and_matches() {
    let gpu = masked_gpu();
    let (lengths, seq_len, channels) = ([37usize, 5], 37, 24);
    let rows = lengths.len() * seq_len;
    let h = Rng::new(fresh_seed()).f32s(rows * channels, 2.0);
    let want = reference::conv_im2col(&f32_to_f64(&h), &lengths, seq_len, channels);
    let hb = gpu.upload_f32("h", &h).unwrap();
    let lengths_gpu = gpu.upload_u32("lengths", &lengths.map(|l| l as u32)).unwrap();
    let cols = poisoned(gpu, "cols", rows * 3 * channels);
    let mut rec = Recorder::new(gpu);
    let batch = ConvBatch { sequences: lengths.len(), seq_len, lengths: &lengths_gpu };
    ran(conv_im2col(&mut rec, &hb, &cols, batch, channels), "conv_im2col");
    rec.submit().unwrap();
    assert!(f32_to_f64(&gpu.read_f32(&cols).block().unwrap()) == want, "masked conv_im2col differs from the reference");
}

#[test]
fn gather_rows_runs_and_matches() {
    let gpu = masked_gpu();
    let (width, src_rows, dst_rows) = (37, 11, 6);
    let src = Rng::new(fresh_seed()).f32s(src_rows * width, 2.0);
    let pairs = [(10usize, 0usize), (3, 5), (3, 2), (0, 4)];
    let words: Vec<u32> = pairs.iter().flat_map(|&(s, d)| [s as u32, d as u32]).collect();
    let mut want = vec![f64::NAN; dst_rows * width];
    reference::gather_rows(&f32_to_f64(&src), &mut want, &pairs, width);
    let (src_gpu, pairs_gpu) = (gpu.upload_f32("src", &src).unwrap(), gpu.upload_u32("pairs", &words).unwrap());
    let dst = poisoned(gpu, "dst", dst_rows * width);
    let mut rec = Recorder::new(gpu);
    let rows = RowPairs { pairs: &pairs_gpu, first: 0, count: pairs.len(), src_rows, dst_rows };
    ran(gather_rows(&mut rec, &src_gpu, &dst, rows, width), "gather_rows");
    rec.submit().unwrap();
    let got = f32_to_f64(&gpu.read_f32(&dst).block().unwrap());
    let same = got.iter().zip(&want).all(|(a, b)| a == b || (a.is_nan() && b.is_nan()));
    assert!(same, "masked gather_rows differs from the reference");
}

#[test]
fn speaker_fusion_runs_and_matches() {
    let gpu = masked_gpu();
    let (rows, width, speakers) = (37, 77, 3);
    let mut rng = Rng::new(fresh_seed());
    let (x, z) = (rng.f32s(rows * width, 2.0), rng.f32s(rows * speakers, 2.0));
    let table = speaker_table(speakers, width);
    let mut want = f32_to_f64(&x);
    reference::speaker_fusion(&mut want, &f32_to_f64(&z), &f32_to_f64(&table), rows, width, speakers);
    let [xb, zb, tb] = [&x, &z, &table].map(|v| gpu.upload_f32("input", v).unwrap());
    let mut rec = Recorder::new(gpu);
    ran(speaker_fusion(&mut rec, &xb, &zb, &tb, rows, width, speakers), "speaker_fusion");
    rec.submit().unwrap();
    assert_close("masked speaker_fusion", &gpu.read_f32(&xb).block().unwrap(), &want, 1e-5);
}

#[test]
fn log_softmax_gather_runs_and_matches() {
    let gpu = masked_gpu();
    let (rows, vocab, classes) = (3, 300, [6u32, 0, 299, 3]);
    let logits = Rng::new(fresh_seed()).f32s(rows * vocab, 12.0);
    let want = reference::log_softmax_gather(&f32_to_f64(&logits), &classes, vocab);
    // As in its own test: each output's rounding scales with its logit and the row's log-sum-exp.
    let scale = logits
        .chunks_exact(vocab)
        .zip(want.chunks_exact(classes.len()))
        .flat_map(|(row, w)| {
            classes.iter().zip(w).map(move |(&c, w)| {
                let logit = f64::from(row[c as usize]);
                logit.abs() + (w - logit).abs()
            })
        })
        .map(|s| s * s)
        .sum::<f64>()
        .sqrt();
    let lb = gpu.upload_f32("logits", &logits).unwrap();
    let cb = gpu.upload_u32("classes", &classes).unwrap();
    let out = poisoned(gpu, "log-probabilities", rows * classes.len());
    let mut rec = Recorder::new(gpu);
    ran(log_softmax_gather(&mut rec, &lb, &cb, &out, rows, vocab, classes.len()), "log_softmax_gather");
    rec.submit().unwrap();
    assert_close_to_scale("masked log_softmax_gather", &gpu.read_f32(&out).block().unwrap(), &want, scale, 1e-6);
}
