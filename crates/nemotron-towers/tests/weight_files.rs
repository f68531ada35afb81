//! Which of a checkpoint's files a load reads, known from `config.json` and the index alone (what the browser
//! package and the Hub client fetch, one file at a time): the shards holding the tensors of the parts loaded, each
//! once and sorted, never a language-model shard, and with `ModelParts::Diarizer` never the ASR tower's; the single
//! file where there is no index; a config or an index the load refuses refused alike, naming the file. No shard is
//! there: none is read. A folder and the same files handed over by name answer the same.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use nemotron_towers::checkpoint::{CONFIG_FILE, CheckpointFiles, INDEX_FILE, NamedFiles, SINGLE_FILE};
use nemotron_towers::{Checkpoint, CheckpointError, Error, ModelParts, weight_files};

fn case(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../testdata/reference").join(name)
}

/// A checkpoint of `files` in a new folder, and the same files handed over by name.
struct Both {
    dir: tempfile::TempDir,
    folder: CheckpointFiles,
    named: CheckpointFiles,
}

fn both(files: &[(&str, Vec<u8>)]) -> Both {
    let dir = tempfile::tempdir().expect("a temporary folder");
    for (name, bytes) in files {
        std::fs::write(dir.path().join(name), bytes).expect("a file written");
    }
    let named = files.iter().map(|(name, bytes)| (name.to_string(), Arc::<[u8]>::from(bytes.as_slice())));
    let named = CheckpointFiles::Named(NamedFiles::new(named).expect("each name once"));
    Both { folder: CheckpointFiles::Folder(dir.path().to_path_buf()), named, dir }
}

impl Both {
    /// The weight files of `parts`, the same from the folder and from the named files.
    fn weight_files(&self, parts: ModelParts) -> Vec<String> {
        let folder = weight_files(&self.folder, parts).expect("the folder's weight files");
        let named = weight_files(&self.named, parts).expect("the named files' weight files");
        assert_eq!(folder, named, "a folder and the same files by name differ");
        named
    }

    /// The refusals of `parts` from the folder and from the named files.
    fn refusals(&self, parts: ModelParts) -> (Error, Error) {
        let refused = |files| match weight_files(files, parts) {
            Ok(found) => panic!("{files:?} was not refused: {found:?}"),
            Err(error) => error,
        };
        (refused(&self.folder), refused(&self.named))
    }
}

/// `config.json` of the reference case `name`, and an index placing each of its checkpoint's tensors in the shard
/// `shard_of` names, plus `more` (name, shard) pairs the checkpoint does not have.
fn sharded(name: &str, shard_of: impl Fn(&str) -> &'static str, more: &[(&str, &str)]) -> Both {
    let checkpoint = Checkpoint::open(&case(name).join(SINGLE_FILE)).expect("the case's checkpoint");
    let mut weight_map: HashMap<String, String> =
        checkpoint.names().map(|tensor| (tensor.to_owned(), shard_of(tensor).to_owned())).collect();
    weight_map.extend(more.iter().map(|(tensor, shard)| (tensor.to_string(), shard.to_string())));
    let index = serde_json::json!({ "metadata": { "total_size": 0 }, "weight_map": weight_map });
    let config = std::fs::read(case(name).join(CONFIG_FILE)).expect("the case's config");
    both(&[(CONFIG_FILE, config), (INDEX_FILE, index.to_string().into_bytes())])
}

const DIARIZER_SHARD: &str = "model-00001-of-00004.safetensors";
const FRONT_END_SHARD: &str = "model-00002-of-00004.safetensors";
const ASR_SHARD: &str = "model-00003-of-00004.safetensors";
const LM_SHARD: &str = "model-00004-of-00004.safetensors";

/// A release-like Transcribe checkpoint: the diarizer's tensors in one shard, the front end's window and filter bank
/// in a second, the ASR tower, fusion, projector and word-timestamp head in a third, the language model in a fourth.
fn transcribe() -> Both {
    let shard_of = |tensor: &str| match tensor {
        t if t.starts_with("perception.encoder.diarization_model.") => DIARIZER_SHARD,
        t if t.starts_with("perception.preprocessor.") => FRONT_END_SHARD,
        _ => ASR_SHARD,
    };
    let language_model = [
        ("language_model.model.embed_tokens.weight", LM_SHARD),
        ("language_model.model.layers.0.mlp.up_proj.weight", LM_SHARD),
        ("language_model.lm_head.weight", LM_SHARD),
    ];
    sharded("tiny-release-chunks", shard_of, &language_model)
}

#[test]
fn the_diarizer_of_a_transcribe_checkpoint_reads_only_its_own_shards() {
    let files = transcribe();
    assert_eq!(files.weight_files(ModelParts::Diarizer), [DIARIZER_SHARD, FRONT_END_SHARD]);
    assert_eq!(files.weight_files(ModelParts::Whole), [DIARIZER_SHARD, FRONT_END_SHARD, ASR_SHARD]);
}

#[test]
fn a_diarization_checkpoint_reads_the_shards_of_its_tensors() {
    // The head in a shard of its own; a shard of tensors the model does not read is left alone.
    let shard_of = |tensor: &str| match tensor.starts_with("classifier.") {
        true => "head.safetensors",
        false => "encoder.safetensors",
    };
    let files = sharded("diar-tiny", shard_of, &[("unread.weight", "unread.safetensors")]);
    for parts in [ModelParts::Whole, ModelParts::Diarizer] {
        assert_eq!(files.weight_files(parts), ["encoder.safetensors", "head.safetensors"], "{parts:?}");
    }
}

#[test]
fn without_an_index_the_single_file_is_read() {
    for name in ["tiny-release-chunks", "diar-tiny"] {
        let files = both(&[(CONFIG_FILE, std::fs::read(case(name).join(CONFIG_FILE)).unwrap())]);
        for parts in [ModelParts::Whole, ModelParts::Diarizer] {
            assert_eq!(files.weight_files(parts), [SINGLE_FILE], "{name}, {parts:?}");
        }
    }
}

/// The folder's path of `file` of `files`, as its errors name it.
fn in_folder(files: &Both, file: &str) -> String {
    files.dir.path().join(file).display().to_string()
}

#[test]
fn a_malformed_index_is_refused_naming_it() {
    let config = std::fs::read(case("diar-tiny").join(CONFIG_FILE)).unwrap();
    let files = both(&[(CONFIG_FILE, config.clone()), (INDEX_FILE, b"{ not json".to_vec())]);
    let (folder, named) = files.refusals(ModelParts::Diarizer);
    let Error::Checkpoint(CheckpointError::File { path, .. }) = &folder else { panic!("{folder:?}") };
    assert_eq!(*path, in_folder(&files, INDEX_FILE));
    let Error::Checkpoint(CheckpointError::File { path, .. }) = &named else { panic!("{named:?}") };
    assert_eq!(path, INDEX_FILE);

    // Refused as the load refuses it: a shard path leaving the folder, on every target.
    for outside in
        ["../model.safetensors", "/model.safetensors", "\\\\host\\model.safetensors", "https://example.org/m"]
    {
        let index = format!(r#"{{"weight_map": {{"a": "{}"}}}}"#, outside.replace('\\', "\\\\"));
        let files = both(&[(CONFIG_FILE, config.clone()), (INDEX_FILE, index.into_bytes())]);
        let load = match files.named.checkpoint() {
            Ok(_) => panic!("the checkpoint took shard path `{outside}`"),
            Err(error) => error.to_string(),
        };
        let (_, named) = files.refusals(ModelParts::Diarizer);
        assert_eq!(named.to_string(), load);
        assert!(load.ends_with(&format!("shard path `{outside}` leaves the checkpoint directory")), "{load}");
    }

    // An index of no audio tensor the model knows.
    let index = serde_json::json!({ "weight_map": { "language_model.lm_head.weight": LM_SHARD } }).to_string();
    let files = both(&[(CONFIG_FILE, config), (INDEX_FILE, index.into_bytes())]);
    let (folder, named) = files.refusals(ModelParts::Whole);
    let Error::Checkpoint(CheckpointError::UnknownNames { dir, .. }) = &folder else { panic!("{folder:?}") };
    assert_eq!(Path::new(dir), files.dir.path());
    assert!(matches!(named, Error::Checkpoint(CheckpointError::UnknownNames { .. })), "{named:?}");
}

#[test]
fn a_config_is_read_first_and_refused_naming_it() {
    let index = serde_json::json!({ "weight_map": { "a": "a.safetensors" } }).to_string().into_bytes();
    let files = both(&[(CONFIG_FILE, b"{ not json".to_vec()), (INDEX_FILE, index.clone())]);
    let (folder, named) = files.refusals(ModelParts::Diarizer);
    assert!(matches!(folder, Error::Config(_)), "{folder:?}");
    assert!(folder.to_string().contains(&in_folder(&files, CONFIG_FILE)), "{folder}");
    assert!(matches!(named, Error::Config(_)), "{named:?}");
    assert!(named.to_string().starts_with("parsing config.json: "), "{named}");

    let files = both(&[(INDEX_FILE, index)]);
    let (_, named) = files.refusals(ModelParts::Diarizer);
    assert_eq!(named.to_string(), "reading config.json: not among the files handed over");
}
