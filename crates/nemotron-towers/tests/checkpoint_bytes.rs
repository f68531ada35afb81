//! A sharded checkpoint whose shards the caller hands over as bytes (what a browser does): tensors are read from
//! the buffers, a shard not handed over is an error naming it (never a file opened instead), and a buffer for a
//! shard the index does not name is refused.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use nemotron_towers::tensor_file::{Tensor, serialize};
use nemotron_towers::{Checkpoint, CheckpointError};

fn shard(name: &str, values: &[f32]) -> Arc<[u8]> {
    let tensors = [(name.to_owned(), Tensor::f32(vec![values.len()], values))];
    serialize(&tensors, HashMap::new()).expect("serialize").into()
}

const INDEX: &str = r#"{"weight_map": {"a": "model-00001.safetensors", "b": "model-00002.safetensors"}}"#;

#[test]
fn handed_over_shards_are_read_and_missing_ones_named() {
    let dir = Path::new("in-memory");
    let shards = [("model-00001.safetensors".to_owned(), shard("a", &[1.0, 2.0, 3.0]))];
    let checkpoint = Checkpoint::from_shard_bytes(dir, INDEX, shards).expect("checkpoint");
    assert_eq!(checkpoint.f32("a").expect("tensor a"), [1.0, 2.0, 3.0]);
    assert!(checkpoint.contains("b"));
    match checkpoint.f32("b") {
        Err(CheckpointError::File { path, message }) => {
            assert!(path.ends_with("model-00002.safetensors"), "{path}");
            assert!(message.contains("not handed over"), "{message}");
        }
        other => panic!("expected the shard not handed over, got {other:?}"),
    }
}

#[test]
fn a_shard_the_index_does_not_name_is_refused() {
    let shards = [("model-00009.safetensors".to_owned(), shard("a", &[1.0]))];
    match Checkpoint::from_shard_bytes(Path::new("in-memory"), INDEX, shards) {
        Err(CheckpointError::File { message, .. }) => assert!(message.contains("model-00009"), "{message}"),
        other => panic!("expected a refusal, got {other:?}"),
    }
}
