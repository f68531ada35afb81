//! The options objects of the JS API, read from their JSON text: the CLI's `diarize` segment flags by the same
//! names in camelCase (`threshold`, `onset`, `offset`, `padOnset`, `padOffset`, `minDurationOn`, `minDurationOff`,
//! `maxSpeakers`, `postprocessing` as NeMo YAML text), `format` and `uri` for the segments' text (`diarize`,
//! `segments`, a live session's `end`, `writeSegments`), `latency` for `stream`. They become the one
//! [`SegmentSettings`] every front end maps its options onto, which checks each value.

use std::collections::HashMap;

use nemotron_engine::{EngineError, SegmentFormat, SegmentRule, SegmentSettings, StreamingMode};
use serde::Deserialize;
use serde_json::{Map, Value};

use crate::error::WebError;

/// The RTTM file id when `uri` is not given (the server's, for an upload without a file name).
const DEFAULT_URI: &str = "audio";

/// The segment flags, as `diarize` and `stream` take them.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct SegmentFlags {
    threshold: Option<f64>,
    onset: Option<f64>,
    offset: Option<f64>,
    pad_onset: Option<f64>,
    pad_offset: Option<f64>,
    min_duration_on: Option<f64>,
    min_duration_off: Option<f64>,
    /// NeMo post-processing parameters as YAML text (a page has no files to name).
    postprocessing: Option<String>,
    max_speakers: Option<usize>,
}

impl SegmentFlags {
    /// Refuses any flag: options that only say how segments are written.
    fn none(self) -> Result<(), WebError> {
        match self.settings() == SegmentSettings::default() {
            true => Ok(()),
            false => Err(WebError::Options("segment flags make segments; these options only write them".into())),
        }
    }

    fn settings(self) -> SegmentSettings {
        SegmentSettings {
            threshold: self.threshold,
            onset: self.onset,
            offset: self.offset,
            pad_onset: self.pad_onset,
            pad_offset: self.pad_offset,
            min_duration_on: self.min_duration_on,
            min_duration_off: self.min_duration_off,
            postprocessing: None,
            postprocessing_yaml: self.postprocessing,
            max_speakers: self.max_speakers,
        }
    }
}

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
        segments.none()?;
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
        Ok(Self { rule: segments.settings().segmenter().map_err(EngineError::from)?, text })
    }
}

/// What a live session is asked for.
#[derive(Debug, PartialEq)]
pub struct StreamOptions {
    /// The streaming mode (`latency`: `low`, the CLI's default, `very-low` or `ultra-low`).
    pub mode: StreamingMode,
    /// The rule of its events (one that keeps the most active speakers is refused: they are known only at the end).
    pub rule: SegmentRule,
}

impl StreamOptions {
    /// The options of their JSON text (`null` or absent: every default).
    pub fn from_json(json: &str) -> Result<Self, WebError> {
        let (mut fields, segments) = parse(json, &["latency"])?;
        let mode = match fields.remove("latency").as_deref() {
            None => StreamingMode::LowLatency,
            Some(name) => name.parse().map_err(|e| WebError::Options(format!("latency: {e}")))?,
        };
        Ok(Self { mode, rule: segments.settings().live_rule().map_err(EngineError::from)? })
    }
}

/// An options object of its JSON text (`null`, no object given, is every default): the text values of `own`, the
/// options of one call, and the segment flags, the rest (an unknown name is refused there).
fn parse(json: &str, own: &[&'static str]) -> Result<(HashMap<&'static str, String>, SegmentFlags), WebError> {
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
    Ok((fields, SegmentFlags::deserialize(Value::Object(rest)).map_err(invalid)?))
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
            assert_eq!(
                StreamOptions::from_json(json).unwrap(),
                StreamOptions { mode: StreamingMode::LowLatency, rule }
            );
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
        assert_eq!(
            options,
            StreamOptions { mode: StreamingMode::UltraLowLatency, rule: SegmentRule::PostProcessing(expected) }
        );
    }

    #[test]
    fn refusals_name_the_option() {
        assert_eq!(refusal(DiarizeOptions::from_json(r#"{"threshold": 1.5}"#)), "threshold: 1.5 is not in [0, 1)");
        assert_eq!(refusal(DiarizeOptions::from_json(r#"{"maxSpeakers": 0}"#)), "max_speakers: 0 is not at least 1");
        assert!(refusal(DiarizeOptions::from_json(r#"{"format": "xml"}"#)).starts_with("options: format: "));
        assert!(refusal(DiarizeOptions::from_json(r#"{"treshold": 0.5}"#)).contains("treshold"));
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
