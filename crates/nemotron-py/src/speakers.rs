//! Known speakers from Python: [`Speakers`] is the engine's [`SpeakerProfile`] (the file `nemotron-audio enroll`
//! writes and `diarize --speakers` reads), made by `Model.enroll` or read back with `Speakers.load`; `diarize`,
//! `diarize_many` and `stream` take it as `speakers=` and name the enrolled speakers as the CLI does.

use std::path::PathBuf;

use nemotron_engine::{EngineError, Input, SpeakerProfile};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyMapping};

use crate::audio::Audio;
use crate::errors::{bad_argument, detached, to_python};

/// Named voices: a clip of each enrolled speaker, in enrollment order. `Model.enroll` makes one; `save` writes the
/// file `nemotron-audio enroll --out` writes, which `load` and the CLI's `--speakers` read.
#[pyclass(frozen, module = "nemotron_audio")]
pub struct Speakers {
    profile: SpeakerProfile,
    /// Each name's slot in the enrolling model's offline run (enrollment order); unknown for a loaded profile.
    slots: Option<Vec<usize>>,
}

impl Speakers {
    pub fn new(profile: SpeakerProfile, slots: Option<Vec<usize>>) -> Self {
        Self { profile, slots }
    }

    pub fn profile(&self) -> &SpeakerProfile {
        &self.profile
    }
}

/// The clips of `Model.enroll`'s mapping `{name: audio}`, read out of their Python objects (with the GIL), in the
/// mapping's order; each audio argument is named `speakers['NAME']` in errors.
pub fn clip_arguments(speakers: &Bound<'_, PyAny>, sample_rate: Option<u32>) -> PyResult<Vec<(String, Audio)>> {
    let Ok(mapping) = speakers.cast::<PyMapping>() else {
        return Err(PyTypeError::new_err(format!(
            "speakers: expected a dict of names to audio, got {}",
            speakers.get_type().name()?
        )));
    };
    let mut clips = Vec::new();
    for item in mapping.items()?.try_iter()? {
        let (name, audio): (Bound<'_, PyAny>, Bound<'_, PyAny>) = item?.extract()?;
        let Ok(name) = name.extract::<String>() else {
            return Err(PyTypeError::new_err(format!("speakers: a name is a str, got {}", name.get_type().name()?)));
        };
        let argument = format!("speakers[{name:?}]");
        clips.push((name, Audio::extract(&argument, &audio, sample_rate)?));
    }
    Ok(clips)
}

/// Decodes the clips into 16 kHz mono samples, as the CLI's `enroll` reads its files (run without the GIL).
pub fn read_clips(clips: Vec<(String, Audio)>) -> PyResult<Vec<(String, Vec<f32>)>> {
    clips
        .into_iter()
        .map(|(name, audio)| {
            let argument = format!("speakers[{name:?}]");
            match audio.read(&argument)? {
                Input::Samples(samples) => Ok((name, samples)),
                Input::Features(_) => Err(bad_argument(&argument, "a clip is audio, not a features file")),
            }
        })
        .collect()
}

/// A profile error as the exception of its kind (a missing file: `FileNotFoundError`; a damaged one: `ValueError`).
fn profile_error(error: nemotron_engine::ProfileError) -> PyErr {
    to_python(&EngineError::from(error))
}

#[pymethods]
impl Speakers {
    /// Reads a profile file (`nemotron-audio enroll --out`'s, or `save`'s).
    #[staticmethod]
    fn load(py: Python<'_>, path: PathBuf) -> PyResult<Self> {
        let profile = detached(py, || SpeakerProfile::read(&path).map_err(profile_error))?;
        Ok(Self::new(profile, None))
    }

    /// A profile from a file's bytes (`to_bytes`'s, or a profile file read into memory).
    #[staticmethod]
    fn from_bytes(data: &[u8]) -> PyResult<Self> {
        let profile = SpeakerProfile::from_bytes(data, "bytes").map_err(profile_error)?;
        Ok(Self::new(profile, None))
    }

    /// Writes the profile to `path` (safetensors; whole or not at all), as `nemotron-audio enroll --out` does.
    fn save(&self, py: Python<'_>, path: PathBuf) -> PyResult<()> {
        detached(py, || self.profile.write(&path).map_err(profile_error))
    }

    /// The profile file's bytes.
    fn to_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let bytes = self.profile.to_bytes().map_err(profile_error)?;
        Ok(PyBytes::new(py, &bytes))
    }

    /// The speakers' names, in enrollment order.
    #[getter]
    fn names(&self) -> Vec<String> {
        self.profile.names().map(str::to_owned).collect()
    }

    /// Each name's slot (`spk<slot>`) in the enrolling model's offline run, in enrollment order, as `nemotron-audio
    /// enroll` prints them; `None` for a loaded profile (the slots are a model's, the file holds only the clips).
    #[getter]
    fn slots(&self) -> Option<Vec<usize>> {
        self.slots.clone()
    }

    fn __len__(&self) -> usize {
        self.profile.len()
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        Ok(format!("Speakers({})", self.names().into_pyobject(py)?.repr()?))
    }
}
