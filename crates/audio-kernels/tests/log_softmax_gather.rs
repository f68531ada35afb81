//! `log_softmax_gather` on the GPU against the f64 reference: one to 300 rows, vocabularies from 1 to the release
//! head's 23,863 (not multiples of the workgroup), all, some, repeated and single classes; logits spread widely, so
//! that the maximum matters. Outputs poisoned before the run; two runs give the same bits.

use audio_kernels::{log_softmax_gather, reference};
use gpu_core::Recorder;
use gpu_core::blocking::Block;
use nemotron_testkit::{Rng, assert_close_to_scale, f32_to_f64, fresh_seed, poisoned, test_gpu};

fn run(logits: &[f32], classes: &[u32], rows: usize, vocab: usize) -> Vec<f32> {
    let gpu = test_gpu();
    let lb = gpu.upload_f32("logits", logits).unwrap();
    let cb = gpu.upload_u32("classes", classes).unwrap();
    let out = poisoned(gpu, "log-probabilities", rows * classes.len());
    let mut rec = Recorder::new(gpu);
    log_softmax_gather(&mut rec, &lb, &cb, &out, rows, vocab, classes.len()).unwrap();
    rec.submit().unwrap();
    gpu.read_f32(&out).block().unwrap()
}

fn check(rows: usize, vocab: usize, classes: &[u32], seed: u64) {
    let mut rng = Rng::new(seed);
    let logits = rng.f32s(rows * vocab, 12.0);
    let want = reference::log_softmax_gather(&f32_to_f64(&logits), classes, vocab);
    let got = run(&logits, classes, rows, vocab);
    // Each output is a difference of a logit and the row's log-sum-exp: its rounding scales with their sizes.
    let scale = logits
        .chunks_exact(vocab)
        .zip(want.chunks_exact(classes.len()))
        .flat_map(|(row, w)| {
            classes
                .iter()
                .zip(w)
                .map(move |(&c, w)| f64::from(row[c as usize]).abs() + (w - f64::from(row[c as usize])).abs())
        })
        .map(|s| s * s)
        .sum::<f64>()
        .sqrt();
    let what = format!("log_softmax_gather rows={rows} vocab={vocab} classes={} seed={seed}", classes.len());
    assert_close_to_scale(&what, &got, &want, scale, 1e-6);
    assert_eq!(got, run(&logits, classes, rows, vocab), "{what}: a second run differs");
}

#[test]
fn matches_reference() {
    let seed = fresh_seed();
    let mut rng = Rng::new(seed);
    let mut some = |count: usize, vocab: usize| -> Vec<u32> {
        let mut c: Vec<u32> = (0..count).map(|_| rng.below(vocab) as u32).collect();
        c.push(vocab as u32 - 1);
        c
    };
    let release = some(180, 23_863);
    check(37, 23_863, &release, seed);
    check(1, 1, &[0], seed + 1);
    check(3, 7, &[6, 0, 6, 3], seed + 2);
    check(5, 300, &(0..300).collect::<Vec<u32>>(), seed + 3);
    check(300, 257, &some(17, 257), seed + 4);
    check(2, 4096, &[4095], seed + 5);
}

#[test]
fn rejects_short_buffers() {
    let gpu = test_gpu();
    let logits = gpu.zeros("logits", 20).unwrap();
    let classes = gpu.zeros("classes", 2).unwrap();
    let out = gpu.zeros("out", 3).unwrap();
    let mut rec = Recorder::new(gpu);
    let err = log_softmax_gather(&mut rec, &logits, &classes, &out, 2, 10, 2).unwrap_err();
    assert!(err.to_string().contains("log_softmax_gather output"), "{err}");
}
