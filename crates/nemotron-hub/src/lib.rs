//! `nemotron-hub`: models by Hugging Face Hub id (`owner/name`, optionally `@revision`), fetched through the standard Hugging Face
//! cache (`models--owner--name/{blobs,snapshots/<commit>,refs/<revision>}`, shared with Python's `huggingface_hub`).
//!
//! Only what the audio module reads is fetched: `config.json`, then `model.safetensors.index.json` (or
//! `model.safetensors` when the checkpoint is one file), then only the shards that the index places the audio
//! tensors in. Which tensors those are is the model's business: the caller says, from `config.json` and the index
//! (`nemotron-engine` asks `nemotron_towers::audio_tensors`), so this crate knows nothing of the model. A
//! Transcribe checkpoint's language-model shards — tens of gigabytes — are never requested.
//!
//! Settings are a typed [`HubOptions`]; [`HubOptions::from_env`] reads the usual variables for programs that
//! want them (the CLI does).

#![warn(missing_docs)]
#![forbid(unsafe_code)]

mod error;
mod fetch;

use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;

pub use error::{FetchError, HubError};
pub use fetch::{CONFIG_FILE, DownloadProgress, INDEX_FILE, fetch_audio_model};

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
    /// home folder as the OS gives it; the current folder where it gives none), no token, online. Front ends that
    /// honour `HF_*` use [`HubOptions::from_env`].
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

impl HubOptions {
    /// The settings `huggingface_hub` takes from the environment: `HF_ENDPOINT`; the cache `HF_HUB_CACHE`, else
    /// `HF_HOME/hub`, where `HF_HOME` defaults to `$XDG_CACHE_HOME/huggingface`, else `~/.cache/huggingface`;
    /// `HF_HUB_OFFLINE` (`1`, `true`, `yes` or `on`); the token `HF_TOKEN`, else the file `HF_TOKEN_PATH`, else
    /// `HF_HOME/token` (what `huggingface-cli login` writes).
    pub fn from_env() -> Self {
        let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
        let home = var("HF_HOME").map(PathBuf::from).unwrap_or_else(|| {
            let cache = var("XDG_CACHE_HOME")
                .map(PathBuf::from)
                .unwrap_or_else(|| var("HOME").map(PathBuf::from).unwrap_or_default().join(".cache"));
            cache.join("huggingface")
        });
        let cache_dir = var("HF_HUB_CACHE").map(PathBuf::from).unwrap_or_else(|| home.join("hub"));
        let token_file = var("HF_TOKEN_PATH").map(PathBuf::from).unwrap_or_else(|| home.join("token"));
        let token = var("HF_TOKEN")
            .and_then(|t| t.into_string().ok())
            .or_else(|| std::fs::read_to_string(token_file).ok())
            .map(|t| t.trim().to_owned())
            .filter(|t| !t.is_empty());
        let offline = var("HF_HUB_OFFLINE")
            .and_then(|v| v.into_string().ok())
            .is_some_and(|v| matches!(v.to_ascii_lowercase().as_str(), "1" | "true" | "yes" | "on"));
        let endpoint = var("HF_ENDPOINT").and_then(|v| v.into_string().ok()).unwrap_or(DEFAULT_ENDPOINT.to_owned());
        Self { endpoint: endpoint.trim_end_matches('/').to_owned(), cache_dir, token, offline }
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
