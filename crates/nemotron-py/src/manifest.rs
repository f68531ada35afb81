//! NeMo manifests, read as the CLI's `--manifest` reads them (for batch jobs written in Python, such as
//! `examples/ray_diarize.py`).

use std::path::PathBuf;

use nemotron_engine::{ManifestError, read_manifest as read};
use pyo3::exceptions::{PyFileNotFoundError, PyValueError};
use pyo3::prelude::*;
use serde_json::{Value, json};

/// The entries of the manifest at `path`, in order, as dicts: each entry's fields as written, `audio_filepath`
/// resolved against the manifest's folder and made absolute, `uniq_id` set (the file name without its extension
/// when absent) — the fields that the CLI's output manifest repeats. Each dict is itself an audio argument (its
/// `offset` and `duration` apply).
#[pyfunction]
pub fn read_manifest<'py>(py: Python<'py>, path: PathBuf) -> PyResult<Vec<Bound<'py, PyAny>>> {
    let entries = read(&path).map_err(|e| match &e {
        ManifestError::Read { source, .. } if source.kind() == std::io::ErrorKind::NotFound => {
            PyFileNotFoundError::new_err(e.to_string())
        }
        _ => PyValueError::new_err(e.to_string()),
    })?;
    let loads = py.import("json")?.getattr("loads")?;
    entries
        .into_iter()
        .map(|entry| {
            let mut fields = entry.fields;
            let audio = std::path::absolute(&entry.audio).unwrap_or(entry.audio);
            fields.insert("audio_filepath".into(), json!(audio.display().to_string()));
            fields.insert("uniq_id".into(), json!(entry.id));
            loads.call1((Value::Object(fields).to_string(),))
        })
        .collect()
}
