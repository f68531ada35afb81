//! Inputs the fuzz targets (`fuzz/`) or their review turned up, each once a panic, an overflow or an
//! unbounded allocation, kept in `testdata/fuzz-regressions/<target>/`. Every file goes through the
//! same calls as its fuzz target and must come back as a value or a typed error; the known ones must
//! give the error named here. (The audio parsers' are in `crates/nemotron-engine/tests/fuzz_regressions.rs`.)

use std::path::{Path, PathBuf};

use nemotron_towers::tensor_file::read_features;
use nemotron_towers::{Checkpoint, CheckpointError, ConfigError, Error, ModelConfig};

fn inputs(target: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/fuzz-regressions").join(target);
    let mut files: Vec<PathBuf> =
        std::fs::read_dir(&dir).expect("regressions folder").map(|e| e.expect("entry").path()).collect();
    files.sort();
    assert!(!files.is_empty(), "no regression inputs in {}", dir.display());
    files
}

fn input(target: &str, name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/fuzz-regressions").join(target).join(name)
}

#[test]
fn checkpoint_inputs_answer() {
    for path in inputs("checkpoint") {
        let bytes = std::fs::read(&path).expect("read input");
        let Ok(checkpoint) = Checkpoint::from_bytes("fuzz.safetensors", bytes) else { continue };
        for name in checkpoint.names().map(str::to_owned).collect::<Vec<_>>() {
            let _ = (checkpoint.f32(&name), checkpoint.f64(&name), checkpoint.bf16(&name), checkpoint.shape(&name));
        }
    }
}

#[test]
fn data_ending_near_two_to_the_64_is_refused() {
    // Eight 2^61−1-byte tensors: safetensors' unchecked `end + header` overflowed.
    let path = input("checkpoint", "data-end-near-2-pow-64.safetensors");
    let error = Checkpoint::open(&path).expect_err("accepted");
    assert!(matches!(&error, CheckpointError::File { message, .. } if message.contains("ends at byte")), "{error}");
}

#[test]
fn config_inputs_answer() {
    for path in inputs("config") {
        let text = String::from_utf8_lossy(&std::fs::read(&path).expect("read input")).into_owned();
        let _ = ModelConfig::from_json(&text);
        let _ = Checkpoint::from_index(Path::new("/nonexistent"), &text);
    }
}

#[test]
fn chunk_contexts_that_overflow_their_sum_are_refused() {
    let error = ModelConfig::from_file(&input("config", "chunk-contexts-overflow.json")).expect_err("accepted");
    assert!(
        matches!(&error, ConfigError::Invalid(m) if m.starts_with("chunk_left_context = 18446744073709551615")),
        "{error}"
    );
}

#[test]
fn an_index_of_many_shards_opens_in_linear_time() {
    // Each new shard was looked up by a linear search: 100 000 shards (a 3 MB index) took over ten minutes.
    let shards = 100_000;
    let entries: Vec<String> = (0..shards).map(|i| format!(r#""t{i}": "s{i}.safetensors""#)).collect();
    let text = format!(r#"{{"weight_map": {{{}}}}}"#, entries.join(","));
    let start = std::time::Instant::now();
    let checkpoint = Checkpoint::from_index(Path::new("/nonexistent"), &text).expect("index");
    assert_eq!(checkpoint.names().count(), shards);
    let seconds = start.elapsed().as_secs_f64();
    assert!(seconds < 10.0, "{shards} shards took {seconds:.1} s");
}

#[test]
fn features_inputs_answer() {
    for path in inputs("features") {
        let _ = read_features(&path, 128, 8);
    }
}

#[test]
fn sub_byte_feature_masks_are_refused() {
    // An F4 mask of 8 frames is 4 bytes: zero bytes per frame, which `chunks_exact` panicked on.
    let error = read_features(&input("features", "f4-mask.safetensors"), 128, 8).expect_err("accepted");
    assert!(
        matches!(&error, Error::Features { problem, .. } if problem.ends_with("input_features_mask has dtype F4")),
        "{error}"
    );
}
