//! GPU time of `qk_norm_rope` at the model's shapes: an ASR chunk (600 rows, 10 heads of 128, rot 64, q/k norm)
//! and a Sortformer step (828 rows, 8 heads of 64, rot 64, no norm). Each iteration submits one dispatch and
//! waits for it.

use audio_kernels::{QkNorm, QkShape, RopeTable, qk_norm_rope};
use criterion::{Criterion, criterion_group, criterion_main};
use gpu_core::Recorder;
use gpu_core::blocking::Block;
use nemotron_testkit::{Rng, test_gpu};

fn bench_shape(c: &mut Criterion, name: &str, rows: usize, heads: usize, head_dim: usize, with_norm: bool) {
    let gpu = test_gpu();
    let mut rng = Rng::new(1);
    let qkv = gpu.upload_f32("qkv", &rng.f32s(rows * 3 * heads * head_dim, 2.0)).unwrap();
    let table = RopeTable::new(gpu, rows, 64, 10000.0).unwrap();
    let params: Vec<_> = (0..4).map(|_| gpu.upload_f32("norm", &rng.f32s(head_dim, 1.0)).unwrap()).collect();
    let norm = QkNorm { q_weight: &params[0], q_bias: &params[1], k_weight: &params[2], k_bias: &params[3] };
    let shape = QkShape { rows, seq_len: rows, heads, head_dim };
    c.bench_function(name, |b| {
        b.iter(|| {
            let mut rec = Recorder::new(gpu);
            qk_norm_rope(&mut rec, &qkv, &table, with_norm.then_some(&norm), shape).unwrap();
            rec.submit_profiled().block().unwrap();
        })
    });
}

fn benches(c: &mut Criterion) {
    bench_shape(c, "qk_norm_rope asr chunk 600x10x128 norm", 600, 10, 128, true);
    bench_shape(c, "qk_norm_rope sortformer step 828x8x64", 828, 8, 64, false);
}

criterion_group!(qk_norm_rope_benches, benches);
criterion_main!(qk_norm_rope_benches);
