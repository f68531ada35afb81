//! Fetching the audio part of a checkpoint into the Hugging Face cache with `hf-hub`'s synchronous client.

use std::path::{Path, PathBuf};

use hf_hub::api::sync::{Api, ApiBuilder, ApiError};
use hf_hub::{Cache, Repo, RepoType};

use nemotron_postprocess::alignment::TOKENIZER_DIR;
use nemotron_towers::checkpoint::{CONFIG_FILE, INDEX_FILE, SINGLE_FILE};

use super::{FetchError, HubError, HubOptions, RepoId};
use crate::DownloadProgress;
/// The files of the alignment tokenizer (under [`TOKENIZER_DIR`]) that `align` reads, when the repository has them.
const ALIGNMENT_TOKENIZER_FILES: [&str; 2] = ["tokenizer.json", "tokenizer_config.json"];

type Result<T, E = HubError> = std::result::Result<T, E>;

/// Fetches what the audio module of `id` needs into the cache (or finds it there) and returns the snapshot folder
/// holding it, ready for the model's loader: `config.json`, then `model.safetensors.index.json` and the weight files
/// `weight_files` names, or `model.safetensors` when the checkpoint is one file; and the alignment tokenizer
/// (`alignment_tokenizer/tokenizer.json` and its config) when the repository has one.
///
/// `weight_files` is called once the index is there, with the snapshot folder holding `config.json` and the index;
/// it returns the shards the model reads (its error comes back as [`FetchError::Model`]).
///
/// Online, `config.json` and the index are asked for every time (they are small, and say which commit the
/// revision is at now); shards already in that commit's snapshot are not fetched again. When the Hub cannot be
/// reached, the cached snapshot of the revision is used (with a warning), as `huggingface_hub` does. Offline
/// ([`HubOptions::offline`]), only the cache is read.
pub fn fetch_audio_model<E>(
    id: &RepoId,
    options: &HubOptions,
    weight_files: impl FnOnce(&Path) -> Result<Vec<String>, E>,
    progress: DownloadProgress<'_>,
) -> Result<PathBuf, FetchError<E>> {
    let hub = Fetcher::new(id, options)?;
    let config_path = hub.file(CONFIG_FILE, None, progress)?;
    let snapshot = config_path.parent().map(Path::to_path_buf).unwrap_or_default();
    let changed = || HubError::Changed { repo: id.repo.clone(), revision: id.revision.clone() };
    let weights = match hub.file(INDEX_FILE, None, progress) {
        // The shards are read beside the index and the config, so all three must be one commit's.
        Ok(index) if index.parent() != Some(snapshot.as_path()) => return Err(changed().into()),
        Ok(index) => {
            let mut shards = Vec::new();
            for shard in weight_files(&snapshot).map_err(FetchError::Model)? {
                shards.push(hub.file(&shard, Some(&snapshot), progress)?);
            }
            log::info!("{id}: {} of the checkpoint's shards hold the tensors the model reads", shards.len());
            [vec![index], shards].concat()
        }
        // No index (or none cached while the Hub is out of reach): a checkpoint of one file.
        Err(HubError::FileNotFound { .. } | HubError::NotCached { .. } | HubError::Unreachable { .. }) => {
            vec![hub.file(SINGLE_FILE, Some(&snapshot), progress)?]
        }
        Err(e) => return Err(e.into()),
    };
    if weights.iter().any(|path| path.parent() != Some(snapshot.as_path())) {
        return Err(changed().into());
    }
    for file in ALIGNMENT_TOKENIZER_FILES {
        let file = format!("{TOKENIZER_DIR}/{file}");
        match hub.file(&file, Some(&snapshot), progress) {
            Ok(_) => {}
            // Optional: only `align` reads it, and says so when it is missing.
            Err(HubError::FileNotFound { .. } | HubError::NotCached { .. } | HubError::Unreachable { .. }) => {
                log::info!("{id} has no {file}; word alignment will not be available");
            }
            Err(e) => return Err(e.into()),
        }
    }
    Ok(snapshot)
}

/// One repository revision, through the cache and (online) the Hub.
struct Fetcher<'a> {
    id: &'a RepoId,
    options: &'a HubOptions,
    /// `None` offline.
    api: Option<Api>,
    /// `<cache>/models--owner--name`.
    repo_dir: PathBuf,
    /// The Hub was found out of reach (warned once).
    unreachable: std::cell::Cell<bool>,
}

impl<'a> Fetcher<'a> {
    fn new(id: &'a RepoId, options: &'a HubOptions) -> Result<Self, HubError> {
        let cache_dir = std::path::absolute(&options.cache_dir).map_err(|e| cache_error(&options.cache_dir, e))?;
        let repo = Repo::with_revision(id.repo.clone(), RepoType::Model, id.revision.clone());
        let repo_dir = cache_dir.join(repo.folder_name());
        let api = match options.offline {
            true => None,
            false => Some(
                ApiBuilder::from_cache(Cache::new(cache_dir))
                    .with_endpoint(options.endpoint.clone())
                    .with_token(options.token.clone())
                    .with_progress(false)
                    .build()
                    .map_err(|e| HubError::Protocol {
                        endpoint: options.endpoint.clone(),
                        file: String::new(),
                        message: e.to_string(),
                    })?,
            ),
        };
        Ok(Self { id, options, api, repo_dir, unreachable: Default::default() })
    }

    /// The cached path of `file`, fetching it first when online, unless `snapshot` already holds it.
    fn file(&self, file: &str, snapshot: Option<&Path>, progress: DownloadProgress<'_>) -> Result<PathBuf> {
        if let Some(path) = snapshot.map(|s| s.join(file)).filter(|p| p.exists()) {
            return Ok(path);
        }
        let Some(api) = &self.api else {
            return self.cached(file).ok_or_else(|| self.not_cached(file));
        };
        let repo = Repo::with_revision(self.id.repo.clone(), RepoType::Model, self.id.revision.clone());
        let reporter = Reporter { progress, file: file.to_owned(), size: 0, done: 0 };
        match api.repo(repo).download_with_progress(file, reporter) {
            Ok(path) => Ok(path),
            Err(error) => match self.classify(file, error) {
                Err(reason) => match self.cached(file) {
                    Some(path) => {
                        if !self.unreachable.replace(true) {
                            log::warn!("cannot reach {} ({reason}); using the cache", self.options.endpoint);
                        }
                        Ok(path)
                    }
                    None => Err(HubError::Unreachable {
                        endpoint: self.options.endpoint.clone(),
                        reason,
                        repo: self.id.repo.clone(),
                        revision: self.id.revision.clone(),
                        file: file.to_owned(),
                        cache: self.options.cache_dir.clone(),
                    }),
                },
                Ok(error) => Err(error),
            },
        }
    }

    /// `file` in the cached snapshot of the revision: `refs/<revision>` names the commit (a commit hash names
    /// itself).
    fn cached(&self, file: &str) -> Option<PathBuf> {
        let revision = &self.id.revision;
        let commit = match std::fs::read_to_string(self.repo_dir.join("refs").join(revision)) {
            Ok(commit) => commit.trim().to_owned(),
            Err(_) if revision.len() == 40 && revision.chars().all(|c| c.is_ascii_hexdigit()) => revision.clone(),
            Err(_) => return None,
        };
        Some(self.repo_dir.join("snapshots").join(commit).join(file)).filter(|p| p.exists())
    }

    fn not_cached(&self, file: &str) -> HubError {
        HubError::NotCached {
            repo: self.id.repo.clone(),
            revision: self.id.revision.clone(),
            file: file.to_owned(),
            cache: self.options.cache_dir.clone(),
        }
    }

    /// The error `hf-hub` gave for `file` as a [`HubError`], or `Err(reason)` when the Hub was not reached.
    fn classify(&self, file: &str, error: ApiError) -> Result<HubError, String> {
        let (repo, revision, endpoint) =
            (self.id.repo.clone(), self.id.revision.clone(), self.options.endpoint.clone());
        let protocol =
            |message: String| HubError::Protocol { endpoint: endpoint.clone(), file: file.to_owned(), message };
        let request = match error {
            ApiError::RequestError(request) => *request,
            ApiError::IoError(e) => return Ok(cache_error(&self.repo_dir, e)),
            ApiError::LockAcquisition(path) => {
                return Ok(HubError::Cache { path, message: "another process is downloading this file".into() });
            }
            other => return Ok(protocol(other.to_string())),
        };
        let (status, response) = match request {
            ureq::Error::Transport(transport) => return Err(transport.to_string()),
            ureq::Error::Status(status, response) => (status, response),
        };
        Ok(match (status, response.header("x-error-code")) {
            (_, Some("RepoNotFound")) => HubError::RepoNotFound { repo, endpoint },
            (_, Some("RevisionNotFound")) => HubError::RevisionNotFound { repo, revision, endpoint },
            (_, Some("EntryNotFound")) | (404, None) => {
                HubError::FileNotFound { repo, revision, file: file.to_owned(), endpoint }
            }
            (401 | 403, _) => HubError::Refused { repo, status },
            _ => HubError::Status {
                url: response.get_url().to_owned(),
                status,
                reason: response.status_text().to_owned(),
            },
        })
    }
}

fn cache_error(path: &Path, error: std::io::Error) -> HubError {
    HubError::Cache { path: path.to_path_buf(), message: error.to_string() }
}

/// `hf-hub`'s progress calls, passed on as (file, bytes done, bytes in all).
struct Reporter<'a> {
    progress: DownloadProgress<'a>,
    file: String,
    size: u64,
    done: u64,
}

impl hf_hub::api::Progress for Reporter<'_> {
    fn init(&mut self, size: usize, _: &str) {
        (self.size, self.done) = (size as u64, 0);
        (self.progress)(&self.file, 0, self.size);
    }

    fn update(&mut self, size: usize) {
        self.done += size as u64;
        (self.progress)(&self.file, self.done, self.size);
    }

    fn finish(&mut self) {}
}
