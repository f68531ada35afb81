//! Unit tests of the tower.

use audio_kernels::random::Rng;
use gpu_core::blocking::Block;

use super::*;
use crate::weights::RandomStore;

/// A call cut into parts runs the same kernels in the same order: the bits of one submission, whether it cuts
/// at every half layer, at some, or never.
#[test]
fn a_call_in_parts_gives_the_bits_of_one_submission() {
    let gpu = Gpu::with_options(&nemotron_testkit::test_gpu_options()).block().expect("GPU tests need an adapter");
    let matmul = nemotron_testkit::test_matmul();
    let config = EncoderConfig {
        hidden: 96,
        intermediate: 200,
        heads: 3,
        head_dim: 32,
        layers: 5,
        rotary_dims: 16,
        rope_theta: 10_000.0,
        qk_norm: true,
        mel_bins: 16,
        subsampling: 2,
    };
    let names = ModelNames::nemo();
    let mut store = RandomStore { gpu: &gpu, rng: Rng::new(7), matmul: &matmul };
    let tower = Tower::build(&mut store, names.asr.as_ref().expect("ASR names"), &config).unwrap();
    let mut rng = Rng::new(11);
    let rows: Vec<Vec<f32>> = [37, 50].iter().map(|&n| rng.f32s(n * config.stacked_features(), 1.0)).collect();
    let valid: Vec<Vec<bool>> = [37, 50].iter().map(|&n| (0..n).map(|i| i < n - 3).collect()).collect();
    let batch: Vec<Sequence<'_>> = rows.iter().zip(&valid).map(|(r, v)| Sequence { rows: r, valid: v }).collect();
    let run = |submission| {
        tower
            .run(InputKind::Features, &batch, submission, super::no_prologue, async |rec, out, _, n| {
                rec.submit()?;
                Ok(tower.gpu.read_f32_range(out, 0, n * config.hidden).await?)
            })
            .block()
            .unwrap()
    };
    let whole = run(Submission::Whole);
    let (attention, mlp) = tower.half_layer_flops(batch.len(), 50);
    for flops in [1.0, attention + mlp, 3.0 * (attention + mlp), PART_FLOPS] {
        let parts = run(Submission::Parts { flops });
        assert!(whole.iter().zip(&parts).all(|(a, b)| a.to_bits() == b.to_bits()), "parts of {flops} flops");
    }
    assert!(whole.iter().all(|v| v.is_finite()));
}
