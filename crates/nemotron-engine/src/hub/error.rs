//! What can go wrong fetching a model, each naming the repository, file, server or cache folder.

use std::path::PathBuf;

/// Errors of [`fetch_audio_model`](super::fetch_audio_model) that come from the Hub or the cache.
#[derive(Debug, thiserror::Error)]
pub enum HubError {
    /// Text that is not `owner/name[@revision]`.
    #[error("`{text}` is not a Hub model id: {reason}")]
    BadId {
        /// The text given.
        text: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The Hub knows no such repository (or it is private and no token grants access).
    #[error(
        "repository {repo} was not found on {endpoint} (a private repository needs a token: set HF_TOKEN or run \
         `huggingface-cli login`)"
    )]
    RepoNotFound {
        /// `owner/name`.
        repo: String,
        /// The Hub asked.
        endpoint: String,
    },
    /// The repository has no such branch, tag or commit.
    #[error("repository {repo} has no revision `{revision}` on {endpoint}")]
    RevisionNotFound {
        /// `owner/name`.
        repo: String,
        /// The revision asked for.
        revision: String,
        /// The Hub asked.
        endpoint: String,
    },
    /// The repository has no such file at that revision.
    #[error("{file} is not in {repo} at revision `{revision}` on {endpoint}")]
    FileNotFound {
        /// `owner/name`.
        repo: String,
        /// The revision asked for.
        revision: String,
        /// The file's path in the repository.
        file: String,
        /// The Hub asked.
        endpoint: String,
    },
    /// The repository needs an accepted licence or a token with access.
    #[error(
        "{repo} refused access (HTTP {status}): accept its terms on the Hub and set HF_TOKEN to a token with access"
    )]
    Refused {
        /// `owner/name`.
        repo: String,
        /// 401 or 403.
        status: u16,
    },
    /// Any other HTTP error status.
    #[error("{url} answered HTTP {status} {reason}")]
    Status {
        /// The URL asked.
        url: String,
        /// The status code.
        status: u16,
        /// The status text.
        reason: String,
    },
    /// The Hub could not be reached, and the cache does not hold the file.
    #[error(
        "cannot reach {endpoint} ({reason}), and {file} of {repo}@{revision} is not in the cache at {cache}; \
         connect, or fetch it ahead with `nemotron-audio download` where there is network"
    )]
    Unreachable {
        /// The Hub asked.
        endpoint: String,
        /// Why the connection failed.
        reason: String,
        /// `owner/name`.
        repo: String,
        /// The revision asked for.
        revision: String,
        /// The file wanted.
        file: String,
        /// The cache folder searched.
        cache: PathBuf,
    },
    /// Offline (`HF_HUB_OFFLINE`), and the cache does not hold the file.
    #[error(
        "{file} of {repo}@{revision} is not in the cache at {cache}, and the Hub is not asked while offline \
         (HF_HUB_OFFLINE is set); fetch it ahead with `nemotron-audio download` where there is network"
    )]
    NotCached {
        /// `owner/name`.
        repo: String,
        /// The revision asked for.
        revision: String,
        /// The file wanted.
        file: String,
        /// The cache folder searched.
        cache: PathBuf,
    },
    /// The server's answer lacks what the Hub protocol promises (e.g. `HF_ENDPOINT` names another kind of server).
    #[error("{endpoint} did not answer as a Hugging Face Hub does for {file}: {message}")]
    Protocol {
        /// The server asked.
        endpoint: String,
        /// The file asked for.
        file: String,
        /// What was wrong.
        message: String,
    },
    /// The repository changed while its files were fetched (they come from different commits).
    #[error("{repo}@{revision} changed while its files were fetched; run again")]
    Changed {
        /// `owner/name`.
        repo: String,
        /// The revision asked for.
        revision: String,
    },
    /// Reading or writing the cache failed.
    #[error("Hub cache at {path}: {message}")]
    Cache {
        /// The file or folder.
        path: PathBuf,
        /// What failed.
        message: String,
    },
}

/// Errors of [`fetch_audio_model`](super::fetch_audio_model): the Hub's, or the model's (`E`, from the caller's list of
/// the weight files the model reads, e.g. a `config.json` or an index it cannot use).
#[derive(Debug, thiserror::Error)]
pub enum FetchError<E> {
    /// The Hub or the cache failed.
    #[error(transparent)]
    Hub(#[from] HubError),
    /// The caller could not say which weight files the model reads.
    #[error(transparent)]
    Model(E),
}
