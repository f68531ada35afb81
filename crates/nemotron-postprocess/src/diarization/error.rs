//! What can go wrong reading diarization files and settings.

/// Errors of the diarization tools: RTTM, UEM and post-processing files, settings out of range, scoring inputs that
/// do not fit together. Each names the file and, where there is one, the line.
#[derive(Debug, thiserror::Error)]
pub enum DiarizationError {
    /// One line of an RTTM or UEM file is malformed.
    #[error("{file}, line {line}: {problem}")]
    Line {
        /// The file (as the caller named it).
        file: String,
        /// 1-based line number.
        line: usize,
        /// What is wrong, with the offending text.
        problem: String,
    },
    /// A file that cannot be read, or is malformed as a whole.
    #[error("{file}: {problem}")]
    File {
        /// The file (as the caller named it).
        file: String,
        /// What is wrong.
        problem: String,
    },
    /// A file that does not exist.
    #[error("{file}: {problem}")]
    NotFound {
        /// The file (as the caller named it).
        file: String,
        /// The system's words for it.
        problem: String,
    },
    /// A post-processing setting out of its range.
    #[error("{0}")]
    Setting(String),
    /// A segment setting out of its range, or two settings that exclude each other
    /// ([`super::SegmentSettings`]).
    #[error("{field}: {problem}")]
    Field {
        /// The field of [`super::SegmentSettings`] (the CLI's flag without `--`, `-` as `_`).
        field: &'static str,
        /// What is wrong with it.
        problem: String,
    },
    /// Segment settings a front end handed over that cannot be read ([`super::SegmentSettings::from_fields`]): a
    /// name it does not have, or a value of the wrong type.
    #[error("{0}")]
    Unreadable(String),
    /// Scoring inputs that do not fit together (a file the UEM does not cover).
    #[error("{0}")]
    Scoring(String),
}

impl DiarizationError {
    pub(crate) fn line(file: &str, line: usize, problem: impl Into<String>) -> Self {
        DiarizationError::Line { file: file.to_string(), line, problem: problem.into() }
    }

    pub(crate) fn file(file: &str, problem: impl Into<String>) -> Self {
        DiarizationError::File { file: file.to_string(), problem: problem.into() }
    }
}

/// Reads a text file, naming it when it cannot.
pub(crate) fn read_text(path: &std::path::Path) -> Result<String, DiarizationError> {
    let file = path.display().to_string();
    std::fs::read_to_string(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => DiarizationError::NotFound { file, problem: e.to_string() },
        _ => DiarizationError::file(&file, e.to_string()),
    })
}
