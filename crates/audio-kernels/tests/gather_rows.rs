//! `gather_rows` on the GPU: exactly the reference gather, rows the pairs do not name left as they were (poisoned),
//! launches that read a slice of a shared pairs buffer; widths 1, 37 and 192, rows in any order.

use audio_kernels::reference;
use audio_kernels::{RowPairs, gather_rows};
use gpu_core::Recorder;
use gpu_core::blocking::Block;
use nemotron_testkit::{Rng, f32_to_f64, fresh_seed, poisoned, test_gpu};

/// Distinct destination rows below `dst_rows` (`count` of them), each from a random source row below `src_rows`.
fn random_pairs(rng: &mut Rng, count: usize, src_rows: usize, dst_rows: usize) -> Vec<(usize, usize)> {
    let mut destinations: Vec<usize> = (0..dst_rows).collect();
    for i in (1..dst_rows).rev() {
        destinations.swap(i, rng.below(i + 1));
    }
    destinations.into_iter().take(count).map(|d| (rng.below(src_rows), d)).collect()
}

/// Equal as values, NaN equal to NaN (the poisoned rows no pair names).
fn same(got: &[f64], want: &[f64]) -> bool {
    got.len() == want.len() && got.iter().zip(want).all(|(a, b)| a == b || (a.is_nan() && b.is_nan()))
}

fn check(width: usize, src_rows: usize, dst_rows: usize, launches: &[usize], seed: u64) {
    let gpu = test_gpu();
    let mut rng = Rng::new(seed);
    let src = rng.f32s(src_rows * width, 3.0);
    let total: usize = launches.iter().sum();
    let pairs = random_pairs(&mut rng, total, src_rows, dst_rows);
    let words: Vec<u32> = pairs.iter().flat_map(|&(s, d)| [s as u32, d as u32]).collect();
    let src_gpu = gpu.upload_f32("src", &src).unwrap();
    let pairs_gpu = gpu.upload_u32("pairs", &words).unwrap();
    let dst = poisoned(gpu, "dst", dst_rows * width);
    let mut rec = Recorder::new(gpu);
    let mut first = 0;
    for &count in launches {
        let rows = RowPairs { pairs: &pairs_gpu, first, count, src_rows, dst_rows };
        gather_rows(&mut rec, &src_gpu, &dst, rows, width).unwrap();
        first += count;
    }
    rec.submit().unwrap();
    let got = f32_to_f64(&gpu.read_f32(&dst).block().unwrap());
    let mut want = vec![f64::NAN; dst_rows * width];
    reference::gather_rows(&f32_to_f64(&src), &mut want, &pairs, width);
    let what = format!("gather_rows width={width} {src_rows}→{dst_rows} rows, launches {launches:?}, seed={seed}");
    assert!(same(&got, &want), "{what}: differs from the reference");
}

#[test]
fn copies_exactly_the_named_rows() {
    let seed = fresh_seed();
    for (i, &(width, src_rows, dst_rows)) in [(1, 5, 7), (37, 61, 13), (192, 9, 40), (192, 40, 40)].iter().enumerate() {
        check(width, src_rows, dst_rows, &[dst_rows.min(src_rows)], seed + i as u64);
    }
}

#[test]
fn launches_read_their_slice_of_the_pairs() {
    let seed = fresh_seed();
    check(37, 50, 64, &[3, 0, 20, 1], seed);
    check(192, 7, 30, &[29, 1], seed + 1);
}

#[test]
fn rejects_short_buffers() {
    let gpu = test_gpu();
    let src = gpu.zeros("src", 10).unwrap();
    let dst = gpu.zeros("dst", 10).unwrap();
    let pairs = gpu.upload_u32("pairs", &[0, 1, 1, 0]).unwrap();
    let mut rec = Recorder::new(gpu);
    let rows = |first, count, src_rows, dst_rows| RowPairs { pairs: &pairs, first, count, src_rows, dst_rows };
    let err = gather_rows(&mut rec, &src, &dst, rows(0, 2, 3, 2), 5).unwrap_err();
    assert!(err.to_string().contains("gather_rows source"), "{err}");
    let err = gather_rows(&mut rec, &src, &dst, rows(0, 2, 2, 3), 5).unwrap_err();
    assert!(err.to_string().contains("gather_rows destination"), "{err}");
    let err = gather_rows(&mut rec, &src, &dst, rows(1, 2, 2, 2), 5).unwrap_err();
    assert!(err.to_string().contains("gather_rows pairs"), "{err}");
}
