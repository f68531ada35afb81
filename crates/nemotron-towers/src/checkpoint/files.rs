//! Where a checkpoint's files are read from, and the one rule that picks them: `config.json` first, then the weights
//! — `model.safetensors.index.json` with the shards it names when the index is there, else `model.safetensors`. A
//! folder on disk ([`CheckpointFiles::Folder`], what `Model::load` opens) and files handed over by name
//! ([`CheckpointFiles::Named`]: what a browser has, the files of a folder its user picked or fetched) go through this
//! one rule, so both take and refuse the same checkpoints for the same reason, naming the same file (a folder's
//! errors say `DIR/config.json`, the named files' `config.json`).

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::{Checkpoint, CheckpointError, INDEX_FILE, SINGLE_FILE, ShardSource, file_error};
use crate::config::{ConfigError, ModelConfig};

/// The config's file name.
pub const CONFIG_FILE: &str = "config.json";

/// What names a checkpoint of named files in errors about the whole of it (no weights, missing tensors): the files
/// have no folder.
const HANDED_OVER: &str = "the files handed over";

/// A checkpoint's files.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CheckpointFiles {
    /// A checkpoint folder; shards are opened (memory-mapped on native targets) when first read.
    Folder(PathBuf),
    /// Files handed over in memory by name, without a folder; shards the index names but were not handed over are an
    /// error when read, as missing files are in a folder.
    Named(NamedFiles),
}

/// Files handed over by name (e.g. by a browser, from a folder its user picked), each name once, each file's bytes
/// held once (shared with the checkpoint that reads them).
#[derive(Clone, PartialEq, Eq)]
pub struct NamedFiles {
    files: Vec<(String, Arc<[u8]>)>,
}

impl NamedFiles {
    /// The files `(name, bytes)`; a name given twice is refused.
    pub fn new(files: impl IntoIterator<Item = (String, Arc<[u8]>)>) -> Result<Self, CheckpointError> {
        let mut named: Vec<(String, Arc<[u8]>)> = Vec::new();
        for (name, bytes) in files {
            if named.iter().any(|(taken, _)| *taken == name) {
                return Err(file_error(Path::new(&name), "handed over twice"));
            }
            named.push((name, bytes));
        }
        Ok(Self { files: named })
    }

    /// The bytes of file `name`, when it was handed over.
    pub fn get(&self, name: &str) -> Option<&Arc<[u8]>> {
        self.files.iter().find(|(file, _)| file == name).map(|(_, bytes)| bytes)
    }
}

impl fmt::Debug for NamedFiles {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.files.iter().map(|(name, bytes)| (name, format!("{} bytes", bytes.len())))).finish()
    }
}

impl CheckpointFiles {
    /// Reads and validates `config.json`.
    pub fn config(&self) -> Result<ModelConfig, ConfigError> {
        let path = self.path(CONFIG_FILE);
        let text =
            self.text(CONFIG_FILE).map_err(|source| ConfigError::Io { path: path.display().to_string(), source })?;
        ModelConfig::from_json_at(&text, &path)
    }

    /// The weights: the index and the shards it names when the index is there, else `model.safetensors`
    /// ([`CheckpointError::NoWeights`] when neither is).
    pub fn checkpoint(&self) -> Result<Checkpoint, CheckpointError> {
        if let Some(index) = self.index()? {
            return Ok(index);
        }
        let single = self.path(SINGLE_FILE);
        let no_weights = || CheckpointError::NoWeights { dir: self.label().display().to_string() };
        match self {
            CheckpointFiles::Folder(dir) if single.is_file() => Checkpoint::single(dir, &single),
            CheckpointFiles::Folder(_) => Err(no_weights()),
            CheckpointFiles::Named(named) => match named.get(SINGLE_FILE) {
                Some(bytes) => Checkpoint::shared(self.label(), single, bytes.clone()),
                None => Err(no_weights()),
            },
        }
    }

    /// The sharded checkpoint of the index, when there is one: its shards are read on first use, so none is read
    /// here, and those nobody reads need not be there.
    pub(crate) fn index(&self) -> Result<Option<Checkpoint>, CheckpointError> {
        if !self.contains(INDEX_FILE) {
            return Ok(None);
        }
        let index = self.text(INDEX_FILE).map_err(|e| file_error(&self.path(INDEX_FILE), e.to_string()))?;
        let source = match self {
            CheckpointFiles::Folder(_) => ShardSource::Disk,
            CheckpointFiles::Named(named) => ShardSource::Named(named.clone()),
        };
        Checkpoint::indexed(self.label(), &index, |file| self.path(file), source).map(Some)
    }

    /// What names the checkpoint in errors about the whole of it.
    fn label(&self) -> &Path {
        match self {
            CheckpointFiles::Folder(dir) => dir,
            CheckpointFiles::Named(_) => Path::new(HANDED_OVER),
        }
    }

    /// File `name`, as errors name it.
    fn path(&self, name: &str) -> PathBuf {
        match self {
            CheckpointFiles::Folder(dir) => dir.join(name),
            CheckpointFiles::Named(_) => PathBuf::from(name),
        }
    }

    /// Whether file `name` is there.
    fn contains(&self, name: &str) -> bool {
        match self {
            CheckpointFiles::Folder(dir) => dir.join(name).is_file(),
            CheckpointFiles::Named(named) => named.get(name).is_some(),
        }
    }

    /// The text of file `name`.
    fn text(&self, name: &str) -> io::Result<String> {
        match self {
            CheckpointFiles::Folder(dir) => std::fs::read_to_string(dir.join(name)),
            CheckpointFiles::Named(named) => {
                let bytes = named.get(name).ok_or_else(|| {
                    io::Error::new(io::ErrorKind::NotFound, "not among the files handed over".to_string())
                })?;
                String::from_utf8(bytes.to_vec()).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))
            }
        }
    }
}
