//! Segment settings from what a client sends (form fields, query parameters, a `session.start` message): the
//! engine's [`SegmentSettings`] read by serde, as a remote client gives them ([`Origin::Remote`]: no server file),
//! every value checked there, each error naming its field.

use nemotron_engine::{EngineError, Origin, SegmentSettings};
use serde_json::{Map, Number, Value};

use crate::error::ApiError;

/// The settings of `fields` (JSON values; a form's text values as [`form_value`] makes them), checked. Refused with
/// 400 `invalid_setting`: an unknown field, a server path, a value of the wrong type or out of range.
pub fn segment_settings(fields: Map<String, Value>) -> Result<SegmentSettings, ApiError> {
    let refused = |e| ApiError::from(EngineError::from(e));
    let settings = SegmentSettings::from_fields(Value::Object(fields), Origin::Remote).map_err(refused)?;
    settings.validate().map_err(refused)?;
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
