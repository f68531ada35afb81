//! Text → `ModelConfig::from_json`, and the same text as a sharded checkpoint's index.
#![no_main]

use std::sync::LazyLock;

use libfuzzer_sys::fuzz_target;
use nemotron_towers::{Checkpoint, ModelConfig};

/// A checkpoint directory with one real shard, so index entries naming it resolve to tensors.
static DIR: LazyLock<tempfile::TempDir> = LazyLock::new(|| {
    let dir = tempfile::tempdir().expect("temp dir");
    let shard = concat!(env!("CARGO_MANIFEST_DIR"), "/seeds/checkpoint/two-tensors.safetensors");
    std::fs::copy(shard, dir.path().join("model-00001-of-00002.safetensors")).expect("copy shard");
    dir
});

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    if let Ok(config) = ModelConfig::from_json(&text) {
        let _ = config.diarization();
    }
    let Ok(checkpoint) = Checkpoint::from_index(DIR.path(), &text) else { return };
    let names: Vec<String> = checkpoint.names().map(str::to_owned).collect();
    for name in &names {
        let _ = checkpoint.shape(name);
        let _ = checkpoint.f32(name);
    }
    let expected: Vec<(String, Vec<usize>)> = names.iter().take(4).map(|n| (n.clone(), vec![2])).collect();
    let _ = checkpoint.check(&expected);
});
