//! Attention at small shapes of both real head dims: one recorded launch, submitted and waited for.

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use gpu_core::blocking::Block;

use audio_kernels::{AttentionShape, attention};
use gpu_core::Recorder;
use nemotron_testkit::test_matmul;
use nemotron_testkit::{Rng, test_gpu};

const SHAPES: [AttentionShape; 3] = [
    AttentionShape { seqs: 1, seq_len: 128, heads: 2, head_dim: 64 },
    AttentionShape { seqs: 1, seq_len: 128, heads: 2, head_dim: 128 },
    AttentionShape { seqs: 2, seq_len: 96, heads: 4, head_dim: 64 },
];

fn bench(c: &mut Criterion) {
    let gpu = test_gpu();
    let mut group = c.benchmark_group("attention");
    group.sample_size(10);
    for shape in SHAPES {
        let AttentionShape { seqs, seq_len, heads, head_dim } = shape;
        let (rows, width) = (shape.rows(), shape.width());
        let mut rng = Rng::new(7);
        let qkv = gpu.upload_f32("qkv", &rng.f32s(rows * 3 * width, 2.0)).unwrap();
        let key_valid = gpu.upload_u32("key_valid", &vec![1; rows]).unwrap();
        let out = gpu.zeros("out", rows * width).unwrap();
        // Flops: q·kᵀ and p·v are one multiply-add each per (query, key, column).
        group.throughput(Throughput::Elements((4 * seqs * seq_len * seq_len * width) as u64));
        let id = BenchmarkId::from_parameter(format!("{seqs}x{seq_len}x{heads}x{head_dim}"));
        group.bench_function(id, |b| {
            b.iter(|| {
                let mut rec = Recorder::new(gpu);
                let precision = test_matmul().precision;
                attention(&mut rec, [&qkv, &key_valid, &out], shape, precision).unwrap();
                rec.submit().unwrap();
                gpu.wait().block().unwrap();
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
