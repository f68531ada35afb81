//! The keyword arguments that decide how speaker activity becomes segments — the CLI's segment flags, by the same
//! names (`threshold`, `onset`, `offset`, `pad_onset`, `pad_offset`, `min_duration_on`, `min_duration_off`,
//! `postprocessing`, `max_speakers`) — as the engine's [`SegmentSettings`], checked before any work.

use std::path::PathBuf;

use nemotron_engine::{EngineError, SegmentRule, SegmentSettings};
use pyo3::exceptions::{PyFileNotFoundError, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString};

use crate::errors::{bad_argument, to_python};

/// The settings that `**segment_settings` give (`None` or absent: the CLI's default), and the rule they resolve to
/// (a YAML file read now, so a bad one fails before the GPU runs).
pub fn from_kwargs(kwargs: Option<&Bound<'_, PyDict>>) -> PyResult<(SegmentSettings, SegmentRule)> {
    let mut settings = SegmentSettings::default();
    for (key, value) in kwargs.into_iter().flat_map(|d| d.iter()) {
        let key: String = key.extract()?;
        if value.is_none() {
            continue;
        }
        let seconds = |value: &Bound<'_, PyAny>| -> PyResult<Option<f64>> {
            value.extract::<f64>().map(Some).map_err(|_| bad_argument(&key, "not a number"))
        };
        match key.as_str() {
            "threshold" => settings.threshold = seconds(&value)?,
            "onset" => settings.onset = seconds(&value)?,
            "offset" => settings.offset = seconds(&value)?,
            "pad_onset" => settings.pad_onset = seconds(&value)?,
            "pad_offset" => settings.pad_offset = seconds(&value)?,
            "min_duration_on" => settings.min_duration_on = seconds(&value)?,
            "min_duration_off" => settings.min_duration_off = seconds(&value)?,
            "max_speakers" => {
                let n: i64 = value.extract().map_err(|_| bad_argument(&key, "not a whole number"))?;
                let n = usize::try_from(n).map_err(|_| bad_argument(&key, format!("{n} is not at least 1")))?;
                settings.max_speakers = Some(n);
            }
            "postprocessing" => postprocessing(&mut settings, &value)?,
            _ => return Err(PyTypeError::new_err(format!("unexpected keyword argument '{key}'"))),
        }
    }
    let segmenter = settings.segmenter().map_err(|e| to_python(&EngineError::from(e)))?;
    Ok((settings, segmenter))
}

/// `postprocessing=`: a NeMo YAML file (path), or its parameters as a dict (NeMo's names: `onset`, `offset`,
/// `pad_onset`, …; at the top level or under `parameters`), read by the same parser as the file.
fn postprocessing(settings: &mut SegmentSettings, value: &Bound<'_, PyAny>) -> PyResult<()> {
    if value.is_instance_of::<PyDict>() {
        // JSON is YAML: the dict goes through NeMo's YAML reader, so its keys mean what they mean in a file.
        let text: String = value.py().import("json")?.call_method1("dumps", (value,))?.extract()?;
        settings.postprocessing_yaml = Some(text);
        return Ok(());
    }
    if !(value.is_instance_of::<PyString>() || value.hasattr("__fspath__")?) {
        return Err(PyTypeError::new_err("postprocessing: give a dict of NeMo's parameters or a path to a YAML file"));
    }
    let path: PathBuf = value.extract()?;
    if !path.is_file() {
        return Err(PyFileNotFoundError::new_err(format!("postprocessing: no such file {}", path.display())));
    }
    settings.postprocessing = Some(path);
    Ok(())
}
