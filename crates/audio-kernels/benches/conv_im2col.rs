//! Wall time of one `conv_im2col` submission at the Sortformer head's shape (828 rows of 192).

use audio_kernels::{ConvBatch, conv_im2col};
use criterion::{Criterion, criterion_group, criterion_main};
use gpu_core::Recorder;
use gpu_core::blocking::Block;
use nemotron_testkit::{Rng, test_gpu};

fn benches(c: &mut Criterion) {
    let gpu = test_gpu();
    let (n, channels) = (828, 192);
    let h = gpu.upload_f32("h", &Rng::new(1).f32s(n * channels, 1.0)).expect("upload h");
    let cols = gpu.zeros("cols", n * 3 * channels).expect("allocate cols");
    let lengths = gpu.upload_u32("lengths", &[n as u32]).expect("upload lengths");
    let batch = ConvBatch { sequences: 1, seq_len: n, lengths: &lengths };
    c.bench_function("conv_im2col 828x192", |b| {
        b.iter(|| {
            let mut rec = Recorder::new(gpu);
            conv_im2col(&mut rec, &h, &cols, batch, channels).expect("record");
            rec.submit_profiled().block().expect("submit");
        })
    });
}

criterion_group!(conv_im2col_benches, benches);
criterion_main!(conv_im2col_benches);
