//! The towers on a device created without subgroups, f16 shaders and cooperative matrices: loading a committed
//! golden's tower and running it either matches the golden or fails with the typed error naming the missing
//! capability, never a panic or a device validation error.

use gpu_core::blocking::Block;
use std::path::Path;

use gpu_core::{Capability, Gpu, GpuError, GpuOptions};
use nemotron_testkit::golden::{Golden, GoldenTower, keys};
use nemotron_testkit::{assert_close, test_gpu_options, test_matmul};
use nemotron_towers::tower::{InputKind, Sequence, Tower};
use nemotron_towers::{Checkpoint, Error};

#[test]
fn a_tower_on_a_masked_device_runs_or_names_the_missing_capability() {
    let options = GpuOptions { masked_capabilities: Capability::ALL.to_vec(), ..test_gpu_options() };
    let gpu = Gpu::with_options(&options).block().unwrap_or_else(|e| panic!("GPU tests need an adapter: {e}"));
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
    let run = Tower::load(&gpu, &golden.checkpoint, kind, config, &test_matmul())
        .and_then(|tower| tower.forward(InputKind::Features, &batch).block());
    match run {
        Ok(got) => {
            let want = golden.checkpoint.f64(keys::EXPECTED_FEATURES).unwrap();
            assert_close("masked tower", &got[0], &want, 1e-5);
        }
        Err(Error::Gpu(error @ GpuError::MissingCapability { .. })) => {
            let message = error.to_string();
            assert!(message.contains("attention") && message.contains("SUBGROUP"), "{message}");
        }
        Err(error) => panic!("neither ran nor named a missing capability: {error}"),
    }
    gpu.check_faults().expect("no device error");
}
