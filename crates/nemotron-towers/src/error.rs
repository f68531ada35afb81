//! The crate's error type: every failure a user can cause, typed and naming what was wrong.

use crate::audio::AudioError;
use crate::checkpoint::CheckpointError;
use crate::config::ConfigError;
use crate::frontend::FrontendError;

/// Errors of `nemotron-towers`.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error(transparent)]
    Checkpoint(#[from] CheckpointError),
    #[error(transparent)]
    Gpu(#[from] gpu_core::GpuError),
    #[error(transparent)]
    Audio(#[from] AudioError),
    #[error(transparent)]
    Frontend(#[from] FrontendError),
    /// Input data of the wrong size or content (names the input and the rule it broke).
    #[error("invalid input: {0}")]
    Input(String),
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
