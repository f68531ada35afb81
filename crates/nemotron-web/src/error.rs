//! What the package refuses, each error one sentence ([`WebError::sentence`]): the message of a rejected promise's
//! JS `Error`, the CLI's sentence for the same problem.

use nemotron_engine::{EngineError, ErrorKind, error_sentence};

/// Errors of the browser package.
#[derive(Debug, thiserror::Error)]
pub enum WebError {
    /// The engine refused or failed: the checkpoint, a setting, the GPU, the input.
    #[error(transparent)]
    Engine(#[from] EngineError),
    /// An argument that is not what the JS API takes (a file entry without a name, a segment without a start).
    #[error("{name}: {problem}")]
    Argument {
        /// The argument, as the JS API names it.
        name: String,
        /// What is wrong with it.
        problem: String,
    },
    /// Options that are not an object of the known fields with values of their types.
    #[error("options: {0}")]
    Options(String),
    /// A file of a model loaded by URL that could not be fetched or read (`problem`: the HTTP status, the
    /// browser's error).
    #[error("{url}: {problem}")]
    Download {
        /// The file's URL.
        url: String,
        /// What went wrong.
        problem: String,
    },
    /// Checkpoint files larger than the package's WebAssembly memory can hold beside what it holds already.
    #[error(
        "{files}: {bytes} bytes do not fit the package's WebAssembly memory (wasm32: at most 4 GiB in all and under \
         2 GiB per file, less where the browser allows less; {in_use} bytes in use)"
    )]
    Memory {
        /// The files' names.
        files: String,
        /// Their bytes in all.
        bytes: u64,
        /// The bytes of the package's memory before the copy.
        in_use: u64,
    },
    /// A live session used after its end.
    #[error("this stream has ended: start another with `stream()`")]
    Ended,
}

impl WebError {
    /// The error as one sentence, as the CLI prints it after `error: `.
    pub fn sentence(&self) -> String {
        error_sentence(self)
    }

    /// Whether the call was cancelled (its progress callback stopped it): the JS API rejects such a call with its
    /// `AbortSignal`'s reason, as `fetch` does.
    pub fn is_cancelled(&self) -> bool {
        matches!(self, WebError::Engine(error) if error.kind() == ErrorKind::Cancelled)
    }
}
