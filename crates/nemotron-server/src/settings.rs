//! Segment settings from what a client sends (form fields, query parameters, a `session.start` message) onto the
//! engine's [`SegmentSettings`], which checks every value and names the field it refuses.

use nemotron_engine::{EngineError, SegmentSettings};
use serde::Deserialize;
use serde_json::{Map, Number, Value};

use crate::error::ApiError;

/// The fields a client may set (the engine's, less `postprocessing`, which names a file on the server).
pub const FIELDS: [&str; 9] = [
    "threshold",
    "onset",
    "offset",
    "pad_onset",
    "pad_offset",
    "min_duration_on",
    "min_duration_off",
    "postprocessing_yaml",
    "max_speakers",
];

/// The settings of `fields` (JSON values; a form's text values as [`form_value`] makes them). Refused with 400
/// `invalid_setting`: an unknown field, `postprocessing` (a server path), a value of the wrong type or out of range.
pub fn segment_settings(fields: Map<String, Value>) -> Result<SegmentSettings, ApiError> {
    if let Some(field) = fields.keys().find(|key| !FIELDS.contains(&key.as_str())) {
        let message = match field.as_str() {
            "postprocessing" => "`postprocessing` names a file on the server: send the YAML text as \
                                 `postprocessing_yaml`"
                .to_string(),
            other => format!("unknown setting `{other}` (the settings: {})", FIELDS.join(", ")),
        };
        return Err(ApiError::bad_request("invalid_setting", message));
    }
    let settings = SegmentSettings::deserialize(Value::Object(fields))
        .map_err(|e| ApiError::bad_request("invalid_setting", e.to_string()))?;
    settings.validate().map_err(|e| ApiError::from(EngineError::from(e)))?;
    Ok(settings)
}

/// A form field's text as a JSON value: a number where it reads as one (`0.5`, `3`), else the text.
pub fn form_value(text: &str) -> Value {
    match text.trim().parse::<Number>() {
        Ok(number) => Value::Number(number),
        Err(_) => Value::String(text.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields(pairs: &[(&str, &str)]) -> Map<String, Value> {
        pairs.iter().map(|(k, v)| (k.to_string(), form_value(v))).collect()
    }

    #[test]
    fn form_fields_become_the_engines_settings() {
        let settings = segment_settings(fields(&[("onset", "0.6"), ("max_speakers", "2")])).unwrap();
        assert_eq!(settings.onset, Some(0.6));
        assert_eq!(settings.max_speakers, Some(2));
        assert_eq!(segment_settings(Map::new()).unwrap(), SegmentSettings::default());
    }

    #[test]
    fn unknown_fields_server_paths_and_bad_values_are_refused_with_400() {
        for bad in [
            fields(&[("postprocessing", "/etc/passwd")]),
            fields(&[("tresh", "0.5")]),
            fields(&[("onset", "high")]),
            fields(&[("onset", "1.5")]),
            fields(&[("max_speakers", "0")]),
        ] {
            let error = segment_settings(bad.clone()).expect_err(&format!("{bad:?} accepted"));
            assert_eq!((error.status.as_u16(), error.code), (400, "invalid_setting"), "{bad:?}");
        }
    }
}
