//! The rules of a model loaded by URL (`Diarizer.fromUrl`) and of the model cache (`ModelCache`) that need no
//! browser: the cache modes, when a stored file still is the server's, which revision a
//! Hugging Face Hub URL names, and which stored files a `ModelCache.clear(url)` removes. The browser's side (fetch,
//! Cache Storage) is `model_url` and `model_cache`.

use std::fmt;
use std::str::FromStr;

/// How `Diarizer.fromUrl` uses the cache (its `cache` option; the names are `fetch`'s where they mean the same).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum CacheMode {
    /// A stored file is used once the server confirms it (a `HEAD` request: its `ETag`, size and date); a file not
    /// stored, or changed, is downloaded and stored once the model has loaded.
    #[default]
    Default,
    /// A stored file is used without asking the server (offline); one not stored is downloaded and stored.
    ForceCache,
    /// The cache is neither read nor written.
    NoStore,
}

impl CacheMode {
    /// Every mode, by its name.
    pub const NAMED: [(&'static str, CacheMode); 3] =
        [("default", Self::Default), ("force-cache", Self::ForceCache), ("no-store", Self::NoStore)];
}

/// A `cache` option that names no mode.
#[derive(Debug, PartialEq, Eq)]
pub struct UnknownCacheMode(String);

impl fmt::Display for UnknownCacheMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<_> = CacheMode::NAMED.iter().map(|(name, _)| format!("`{name}`")).collect();
        write!(f, "`{}` is not a cache mode ({})", self.0, names.join(", "))
    }
}

impl std::error::Error for UnknownCacheMode {}

impl FromStr for CacheMode {
    type Err = UnknownCacheMode;

    fn from_str(name: &str) -> Result<Self, Self::Err> {
        let found = Self::NAMED.iter().find(|(known, _)| *known == name);
        found.map(|(_, mode)| *mode).ok_or_else(|| UnknownCacheMode(name.into()))
    }
}

/// What a server says of a file, each as it sent it: what tells a changed file from the one stored.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Validators {
    /// `ETag`.
    pub etag: Option<String>,
    /// `Content-Length`.
    pub length: Option<u64>,
    /// `Last-Modified`.
    pub last_modified: Option<String>,
}

impl Validators {
    /// Whether the server's answer today (`now`) is the file these validators were stored with: every validator
    /// both name is the same (an `ETag` compared weakly: `W/"x"` is `"x"`), and they name at least one in common.
    /// A server that names none, or none of the stored ones, has its file downloaded again.
    pub fn same_file(&self, now: &Validators) -> bool {
        let weak = |etag: &String| etag.trim_start_matches("W/").to_string();
        let compared = [
            both(self.etag.as_ref().map(weak), now.etag.as_ref().map(weak)),
            both(self.length, now.length),
            both(self.last_modified.as_ref(), now.last_modified.as_ref()),
        ];
        compared.iter().all(|same| *same != Some(false)) && compared.contains(&Some(true))
    }
}

/// Whether two values are equal, where both are known.
fn both<T: PartialEq>(stored: Option<T>, now: Option<T>) -> Option<bool> {
    Some(stored? == now?)
}

/// The revision a Hugging Face Hub file URL names: `https://huggingface.co/<owner>/<repo>/resolve/<revision>/<file>`
/// (or `hf.co`, and `datasets/` or `spaces/` before the owner); `None` for any other URL.
pub fn hub_revision(url: &str) -> Option<&str> {
    let rest = url.strip_prefix("https://")?;
    let (host, path) = rest.split_once('/')?;
    if !["huggingface.co", "www.huggingface.co", "hf.co"].contains(&host) {
        return None;
    }
    let path = path.split(['?', '#']).next().unwrap_or_default();
    let parts: Vec<&str> = path.split('/').collect();
    let resolve = match parts.first() {
        Some(&"datasets" | &"spaces") => 3,
        _ => 2,
    };
    match (parts.get(resolve), parts.get(resolve + 1), parts.get(resolve + 2)) {
        (Some(&"resolve"), Some(revision), Some(_file)) if !revision.is_empty() => Some(revision),
        _ => None,
    }
}

/// Whether a Hub revision is a commit (40 hexadecimal digits): its files never change, so a stored copy needs no
/// word from the server. A branch or a tag (`main`, `v1.0`) can move.
pub fn is_commit(revision: &str) -> bool {
    revision.len() == 40 && revision.bytes().all(|b| b.is_ascii_hexdigit())
}

/// Whether `ModelCache.clear(target)` removes the stored file `url`: the file itself, or any file under `target`
/// taken as a folder (with or without its final `/`).
pub fn covers(target: &str, url: &str) -> bool {
    let folder = target.trim_end_matches('/');
    url == target || url.strip_prefix(folder).is_some_and(|rest| rest.starts_with('/'))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn validators(etag: Option<&str>, length: Option<u64>, last_modified: Option<&str>) -> Validators {
        Validators { etag: etag.map(Into::into), length, last_modified: last_modified.map(Into::into) }
    }

    #[test]
    fn cache_modes_by_name() {
        for (name, mode) in CacheMode::NAMED {
            assert_eq!(name.parse::<CacheMode>(), Ok(mode));
        }
        assert_eq!(CacheMode::default(), CacheMode::Default);
        let refused = "reload".parse::<CacheMode>().unwrap_err().to_string();
        assert_eq!(refused, "`reload` is not a cache mode (`default`, `force-cache`, `no-store`)");
    }

    #[test]
    fn a_file_is_the_same_while_every_validator_both_name_is() {
        let stored = validators(Some("\"abc\""), Some(10), Some("Mon, 01 Dec 2026 10:00:00 GMT"));
        assert!(stored.same_file(&stored));
        assert!(stored.same_file(&validators(Some("W/\"abc\""), Some(10), None)));
        assert!(stored.same_file(&validators(None, Some(10), None)), "a server without ETags: the size decides");
        assert!(!stored.same_file(&validators(Some("\"abd\""), Some(10), None)), "a new ETag");
        assert!(!stored.same_file(&validators(Some("\"abc\""), Some(11), None)), "a new size");
        assert!(!stored.same_file(&validators(None, Some(10), Some("Tue, 02 Dec 2026 10:00:00 GMT"))), "a new date");
        assert!(!stored.same_file(&Validators::default()), "nothing to compare");
        assert!(!validators(Some("\"abc\""), None, None).same_file(&validators(None, Some(10), None)));
    }

    #[test]
    fn hub_urls_name_their_revision() {
        let commit = "0123456789abcdef0123456789abcdef01234567";
        let url = format!("https://huggingface.co/nvidia/diar/resolve/{commit}/model.safetensors");
        assert_eq!(hub_revision(&url), Some(commit));
        assert!(is_commit(commit));
        assert_eq!(
            hub_revision("https://huggingface.co/nvidia/diar/resolve/main/config.json?download=1"),
            Some("main")
        );
        assert_eq!(hub_revision("https://hf.co/datasets/org/set/resolve/v1.0/sub/a.json"), Some("v1.0"));
        assert!(!is_commit("main") && !is_commit(&commit.replace('0', "g")));
        for other in [
            "https://huggingface.co/nvidia/diar/blob/main/config.json",
            "https://huggingface.co/nvidia/diar/resolve/main",
            "http://huggingface.co/nvidia/diar/resolve/main/config.json",
            "https://example.org/nvidia/diar/resolve/main/config.json",
            "https://huggingface.co.example.org/nvidia/diar/resolve/main/config.json",
        ] {
            assert_eq!(hub_revision(other), None, "{other}");
        }
    }

    #[test]
    fn clearing_a_folder_clears_the_files_under_it() {
        let file = "https://example.org/models/diar/config.json";
        for target in [file, "https://example.org/models/diar", "https://example.org/models/diar/"] {
            assert!(covers(target, file), "{target}");
        }
        for target in ["https://example.org/models/dia", "https://example.org/models/diar/model.safetensors"] {
            assert!(!covers(target, file), "{target}");
        }
    }
}
