//! What the package refuses, each error one sentence ([`WebError::sentence`]): the message of a rejected promise's
//! JS `Error`, the CLI's sentence for the same problem.

use nemotron_postprocess::diarization::DiarizationError;

/// Errors of the browser package.
#[derive(Debug, thiserror::Error)]
pub enum WebError {
    /// The model, checkpoint, GPU or input failed in the model crate.
    #[error(transparent)]
    Towers(#[from] nemotron_towers::Error),
    /// A segment setting out of its range, or a post-processing YAML text that cannot be used.
    #[error(transparent)]
    Segments(#[from] DiarizationError),
    /// A file handed over that cannot be used as a checkpoint's.
    #[error("{name}: {problem}")]
    File {
        /// The file's name, as handed over.
        name: String,
        /// What is wrong with it.
        problem: String,
    },
    /// Options that are not an object of the known fields with values of their types.
    #[error("options: {0}")]
    Options(String),
    /// A live session used after its end.
    #[error("this stream has ended: start another with `stream()`")]
    Ended,
}

impl WebError {
    /// The error as one sentence, as the CLI prints it after `error: `.
    pub fn sentence(&self) -> String {
        nemotron_towers::error_sentence(self)
    }
}
