//! A checkpoint handed over as named files, as a page gets them from the user or from `fetch`: `config.json` with
//! `model.safetensors`, or with `model.safetensors.index.json` and the shards it names (only the shards holding
//! audio tensors need be handed over). The files have no folder: errors name them as handed over, the CLI's
//! sentence for `--model DIR` without `DIR/`.

use std::path::Path;
use std::sync::Arc;

use nemotron_towers::{Checkpoint, ModelConfig};

use crate::error::WebError;

/// The config's file name.
pub const CONFIG: &str = "config.json";
/// A single-file checkpoint's weights.
pub const SINGLE: &str = "model.safetensors";
/// A sharded checkpoint's index.
pub const INDEX: &str = "model.safetensors.index.json";

/// One file handed over: its name (as the index names a shard) and its bytes, held once in memory.
pub struct NamedFile {
    /// The file name, without a folder.
    pub name: String,
    /// The file's bytes.
    pub bytes: Arc<[u8]>,
}

/// The config and the checkpoint of `files`. The config is read first, as `nemotron-audio --model DIR` reads it,
/// so that a checkpoint with two problems is refused for the same one.
pub fn model_files(files: Vec<NamedFile>) -> Result<(ModelConfig, Checkpoint), WebError> {
    let mut config = None;
    let mut index = None;
    let mut single = None;
    let mut shards = Vec::new();
    for file in files {
        if files_named(&config, &index, &single, &shards, &file.name) {
            return Err(WebError::File { name: file.name, problem: "handed over twice".into() });
        }
        match file.name.as_str() {
            CONFIG => config = Some(file.bytes),
            INDEX => index = Some(file.bytes),
            SINGLE => single = Some(file.bytes),
            _ => shards.push((file.name, file.bytes)),
        }
    }
    let Some(config) = config else {
        return Err(WebError::File { name: CONFIG.into(), problem: "not among the files handed over".into() });
    };
    let config = ModelConfig::from_json(&text(CONFIG, &config)?).map_err(nemotron_towers::Error::from)?;
    let checkpoint = match (index, single) {
        (Some(index), _) => Checkpoint::from_shard_bytes(Path::new(""), &text(INDEX, &index)?, shards),
        (None, Some(single)) if shards.is_empty() => Checkpoint::from_shared_bytes(SINGLE, single),
        (None, Some(_)) => {
            let problem = format!("`{}` is a shard without {INDEX}", shards[0].0);
            return Err(WebError::File { name: shards.swap_remove(0).0, problem });
        }
        (None, None) => {
            let problem = format!("no weights: hand over {SINGLE}, or {INDEX} and its shards");
            return Err(WebError::File { name: CONFIG.into(), problem });
        }
    };
    Ok((config, checkpoint.map_err(nemotron_towers::Error::from)?))
}

/// Whether a file of this name was handed over already.
fn files_named(
    config: &Option<Arc<[u8]>>,
    index: &Option<Arc<[u8]>>,
    single: &Option<Arc<[u8]>>,
    shards: &[(String, Arc<[u8]>)],
    name: &str,
) -> bool {
    match name {
        CONFIG => config.is_some(),
        INDEX => index.is_some(),
        SINGLE => single.is_some(),
        _ => shards.iter().any(|(shard, _)| shard == name),
    }
}

/// A text file's contents.
fn text(name: &str, bytes: &[u8]) -> Result<String, WebError> {
    String::from_utf8(bytes.to_vec())
        .map_err(|e| WebError::File { name: name.into(), problem: format!("not UTF-8 text: {e}") })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(name: &str, bytes: &[u8]) -> NamedFile {
        NamedFile { name: name.into(), bytes: bytes.into() }
    }

    fn refusal(files: Vec<NamedFile>) -> String {
        match model_files(files) {
            Err(error) => error.sentence(),
            Ok(_) => panic!("accepted"),
        }
    }

    #[test]
    fn a_missing_config_or_missing_weights_are_named() {
        assert_eq!(refusal(vec![file(SINGLE, b"")]), "config.json: not among the files handed over");
        let config = nemotron_towers::demo::CONFIG.as_bytes();
        let refused = refusal(vec![file(CONFIG, config)]);
        assert_eq!(
            refused,
            "config.json: no weights: hand over model.safetensors, or model.safetensors.index.json and its shards"
        );
    }

    #[test]
    fn a_file_handed_over_twice_is_refused() {
        assert_eq!(refusal(vec![file(CONFIG, b"{}"), file(CONFIG, b"{}")]), "config.json: handed over twice");
    }

    #[test]
    fn a_config_that_is_not_json_is_refused_before_the_weights_are_read() {
        let refused = refusal(vec![file(CONFIG, b"not JSON"), file(SINGLE, b"no safetensors either")]);
        assert!(refused.starts_with("parsing config.json: expected"), "{refused}");
    }

    #[test]
    fn truncated_weights_name_the_file() {
        let config = nemotron_towers::demo::CONFIG.as_bytes();
        let refused = refusal(vec![file(CONFIG, config), file(SINGLE, &nemotron_towers::demo::WEIGHTS[..100])]);
        assert!(refused.starts_with("model.safetensors: not a safetensors file"), "{refused}");
    }

    #[test]
    fn an_index_names_the_shards_handed_over() {
        let config = nemotron_towers::demo::CONFIG.as_bytes();
        let index = br#"{"weight_map": {"a": "model-00001-of-00001.safetensors"}}"#;
        let refused = refusal(vec![file(CONFIG, config), file(INDEX, index), file("other.safetensors", b"")]);
        assert_eq!(refused, "model.safetensors.index.json: names no shard `other.safetensors`");
    }
}
