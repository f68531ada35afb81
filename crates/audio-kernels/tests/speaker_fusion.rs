//! `speaker_fusion` on the GPU against the f64 reference with the model's speaker table (8 speakers) and other
//! speaker counts, widths 1280, 64 and an odd one, 1 to 500 rows; and the table's defining values.

use audio_kernels::reference;
use audio_kernels::speaker_fusion;
use audio_kernels::speaker_table;
use gpu_core::Recorder;
use gpu_core::blocking::Block;
use nemotron_testkit::{Rng, assert_close, f32_to_f64, fresh_seed, test_gpu};

fn check(rows: usize, width: usize, speakers: usize, seed: u64) {
    let gpu = test_gpu();
    let mut rng = Rng::new(seed);
    let x = rng.f32s(rows * width, 2.0);
    let z = rng.f32s(rows * speakers, 2.0);
    let table = speaker_table(speakers, width);
    let mut want = f32_to_f64(&x);
    reference::speaker_fusion(&mut want, &f32_to_f64(&z), &f32_to_f64(&table), rows, width, speakers);

    let xb = gpu.upload_f32("x", &x).unwrap();
    let zb = gpu.upload_f32("z", &z).unwrap();
    let tb = gpu.upload_f32("table", &table).unwrap();
    let mut rec = Recorder::new(gpu);
    speaker_fusion(&mut rec, &xb, &zb, &tb, rows, width, speakers).unwrap();
    rec.submit().unwrap();
    let got = gpu.read_f32(&xb).block().unwrap();
    assert_close(
        &format!("speaker_fusion rows={rows} width={width} speakers={speakers} seed={seed}"),
        &got,
        &want,
        1e-5,
    );
}

#[test]
fn matches_reference() {
    let seed = fresh_seed();
    let shapes = [(1, 1280, 8), (37, 1280, 8), (500, 1280, 8), (37, 64, 8), (500, 77, 8), (37, 77, 3), (1, 1, 1)];
    for (i, &(rows, width, speakers)) in shapes.iter().enumerate() {
        check(rows, width, speakers, seed + i as u64);
    }
}

#[test]
fn speaker_table_is_the_interleaved_sinusoid() {
    let (speakers, width) = (8, 1280);
    let table = speaker_table(speakers, width);
    assert!(table[..width].chunks(2).all(|pair| pair == [0.0, 1.0]), "speaker 0 row is not [0, 1, 0, 1, …]");
    for s in 0..speakers {
        let row = &table[s * width..(s + 1) * width];
        assert_eq!((row[0], row[1]), ((s as f64).sin() as f32, (s as f64).cos() as f32), "speaker {s}, ω_0 = 1");
        // ω_320 = 10000^(−640/1280) = 1/100.
        let angle = s as f64 / 100.0;
        assert!((row[640] as f64 - angle.sin()).abs() < 1e-7 && (row[641] as f64 - angle.cos()).abs() < 1e-7);
    }
}

#[test]
fn rejects_short_buffers() {
    let gpu = test_gpu();
    let x = gpu.zeros("x", 12).unwrap();
    let z = gpu.zeros("z", 5).unwrap();
    let mut rec = Recorder::new(gpu);
    let err = speaker_fusion(&mut rec, &x, &z, &x, 3, 4, 2).unwrap_err();
    assert!(err.to_string().contains("speaker_fusion z"), "{err}");
}
