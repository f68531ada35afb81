//! Known speakers: the profiles of the speaker folder (`--speakers DIR`), each `NAME.safetensors` known by its
//! stem, read at start and kept in step with the folder by `PUT` and `DELETE /v1/speakers/NAME`; and each profile's
//! live sessions primed with its clips, so that a stream forks one instead of running the clips again.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError, RwLock};

use nemotron_engine::{Engine, EngineError, LiveSession, ProfileError, SegmentSettings, SpeakerProfile, StreamingMode};

/// The extension of a profile file.
const EXTENSION: &str = "safetensors";
/// The longest profile name, in characters.
const MAX_NAME_CHARS: usize = 64;
/// Primed sessions a profile keeps (one per streaming mode and segment settings asked for); past it, the oldest goes.
const MAX_PRIMED: usize = 8;

/// Why the speaker folder or one of its profiles cannot be read, written or named.
#[derive(Debug, thiserror::Error)]
pub enum SpeakersError {
    /// The folder cannot be listed.
    #[error("cannot read the speaker folder {}: {source}", dir.display())]
    Folder {
        /// The folder.
        dir: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A name that cannot name a profile file.
    #[error(
        "`{0}` is not a profile name: 1–{MAX_NAME_CHARS} characters of A–Z, a–z, 0–9, `.`, `_` and `-`, not starting \
         with `.`"
    )]
    InvalidName(String),
    /// A file of the folder whose stem is no profile name.
    #[error("speaker profile {}: {source}", path.display())]
    FileName {
        /// The file.
        path: PathBuf,
        /// Why its stem is no profile name.
        source: Box<SpeakersError>,
    },
    /// A profile file that cannot be read (the error names the file).
    #[error(transparent)]
    Read(ProfileError),
    /// A profile that cannot be saved (the source names the file; the message does not, for clients).
    #[error("cannot save speaker profile `{name}` in the speaker folder")]
    Write {
        /// The profile.
        name: String,
        /// Why.
        source: ProfileError,
    },
    /// A profile file that cannot be removed.
    #[error("cannot remove speaker profile `{name}` from the speaker folder")]
    Remove {
        /// The profile.
        name: String,
        /// Why.
        source: std::io::Error,
    },
}

/// Checks that `name` can name a profile file: 1–64 characters of `[A-Za-z0-9._-]`, not starting with `.` (no path
/// separator, no hidden file, nothing a file system reads otherwise).
pub fn check_name(name: &str) -> Result<(), SpeakersError> {
    let allowed = |c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-');
    let fits = (1..=MAX_NAME_CHARS).contains(&name.len()) && name.chars().all(allowed) && !name.starts_with('.');
    fits.then_some(()).ok_or_else(|| SpeakersError::InvalidName(name.to_string()))
}

/// One profile and its primed sessions.
pub struct Known {
    /// The profile.
    pub profile: SpeakerProfile,
    /// Sessions primed with the profile's clips, by mode and settings (a session's settings make its events).
    primed: Mutex<Vec<Primed>>,
}

struct Primed {
    mode: StreamingMode,
    settings: SegmentSettings,
    session: LiveSession,
}

impl Known {
    fn new(profile: SpeakerProfile) -> Self {
        Self { profile, primed: Mutex::new(Vec::new()) }
    }

    /// A live session of `mode` and `settings` with this profile's speakers: a fork of the session primed once for
    /// them (primed here on first use; blocking, call it from a blocking thread). Sessions asking for the same
    /// priming wait for the one that runs it.
    pub fn session(
        &self,
        engine: &Engine,
        mode: StreamingMode,
        settings: &SegmentSettings,
    ) -> Result<LiveSession, EngineError> {
        let mut primed = self.primed.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(found) = primed.iter().find(|p| p.mode == mode && p.settings == *settings) {
            return found.session.fork();
        }
        let session = engine.stream_with_speakers(mode, settings, &self.profile)?;
        let fork = session.fork()?;
        if primed.len() == MAX_PRIMED {
            primed.remove(0);
        }
        primed.push(Primed { mode, settings: settings.clone(), session });
        Ok(fork)
    }
}

/// The speaker folder and its profiles.
pub struct Speakers {
    dir: PathBuf,
    profiles: RwLock<BTreeMap<String, Arc<Known>>>,
    /// Held while the folder changes, so that the folder and the map change together.
    writing: Mutex<()>,
}

impl Speakers {
    /// Reads every `*.safetensors` file of `dir` as a profile named by its stem; any file that is no profile, or
    /// whose stem is no profile name, is an error naming it.
    pub fn load(dir: &Path) -> Result<Self, SpeakersError> {
        let folder = |source| SpeakersError::Folder { dir: dir.to_path_buf(), source };
        let mut profiles = BTreeMap::new();
        for entry in std::fs::read_dir(dir).map_err(folder)? {
            let path = entry.map_err(folder)?.path();
            if path.extension().and_then(|e| e.to_str()) != Some(EXTENSION) {
                continue;
            }
            let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
            if let Err(error) = check_name(&stem) {
                return Err(SpeakersError::FileName { path, source: Box::new(error) });
            }
            let profile = SpeakerProfile::read(&path).map_err(SpeakersError::Read)?;
            profiles.insert(stem, Arc::new(Known::new(profile)));
        }
        Ok(Self { dir: dir.to_path_buf(), profiles: RwLock::new(profiles), writing: Mutex::new(()) })
    }

    /// The folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Profile `name`, when there is one.
    pub fn get(&self, name: &str) -> Option<Arc<Known>> {
        self.profiles.read().unwrap_or_else(PoisonError::into_inner).get(name).cloned()
    }

    /// Every profile's name and its speakers' names, ordered by profile name.
    pub fn list(&self) -> Vec<(String, Vec<String>)> {
        let profiles = self.profiles.read().unwrap_or_else(PoisonError::into_inner);
        profiles.iter().map(|(name, known)| (name.clone(), known.profile.names().map(String::from).collect())).collect()
    }

    /// Writes `profile` as `name` (whole or not at all) and serves it from now on, in place of any profile of that
    /// name and its primed sessions (blocking).
    pub fn put(&self, name: &str, profile: SpeakerProfile) -> Result<(), SpeakersError> {
        check_name(name)?;
        let _writing = self.writing.lock().unwrap_or_else(PoisonError::into_inner);
        profile.write(&self.path(name)).map_err(|source| SpeakersError::Write { name: name.to_string(), source })?;
        self.profiles
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(name.to_string(), Arc::new(Known::new(profile)));
        Ok(())
    }

    /// Removes profile `name`, its file and its primed sessions (blocking); `false` when there is none.
    pub fn delete(&self, name: &str) -> Result<bool, SpeakersError> {
        check_name(name)?;
        let _writing = self.writing.lock().unwrap_or_else(PoisonError::into_inner);
        if self.get(name).is_none() {
            return Ok(false);
        }
        match std::fs::remove_file(self.path(name)) {
            Err(source) if source.kind() != std::io::ErrorKind::NotFound => {
                return Err(SpeakersError::Remove { name: name.to_string(), source });
            }
            _ => {}
        }
        self.profiles.write().unwrap_or_else(PoisonError::into_inner).remove(name);
        Ok(true)
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.join(format!("{name}.{EXTENSION}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn profile_names_are_file_stems_that_stay_in_the_folder() {
        for good in ["team", "Team-2", "a.b_c", "x", &"n".repeat(64)] {
            assert!(check_name(good).is_ok(), "{good}");
        }
        for bad in ["", ".hidden", "..", "a/b", "a\\b", "two words", "é", &"n".repeat(65), "{profile}"] {
            let error = check_name(bad).expect_err(bad);
            assert!(error.to_string().contains(&format!("`{bad}`")), "{error}");
        }
    }
}
