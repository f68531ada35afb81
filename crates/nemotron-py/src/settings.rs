//! The keyword arguments that decide how speaker activity becomes segments — the CLI's segment flags, by the same
//! names — read into the engine's [`SegmentSettings`] by serde (`pythonize`), as a program on this machine gives
//! them ([`Origin::Local`]: `postprocessing` a path or a dict of NeMo's parameters), and checked before any work.

use nemotron_engine::{EngineError, Origin, SegmentRule, SegmentSettings};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use pythonize::Depythonizer;

use crate::errors::to_python;

/// The settings that `**segment_settings` give (`None` or absent: the CLI's default), and the rule they resolve to
/// (a YAML file read now, so a bad one fails before the GPU runs). A name that is not a setting is a `TypeError`,
/// as Python's own for an unexpected keyword argument.
pub fn from_kwargs(py: Python<'_>, kwargs: Option<&Bound<'_, PyDict>>) -> PyResult<(SegmentSettings, SegmentRule)> {
    let fields = PyDict::new(py);
    for (key, value) in kwargs.into_iter().flat_map(|d| d.iter()) {
        let key: String = key.extract()?;
        Origin::Local.field(&key).map_err(|refusal| PyTypeError::new_err(refusal.to_string()))?;
        // A path object (`pathlib.Path`) is read as its text, as any path argument of the package is.
        let value = match value.hasattr("__fspath__")? {
            true => py.import("os")?.call_method1("fspath", (value,))?,
            false => value,
        };
        fields.set_item(key, value)?;
    }
    let engine_error = |e| to_python(&EngineError::from(e));
    let settings =
        SegmentSettings::from_fields(&mut Depythonizer::from_object(&fields), Origin::Local).map_err(engine_error)?;
    let segmenter = settings.segmenter().map_err(engine_error)?;
    Ok((settings, segmenter))
}
