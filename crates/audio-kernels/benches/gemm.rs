//! Wall time of one `gemm` submission (record, submit, wait) at small shapes, with bias and GELU as in the MLP.
//! Throughput is in FLOPs (2·n·m·k). Shapes stay small so the bench also runs on a software adapter.

use audio_kernels::{Activation, Epilogue, GemmShape, Weight, gemm};
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use gpu_core::Recorder;
use gpu_core::blocking::Block;
use nemotron_testkit::{Rng, test_gpu, test_matmul};

const SHAPES: &[(usize, usize, usize)] = &[(64, 256, 256), (256, 256, 256), (100, 512, 512), (128, 192, 576)];

fn bench_gemm(c: &mut Criterion) {
    let gpu = test_gpu();
    let mut rng = Rng::new(1);
    let mut group = c.benchmark_group("gemm");
    group.sample_size(20);
    for &(n, m, k) in SHAPES {
        let x = gpu.upload_f32("x", &rng.f32s(n * k, 1.0)).expect("upload x");
        let w = Weight::upload(gpu, "w", &rng.bf16s(m * k, 0.1), m, k, &test_matmul()).expect("upload w");
        let bias = gpu.upload_f32("bias", &rng.f32s(m, 0.5)).expect("upload bias");
        let y = gpu.zeros("y", n * m).expect("allocate y");
        let epilogue = Epilogue { bias: Some(&bias), activation: Activation::Gelu, accumulate: false };
        group.throughput(Throughput::Elements((2 * n * m * k) as u64));
        group.bench_function(BenchmarkId::from_parameter(format!("{n}x{m}x{k}")), |b| {
            b.iter(|| {
                let mut rec = Recorder::new(gpu);
                gemm(&mut rec, &x, &w, &y, GemmShape { n, m, k }, &epilogue).expect("record gemm");
                rec.submit().expect("submit");
                gpu.wait().block().expect("wait");
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench_gemm);
criterion_main!(benches);
