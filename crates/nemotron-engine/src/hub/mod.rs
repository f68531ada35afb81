//! Models by Hugging Face Hub id (`owner/name`, optionally `@revision`), fetched through the standard Hugging Face
//! cache (`models--owner--name/{blobs,snapshots/<commit>,refs/<revision>}`, shared with Python's `huggingface_hub`);
//! cargo feature `hub`.
//!
//! Only what the audio module reads is fetched: `config.json`, then `model.safetensors.index.json` (or
//! `model.safetensors` when the checkpoint is one file), then only the shards that hold the tensors the model reads.
//! Which shards those are is the model's business: the caller says, from `config.json` and the index
//! ([`crate::fetch`] asks `nemotron_towers::weight_files`), so this module knows nothing of the model. A
//! Transcribe checkpoint's language-model shards — tens of gigabytes — are never requested.
//!
//! Settings are a typed [`HubOptions`]; this module reads no environment variable
//! ([`EngineOptions::from_env`](crate::EngineOptions::from_env) fills them from `HF_*` for the programs that want
//! them).

#![forbid(unsafe_code)]

mod error;
mod fetch;

use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;

pub use error::{FetchError, HubError};
pub use fetch::fetch_audio_model;

/// The public Hub.
pub const DEFAULT_ENDPOINT: &str = "https://huggingface.co";

/// Where and how models are fetched.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HubOptions {
    /// The Hub's address, without a trailing `/` (default [`DEFAULT_ENDPOINT`]).
    pub endpoint: String,
    /// The cache folder holding `models--owner--name/` (default `~/.cache/huggingface/hub`).
    pub cache_dir: PathBuf,
    /// A user access token, sent as `Authorization: Bearer …` (gated and private repositories).
    pub token: Option<String>,
    /// Use only the cache; never touch the network.
    pub offline: bool,
}

impl Default for HubOptions {
    /// `huggingface_hub`'s defaults without its variables: the public Hub, the cache `~/.cache/huggingface/hub` (the
    /// home folder as the OS gives it; the current folder where it gives none), no token, online.
    fn default() -> Self {
        let home = std::env::home_dir().unwrap_or_default();
        Self {
            endpoint: DEFAULT_ENDPOINT.to_owned(),
            cache_dir: home.join(".cache").join("huggingface").join("hub"),
            token: None,
            offline: false,
        }
    }
}

/// A model repository on the Hub and a revision of it: `owner/name` or `owner/name@revision` (a branch, tag or
/// commit hash; default `main`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RepoId {
    /// `owner/name`.
    pub repo: String,
    /// Branch, tag or commit.
    pub revision: String,
}

impl FromStr for RepoId {
    type Err = HubError;

    fn from_str(text: &str) -> Result<Self, HubError> {
        let bad = |reason: &str| HubError::BadId { text: text.to_owned(), reason: reason.to_owned() };
        let (repo, revision) = match text.split_once('@') {
            Some((repo, revision)) if !revision.is_empty() => (repo, revision),
            Some(_) => return Err(bad("nothing follows `@`")),
            None => (text, "main"),
        };
        let parts: Vec<&str> = repo.split('/').collect();
        let [owner, name] = parts.as_slice() else {
            return Err(bad("a Hub id is `owner/name`, with one `/`"));
        };
        let allowed = |part: &str| {
            !part.is_empty()
                && !part.starts_with(['.', '-'])
                && !part.contains("..")
                && part.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        };
        if !allowed(owner) || !allowed(name) {
            return Err(bad("owner and name are letters, digits, `-`, `_` and `.`"));
        }
        if revision.contains("..") || revision.starts_with('/') || revision.chars().any(char::is_whitespace) {
            return Err(bad("not a usable revision"));
        }
        Ok(Self { repo: repo.to_owned(), revision: revision.to_owned() })
    }
}

impl fmt::Display for RepoId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.revision.as_str() {
            "main" => f.write_str(&self.repo),
            revision => write!(f, "{}@{revision}", self.repo),
        }
    }
}
