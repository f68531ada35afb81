//! Segment settings as the front ends hand them over (`SegmentSettings::from_fields`, by origin), as command-line
//! flags (feature `clap`) and as a JSON Schema (feature `schema`): every setting reaches each, refusals name the
//! setting, and the schema states the ranges `validate` checks.

use std::path::{Path, PathBuf};

use clap::{Args, Command};
use nemotron_postprocess::diarization::{
    DiarizationError, NemoParameters, Origin, PostProcessing, SegmentRule, SegmentSettings,
};
use serde_json::{Value, json};

fn yaml_file() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/postprocessing/yaml/parameters.yaml")
}

const ORIGINS: [Origin; 3] = [Origin::Local, Origin::Remote, Origin::Page];

/// A value each setting accepts, as a front end sends it (a Remote's YAML is text, a Local's file a path).
fn sample(name: &str) -> Value {
    match name {
        "threshold" | "onset" | "offset" => json!(0.4),
        "pad_onset" | "pad_offset" => json!(-0.05),
        "min_duration_on" | "min_duration_off" => json!(0.1),
        "postprocessing" => json!(yaml_file()),
        "postprocessing_yaml" => json!("onset: 0.7\n"),
        "max_speakers" => json!(2),
        other => panic!("no sample value for the setting `{other}`: add one"),
    }
}

fn read(fields: Value, origin: Origin) -> Result<SegmentSettings, DiarizationError> {
    SegmentSettings::from_fields(fields, origin)
}

fn refusal(fields: Value, origin: Origin) -> String {
    match read(fields.clone(), origin) {
        Err(DiarizationError::Unreadable(message)) => message,
        other => panic!("{fields} from {origin:?}: {other:?}"),
    }
}

#[test]
fn the_names_are_the_fields_and_each_origin_lacks_one() {
    let names = SegmentSettings::names();
    assert_eq!(names[0], "threshold");
    assert_eq!(names.len(), 10, "{names:?}");
    let all_but = |name| names.iter().copied().filter(|n| *n != name).collect::<Vec<_>>();
    assert_eq!(Origin::Local.names(), all_but("postprocessing_yaml"));
    assert_eq!(Origin::Page.names(), all_but("postprocessing_yaml"));
    assert_eq!(Origin::Remote.names(), all_but("postprocessing"));
}

#[test]
fn a_page_spells_the_settings_in_camel_case_and_only_so() {
    let page: Vec<String> = Origin::Page.names().into_iter().map(|name| Origin::Page.spelling(name)).collect();
    let expected = [
        "threshold",
        "onset",
        "offset",
        "padOnset",
        "padOffset",
        "minDurationOn",
        "minDurationOff",
        "postprocessing",
        "maxSpeakers",
    ];
    assert_eq!(page, expected);
    for (name, field) in page.iter().zip(Origin::Page.names()) {
        assert_eq!(Origin::Page.field(name).unwrap(), field);
    }
    for origin in [Origin::Local, Origin::Remote] {
        for name in origin.names() {
            assert_eq!((origin.spelling(name), origin.field(name).unwrap()), (name.to_string(), name));
        }
    }
    let message = refusal(json!({ "pad_onset": 0.1 }), Origin::Page);
    assert!(message.starts_with("unknown setting `pad_onset` (the settings: threshold, onset, offset, padOnset,"));
    let message = refusal(json!({ "padOnset": 0.1 }), Origin::Local);
    assert!(message.starts_with("unknown setting `padOnset` (the settings: threshold, onset, offset, pad_onset,"));
    let message = refusal(json!({ "minDurationOn": "long" }), Origin::Page);
    assert!(message.starts_with("minDurationOn: invalid type: string"), "{message}");
    let schema = Origin::Page.json_schema();
    let mut names: Vec<&str> = schema["properties"].as_object().unwrap().keys().map(String::as_str).collect();
    names.sort_unstable();
    let mut expected = expected.to_vec();
    expected.sort_unstable();
    assert_eq!(names, expected);
}

#[test]
fn every_origin_reads_each_of_its_settings() {
    for origin in ORIGINS {
        for name in origin.names() {
            let value = match (origin, name) {
                (Origin::Page, "postprocessing") => json!("parameters:\n  onset: 0.7\n"),
                _ => sample(name),
            };
            let settings = read(json!({ origin.spelling(name): value }), origin)
                .unwrap_or_else(|e| panic!("{origin:?} {name}: {e}"));
            assert_ne!(settings, SegmentSettings::default(), "{origin:?} {name}");
            settings.segmenter().unwrap_or_else(|e| panic!("{origin:?} {name}: {e}"));
        }
    }
}

#[test]
fn unknown_names_withheld_settings_and_wrong_types_are_refused_naming_them() {
    for origin in ORIGINS {
        let message = refusal(json!({ "treshold": 0.5 }), origin);
        assert!(message.starts_with("unknown setting `treshold` (the settings: threshold, onset,"), "{message}");
        let message = refusal(json!({ "onset": "high" }), origin);
        assert!(message.starts_with("onset: invalid type: string"), "{message}");
        let max_speakers = origin.spelling("max_speakers");
        let message = refusal(json!({ max_speakers.clone(): -1 }), origin);
        assert!(message.starts_with(&format!("{max_speakers}: ")), "{message}");
    }
    let message = refusal(json!({ "postprocessing_yaml": "onset: 0.7" }), Origin::Local);
    assert!(message.starts_with("unknown setting `postprocessing_yaml`"), "{message}");
    assert!(!message.contains("postprocessing_yaml,"), "{message}");
    for path in [json!("/etc/passwd"), json!(5)] {
        let message = refusal(json!({ "postprocessing": path }), Origin::Remote);
        assert!(
            message.contains("names a file on the server") && message.contains("`postprocessing_yaml`"),
            "{message}"
        );
    }
    let message = refusal(json!({ "postprocessing": 5 }), Origin::Local);
    assert!(message.contains("a path to a NeMo YAML file or a map of its parameters"), "{message}");
}

#[test]
fn a_page_sends_yaml_text_and_a_program_a_file_or_its_parameters() {
    let text = std::fs::read_to_string(yaml_file()).unwrap();
    let expected = PostProcessing::read_nemo_yaml(&yaml_file()).unwrap();
    let page = read(json!({ "postprocessing": text }), Origin::Page).unwrap();
    assert_eq!(page.postprocessing_yaml.as_deref(), Some(text.as_str()));
    let file = read(json!({ "postprocessing": yaml_file() }), Origin::Local).unwrap();
    assert_eq!(file.postprocessing, Some(NemoParameters::File(yaml_file())));
    let parameters = json!({ "parameters": {
        "onset": 0.641, "offset": 0.561, "pad_onset": 0.229, "pad_offset": 0.079,
        "min_duration_on": 0.511, "min_duration_off": 0.296,
    }});
    let map = read(json!({ "postprocessing": parameters }), Origin::Local).unwrap();
    for settings in [page, file, map] {
        assert_eq!(settings.segmenter().unwrap(), SegmentRule::PostProcessing(expected));
    }
    let bad = read(json!({ "postprocessing": { "onset": "high" } }), Origin::Local).unwrap();
    assert!(bad.segmenter().unwrap_err().to_string().contains("onset"));
}

#[test]
fn a_missing_file_is_not_found() {
    let missing = yaml_file().with_file_name("none.yaml");
    let settings = read(json!({ "postprocessing": missing }), Origin::Local).unwrap();
    match settings.segmenter() {
        Err(DiarizationError::NotFound { file, .. }) => assert!(file.ends_with("none.yaml"), "{file}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn the_flags_are_the_local_settings() {
    let command = SegmentSettings::augment_args(Command::new("diarize"));
    let flags: Vec<String> = command.get_arguments().filter_map(|a| a.get_long().map(str::to_string)).collect();
    let expected: Vec<String> = Origin::Local.names().iter().map(|name| name.replace('_', "-")).collect();
    assert_eq!(flags, expected);
    let matches = command
        .try_get_matches_from(["diarize", "--pad-onset", "-0.1", "--postprocessing", "p.yaml", "--max-speakers", "2"])
        .unwrap();
    let settings = <SegmentSettings as clap::FromArgMatches>::from_arg_matches(&matches).unwrap();
    let expected = SegmentSettings {
        pad_onset: Some(-0.1),
        postprocessing: Some(NemoParameters::File("p.yaml".into())),
        max_speakers: Some(2),
        ..SegmentSettings::default()
    };
    assert_eq!(settings, expected);
}

#[test]
fn the_schema_has_a_remote_clients_settings_and_the_ranges_validate_checks() {
    let schema = Origin::Remote.json_schema();
    assert!(schema.get("additionalProperties").is_none(), "the settings share a request's object: {schema}");
    assert!(schema["description"].as_str().is_some_and(|d| !d.contains('\n')), "{schema}");
    let properties = schema["properties"].as_object().unwrap();
    let mut names: Vec<&str> = properties.keys().map(String::as_str).collect();
    let mut expected = Origin::Remote.names();
    names.sort_unstable();
    expected.sort_unstable();
    assert_eq!(names, expected);
    for (name, property) in properties {
        let whole = property["type"][0] == "integer";
        let accepts = |value: f64| {
            let value = if whole { json!(value as i64) } else { json!(value) };
            read(json!({ name: value }), Origin::Remote).is_ok_and(|settings| settings.validate().is_ok())
        };
        let step = if whole { 1.0 } else { 0.01 };
        if let Some(minimum) = property["minimum"].as_f64() {
            assert!(accepts(minimum) && !accepts(minimum - step), "{name}: {property}");
        }
        if let Some(maximum) = property["maximum"].as_f64() {
            assert!(accepts(maximum) && !accepts(maximum + step), "{name}: {property}");
        }
        if let Some(maximum) = property["exclusiveMaximum"].as_f64() {
            assert!(accepts(maximum - step) && !accepts(maximum), "{name}: {property}");
        }
        if property["type"][0] == "number" && property.get("minimum").is_none() {
            assert!(accepts(-1.0), "{name} takes negative values: {property}");
        }
    }
}
