//! NeMo's diarization post-processing files (`examples/speaker_tasks/diarization/conf/post_processing/*.yaml`):
//! the parameters under `parameters:`, as NeMo writes them, or at the top level.

use std::path::Path;

use serde_norway::Value;

use super::error::{DiarizationError, read_text};
use super::postprocessing::PostProcessing;

/// The keys a file may set: NeMo's `PostProcessingParams` and `filter_speech_first` (which NeMo's VAD code reads;
/// its Sortformer loader ignores it and always filters speech first, the default here too).
const KEYS: [&str; 7] =
    ["onset", "offset", "pad_onset", "pad_offset", "min_duration_on", "min_duration_off", "filter_speech_first"];

impl PostProcessing {
    /// Reads a NeMo post-processing YAML file (see [`PostProcessing::from_nemo_yaml`]).
    pub fn read_nemo_yaml(path: &Path) -> Result<Self, DiarizationError> {
        Self::from_nemo_yaml(&read_text(path)?, &path.display().to_string())
    }

    /// Parses NeMo's post-processing YAML: the keys `onset`, `offset`, `pad_onset`, `pad_offset`,
    /// `min_duration_on`, `min_duration_off` (numbers; integers are fine) and `filter_speech_first` (a boolean, or
    /// 1 or 0), under `parameters:` or at the top level. Keys left out keep NeMo's defaults.
    /// Unlike NeMo, which ignores them, an unknown key is an error naming it; so is a value out of range
    /// ([`PostProcessing::validate`]). `file` names the source in errors.
    pub fn from_nemo_yaml(text: &str, file: &str) -> Result<Self, DiarizationError> {
        let fail = |problem: String| DiarizationError::file(file, problem);
        let document: Value = serde_norway::from_str(text).map_err(|e| fail(format!("not YAML: {e}")))?;
        let Value::Mapping(top) = document else {
            return Err(fail("expected a mapping of post-processing parameters".into()));
        };
        let parameters = match top.get("parameters") {
            Some(inner) => {
                if let Some(other) = top.keys().find(|key| key.as_str() != Some("parameters")) {
                    return Err(fail(format!("unknown key `{}` next to `parameters`", key_text(other))));
                }
                match inner {
                    Value::Mapping(inner) => inner,
                    _ => return Err(fail("`parameters` is not a mapping".into())),
                }
            }
            None => &top,
        };
        let mut settings = PostProcessing::default();
        for (key, value) in parameters {
            let name = key_text(key);
            let slot = match name.as_str() {
                "onset" => &mut settings.onset,
                "offset" => &mut settings.offset,
                "pad_onset" => &mut settings.pad_onset,
                "pad_offset" => &mut settings.pad_offset,
                "min_duration_on" => &mut settings.min_duration_on,
                "min_duration_off" => &mut settings.min_duration_off,
                "filter_speech_first" => {
                    // NeMo's VAD code takes 1.0 for true and anything else for false: only 1 and 0 are clear.
                    settings.filter_speech_first = match value {
                        Value::Bool(flag) => *flag,
                        Value::Number(n) if n.as_f64() == Some(1.0) => true,
                        Value::Number(n) if n.as_f64() == Some(0.0) => false,
                        _ => {
                            let found = serde_norway::to_string(value).unwrap_or_default();
                            return Err(fail(format!(
                                "`filter_speech_first` is {} ({}), expected true or false (or 1 or 0)",
                                kind(value),
                                found.trim_end()
                            )));
                        }
                    };
                    continue;
                }
                _ => return Err(fail(format!("unknown key `{name}` (known: {})", KEYS.join(", ")))),
            };
            *slot = match value {
                Value::Number(n) => n.as_f64().ok_or_else(|| fail(format!("`{name}` is not a number")))?,
                _ => return Err(fail(format!("`{name}` is {}, expected a number", kind(value)))),
            };
        }
        settings.validate().map_err(|e| fail(e.to_string()))?;
        Ok(settings)
    }
}

/// A mapping key as the user wrote it.
fn key_text(key: &Value) -> String {
    match key {
        Value::String(s) => s.clone(),
        other => {
            serde_norway::to_string(other).map_or_else(|_| "(a key that is not text)".into(), |s| s.trim_end().into())
        }
    }
}

/// What kind of YAML value this is, for messages.
fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "empty",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Sequence(_) => "a list",
        Value::Mapping(_) => "a mapping",
        Value::Tagged(_) => "a tagged value",
    }
}
