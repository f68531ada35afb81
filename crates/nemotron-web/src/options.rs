//! The options objects of the JS API, read from their JSON text: the CLI's `diarize` segment flags by the same
//! names in camelCase (`padOnset`, `minDurationOn`, …; `postprocessing` as NeMo YAML text: a page has no files),
//! `format` and `uri` for the segments' text (`diarize`, `segments`, a live session's `end`, `writeSegments`),
//! `latency` for `stream`. The segment flags are read by serde into the one [`SegmentSettings`] every front end
//! reads its options into ([`Origin::Page`]), which checks each value.

use std::collections::HashMap;

use nemotron_engine::{EngineError, Origin, SegmentFormat, SegmentRule, SegmentSettings, StreamingMode};
use serde_json::{Map, Value};

use crate::error::WebError;

/// The RTTM file id when `uri` is not given (the server's, for an upload without a file name).
const DEFAULT_URI: &str = "audio";

/// How segments are written as text, as `diarize --segments - --format` writes them.
#[derive(Debug, PartialEq)]
pub struct TextOptions {
    /// The text format (`format`: `rttm`, the CLI's default on standard output, `json` or `csv`).
    pub format: SegmentFormat,
    /// The RTTM file id (`uri`; whitespace becomes `_`).
    pub uri: String,
}

impl TextOptions {
    /// The options of their JSON text (`null` or absent: every default); no segment flag.
    pub fn from_json(json: &str) -> Result<Self, WebError> {
        let (mut fields, segments) = parse(json, &["format", "uri"])?;
        if segments != SegmentSettings::default() {
            return Err(WebError::Options("segment flags make segments; these options only write them".into()));
        }
        Self::from_fields(&mut fields)
    }

    fn from_fields(fields: &mut HashMap<&'static str, String>) -> Result<Self, WebError> {
        let format = match fields.remove("format").as_deref() {
            None => SegmentFormat::Rttm,
            Some(name) => name.parse().map_err(|e| WebError::Options(format!("format: {e}")))?,
        };
        let uri = match fields.remove("uri") {
            Some(uri) if uri.trim().is_empty() => {
                return Err(WebError::Options("uri: an RTTM file id cannot be empty".into()));
            }
            Some(uri) => uri,
            None => DEFAULT_URI.into(),
        };
        Ok(Self { format, uri })
    }
}

/// What `diarize` is asked for: the rule that makes the segments and how they are written.
#[derive(Debug, PartialEq)]
pub struct DiarizeOptions {
    /// How speaker activity becomes segments.
    pub rule: SegmentRule,
    /// How they are written.
    pub text: TextOptions,
}

impl DiarizeOptions {
    /// The options of their JSON text (`null` or absent: every default).
    pub fn from_json(json: &str) -> Result<Self, WebError> {
        let (mut fields, segments) = parse(json, &["format", "uri"])?;
        let text = TextOptions::from_fields(&mut fields)?;
        Ok(Self { rule: segments.segmenter().map_err(EngineError::from)?, text })
    }
}

/// What a live session is asked for.
#[derive(Debug, PartialEq)]
pub struct StreamOptions {
    /// The streaming mode (`latency`: `low`, the CLI's default, `very-low` or `ultra-low`).
    pub mode: StreamingMode,
    /// The segment settings of its events, checked: they make a live rule (one that keeps the most active speakers
    /// is refused: they are known only at the end).
    pub settings: SegmentSettings,
}

impl StreamOptions {
    /// The options of their JSON text (`null` or absent: every default).
    pub fn from_json(json: &str) -> Result<Self, WebError> {
        let (mut fields, segments) = parse(json, &["latency"])?;
        let mode = match fields.remove("latency").as_deref() {
            None => StreamingMode::LowLatency,
            Some(name) => name.parse().map_err(|e| WebError::Options(format!("latency: {e}")))?,
        };
        segments.live_rule().map_err(EngineError::from)?;
        Ok(Self { mode, settings: segments })
    }
}

/// An options object of its JSON text (`null`, no object given, is every default): the text values of `own`, the
/// options of one call, and the segment settings, the rest (an unknown name is refused there).
fn parse(json: &str, own: &[&'static str]) -> Result<(HashMap<&'static str, String>, SegmentSettings), WebError> {
    let invalid = |e: serde_json::Error| WebError::Options(e.to_string());
    let options: Option<Map<String, Value>> = serde_json::from_str(json).map_err(invalid)?;
    let mut rest = options.unwrap_or_default();
    let mut fields = HashMap::new();
    for &name in own {
        match rest.remove(name) {
            None | Some(Value::Null) => {}
            Some(Value::String(text)) => _ = fields.insert(name, text),
            Some(other) => return Err(WebError::Options(format!("{name}: {other} is not a string"))),
        }
    }
    let settings = SegmentSettings::from_fields(Value::Object(rest), Origin::Page)
        .map_err(|e| WebError::Options(e.to_string()))?;
    Ok((fields, settings))
}

#[cfg(test)]
mod tests {
    use super::*;

    use nemotron_engine::PostProcessing;

    fn refusal<T: std::fmt::Debug>(result: Result<T, WebError>) -> String {
        result.expect_err("refused").sentence()
    }

    #[test]
    fn no_options_are_the_clis_defaults() {
        for json in ["null", "{}"] {
            let options = DiarizeOptions::from_json(json).unwrap();
            let rule = SegmentRule::Threshold { threshold: 0.5, max_speakers: None };
            let text = TextOptions { format: SegmentFormat::Rttm, uri: "audio".into() };
            assert_eq!(TextOptions::from_json(json).unwrap(), text);
            assert_eq!(options, DiarizeOptions { rule, text });
            let stream = StreamOptions::from_json(json).unwrap();
            assert_eq!(stream, StreamOptions { mode: StreamingMode::LowLatency, settings: SegmentSettings::default() });
            assert_eq!(stream.settings.live_rule().unwrap(), rule);
        }
    }

    #[test]
    fn the_flags_keep_their_names_in_camel_case() {
        let json = r#"{"format": "json", "uri": "talk", "onset": 0.7, "padOnset": -0.1, "minDurationOff": 0.25,
            "maxSpeakers": 2}"#;
        let options = DiarizeOptions::from_json(json).unwrap();
        let expected = PostProcessing {
            onset: 0.7,
            pad_onset: -0.1,
            min_duration_off: 0.25,
            max_speakers: Some(2),
            ..PostProcessing::default()
        };
        assert_eq!(options.rule, SegmentRule::PostProcessing(expected));
        assert_eq!(options.text, TextOptions { format: SegmentFormat::Json, uri: "talk".into() });
        let yaml = r#"{"postprocessing": "parameters:\n  onset: 0.8\n", "offset": 0.4, "latency": "ultra-low"}"#;
        let options = StreamOptions::from_json(yaml).unwrap();
        let expected = PostProcessing { onset: 0.8, offset: 0.4, ..PostProcessing::default() };
        assert_eq!(options.mode, StreamingMode::UltraLowLatency);
        assert_eq!(options.settings.live_rule().unwrap(), SegmentRule::PostProcessing(expected));
    }

    #[test]
    fn every_setting_a_page_gives_is_an_option_in_camel_case() {
        for name in Origin::Page.names() {
            let value = match name {
                "postprocessing" => r#""parameters:\n  onset: 0.7\n""#,
                "max_speakers" => "2",
                "pad_onset" | "pad_offset" => "-0.05",
                "threshold" | "onset" | "offset" | "min_duration_on" | "min_duration_off" => "0.4",
                other => panic!("no sample value for the setting `{other}`: add one"),
            };
            let option = Origin::Page.spelling(name);
            assert!(!option.contains('_'), "{option}");
            let json = format!(r#"{{"{option}": {value}}}"#);
            let options = DiarizeOptions::from_json(&json).unwrap_or_else(|e| panic!("{json}: {}", e.sentence()));
            assert_ne!(options.rule, DiarizeOptions::from_json("{}").unwrap().rule, "{json}");
            if name != "max_speakers" {
                let options = StreamOptions::from_json(&json).unwrap_or_else(|e| panic!("{json}: {}", e.sentence()));
                let default = StreamOptions::from_json("{}").unwrap().settings.live_rule().unwrap();
                assert_ne!(options.settings.live_rule().unwrap(), default, "{json}");
            }
        }
    }

    #[test]
    fn refusals_name_the_option() {
        assert_eq!(refusal(DiarizeOptions::from_json(r#"{"threshold": 1.5}"#)), "threshold: 1.5 is not in [0, 1)");
        assert_eq!(refusal(DiarizeOptions::from_json(r#"{"maxSpeakers": 0}"#)), "max_speakers: 0 is not at least 1");
        assert!(refusal(DiarizeOptions::from_json(r#"{"format": "xml"}"#)).starts_with("options: format: "));
        assert!(refusal(DiarizeOptions::from_json(r#"{"treshold": 0.5}"#)).contains("treshold"));
        let snake_case = refusal(DiarizeOptions::from_json(r#"{"pad_onset": 0.1}"#));
        assert!(snake_case.starts_with("options: unknown setting `pad_onset`"), "{snake_case}");
        assert!(snake_case.contains("padOnset, padOffset, minDurationOn"), "{snake_case}");
        let wrong_type = refusal(DiarizeOptions::from_json(r#"{"minDurationOn": "long"}"#));
        assert!(wrong_type.starts_with("options: minDurationOn: invalid type"), "{wrong_type}");
        assert!(refusal(DiarizeOptions::from_json(r#"{"threshold": "high"}"#)).starts_with("options: "));
        assert!(refusal(StreamOptions::from_json(r#"{"latency": "instant"}"#)).starts_with("options: latency: "));
        assert!(
            refusal(StreamOptions::from_json(r#"{"maxSpeakers": 2}"#)).starts_with("max_speakers: needs the whole")
        );
        assert!(refusal(StreamOptions::from_json(r#"{"format": "json"}"#)).contains("format"));
        assert_eq!(
            refusal(DiarizeOptions::from_json(r#"{"uri": " "}"#)),
            "options: uri: an RTTM file id cannot be empty"
        );
        assert!(refusal(TextOptions::from_json(r#"{"threshold": 0.4}"#)).starts_with("options: segment flags"));
        assert!(refusal(TextOptions::from_json(r#"{"latency": "low"}"#)).contains("latency"));
    }
}
