//! How the CLI fails: a usage error (exit status 2, printed by clap with the usage line) or a runtime error (exit
//! status 1), printed as one `error:` line from `Display`, with each cause its message does not already say. An
//! [`EngineError`] is one or the other by its kind.

use std::fmt;

use nemotron_engine::{EngineError, ErrorKind};

/// A failed command.
pub enum Failure {
    /// The command line asks for something impossible.
    Usage(String),
    /// The work failed.
    Runtime(Box<dyn std::error::Error>),
    /// The work failed, and the message says why.
    Message(String),
}

impl<E: Into<EngineError>> From<E> for Failure {
    fn from(error: E) -> Self {
        let error: EngineError = error.into();
        match error.kind() {
            ErrorKind::Usage => Failure::Usage(Failure::Runtime(Box::new(error)).to_string()),
            _ => Failure::Runtime(Box::new(error)),
        }
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Failure::Usage(message) | Failure::Message(message) => f.write_str(message),
            Failure::Runtime(error) => f.write_str(&nemotron_engine::error_sentence(error.as_ref())),
        }
    }
}
