//! The crate's error type: every failure a user can cause, typed and naming what was wrong, and a separate variant
//! for broken internal invariants (bugs).

use std::path::PathBuf;
use std::sync::Arc;

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
    /// Samples the model cannot take (empty, too short, not finite).
    #[error(transparent)]
    Samples(#[from] SampleError),
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
    /// An output file could not be written.
    #[error("cannot write {}: {source}", path.display())]
    Output {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// Values handed to a call whose count does not fit the shape it needs.
    #[error("{what}: {found} values, expected {expected}")]
    Length {
        /// The buffer, with the shape it must have.
        what: String,
        /// Values expected.
        expected: usize,
        /// Values given.
        found: usize,
    },
    /// Values handed to a call that are not whole rows of the width it needs.
    #[error("{what}: {found} values are not whole rows of {width}")]
    Width {
        /// The buffer.
        what: &'static str,
        /// The row width.
        width: usize,
        /// Values given.
        found: usize,
    },
    /// A count of frames (valid ones, tokens, projected rows) larger than the frames there are.
    #[error("{what}: {found} of {frames} frames")]
    Frames {
        /// What is counted.
        what: &'static str,
        /// The count given.
        found: usize,
        /// The frames there are.
        frames: usize,
    },
    /// A class index at or past the word-timestamp head's vocabulary.
    #[error("word-timestamp class {class} is not below the head's vocabulary of {vocab}")]
    Class {
        /// The class asked for.
        class: u32,
        /// Classes of the head.
        vocab: usize,
    },
    /// Features handed to a tower without an input projection (it takes embedded rows).
    #[error("this tower has no input projection: it takes embedded rows, not features")]
    NoInputProjection,
    /// [`crate::tower::InputKind::GatheredThenFeatures`] handed to a call that gathers nothing: only the crate's
    /// diarization steps have rows on the GPU to give.
    #[error("Tower::{call} takes every row from the host: rows gathered on the GPU come only with diarization steps")]
    GatheredRows {
        /// The call.
        call: &'static str,
    },
    /// The shared submission of a batched step failed: every streaming session or offline recording in it gets this,
    /// the step's error (a lost device, say) shared as its source, so that each is classified by what happened; a
    /// session's chunks did not run and run on its next push.
    #[error("the batched step this session or recording was part of failed: {0}")]
    BatchedStep(#[source] Arc<Error>),
    /// A streaming mode the diarizer cannot run.
    #[error(
        "streaming mode {mode}: a chunk of {chunk} and a look-ahead of {lookahead} encoder frames (the chunk needs at \
         least one, both together at most {max})"
    )]
    StreamingMode {
        /// The mode's name.
        mode: String,
        /// Encoder frames per chunk.
        chunk: usize,
        /// Encoder frames of look-ahead.
        lookahead: usize,
        /// The most both may be together.
        max: usize,
    },
    /// A model whose mel bins differ from the audio front end's (streaming takes audio only).
    #[error("streaming takes audio, whose front end makes {front_end} mel bins; the model reads {model}")]
    MelBins {
        /// The front end's.
        front_end: usize,
        /// The model's.
        model: usize,
    },
    /// The caller's progress callback cancelled the task ([`crate::Progress`]'s `ControlFlow::Break`) when `stage`
    /// was at step `done` of `steps`: no further step ran.
    #[error("cancelled: {stage} stopped after step {done} of {steps}")]
    Cancelled {
        /// The stage reported (`diarization`, `asr`, `compiling kernels`).
        stage: String,
        /// Steps of the stage done.
        done: usize,
        /// Steps of the stage in all.
        steps: usize,
    },
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

/// 16 kHz samples the model cannot take (`nemotron-postprocess`'s, which the engine's audio readers refuse too).
pub use nemotron_postprocess::samples::SampleError;

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// An error as one sentence, the way the front ends print it (the CLI after `error: `, the browser package as a JS
/// `Error`'s message): its message, then each cause in its chain that the text does not already say.
pub fn error_sentence(error: &(dyn std::error::Error + 'static)) -> String {
    let mut text = error.to_string();
    let mut cause = error.source();
    while let Some(source) = cause {
        let said = source.to_string();
        if !text.contains(&said) {
            text = format!("{text}: {said}");
        }
        cause = source.source();
    }
    text
}
