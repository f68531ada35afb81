//! Wall time of one `layer_norm` submission (record, submit, wait) at the towers' widths.

use audio_kernels::{LAYER_NORM_EPS, LayerNormParams, layer_norm};
use criterion::{Criterion, criterion_group, criterion_main};
use gpu_core::Recorder;
use gpu_core::blocking::Block;
use nemotron_testkit::{Rng, test_gpu};

fn benches(c: &mut Criterion) {
    let gpu = test_gpu();
    let mut rng = Rng::new(1);
    for (rows, width) in [(600, 1280), (828, 512)] {
        let x = gpu.upload_f32("x", &rng.f32s(rows * width, 2.0)).expect("upload x");
        let weight = gpu.upload_f32("weight", &rng.f32s(width, 1.0)).expect("upload weight");
        let bias = gpu.upload_f32("bias", &rng.f32s(width, 0.5)).expect("upload bias");
        let y = gpu.zeros("y", rows * width).expect("allocate y");
        let norm = LayerNormParams { weight: &weight, bias: &bias, eps: LAYER_NORM_EPS };
        c.bench_function(&format!("layer_norm {rows}x{width}"), |b| {
            b.iter(|| {
                let mut rec = Recorder::new(gpu);
                layer_norm(&mut rec, &x, &norm, &y, rows, width, None).expect("record");
                rec.submit_profiled().block().expect("submit");
            })
        });
    }
}

criterion_group!(layer_norm_benches, benches);
criterion_main!(layer_norm_benches);
