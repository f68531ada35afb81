//! What the tasks return to Python: [`Diarization`] (segments, speaker tensors, the CLI's segment files) and
//! [`Alignment`] (words, the CLI's JSON and subtitles), with their small value types [`Segment`] and [`Word`].

use nemotron_engine::{Aligned, Diarized, SegmentFormat, write_named_segments};
use numpy::{PyArray1, PyArrayMethods};
use pyo3::exceptions::PyImportError;
use pyo3::prelude::*;
use pyo3::types::{IntoPyDict, PyBytes};

use crate::errors::to_python;

/// A float32 array of `shape` holding a copy of `values`.
pub fn array<'py>(py: Python<'py>, values: &[f32], shape: &[usize]) -> PyResult<Bound<'py, PyAny>> {
    Ok(PyArray1::from_slice(py, values).reshape(shape)?.into_any())
}

/// One speaker's turn: seconds `[start, end)`, the speaker's slot (`spk<speaker>` in RTTM) and, for an enrolled
/// speaker, their name. Unpacks as the tuple `start, end, speaker`.
#[pyclass(frozen, eq, get_all, module = "nemotron_audio")]
#[derive(Clone, PartialEq)]
pub struct Segment {
    /// Start, seconds.
    pub start: f64,
    /// End, seconds (exclusive).
    pub end: f64,
    /// The speaker's slot (the model's output column, in order of arrival).
    pub speaker: usize,
    /// The enrolled speaker's name (`speakers=`); `None` for a slot no one enrolled.
    pub name: Option<String>,
}

impl Segment {
    /// The engine's segment, with the name of its slot among `names` (one per slot; empty without known speakers).
    pub fn named(s: &nemotron_engine::Segment, names: &[Option<String>]) -> Self {
        let name = names.get(s.speaker).cloned().flatten();
        Self { start: s.start, end: s.end, speaker: s.speaker, name }
    }
}

#[pymethods]
impl Segment {
    #[new]
    #[pyo3(signature = (start, end, speaker, name=None))]
    fn new(start: f64, end: f64, speaker: usize, name: Option<String>) -> Self {
        Self { start, end, speaker, name }
    }

    fn __repr__(&self) -> String {
        let name = self.name.as_ref().map_or(String::new(), |name| format!(", name={name:?}"));
        format!("Segment(start={}, end={}, speaker={}{name})", self.start, self.end, self.speaker)
    }

    fn __iter__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        (self.start, self.end, self.speaker).into_pyobject(py)?.try_iter().map(Bound::into_any)
    }

    /// Seconds.
    #[getter]
    fn duration(&self) -> f64 {
        self.end - self.start
    }
}

/// Who spoke when in one recording.
#[pyclass(frozen, module = "nemotron_audio")]
pub struct Diarization {
    segments: Vec<nemotron_engine::Segment>,
    diarized: Diarized,
    uri: String,
    seconds: f64,
}

impl Diarization {
    pub fn new(segments: Vec<nemotron_engine::Segment>, diarized: Diarized, uri: String, seconds: f64) -> Self {
        Self { segments, diarized, uri, seconds }
    }

    /// The segments as Python values, the enrolled speakers named.
    pub fn segment_list(&self) -> Vec<Segment> {
        self.segments.iter().map(|s| Segment::named(s, self.diarized.names())).collect()
    }

    /// `[T, speakers]` probabilities as an array.
    pub fn probabilities_array<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let [_, (_, shape, values)] = self.diarized.speaker_tensors();
        array(py, values, &shape)
    }

    /// The engine's result (for `align(diarization=…)`).
    pub fn diarized(&self) -> &Diarized {
        &self.diarized
    }

    /// Seconds of audio diarized.
    pub fn seconds(&self) -> f64 {
        self.seconds
    }

    /// The CLI's text of the segments, with the enrolled speakers' names as `diarize --speakers` writes them.
    fn text(&self, format: SegmentFormat, uri: Option<&str>) -> String {
        write_named_segments(&self.segments, format, uri.unwrap_or(&self.uri), self.diarized.names())
    }
}

#[pymethods]
impl Diarization {
    /// The segments, ordered by start then speaker.
    #[getter]
    fn segments(&self) -> Vec<Segment> {
        self.segment_list()
    }

    /// `[T, speakers]` float32 speaker probabilities at the encoder rate (80 ms rows).
    #[getter]
    fn probabilities<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.probabilities_array(py)
    }

    /// `[F, speakers]` float32 speaker logits at 10 ms.
    #[getter]
    fn logits<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let [(_, shape, values), _] = self.diarized.speaker_tensors();
        array(py, values, &shape)
    }

    /// The speakers that have segments, in increasing order.
    #[getter]
    fn speakers(&self) -> Vec<usize> {
        let mut speakers: Vec<usize> = self.segments.iter().map(|s| s.speaker).collect();
        speakers.sort_unstable();
        speakers.dedup();
        speakers
    }

    /// Each slot's enrolled name (`None` for a slot no one enrolled); empty without `speakers=`.
    #[getter]
    fn names(&self) -> Vec<Option<String>> {
        self.diarized.names().to_vec()
    }

    /// Seconds of audio diarized.
    #[getter]
    fn duration(&self) -> f64 {
        self.seconds
    }

    /// The RTTM file id used when none is given: the input file's name without its extension, else `audio`.
    #[getter]
    fn uri(&self) -> &str {
        &self.uri
    }

    /// RTTM text, as `diarize --rttm` writes it (an enrolled speaker's name in the speaker field).
    #[pyo3(signature = (uri=None))]
    fn to_rttm(&self, uri: Option<&str>) -> String {
        self.text(SegmentFormat::Rttm, uri)
    }

    /// JSON text (`[{"Start", "End", "Speaker"}]`, and `"Name"` for enrolled speakers), as `diarize --format json`
    /// writes it.
    fn to_json(&self) -> String {
        self.text(SegmentFormat::Json, None)
    }

    /// CSV text (`start,end,duration,speaker`, and a `name` column with enrolled speakers), as `diarize --format
    /// csv` writes it.
    fn to_csv(&self) -> String {
        self.text(SegmentFormat::Csv, None)
    }

    /// The `diarize --out` file's bytes: `speaker_logits` and `speaker_probabilities` (safetensors, f32).
    fn to_safetensors<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let bytes = self.diarized.speaker_tensors_safetensors().map_err(|e| to_python(&e))?;
        Ok(PyBytes::new(py, &bytes))
    }

    /// A `pyannote.core.Annotation` of the segments (labels as in RTTM: an enrolled speaker's name, else `spk<k>`);
    /// needs pyannote.core.
    #[pyo3(signature = (uri=None))]
    fn to_annotation<'py>(&self, py: Python<'py>, uri: Option<&str>) -> PyResult<Bound<'py, PyAny>> {
        let core = py.import("pyannote.core").map_err(|_| {
            PyImportError::new_err(
                "to_annotation() needs pyannote.core: `pip install pyannote.core` (or `pip install nemotron-audio[pyannote]`)",
            )
        })?;
        let annotation =
            core.getattr("Annotation")?.call((), Some(&[("uri", uri.unwrap_or(&self.uri))].into_py_dict(py)?))?;
        let segment = core.getattr("Segment")?;
        for (track, s) in self.segment_list().into_iter().enumerate() {
            let key = (segment.call1((s.start, s.end))?, track);
            annotation.set_item(key, s.name.unwrap_or_else(|| format!("spk{}", s.speaker)))?;
        }
        Ok(annotation)
    }

    fn __len__(&self) -> usize {
        self.segments.len()
    }

    fn __repr__(&self) -> String {
        format!(
            "Diarization(uri={:?}, duration={:.2}, segments={}, speakers={:?})",
            self.uri,
            self.seconds,
            self.segments.len(),
            self.speakers()
        )
    }
}

/// One aligned word: its text, seconds `[start, end)`, and its speaker tag (`<spk:N>`; `None` before the first tag).
#[pyclass(frozen, eq, get_all, module = "nemotron_audio")]
#[derive(Clone, PartialEq)]
pub struct Word {
    /// As written in the transcript.
    pub text: String,
    /// Start, seconds.
    pub start: f64,
    /// End, seconds.
    pub end: f64,
    /// The speaker tag it belongs to.
    pub speaker: Option<u64>,
}

#[pymethods]
impl Word {
    fn __repr__(&self) -> String {
        let speaker = self.speaker.map_or("None".to_string(), |s| s.to_string());
        format!("Word(text={:?}, start={}, end={}, speaker={speaker})", self.text, self.start, self.end)
    }
}

/// Speaker-attributed word timestamps of a transcript.
#[pyclass(frozen, module = "nemotron_audio")]
pub struct Alignment {
    aligned: Aligned,
}

impl Alignment {
    pub fn new(aligned: Aligned) -> Self {
        Self { aligned }
    }
}

#[pymethods]
impl Alignment {
    /// The words, sorted by time.
    #[getter]
    fn words(&self) -> Vec<Word> {
        let word = |w: &nemotron_engine::WordChunk| Word {
            text: w.text.clone(),
            start: w.timestamp.0,
            end: w.timestamp.1,
            speaker: w.speaker,
        };
        self.aligned.words().iter().map(word).collect()
    }

    /// Speaker tags whose words could not be placed.
    #[getter]
    fn failed_speakers(&self) -> Vec<Option<u64>> {
        self.aligned.alignment().failed_speakers.clone()
    }

    /// The words, the diarization and the tag-to-speaker map, as `align --out` writes them (JSON text).
    fn to_json(&self) -> PyResult<String> {
        self.aligned.to_json().map_err(|e| to_python(&e))
    }

    /// SubRip subtitles, as `align --srt` writes them.
    fn to_srt(&self) -> String {
        self.aligned.to_srt()
    }

    /// WebVTT subtitles, as `align --vtt` writes them.
    fn to_vtt(&self) -> String {
        self.aligned.to_vtt()
    }

    fn __len__(&self) -> usize {
        self.aligned.words().len()
    }

    fn __repr__(&self) -> String {
        format!("Alignment(words={})", self.aligned.words().len())
    }
}
