//! Segment settings as the front ends hand them over (serde, as the server's form fields and Python dicts map onto
//! them): the rule each resolves to, and the field each refusal names.

use nemotron_engine::{EngineError, ErrorKind, Origin, SegmentRule, SegmentSettings, batch_limits};
use nemotron_postprocess::diarization::PostProcessing;

fn from_json(json: &str) -> SegmentSettings {
    serde_json::from_str(json).unwrap_or_else(|e| panic!("{json}: {e}"))
}

fn refused_field(settings: &SegmentSettings) -> &'static str {
    match settings.segmenter().map_err(EngineError::from) {
        Err(error @ EngineError::Setting { field, .. }) => {
            assert_eq!(error.kind(), ErrorKind::Usage, "{error}");
            assert!(error.to_string().starts_with(field), "{error}");
            field
        }
        other => panic!("{settings:?} gave {other:?}"),
    }
}

#[test]
fn nothing_set_is_upstreams_rule_at_one_half() {
    let rule = from_json("{}").segmenter().unwrap();
    assert_eq!(rule, SegmentRule::Threshold { threshold: 0.5, max_speakers: None });
    let rule = from_json(r#"{"threshold": 0.3, "max_speakers": 2}"#).segmenter().unwrap();
    assert_eq!(rule, SegmentRule::Threshold { threshold: 0.3, max_speakers: Some(2) });
}

#[test]
fn any_post_processing_setting_selects_nemos_rule_with_its_defaults_elsewhere() {
    let rule = from_json(r#"{"onset": 0.7, "min_duration_off": 0.25}"#).segmenter().unwrap();
    let expected = PostProcessing { onset: 0.7, min_duration_off: 0.25, ..PostProcessing::default() };
    assert_eq!(rule, SegmentRule::PostProcessing(expected));
    // With post-processing, the threshold sets onset and offset both.
    let rule = from_json(r#"{"threshold": 0.2, "pad_onset": -0.1}"#).segmenter().unwrap();
    let expected = PostProcessing { onset: 0.2, offset: 0.2, pad_onset: -0.1, ..PostProcessing::default() };
    assert_eq!(rule, SegmentRule::PostProcessing(expected));
}

#[test]
fn yaml_text_is_read_and_the_fields_override_it() {
    let yaml = "parameters:\n  onset: 0.8\n  offset: 0.6\n  min_duration_on: 0.5\n";
    let settings = SegmentSettings {
        postprocessing_yaml: Some(yaml.into()),
        offset: Some(0.4),
        max_speakers: Some(3),
        ..SegmentSettings::default()
    };
    let expected =
        PostProcessing { onset: 0.8, offset: 0.4, min_duration_on: 0.5, max_speakers: Some(3), ..Default::default() };
    assert_eq!(settings.segmenter().unwrap(), SegmentRule::PostProcessing(expected));
    let bad = SegmentSettings { postprocessing_yaml: Some("onset: [1".into()), ..SegmentSettings::default() };
    assert_eq!(EngineError::from(bad.segmenter().unwrap_err()).kind(), ErrorKind::BadInput);
}

#[test]
fn each_refusal_names_its_field() {
    let cases = [
        (r#"{"threshold": 1.0}"#, "threshold"),
        (r#"{"threshold": -0.01}"#, "threshold"),
        (r#"{"onset": 1.5}"#, "onset"),
        (r#"{"offset": -1}"#, "offset"),
        (r#"{"min_duration_on": -0.5}"#, "min_duration_on"),
        (r#"{"min_duration_off": -2}"#, "min_duration_off"),
        (r#"{"threshold": 0.5, "onset": 0.4}"#, "threshold"),
        (r#"{"max_speakers": 0}"#, "max_speakers"),
        (r#"{"postprocessing": "a.yaml", "postprocessing_yaml": "onset: 0.5"}"#, "postprocessing"),
    ];
    for (json, field) in cases {
        assert_eq!(refused_field(&from_json(json)), field, "{json}");
    }
    let infinite = SegmentSettings { pad_offset: Some(f64::INFINITY), ..SegmentSettings::default() };
    assert_eq!(refused_field(&infinite), "pad_offset");
}

#[test]
fn unknown_fields_are_refused() {
    let error = serde_json::from_str::<SegmentSettings>(r#"{"treshold": 0.5}"#).unwrap_err();
    assert!(error.to_string().contains("treshold"), "{error}");
}

#[test]
fn a_stream_cannot_keep_the_most_active_speakers() {
    for json in [r#"{"max_speakers": 2}"#, r#"{"onset": 0.6, "max_speakers": 2}"#] {
        match from_json(json).live_rule().map_err(EngineError::from) {
            Err(EngineError::Setting { field: "max_speakers", .. }) => {}
            other => panic!("{json}: {other:?}"),
        }
    }
    assert!(from_json(r#"{"onset": 0.6}"#).live_rule().is_ok());
}

#[test]
fn settings_a_front_end_cannot_hand_over_are_usage_errors_and_a_missing_file_is_not_found() {
    let unknown = SegmentSettings::from_fields(serde_json::json!({ "tresh": 0.5 }), Origin::Remote).unwrap_err();
    assert_eq!(EngineError::from(unknown).kind(), ErrorKind::Usage);
    let missing = from_json(r#"{"postprocessing": "no-such-file.yaml"}"#);
    let error = EngineError::from(missing.segmenter().unwrap_err());
    assert_eq!(error.kind(), ErrorKind::NotFound, "{error}");
    assert!(error.to_string().starts_with("no-such-file.yaml: "), "{error}");
}

#[test]
fn batch_limits_take_at_least_one_recording() {
    assert_eq!(batch_limits(3).unwrap().max_recordings, 3);
    for refused in [0, -2] {
        let error = batch_limits(refused).unwrap_err();
        assert_eq!((error.kind(), error.to_string()), (ErrorKind::Usage, format!("{refused}: at least 1 recording")));
    }
}
