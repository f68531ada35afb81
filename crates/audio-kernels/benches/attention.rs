//! Attention at small shapes of both real head dims: one recorded launch, submitted and waited for.

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use gpu_core::blocking::Block;

use audio_kernels::attention;
use gpu_core::Recorder;
use nemotron_testkit::test_matmul;
use nemotron_testkit::{Rng, test_gpu};

/// (seqs, seq_len, heads, head_dim).
const SHAPES: [(usize, usize, usize, usize); 3] = [(1, 128, 2, 64), (1, 128, 2, 128), (2, 96, 4, 64)];

fn bench(c: &mut Criterion) {
    let gpu = test_gpu();
    let mut group = c.benchmark_group("attention");
    group.sample_size(10);
    for (seqs, seq_len, heads, head_dim) in SHAPES {
        let rows = seqs * seq_len;
        let width = heads * head_dim;
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
                attention(&mut rec, &qkv, &key_valid, &out, seqs, seq_len, heads, head_dim, precision).unwrap();
                rec.submit().unwrap();
                gpu.wait().block().unwrap();
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
