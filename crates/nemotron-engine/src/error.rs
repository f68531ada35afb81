//! What can go wrong at the front door, each error keeping the library's error it came from as its source, and
//! classified ([`EngineError::kind`]) so that each front end answers in its own terms: the CLI's exit status 2 or 1,
//! the server's 4xx or 5xx, Python's `ValueError`, `FileNotFoundError` or `RuntimeError`.

use std::path::PathBuf;

use nemotron_postprocess::alignment::TokenizerError;
use nemotron_postprocess::diarization::DiarizationError;
use nemotron_towers::CheckpointError;

use crate::io::audio::AudioError;
use crate::io::speakers::{ProfileError, SpeakerError};
use crate::known_speakers::EnrollmentError;

/// Errors of `nemotron-engine`.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EngineError {
    /// The model, checkpoint, GPU or input failed in the library.
    #[error(transparent)]
    Towers(#[from] nemotron_towers::Error),
    /// The audio cannot be read or used.
    #[error(transparent)]
    Audio(#[from] AudioError),
    /// A transcript or set of log-probabilities the word alignment cannot use.
    #[error(transparent)]
    Alignment(#[from] nemotron_postprocess::alignment::AlignmentError),
    /// The alignment tokenizer of the checkpoint is missing or unreadable.
    #[error(transparent)]
    Tokenizer(#[from] TokenizerError),
    /// A NeMo post-processing file that cannot be found, read or used, or segment settings a front end handed over
    /// that cannot be read (an unknown name, a value of the wrong type: a usage error).
    #[error(transparent)]
    Segments(DiarizationError),
    /// A segment setting out of its range, or two settings that exclude each other (a segment setting refused by
    /// [`crate::SegmentSettings`] becomes this: a usage error, whose field front ends name).
    #[error("{field}: {problem}")]
    Setting {
        /// The field of [`crate::SegmentSettings`] (the CLI's flag without `--`, `-` as `_`).
        field: &'static str,
        /// What is wrong with it.
        problem: String,
    },
    /// A number of recordings to diarize side by side ([`crate::batch_limits`]) below 1.
    #[error("{recordings}: at least 1 recording")]
    BatchSize {
        /// The number asked for.
        recordings: i64,
    },
    /// A model could not be fetched from the Hugging Face Hub or found in its cache.
    #[cfg(feature = "hub")]
    #[error(transparent)]
    Hub(#[from] crate::hub::HubError),
    /// `--model TEXT` names neither an existing file or folder nor a Hub id.
    #[error("{text}: no such file or folder, and {reason}")]
    NoSuchModel {
        /// The text given.
        text: String,
        /// Why it is not a Hub id (or, without the `hub` feature, that Hub ids are not available).
        reason: String,
    },
    /// The Hub has no such repository, and no folder of that name exists either.
    #[cfg(feature = "hub")]
    #[error("{source}; nor is there a folder {text}")]
    NoSuchRepository {
        /// The id as given.
        text: String,
        /// The Hub's answer.
        source: crate::hub::HubError,
    },
    /// The task needs the Transcribe model and the model loaded is a diarizer alone (a diarization checkpoint, or a
    /// Transcribe checkpoint loaded for its diarizer).
    #[error("the model loaded is a diarizer alone; `{task}` needs a whole Transcribe checkpoint{needs}")]
    NeedsTranscribe {
        /// `encode` or `align`.
        task: &'static str,
        /// What else the task needs, or what to try instead.
        needs: &'static str,
    },
    /// An output file (or a folder for outputs) cannot be written.
    #[error("cannot write {}: {source}", path.display())]
    Write {
        /// The final path (never a temporary one).
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A folder for outputs cannot be created or written into.
    #[error("cannot write into {}: {source}", dir.display())]
    WriteInto {
        /// The folder.
        dir: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The same path is named for two outputs.
    #[error("{} is named as two outputs", path.display())]
    DuplicateOutput {
        /// The path named twice.
        path: PathBuf,
    },
    /// An environment variable holds a value it may not.
    #[error(transparent)]
    Environment(#[from] crate::environment::UnknownSetting),
    /// Enrolled speakers that cannot be named in the recording.
    #[error(transparent)]
    Enrollment(#[from] crate::known_speakers::EnrollmentError),
    /// A speaker profile file that cannot be read or written.
    #[error(transparent)]
    Profile(#[from] ProfileError),
    /// Clips and names that make no profile (a clip under 1 s, a name that breaks the rules).
    #[error(transparent)]
    Speakers(#[from] SpeakerError),
    /// The alignment cannot be serialised (a bug: every field is plain data).
    #[error("cannot serialise the alignment: {0}")]
    Serialise(#[source] serde_json::Error),
}

/// A refused segment setting is [`EngineError::Setting`]; any other diarization error is [`EngineError::Segments`].
impl From<DiarizationError> for EngineError {
    fn from(error: DiarizationError) -> Self {
        match error {
            DiarizationError::Field { field, problem } => EngineError::Setting { field, problem },
            other => EngineError::Segments(other),
        }
    }
}

/// A checkpoint that cannot be read (e.g. files handed over twice by one name).
impl From<CheckpointError> for EngineError {
    fn from(error: CheckpointError) -> Self {
        EngineError::Towers(error.into())
    }
}

/// A model configuration that cannot be read or used (`bench --config`, [`crate::Engine::random`]'s).
impl From<nemotron_towers::ConfigError> for EngineError {
    fn from(error: nemotron_towers::ConfigError) -> Self {
        EngineError::Towers(error.into())
    }
}

/// What kind of failure an [`EngineError`] is, for front ends that answer by kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The request asks for something impossible (settings out of range, a channel the audio lacks, two outputs on
    /// one path): the CLI's usage error (exit status 2), an HTTP 400.
    Usage,
    /// The input or the model is unusable (a damaged file, a wrong checkpoint, a transcript that cannot be
    /// aligned): the CLI's exit status 1, an HTTP 422.
    BadInput,
    /// A file, folder or Hub repository does not exist.
    NotFound,
    /// The GPU refused or failed.
    Gpu,
    /// Reading or writing failed (disk, permissions, network).
    Io,
    /// A bug: an invariant of the library broke.
    Internal,
    /// The caller cancelled the task: its progress callback ([`crate::Progress`]) returned `ControlFlow::Break`.
    Cancelled,
}

impl EngineError {
    /// The kind of failure.
    pub fn kind(&self) -> ErrorKind {
        match self {
            EngineError::Towers(error) => towers_kind(error),
            EngineError::Audio(error) => audio_kind(error),
            #[cfg(feature = "hub")]
            EngineError::Hub(error) => hub_kind(error),
            EngineError::Tokenizer(TokenizerError::Missing { .. }) => ErrorKind::NotFound,
            EngineError::Segments(DiarizationError::Unreadable(_)) => ErrorKind::Usage,
            EngineError::Segments(DiarizationError::NotFound { .. }) => ErrorKind::NotFound,
            EngineError::Alignment(_) | EngineError::Tokenizer(_) | EngineError::Segments(_) => ErrorKind::BadInput,
            EngineError::Setting { .. }
            | EngineError::BatchSize { .. }
            | EngineError::DuplicateOutput { .. }
            | EngineError::Environment(_) => ErrorKind::Usage,
            EngineError::NoSuchModel { .. } => ErrorKind::NotFound,
            #[cfg(feature = "hub")]
            EngineError::NoSuchRepository { .. } => ErrorKind::NotFound,
            EngineError::NeedsTranscribe { .. } => ErrorKind::BadInput,
            EngineError::Write { .. } | EngineError::WriteInto { .. } => ErrorKind::Io,
            EngineError::Enrollment(EnrollmentError::TooMany { .. } | EnrollmentError::Features) => ErrorKind::Usage,
            EngineError::Enrollment(_) => ErrorKind::BadInput,
            EngineError::Profile(ProfileError::Read { source, .. })
                if source.kind() == std::io::ErrorKind::NotFound =>
            {
                ErrorKind::NotFound
            }
            EngineError::Profile(ProfileError::Read { .. } | ProfileError::Write { .. }) => ErrorKind::Io,
            EngineError::Profile(_) => ErrorKind::BadInput,
            EngineError::Speakers(SpeakerError::ClipTooShort { .. } | SpeakerError::NotFinite { .. }) => {
                ErrorKind::BadInput
            }
            EngineError::Speakers(_) => ErrorKind::Usage,
            EngineError::Serialise(_) => ErrorKind::Internal,
        }
    }

    /// `encode` or `align` was given a diarizer alone.
    pub(crate) fn needs_transcribe(task: &'static str) -> Self {
        let needs = match task {
            "align" => " with the word-timestamp head",
            _ => " (try `diarize`)",
        };
        EngineError::NeedsTranscribe { task, needs }
    }
}

fn audio_kind(error: &AudioError) -> ErrorKind {
    match error {
        AudioError::NoSuchChannel { .. } => ErrorKind::Usage,
        AudioError::Read { source, .. } if source.kind() == std::io::ErrorKind::NotFound => ErrorKind::NotFound,
        AudioError::Read { .. } => ErrorKind::Io,
        _ => ErrorKind::BadInput,
    }
}

fn towers_kind(error: &nemotron_towers::Error) -> ErrorKind {
    use nemotron_towers::Error;
    match error {
        // Each recording of a failed batched step failed for the step's reason: a lost device is the GPU's fault,
        // not the recordings' input.
        Error::BatchedStep(source) => towers_kind(source),
        Error::Gpu(_) => ErrorKind::Gpu,
        Error::Checkpoint(CheckpointError::NoWeights { .. }) => ErrorKind::NotFound,
        Error::Output { .. } => ErrorKind::Io,
        Error::Internal(_) => ErrorKind::Internal,
        Error::Cancelled { .. } => ErrorKind::Cancelled,
        _ => ErrorKind::BadInput,
    }
}

#[cfg(feature = "hub")]
fn hub_kind(error: &crate::hub::HubError) -> ErrorKind {
    use crate::hub::HubError;
    match error {
        HubError::BadId { .. } => ErrorKind::Usage,
        HubError::RepoNotFound { .. } | HubError::RevisionNotFound { .. } | HubError::FileNotFound { .. } => {
            ErrorKind::NotFound
        }
        _ => ErrorKind::Io,
    }
}
