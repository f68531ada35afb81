//! Bytes → a features file → `tensor_file::read_features` with the release shape (128 mel bins, 8× subsampling).
#![no_main]

use std::sync::LazyLock;

use libfuzzer_sys::fuzz_target;
use nemotron_towers::tensor_file::read_features;

static DIR: LazyLock<tempfile::TempDir> = LazyLock::new(|| tempfile::tempdir().expect("temp dir"));

fuzz_target!(|data: &[u8]| {
    let path = DIR.path().join("features.safetensors");
    std::fs::write(&path, data).expect("write input");
    let _ = read_features(&path, 128, 8);
});
