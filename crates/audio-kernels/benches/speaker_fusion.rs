//! Wall time of one `speaker_fusion` submission: 600 s of audio's worth of encoder frames (7500 × 1280).

use audio_kernels::speaker_fusion;
use audio_kernels::speaker_table;
use criterion::{Criterion, criterion_group, criterion_main};
use gpu_core::Recorder;
use gpu_core::blocking::Block;
use nemotron_testkit::{Rng, test_gpu};

fn benches(c: &mut Criterion) {
    let gpu = test_gpu();
    let (rows, width, speakers) = (7500, 1280, 8);
    let mut rng = Rng::new(1);
    let x = gpu.upload_f32("x", &rng.f32s(rows * width, 1.0)).expect("upload x");
    let z = gpu.upload_f32("z", &rng.f32s(rows * speakers, 1.0)).expect("upload z");
    let table = gpu.upload_f32("table", &speaker_table(speakers, width)).expect("upload table");
    c.bench_function("speaker_fusion 7500x1280", |b| {
        b.iter(|| {
            let mut rec = Recorder::new(gpu);
            speaker_fusion(&mut rec, &x, &z, &table, rows, width, speakers).expect("record");
            rec.submit_profiled().block().expect("submit");
        })
    });
}

criterion_group!(speaker_fusion_benches, benches);
criterion_main!(speaker_fusion_benches);
