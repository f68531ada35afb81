//! The crate's error type: every failure a user can cause, typed and naming what was wrong, and a separate variant
//! for broken internal invariants (bugs).

use std::path::PathBuf;

use crate::audio::AudioError;
use crate::checkpoint::CheckpointError;
use crate::config::ConfigError;
use crate::frontend::FrontendError;

/// Errors of `nemotron-towers`.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// `config.json` cannot be read or describes an invalid model.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The weights cannot be read or do not match the config.
    #[error(transparent)]
    Checkpoint(#[from] CheckpointError),
    /// The GPU refused, failed, or lacks a limit the work needs.
    #[error(transparent)]
    Gpu(#[from] gpu_core::GpuError),
    /// The audio cannot be read or used.
    #[error(transparent)]
    Audio(#[from] AudioError),
    /// A model could not be fetched from the Hugging Face Hub or found in its cache.
    #[cfg(feature = "hub")]
    #[error(transparent)]
    Hub(#[from] crate::hub::HubError),
    /// The front end's window or filter bank is unusable.
    #[error(transparent)]
    Frontend(#[from] FrontendError),
    /// Features (from a file or handed over in memory) of the wrong shape or content.
    #[error("{origin}: {problem}")]
    Features {
        /// The file, or `in-memory features`.
        origin: String,
        /// What is wrong with them.
        problem: String,
    },
    /// A transcript, tokenizer or set of logits the word alignment cannot use.
    #[error(transparent)]
    Alignment(#[from] nemotron_postprocess::alignment::AlignmentError),
    /// An output file could not be written.
    #[error("cannot write {}: {reason}", path.display())]
    Output {
        /// The file.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// A call whose arguments do not fit the model or each other (row counts, widths).
    #[error("{0}")]
    Shape(String),
    /// An internal invariant broke: a bug in this crate, not a problem with the input.
    #[error("internal error (please report): {0}")]
    Internal(String),
}

impl Error {
    /// A problem with in-memory features.
    pub(crate) fn features(problem: impl Into<String>) -> Self {
        Error::Features { origin: "in-memory features".into(), problem: problem.into() }
    }
}

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
