//! `Model`: one loaded model on one GPU, shared by any number of Python threads. Every task releases the GIL while
//! it decodes and runs on the GPU, and calls the engine functions the CLI calls, so its outputs are the CLI's.

use std::ops::ControlFlow;
use std::path::PathBuf;

use nemotron_engine::{
    AlignRequest, BatchLimits, Engine, EngineError, EngineOptions, Input, ModelParts, ModelSource, Precision,
    SegmentRule, SegmentSettings, SpeakerProfile, StreamingMode, batch_limits,
};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString};

use crate::audio::Audio;
use crate::errors::{argument_error, bad_argument, detached, to_python};
use crate::results::{Alignment, Diarization, array};
use crate::settings;
use crate::speakers::{Speakers, clip_arguments, read_clips};
use crate::stream::StreamSession;

/// A model loaded on a GPU: a Transcribe checkpoint (every task) or a standalone diarizer (`diarize`, `stream`).
#[pyclass(frozen, module = "nemotron_audio")]
pub struct Model {
    engine: Engine,
}

/// Where samples go before a task: their rate, checked.
fn rate(sample_rate: Option<i64>) -> PyResult<Option<u32>> {
    sample_rate
        .map(|r| u32::try_from(r).map_err(|_| bad_argument("sample_rate", format!("{r} is not a rate in Hz"))))
        .transpose()
}

/// The RTTM file id of an input: its file's name without the extension, else `audio` (as the CLI names standard
/// input).
fn uri(audio: &Audio) -> String {
    let stem = match audio {
        Audio::Path { path, .. } => path.file_stem().map(|s| s.to_string_lossy().into_owned()),
        Audio::Bytes { name, .. } => {
            std::path::Path::new(name).file_stem().map(|s| s.to_string_lossy().into_owned()).filter(|_| name != "bytes")
        }
        Audio::Pcm { .. } => None,
    };
    stem.unwrap_or_else(|| "audio".into())
}

/// Decodes and diarizes one input (no GIL): its diarization by `segmenter`, after the clips of `speakers`.
fn diarize_one(
    engine: &Engine,
    name: &str,
    audio: Audio,
    segmenter: &SegmentRule,
    speakers: Option<&SpeakerProfile>,
) -> PyResult<Diarization> {
    diarize_each(engine, vec![(name.to_string(), audio)], &BatchLimits::default(), segmenter, speakers)?
        .pop()
        .ok_or_else(|| PyValueError::new_err(format!("{name}: no diarization came back")))
}

/// A Python exception on its way through the engine's batch, which reads the inputs on its own threads: an
/// argument's, or an engine error's.
struct Raised(PyErr);

impl From<EngineError> for Raised {
    fn from(error: EngineError) -> Self {
        Raised(to_python(&error))
    }
}

/// Decodes `inputs` (`(name, audio)`) and diarizes them side by side on the GPU (no GIL; [`Engine::diarize_many`]:
/// up to `limits` at a time, the next ones decoded while the GPU runs): each one's diarization by `segmenter`, as
/// each gets it alone, in order; with `speakers`, each after their clips, the enrolled speakers named. The first
/// failure in order is raised, as soon as the inputs before it are done.
fn diarize_each(
    engine: &Engine,
    inputs: Vec<(String, Audio)>,
    limits: &BatchLimits,
    segmenter: &SegmentRule,
    speakers: Option<&SpeakerProfile>,
) -> PyResult<Vec<Diarization>> {
    let read = |(name, audio): (String, Audio)| -> Result<(Input, (String, f64)), Raised> {
        let uri = uri(&audio);
        let input = audio.read(&name).map_err(Raised)?;
        let seconds = input.seconds();
        Ok((input, (uri, seconds)))
    };
    let mut results: Vec<Option<PyResult<Diarization>>> = inputs.iter().map(|_| None).collect();
    // Inputs before this one are all diarized.
    let mut settled = 0;
    engine
        .diarize_many(inputs, read, limits, speakers, &mut |position, result| {
            let diarization = result.map_err(|Raised(error)| error).map(|(diarized, (uri, seconds))| {
                let segments = diarized.segments_by(segmenter);
                Diarization::new(segments, diarized, uri, seconds)
            });
            results[position] = Some(diarization);
            while matches!(results.get(settled), Some(Some(Ok(_)))) {
                settled += 1;
            }
            match results.get(settled) {
                // The first failure in order: what is raised whatever the others give.
                Some(Some(Err(_))) => ControlFlow::Break(()),
                _ => ControlFlow::Continue(()),
            }
        })
        .map_err(|e| to_python(&e))?;
    results
        .into_iter()
        .enumerate()
        .map(|(i, result)| {
            result.unwrap_or_else(|| Err(PyValueError::new_err(format!("input {i}: no diarization came back"))))
        })
        .collect()
}

impl Model {
    fn load(py: Python<'_>, source: ModelSource, options: EngineOptions) -> PyResult<Self> {
        let engine =
            detached(py, move || Engine::load(&source, &options, &mut |_, _, _| {}).map_err(|e| to_python(&e)))?;
        Ok(Self { engine })
    }

    /// The environment's settings (as the CLI reads them) with `precision` over them; with `diarizer_only`, a
    /// Transcribe checkpoint loads only its diarizer (as the CLI's `diarize` loads it).
    fn options(precision: Option<&str>, diarizer_only: bool) -> PyResult<EngineOptions> {
        let mut options = EngineOptions::from_env().map_err(|e| to_python(&e))?;
        if let Some(text) = precision {
            options.model.matmul.precision =
                text.parse::<Precision>().map_err(|e| bad_argument("precision", e.to_string()))?;
        }
        if diarizer_only {
            options.model.parts = ModelParts::Diarizer;
        }
        Ok(options)
    }
}

#[pymethods]
impl Model {
    /// A checkpoint folder, or a Hugging Face Hub id `owner/name` (only the audio tensors are fetched, into the
    /// cache `huggingface_hub` uses); a folder that exists wins over a Hub id. With `diarizer_only`, a Transcribe
    /// checkpoint loads (and a Hub id fetches) only its diarizer: `diarize` and `stream` run, `encode` and `align`
    /// raise `ValueError`.
    #[staticmethod]
    #[pyo3(signature = (id_or_path, *, revision=None, precision=None, cache_dir=None, offline=false, diarizer_only=false))]
    fn from_pretrained(
        py: Python<'_>,
        id_or_path: &Bound<'_, PyAny>,
        revision: Option<String>,
        precision: Option<String>,
        cache_dir: Option<PathBuf>,
        offline: bool,
        diarizer_only: bool,
    ) -> PyResult<Self> {
        let mut options = Self::options(precision.as_deref(), diarizer_only)?;
        options.hub.offline |= offline;
        if let Some(dir) = cache_dir {
            options.hub.cache_dir = dir;
        }
        let source = if id_or_path.is_instance_of::<PyString>() {
            let text: String = id_or_path.extract()?;
            ModelSource::parse(&text).map_err(|e| argument_error("id_or_path", &e))?
        } else {
            let path: PathBuf = id_or_path.extract()?;
            ModelSource::from_path(&path).map_err(|e| to_python(&e))?
        };
        let source = match (source, revision) {
            (source, None) => source,
            (ModelSource::Hub(mut id), Some(revision)) => {
                id.revision = revision;
                ModelSource::Hub(id)
            }
            (_, Some(_)) => return Err(bad_argument("revision", "a revision applies to Hub ids, not to folders")),
        };
        Self::load(py, source, options)
    }

    /// The built-in demo model: a tiny checkpoint with random weights, compiled in. Its outputs are meaningless; it
    /// shows that everything runs.
    #[staticmethod]
    #[pyo3(signature = (*, precision=None, diarizer_only=false))]
    fn demo(py: Python<'_>, precision: Option<String>, diarizer_only: bool) -> PyResult<Self> {
        Self::load(py, ModelSource::Demo, Self::options(precision.as_deref(), diarizer_only)?)
    }

    /// The demo model on a device it loses, as a driver reset would, at its first step of at least `steps`
    /// recordings or sessions: for the tests of what a lost device raises (not in the stubs).
    #[staticmethod]
    #[pyo3(name = "_demo_losing_device_at_step_of")]
    fn demo_losing_device_at_step_of(py: Python<'_>, steps: usize) -> PyResult<Self> {
        let mut options = Self::options(None, false)?;
        options.model.lose_device_at_step_of = Some(steps);
        Self::load(py, ModelSource::Demo, options)
    }

    /// Where the model came from: `owner/name@commit`, a folder, or the demo's label.
    #[getter]
    fn description(&self) -> &str {
        self.engine.description()
    }

    /// Whether this is the built-in demo model.
    #[getter]
    fn is_demo(&self) -> bool {
        self.engine.is_demo()
    }

    /// Every output tensor of the audio module (float32 arrays by name, as `encode` writes them).
    #[pyo3(signature = (audio, sample_rate=None, word_timestamps=false))]
    fn encode<'py>(
        &self,
        py: Python<'py>,
        audio: &Bound<'py, PyAny>,
        sample_rate: Option<i64>,
        word_timestamps: bool,
    ) -> PyResult<Bound<'py, PyDict>> {
        let audio = Audio::extract("audio", audio, rate(sample_rate)?)?;
        let engine = &self.engine;
        let encoding = detached(py, || {
            let input = audio.read("audio")?;
            engine.encode(input, word_timestamps, &mut |_, _, _| ControlFlow::Continue(())).map_err(|e| to_python(&e))
        })?;
        let tensors = PyDict::new(py);
        for (name, shape, values) in encoding.tensors() {
            tensors.set_item(name, array(py, values, &shape)?)?;
        }
        Ok(tensors)
    }

    /// Who spoke when. The keyword arguments are the CLI's segment flags, by their names (the engine's
    /// `SegmentSettings`; `postprocessing`: a YAML file or a dict of NeMo's parameters). `speakers`: enrolled
    /// speakers (`enroll`, `Speakers.load`), diarized before the recording and named in its segments, as
    /// `diarize --speakers` does.
    #[pyo3(signature = (audio, sample_rate=None, *, speakers=None, **segment_settings))]
    fn diarize(
        &self,
        py: Python<'_>,
        audio: &Bound<'_, PyAny>,
        sample_rate: Option<i64>,
        speakers: Option<Py<Speakers>>,
        segment_settings: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Diarization> {
        let (_, segmenter) = settings::from_kwargs(py, segment_settings)?;
        let audio = Audio::extract("audio", audio, rate(sample_rate)?)?;
        let engine = &self.engine;
        let profile = speakers.as_ref().map(|s| s.get().profile());
        detached(py, || diarize_one(engine, "audio", audio, &segmenter, profile))
    }

    /// Enrolls speakers: `{name: audio}` (each clip the voice of one speaker alone, at least 1 s; any audio
    /// argument `diarize` takes; `sample_rate` for arrays), in the dict's order. Each clip is checked to speak in a
    /// slot of its own in an offline run of the clips, as `nemotron-audio enroll` checks them; a name is 1-64
    /// characters without whitespace.
    #[pyo3(signature = (speakers, sample_rate=None))]
    fn enroll(&self, py: Python<'_>, speakers: &Bound<'_, PyAny>, sample_rate: Option<i64>) -> PyResult<Speakers> {
        let clips = clip_arguments(speakers, rate(sample_rate)?)?;
        let engine = &self.engine;
        let (profile, slots) = detached(py, || engine.enroll(read_clips(clips)?).map_err(|e| to_python(&e)))?;
        Ok(Speakers::new(profile, Some(slots)))
    }

    /// `diarize` of each input, in order (one sample rate for the arrays among them), `batch_size` of them (default
    /// 8) side by side on the GPU, a finished one's place taken by the next at once: each result is the one
    /// `diarize` gives it alone (with `speakers`, each after their clips).
    #[pyo3(signature = (audios, sample_rate=None, batch_size=None, *, speakers=None, **segment_settings))]
    fn diarize_many(
        &self,
        py: Python<'_>,
        audios: &Bound<'_, PyAny>,
        sample_rate: Option<i64>,
        batch_size: Option<i64>,
        speakers: Option<Py<Speakers>>,
        segment_settings: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Vec<Diarization>> {
        let (_, segmenter) = settings::from_kwargs(py, segment_settings)?;
        let sample_rate = rate(sample_rate)?;
        let limits = batch_size.map(batch_limits).transpose().map_err(|e| argument_error("batch_size", &e))?;
        let limits = limits.unwrap_or_default();
        let mut inputs = Vec::new();
        for (i, audio) in audios.try_iter()?.enumerate() {
            inputs.push(Audio::extract(&format!("audios[{i}]"), &audio?, sample_rate)?);
        }
        let engine = &self.engine;
        let profile = speakers.as_ref().map(|s| s.get().profile());
        detached(py, || {
            let named = inputs.into_iter().enumerate().map(|(i, audio)| (format!("audios[{i}]"), audio)).collect();
            diarize_each(engine, named, &limits, &segmenter, profile)
        })
    }

    /// Each word of `transcript` with its start, end and speaker (`<spk:N>` tags open speaker turns). `language`:
    /// `zh` and `ja` align character by character; detected from the script when absent. `diarization`: a
    /// `Diarization` of the same recording (from another diarizer, say) whose speakers replace the model's own.
    #[pyo3(signature = (audio, transcript, *, sample_rate=None, language=None, diarization=None))]
    fn align(
        &self,
        py: Python<'_>,
        audio: &Bound<'_, PyAny>,
        transcript: String,
        sample_rate: Option<i64>,
        language: Option<String>,
        diarization: Option<Py<Diarization>>,
    ) -> PyResult<Alignment> {
        let audio = Audio::extract("audio", audio, rate(sample_rate)?)?;
        let engine = &self.engine;
        let request = AlignRequest { transcript, language };
        let aligned = detached(py, || {
            // Before the audio is decoded: a checkpoint that cannot align fails at once.
            engine.check_word_timestamps("align").map_err(|e| to_python(&e))?;
            let input: Input = audio.read("audio")?;
            let quiet = &mut |_: &str, _: usize, _: usize| ControlFlow::Continue(());
            match &diarization {
                None => engine.align(input, &request, quiet),
                Some(diarization) => {
                    engine.align_with_diarization(input, &request, diarization.get().diarized(), quiet)
                }
            }
            .map_err(|e| to_python(&e))
        })?;
        Ok(Alignment::new(aligned))
    }

    /// A live diarization session; `latency`: `"low"` (1.04 s), `"very-low"` (0.64 s), `"ultra-low"` (0.32 s) (`_`
    /// for `-` too: every name [`StreamingMode`] parses). The keyword arguments are `diarize`'s but `max_speakers`
    /// (known only at the end of a recording); `speakers`: enrolled speakers, whose clips the session hears before
    /// the first push (as `diarize --stream --speakers`), named on the events.
    #[pyo3(signature = (latency="low", *, speakers=None, **segment_settings))]
    fn stream(
        &self,
        py: Python<'_>,
        latency: &str,
        speakers: Option<Py<Speakers>>,
        segment_settings: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<StreamSession> {
        let mode = latency.parse::<StreamingMode>().map_err(|e| PyValueError::new_err(e.to_string()))?;
        let (settings, _): (SegmentSettings, _) = settings::from_kwargs(py, segment_settings)?;
        let engine = &self.engine;
        let profile = speakers.as_ref().map(|s| s.get().profile());
        detached(py, || {
            match profile {
                Some(profile) => engine.stream_with_speakers(mode, &settings, profile),
                None => engine.stream(mode, &settings),
            }
            .map(StreamSession::new)
            .map_err(|e| to_python(&e))
        })
    }

    fn __repr__(&self) -> String {
        format!("Model({:?})", self.engine.description())
    }
}
