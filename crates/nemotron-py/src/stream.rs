//! Live diarization from Python: a [`StreamSession`] takes 16 kHz samples in pieces of any size and returns the
//! segment events they made final, as `diarize --stream` prints them; a context manager.

use std::sync::{Mutex, MutexGuard};

use nemotron_engine::{LiveRecording, LiveSession, SegmentEvent};
use numpy::{PyArrayDyn, PyArrayMethods, PyUntypedArray, PyUntypedArrayMethods};
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;

use crate::errors::{bad_argument, detached, to_python};
use crate::results::{Diarization, Segment, array};

/// What a session holds: running (boxed: a session is large beside the other states), or what its end gave.
enum State {
    Running(Box<LiveSession>),
    Finished(Py<Diarization>),
    Closed,
}

/// A segment starting or ending in a stream: `kind` is `"start"` or `"end"`, `time` its moment (the segment's
/// start, or its end); an end also gives the segment it closes (`start`, `end`; `end` is `None` for a start).
/// `name`: the enrolled speaker's (`speakers=`), `None` for a slot no one enrolled.
#[pyclass(name = "SegmentEvent", frozen, eq, get_all, module = "nemotron_audio")]
#[derive(Clone, PartialEq)]
pub struct Event {
    kind: &'static str,
    speaker: usize,
    name: Option<String>,
    time: f64,
    start: f64,
    end: Option<f64>,
    /// `diarize --stream`'s line.
    json: String,
}

impl Event {
    /// The engine's event, its slot named by `names` (the session's: one per slot, empty without known speakers).
    fn named(event: &SegmentEvent, names: &[Option<String>]) -> Self {
        let (kind, start, end) = match event.segment() {
            Some(segment) => ("end", segment.start, Some(segment.end)),
            None => ("start", event.seconds(), None),
        };
        let (speaker, json) = (event.speaker(), event.json_line_named(names));
        let name = names.get(speaker).cloned().flatten();
        Self { kind, speaker, name, time: event.seconds(), start, end, json }
    }
}

#[pymethods]
impl Event {
    /// The event as `diarize --stream` prints it (one JSON line, without the newline).
    fn to_json(&self) -> String {
        self.json.clone()
    }

    fn __repr__(&self) -> String {
        let name = self.name.as_ref().map_or(String::new(), |name| format!(", name={name:?}"));
        match self.end {
            Some(end) => {
                format!("SegmentEvent(kind='end', speaker={}{name}, start={}, end={end})", self.speaker, self.start)
            }
            None => format!("SegmentEvent(kind='start', speaker={}{name}, time={})", self.speaker, self.time),
        }
    }
}

/// A live diarization session: `push` 16 kHz mono samples as they arrive, `finish` at the end. One thread at a time
/// uses it (calls from several wait for each other); the model it runs on stays shared.
#[pyclass(frozen, module = "nemotron_audio")]
pub struct StreamSession {
    state: Mutex<State>,
}

impl StreamSession {
    pub fn new(session: LiveSession) -> Self {
        Self { state: Mutex::new(State::Running(Box::new(session))) }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic inside a push is reported as an exception; the state it left is still the session's.
        self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// Samples of one push: a 1-D float32, float64 or int16 array (a list of numbers, anything with `__array__`).
fn read_samples(object: &Bound<'_, PyAny>) -> PyResult<Vec<f32>> {
    let array = object.py().import("numpy")?.call_method1("asarray", (object,))?;
    let array = array.cast::<PyUntypedArray>()?;
    if array.ndim() != 1 {
        return Err(bad_argument("samples", format!("shape {:?}: a stream takes 1-D mono samples", array.shape())));
    }
    if let Ok(a) = array.cast::<PyArrayDyn<f32>>() {
        Ok(a.readonly().as_array().iter().copied().collect())
    } else if let Ok(a) = array.cast::<PyArrayDyn<f64>>() {
        Ok(a.readonly().as_array().iter().map(|&x| x as f32).collect())
    } else if let Ok(a) = array.cast::<PyArrayDyn<i16>>() {
        Ok(a.readonly().as_array().iter().map(|&x| f32::from(x) / 32_768.0).collect())
    } else {
        Err(bad_argument("samples", format!("dtype {}: give float32, float64 or int16 samples", array.dtype())))
    }
}

fn events(events: &[SegmentEvent], names: &[Option<String>]) -> Vec<Event> {
    events.iter().map(|event| Event::named(event, names)).collect()
}

#[pymethods]
impl StreamSession {
    /// Feeds 16 kHz mono samples (any number); the events they made final.
    #[pyo3(signature = (samples, sample_rate=16_000))]
    fn push(&self, py: Python<'_>, samples: &Bound<'_, PyAny>, sample_rate: i64) -> PyResult<Vec<Event>> {
        if sample_rate != 16_000 {
            return Err(bad_argument("sample_rate", format!("{sample_rate} Hz: a stream takes 16000 Hz samples")));
        }
        let samples = read_samples(samples)?;
        detached(py, || {
            let mut state = self.lock();
            let State::Running(session) = &mut *state else { return Err(ended()) };
            let pushed = session.push(&samples).map_err(|e| to_python(&e))?;
            // The names are known before the recording's first event, so those of the session after the push name
            // every event it gave (as the CLI prints them).
            Ok(events(&pushed, session.names()))
        })
    }

    /// Ends the stream: the last events. Afterwards `diarization` holds the whole stream's segments and speaker
    /// tensors (what `diarize --stream` writes at its end).
    fn finish(&self, py: Python<'_>) -> PyResult<Vec<Event>> {
        // The lock is taken and given back without the GIL: no thread waits for the GIL while holding it.
        let (seconds, recording) = detached(py, || {
            let mut state = self.lock();
            let State::Running(session) = std::mem::replace(&mut *state, State::Closed) else { return Err(ended()) };
            let seconds = session.processed_seconds();
            Ok((seconds, session.finish_recording().map_err(|e| to_python(&e))?))
        })?;
        let LiveRecording { events: last, segments, diarized } = recording;
        let diarization = Py::new(py, Diarization::new(segments, diarized, "audio".into(), seconds))?;
        let last = events(&last, diarization.get().diarized().names());
        *self.lock() = State::Finished(diarization);
        Ok(last)
    }

    /// The whole stream's diarization (after `finish`): its segments, speaker tensors and the CLI's files.
    #[getter]
    fn diarization(&self, py: Python<'_>) -> PyResult<Py<Diarization>> {
        match &*self.lock() {
            State::Finished(diarization) => Ok(diarization.clone_ref(py)),
            _ => Err(PyRuntimeError::new_err("the stream's diarization is known once it is finished (call finish())")),
        }
    }

    /// Every segment of the stream, ordered by start then speaker (after `finish`).
    #[getter]
    fn segments(&self, py: Python<'_>) -> PyResult<Vec<Segment>> {
        Ok(self.diarization(py)?.get().segment_list())
    }

    /// `[rows, speakers]` float32 speaker probabilities at the encoder rate, so far.
    #[getter]
    fn probabilities<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let (values, speakers) = match &*self.lock() {
            State::Running(session) => (session.probabilities().to_vec(), session.speakers()),
            State::Finished(diarization) => return diarization.get().probabilities_array(py),
            State::Closed => return Err(ended()),
        };
        array(py, &values, &[values.len() / speakers.max(1), speakers])
    }

    /// Each slot's enrolled name (`None` for a slot no one enrolled): empty without `speakers=`, and until the
    /// enrolled clips' last frames are final (before the first event).
    #[getter]
    fn names(&self) -> Vec<Option<String>> {
        match &*self.lock() {
            State::Running(session) => session.names().to_vec(),
            State::Finished(diarization) => diarization.get().diarized().names().to_vec(),
            State::Closed => Vec::new(),
        }
    }

    /// Seconds of audio pushed so far.
    #[getter]
    fn processed_seconds(&self) -> f64 {
        match &*self.lock() {
            State::Running(session) => session.processed_seconds(),
            State::Finished(diarization) => diarization.get().seconds(),
            State::Closed => 0.0,
        }
    }

    /// Ends the session without finishing it (its last events are dropped); `with` does this on leaving.
    fn close(&self) {
        let mut state = self.lock();
        if let State::Running(_) = &*state {
            *state = State::Closed;
        }
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    #[pyo3(signature = (*_exc))]
    fn __exit__(&self, _exc: &Bound<'_, pyo3::types::PyTuple>) -> bool {
        self.close();
        false
    }
}

fn ended() -> PyErr {
    PyRuntimeError::new_err("the stream has ended (finish() or close() was called)")
}
