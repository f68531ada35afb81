//! Engine errors as Python exceptions, and the guard every call into the engine runs under: the GIL released, a
//! panic caught and reported as an exception (never unwinding into the interpreter).

use std::panic::{AssertUnwindSafe, catch_unwind};

use nemotron_engine::{EngineError, ErrorKind, error_sentence};
use pyo3::exceptions::{PyFileNotFoundError, PyOSError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::{PyErr, Python, create_exception};

create_exception!(
    nemotron_audio,
    NemotronError,
    PyRuntimeError,
    "A run failed for a reason other than its arguments: the GPU, or a bug (the base of GpuError and InternalError)."
);
create_exception!(
    nemotron_audio,
    GpuError,
    NemotronError,
    "The GPU refused or failed: no adapter, out of memory, a lost device, a kernel that could not be built."
);
create_exception!(
    nemotron_audio,
    InternalError,
    NemotronError,
    "A bug: an invariant of the library broke (please report it with the message)."
);

/// The exception of an engine error, its message the library's: `FileNotFoundError` for a missing file, folder or
/// Hub repository; `ValueError` for bad audio, settings or models; `OSError` for reading and writing;
/// [`GpuError`] and [`InternalError`] (both `RuntimeError`s) for the GPU and for bugs.
pub fn to_python(error: &EngineError) -> PyErr {
    // The CLI's sentence, so the Ray example's output manifest carries its error text.
    exception(error.kind(), error_sentence(error))
}

/// [`to_python`] of an error about one argument: a `ValueError` names it first (`audio: …`).
pub fn argument_error(argument: &str, error: &EngineError) -> PyErr {
    match error.kind() {
        kind @ (ErrorKind::Usage | ErrorKind::BadInput) => {
            exception(kind, format!("{argument}: {}", error_sentence(error)))
        }
        _ => to_python(error),
    }
}

fn exception(kind: ErrorKind, message: String) -> PyErr {
    match kind {
        ErrorKind::Usage | ErrorKind::BadInput => PyValueError::new_err(message),
        ErrorKind::NotFound => PyFileNotFoundError::new_err(message),
        ErrorKind::Io => PyOSError::new_err(message),
        ErrorKind::Gpu => GpuError::new_err(message),
        _ => InternalError::new_err(message),
    }
}

/// A `ValueError` about one argument.
pub fn bad_argument(argument: &str, problem: impl std::fmt::Display) -> PyErr {
    PyValueError::new_err(format!("{argument}: {problem}"))
}

/// Runs `work` with the GIL released (other Python threads run meanwhile); a panic inside becomes an
/// [`InternalError`] instead of unwinding into the interpreter.
pub fn detached<T: Send>(py: Python<'_>, work: impl FnOnce() -> PyResult<T> + Send) -> PyResult<T> {
    py.detach(|| catch_unwind(AssertUnwindSafe(work))).unwrap_or_else(|panic| {
        let message = panic
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "no message".into());
        Err(InternalError::new_err(format!("internal error (a bug, please report it): {message}")))
    })
}

/// Adds the exception classes to the module.
pub fn register(module: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = module.py();
    module.add("NemotronError", py.get_type::<NemotronError>())?;
    module.add("GpuError", py.get_type::<GpuError>())?;
    module.add("InternalError", py.get_type::<InternalError>())?;
    Ok(())
}
