//! The towers on a device created without subgroups, f16 shaders and cooperative matrices, as WebGPU in a browser
//! without those features and wgpu's GL backend are: a committed golden's tower runs and matches the golden, and the
//! standalone diarizer of a reference case matches upstream, with no device validation error.

mod common;

use gpu_core::blocking::Block;
use std::path::Path;
use std::sync::OnceLock;

use gpu_core::{Capability, Gpu, GpuOptions};
use nemotron_testkit::golden::{Golden, GoldenTower, keys};
use nemotron_testkit::{assert_close, test_gpu_options, test_matmul};
use nemotron_towers::Checkpoint;
use nemotron_towers::tower::{InputKind, Sequence, Tower};

/// One context per test binary with every optional capability masked.
fn masked_gpu() -> &'static Gpu {
    static GPU: OnceLock<Gpu> = OnceLock::new();
    GPU.get_or_init(|| {
        let options = GpuOptions { masked_capabilities: Capability::ALL.to_vec(), ..test_gpu_options() };
        let gpu = Gpu::with_options(&options).block().unwrap_or_else(|e| panic!("GPU tests need an adapter: {e}"));
        eprintln!("{}", gpu.describe());
        gpu
    })
}

#[test]
fn a_tower_on_a_masked_device_matches_its_golden() {
    let gpu = masked_gpu();
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/golden");
    let mut files: Vec<_> = std::fs::read_dir(&path)
        .expect("testdata/golden exists")
        .map(|e| e.expect("readable entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "safetensors"))
        .collect();
    files.sort();
    let golden = files
        .iter()
        .map(|path| Golden::open(Checkpoint::open(path).unwrap()).unwrap())
        .find(|golden| golden.tower != GoldenTower::WordTimestamps)
        .expect("a committed tower golden");
    let (config, kind) = golden.encoder().unwrap();
    let features = golden.checkpoint.f32(keys::FEATURES).unwrap();
    let valid = golden.mask(keys::FEATURES_VALID).unwrap();
    let batch = [Sequence { rows: &features, valid: &valid }];
    let tower = Tower::load(gpu, &golden.checkpoint, kind, config, &test_matmul()).unwrap();
    let got = tower.forward(InputKind::Features, &batch).block().unwrap();
    let want = golden.checkpoint.f64(keys::EXPECTED_FEATURES).unwrap();
    assert_close("masked tower", &got[0], &want, 1e-5);
    gpu.check_faults().expect("no device error");
}

#[test]
fn the_diarizer_on_a_masked_device_matches_upstream() {
    common::diarizer_matches_upstream(masked_gpu());
    masked_gpu().check_faults().expect("no device error");
}
