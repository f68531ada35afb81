//! A checkpoint's files are read by one rule whether they lie in a folder or are handed over by name (what a browser
//! does): the same files give the same config and tensors, or the same refusal naming the same file (a folder's
//! errors say `DIR/file`, the named files' `file`); the index wins over `model.safetensors`; files the rule does not
//! read are left alone; a shard the index names but nobody handed over is an error naming it, never a file opened.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use nemotron_towers::checkpoint::{CheckpointFiles, NamedFiles};
use nemotron_towers::tensor_file::{Tensor, serialize};
use nemotron_towers::{Checkpoint, CheckpointError};

/// What errors about the whole of a named checkpoint call it.
const HANDED_OVER: &str = "the files handed over";

fn diar_tiny(file: &str) -> Vec<u8> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../testdata/reference/diar-tiny");
    std::fs::read(dir.join(file)).expect("the reference case's file")
}

fn shard(name: &str, values: &[f32]) -> Vec<u8> {
    let tensors = [(name.to_owned(), Tensor::f32(vec![values.len()], values))];
    serialize(&tensors, HashMap::new()).expect("serialize")
}

const INDEX: &str = r#"{"weight_map": {"a": "model-00001.safetensors", "b": "model-00002.safetensors"}}"#;

/// The same files in a new folder, and handed over by name.
struct Both {
    dir: tempfile::TempDir,
    folder: CheckpointFiles,
    named: CheckpointFiles,
}

fn both(files: &[(&str, &[u8])]) -> Both {
    let dir = tempfile::tempdir().expect("a temporary folder");
    for (name, bytes) in files {
        std::fs::write(dir.path().join(name), bytes).expect("a file written");
    }
    let named = files.iter().map(|(name, bytes)| (name.to_string(), Arc::<[u8]>::from(*bytes)));
    let named = CheckpointFiles::Named(NamedFiles::new(named).expect("each name once"));
    Both { folder: CheckpointFiles::Folder(dir.path().to_path_buf()), named, dir }
}

impl Both {
    /// The folder's message as the named files' say it: files without the folder, the checkpoint by its label.
    fn as_named(&self, folder_message: &str) -> String {
        let dir = self.dir.path().display().to_string();
        folder_message.replace(&format!("{dir}/"), "").replace(&dir, HANDED_OVER)
    }

    fn checkpoints(&self) -> (Result<Checkpoint, CheckpointError>, Result<Checkpoint, CheckpointError>) {
        (self.folder.checkpoint(), self.named.checkpoint())
    }

    /// Both refuse the checkpoint with the same error.
    fn refuse_the_same(&self) -> String {
        match self.checkpoints() {
            (Err(folder), Err(named)) => {
                assert_eq!(named.to_string(), self.as_named(&folder.to_string()));
                named.to_string()
            }
            (folder, named) => panic!("refused by only one: {folder:?} / {named:?}"),
        }
    }
}

fn names(checkpoint: &Checkpoint) -> Vec<&str> {
    let mut names: Vec<&str> = checkpoint.names().collect();
    names.sort();
    names
}

#[test]
fn a_single_file_checkpoint_reads_the_same_from_either() {
    let (config, weights) = (diar_tiny("config.json"), diar_tiny("model.safetensors"));
    // A file the rule does not read is left alone, in a folder and among the files handed over.
    let files = both(&[("config.json", &config), ("model.safetensors", &weights), ("notes.txt", b"\xff")]);
    let (folder, named) = (files.folder.config().expect("config"), files.named.config().expect("config"));
    assert_eq!(format!("{folder:?}"), format!("{named:?}"));
    let (folder, named) = files.checkpoints();
    let (folder, named) = (folder.expect("folder"), named.expect("named"));
    assert!(!names(&folder).is_empty());
    assert_eq!(names(&folder), names(&named));
    for name in names(&folder) {
        assert_eq!(folder.f32(name).unwrap(), named.f32(name).unwrap(), "{name}");
    }
    assert_eq!(named.shard_path(names(&named)[0]), Some(Path::new("model.safetensors")));
}

#[test]
fn the_index_wins_and_a_shard_not_there_is_named() {
    let (first, single) = (shard("a", &[1.0, 2.0, 3.0]), shard("a", &[9.0]));
    let files = both(&[
        ("model.safetensors.index.json", INDEX.as_bytes()),
        ("model-00001.safetensors", &first),
        ("model.safetensors", &single),
    ]);
    let (folder, named) = files.checkpoints();
    let (folder, named) = (folder.expect("folder"), named.expect("named"));
    for checkpoint in [&folder, &named] {
        assert_eq!(checkpoint.f32("a").unwrap(), [1.0, 2.0, 3.0]);
        assert!(checkpoint.contains("b"));
    }
    match (folder.f32("b"), named.f32("b")) {
        (Err(CheckpointError::File { path: a, .. }), Err(CheckpointError::File { path: b, message })) => {
            assert_eq!(b, files.as_named(&a));
            assert_eq!(b, "model-00002.safetensors");
            assert!(message.contains("not handed over"), "{message}");
        }
        other => panic!("expected the missing shard named, got {other:?}"),
    }
}

#[test]
fn refusals_are_the_same_and_name_the_same_file() {
    let (config, weights) = (diar_tiny("config.json"), diar_tiny("model.safetensors"));
    let refused = both(&[("config.json", &config)]).refuse_the_same();
    assert_eq!(refused, format!("{HANDED_OVER}: neither model.safetensors nor model.safetensors.index.json exists"));
    let refused = both(&[("config.json", &config), ("model.safetensors", &weights[..4_096])]).refuse_the_same();
    assert!(refused.starts_with("model.safetensors: not a safetensors file: "), "{refused}");
    let refused = both(&[("model.safetensors.index.json", b"{ not json")]).refuse_the_same();
    assert!(refused.starts_with("model.safetensors.index.json: "), "{refused}");
    let escaping = r#"{"weight_map": {"a": "../elsewhere.safetensors"}}"#;
    let refused = both(&[("model.safetensors.index.json", escaping.as_bytes())]).refuse_the_same();
    assert!(refused.ends_with("leaves the checkpoint directory"), "{refused}");

    let files = both(&[("config.json", b"this is not JSON"), ("model.safetensors", &weights)]);
    let (folder, named) = (files.folder.config().unwrap_err(), files.named.config().unwrap_err());
    assert_eq!(named.to_string(), files.as_named(&folder.to_string()));
    assert!(named.to_string().starts_with("parsing config.json: "), "{named}");
    let files = both(&[("model.safetensors", &weights)]);
    assert!(files.folder.config().is_err());
    assert_eq!(files.named.config().unwrap_err().to_string(), "reading config.json: not among the files handed over");
}

/// A shard path that leaves the folder is refused alike, on every target: a root, a drive or a URL's scheme leave it
/// as `..` does (where the files are fetched, a scheme would fetch from elsewhere).
#[test]
fn a_shard_path_leaving_the_folder_is_refused_on_every_target() {
    for outside in
        ["../model.safetensors", "/model.safetensors", "\\\\host\\model.safetensors", "https://example.org/m"]
    {
        let index = format!(r#"{{"weight_map": {{"a": "{}"}}}}"#, outside.replace('\\', "\\\\"));
        let refused = both(&[("model.safetensors.index.json", index.as_bytes())]).refuse_the_same();
        assert!(refused.ends_with(&format!("shard path `{outside}` leaves the checkpoint directory")), "{refused}");
    }
}

#[test]
fn a_name_handed_over_twice_is_refused() {
    let twice =
        [("config.json".to_string(), Arc::from(&b"{}"[..])), ("config.json".to_string(), Arc::from(&b"{}"[..]))];
    let error = NamedFiles::new(twice).unwrap_err();
    assert_eq!(error.to_string(), "config.json: handed over twice");
}
