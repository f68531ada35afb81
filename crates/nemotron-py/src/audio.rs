//! Audio arguments: whatever a Python user holds, turned into the engine's [`Input`] exactly as the CLI would read
//! it. Taken: a path (`str`, `os.PathLike`), `bytes`/`bytearray` (an encoded file), a binary file object (its
//! `read()`), a 1-D or `(channels, samples)` array of float32, float64 or int16 with `sample_rate=` (resampled to
//! 16 kHz mono as decoded files are; int16 scaled by 1/32768 as the WAV decoder does), anything with `__array__`
//! (a CPU torch tensor), and the dictionaries of pyannote (`{"waveform": array, "sample_rate": rate}`,
//! `{"audio": path}`) and NeMo manifests (`{"audio_filepath": path, "offset": s, "duration": s}`).
//!
//! The Python objects are read while the GIL is held; decoding and resampling run later, without it.

use std::path::PathBuf;

use nemotron_engine::{AudioOptions, Channel, Input};
use numpy::{PyArrayDyn, PyArrayMethods, PyUntypedArray, PyUntypedArrayMethods};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyDict, PyString};

use crate::errors::{argument_error, bad_argument, to_python};

/// One recording, read out of its Python object.
pub enum Audio {
    /// An audio file, with the stretch to take.
    Path { path: PathBuf, options: AudioOptions },
    /// An encoded audio file held in memory; `name` names it in errors.
    Bytes { bytes: Vec<u8>, name: String },
    /// Samples, one vector per channel.
    Pcm { channels: Vec<Vec<f32>>, sample_rate: u32 },
}

/// Channels of a 2-D array beyond which it is taken for `(samples, channels)` by mistake.
const MOST_CHANNELS: usize = 64;

impl Audio {
    /// Reads the argument `name` (`audio`, `audio[3]`); `sample_rate` is the rate of an array's samples.
    pub fn extract(name: &str, object: &Bound<'_, PyAny>, sample_rate: Option<u32>) -> PyResult<Self> {
        if let Ok(dict) = object.cast::<PyDict>() {
            return Self::from_dict(name, dict, sample_rate);
        }
        if let Ok(bytes) = object.cast::<PyBytes>() {
            return Self::encoded(name, bytes.as_bytes().to_vec(), "bytes".into(), sample_rate);
        }
        if let Ok(bytes) = object.cast::<PyByteArray>() {
            return Self::encoded(name, bytes.to_vec(), "bytes".into(), sample_rate);
        }
        if let Ok(array) = object.cast::<PyUntypedArray>() {
            return Self::from_array(name, array, sample_rate);
        }
        if object.is_instance_of::<PyString>() || object.hasattr("__fspath__")? {
            no_rate(name, sample_rate)?;
            let path: PathBuf = object.extract()?;
            return Ok(Audio::Path { path, options: AudioOptions::default() });
        }
        if object.hasattr("read")? {
            return Self::from_file_object(name, object, sample_rate);
        }
        if object.hasattr("__array__")? {
            let array = object.py().import("numpy")?.call_method1("asarray", (object,))?;
            return Self::from_array(name, array.cast::<PyUntypedArray>()?, sample_rate);
        }
        Err(PyTypeError::new_err(format!(
            "{name}: expected a path, bytes, a binary file object or an array of samples, got {}",
            object.get_type().name()?
        )))
    }

    /// Decodes or resamples it into the model's input (run without the GIL). A file's errors name the file, as the
    /// CLI's do; an array's name the argument.
    pub fn read(self, name: &str) -> PyResult<Input> {
        match self {
            Audio::Path { path, options } => Input::read_path(&path, &options).map_err(|e| to_python(&e)),
            Audio::Bytes { bytes, name } => {
                Input::read_bytes(bytes, &name, &AudioOptions::default()).map_err(|e| to_python(&e))
            }
            Audio::Pcm { channels, sample_rate } => {
                let planar: Vec<&[f32]> = channels.iter().map(Vec::as_slice).collect();
                Input::from_pcm(&planar, sample_rate, Channel::Mix).map_err(|error| argument_error(name, &error))
            }
        }
    }

    fn encoded(name: &str, bytes: Vec<u8>, label: String, sample_rate: Option<u32>) -> PyResult<Self> {
        no_rate(name, sample_rate)?;
        Ok(Audio::Bytes { bytes, name: label })
    }

    fn from_file_object(name: &str, file: &Bound<'_, PyAny>, sample_rate: Option<u32>) -> PyResult<Self> {
        let content = file.call_method0("read")?;
        let Ok(bytes) = content.cast::<PyBytes>() else {
            return Err(PyTypeError::new_err(format!(
                "{name}: the file object gave {} from read(); open it in binary mode ('rb')",
                content.get_type().name()?
            )));
        };
        let label = match file.getattr("name").ok().and_then(|n| n.extract::<String>().ok()) {
            Some(file_name) => file_name,
            None => "file object".into(),
        };
        Self::encoded(name, bytes.as_bytes().to_vec(), label, sample_rate)
    }

    /// pyannote's `{"waveform": array, "sample_rate": rate}` and `{"audio": path}`, NeMo's manifest entries.
    fn from_dict(name: &str, dict: &Bound<'_, PyDict>, sample_rate: Option<u32>) -> PyResult<Self> {
        if let Some(waveform) = dict.get_item("waveform")? {
            let rate = match (dict.get_item("sample_rate")?, sample_rate) {
                (Some(rate), _) => {
                    Some(rate.extract::<u32>().map_err(|_| bad_argument(name, "sample_rate: not a rate in Hz"))?)
                }
                (None, rate) => rate,
            };
            return Self::extract(&format!("{name}['waveform']"), &waveform, rate);
        }
        if let Some(path) = dict.get_item("audio")? {
            return Self::extract(&format!("{name}['audio']"), &path, sample_rate);
        }
        let Some(path) = dict.get_item("audio_filepath")? else {
            return Err(bad_argument(name, "a dict needs `waveform` and `sample_rate`, `audio`, or `audio_filepath`"));
        };
        no_rate(name, sample_rate)?;
        let seconds = |key: &str| -> PyResult<Option<f64>> {
            match dict.get_item(key)? {
                Some(value) if !value.is_none() => {
                    Ok(Some(value.extract().map_err(|_| bad_argument(name, format!("{key}: not seconds")))?))
                }
                _ => Ok(None),
            }
        };
        let options = AudioOptions {
            offset: seconds("offset")?.unwrap_or(0.0),
            duration: seconds("duration")?,
            ..Default::default()
        };
        Ok(Audio::Path { path: path.extract()?, options })
    }

    fn from_array(name: &str, array: &Bound<'_, PyUntypedArray>, sample_rate: Option<u32>) -> PyResult<Self> {
        let Some(sample_rate) = sample_rate else {
            return Err(bad_argument("sample_rate", format!("{name} is an array of samples: give their rate in Hz")));
        };
        let shape = array.shape().to_vec();
        match shape.as_slice() {
            [_] => {}
            [channels, samples] if *channels > MOST_CHANNELS && channels > samples => {
                return Err(bad_argument(
                    name,
                    format!("shape {shape:?} looks like (samples, channels); give (channels, samples): `{name}.T`"),
                ));
            }
            [_, _] => {}
            _ => return Err(bad_argument(name, format!("shape {shape:?}: give 1-D samples or (channels, samples)"))),
        }
        let channels = if let Ok(a) = array.cast::<PyArrayDyn<f32>>() {
            rows(&a.readonly().as_array(), |x| x)
        } else if let Ok(a) = array.cast::<PyArrayDyn<f64>>() {
            rows(&a.readonly().as_array(), |x| x as f32)
        } else if let Ok(a) = array.cast::<PyArrayDyn<i16>>() {
            // As the WAV decoder scales 16-bit PCM.
            rows(&a.readonly().as_array(), |x| f32::from(x) / 32_768.0)
        } else {
            return Err(bad_argument(name, format!("dtype {}: give float32, float64 or int16 samples", array.dtype())));
        };
        Ok(Audio::Pcm { channels, sample_rate })
    }
}

/// The rows of a 1-D or 2-D array (a 1-D array is one row), converted; any strides.
fn rows<T: Copy>(array: &numpy::ndarray::ArrayViewD<'_, T>, convert: impl Fn(T) -> f32) -> Vec<Vec<f32>> {
    match array.ndim() {
        1 => vec![array.iter().map(|&x| convert(x)).collect()],
        _ => array.outer_iter().map(|row| row.iter().map(|&x| convert(x)).collect()).collect(),
    }
}

/// Refuses `sample_rate=` for an encoded file, which carries its own rate.
fn no_rate(name: &str, sample_rate: Option<u32>) -> PyResult<()> {
    match sample_rate {
        Some(_) => Err(bad_argument("sample_rate", format!("{name} is an encoded file, which carries its own rate"))),
        None => Ok(()),
    }
}
