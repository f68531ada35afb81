//! Property tests of the diarization parsers (RTTM, UEM, NeMo post-processing YAML), in the style of
//! `parser_properties.rs`: whatever the text, a value or an error naming the file (and line), never a panic; well
//! formed text reads back as what was written. The fuzz targets `rttm` and `postprocessing_yaml` explore the same
//! parsers by coverage.

mod strategies;

use nemotron_postprocess::diarization::formats::to_rttm;
use nemotron_postprocess::diarization::rttm::{Turn, UemSegment, parse_rttm, parse_uem};
use nemotron_postprocess::diarization::{DiarizationError, PostProcessing, Segment};
use proptest::prelude::*;

fn config(cases: u32) -> ProptestConfig {
    ProptestConfig { cases, ..ProptestConfig::default() }
}

/// A field without whitespace.
fn name() -> impl Strategy<Value = String> {
    "[A-Za-z0-9_.<>-]{1,12}"
}

/// Seconds ≥ 0, as a writer might print them.
fn seconds() -> impl Strategy<Value = f64> {
    prop_oneof![0.0..5000.0f64, (0u32..100_000).prop_map(|k| k as f64 / 100.0), Just(0.0)]
}

/// Runs of spaces and tabs.
fn gap() -> impl Strategy<Value = String> {
    "[ \t]{1,3}"
}

/// What a line of text is for the parser: a turn, or something it skips.
#[derive(Clone, Debug)]
enum Line {
    Turn(Turn, usize, Vec<String>),
    Skipped(String),
}

fn line() -> impl Strategy<Value = Line> {
    prop_oneof![
        4 => (name(), seconds(), seconds(), name(), 8usize..=10, prop::collection::vec(gap(), 9))
            .prop_map(|(uri, start, duration, speaker, fields, gaps)| {
                Line::Turn(Turn { uri, start, duration, speaker }, fields, gaps)
            }),
        1 => prop_oneof![
            Just(String::new()),
            Just(";; a comment".to_string()),
            Just("SPKR-INFO rec 1 <NA> <NA> <NA> unknown alice <NA> <NA>".to_string()),
            Just("   ".to_string()),
        ]
        .prop_map(Line::Skipped),
    ]
}

fn render(lines: &[Line]) -> String {
    let mut text = String::new();
    for line in lines {
        match line {
            Line::Turn(t, fields, gaps) => {
                let all = [
                    "SPEAKER",
                    &t.uri,
                    "1",
                    &t.start.to_string(),
                    &t.duration.to_string(),
                    "<NA>",
                    "<NA>",
                    &t.speaker,
                    "<NA>",
                    "<NA>",
                ];
                for (i, field) in all.iter().take(*fields).enumerate() {
                    if i > 0 {
                        text.push_str(&gaps[i - 1]);
                    }
                    text.push_str(field);
                }
            }
            Line::Skipped(s) => text.push_str(s),
        }
        text.push('\n');
    }
    text
}

/// The error names the file, and a line that exists.
fn names_file_and_line(error: &DiarizationError, file: &str, lines: usize) -> bool {
    match error {
        DiarizationError::Line { file: f, line, .. } => f == file && (1..=lines.max(1)).contains(line),
        _ => false,
    }
}

proptest! {
    #![proptest_config(config(256))]

    /// Well-formed RTTM (any whitespace, 8 to 10 fields, skipped lines between) reads back exactly.
    #[test]
    fn rttm_reads_back_what_was_written(lines in prop::collection::vec(line(), 0..30)) {
        let turns: Vec<Turn> = lines.iter().filter_map(|l| match l { Line::Turn(t, ..) => Some(t.clone()), _ => None }).collect();
        prop_assert_eq!(parse_rttm(&render(&lines), "w.rttm").unwrap(), turns);
    }

    /// One damaged field: the error names the file and the damaged line.
    #[test]
    fn a_damaged_rttm_line_is_named(
        lines in prop::collection::vec(line(), 1..20),
        at in any::<prop::sample::Index>(),
        field in 3usize..5,
        bad in prop_oneof![Just("-1".to_string()), Just("NaN".to_string()), Just("inf".to_string()), "[a-z]{1,5}"],
    ) {
        let text = render(&lines);
        let mut rows: Vec<String> = text.lines().map(str::to_string).collect();
        let turn_rows: Vec<usize> = (0..lines.len()).filter(|&i| matches!(lines[i], Line::Turn(..))).collect();
        prop_assume!(!turn_rows.is_empty());
        let row = turn_rows[at.index(turn_rows.len())];
        let mut fields: Vec<&str> = rows[row].split_whitespace().collect();
        fields[field] = &bad;
        rows[row] = fields.join(" ");
        let error = parse_rttm(&rows.join("\n"), "d.rttm").unwrap_err();
        prop_assert!(matches!(&error, DiarizationError::Line { file, line, .. } if file == "d.rttm" && *line == row + 1), "{error}");
    }

    /// Any text: turns with finite times ≥ 0, or an error naming the file and a line.
    #[test]
    fn arbitrary_text_is_rttm_or_a_named_error(text in "(SPEAKER|SPKR-INFO|;;|[ \t]|[a-z0-9.eE+-]{1,6}|\n){0,60}") {
        match parse_rttm(&text, "a.rttm") {
            Ok(turns) => prop_assert!(turns.iter().all(|t| t.start >= 0.0 && t.duration >= 0.0 && t.start.is_finite() && t.duration.is_finite())),
            Err(e) => prop_assert!(names_file_and_line(&e, "a.rttm", text.lines().count()), "{e}"),
        }
    }

    /// Our RTTM writer and reader agree: the segments come back to the 10 ms.
    #[test]
    fn written_segments_read_back(raw in prop::collection::vec((0usize..8, 0u32..100_000, 1u32..5000), 0..40)) {
        let segments: Vec<Segment> = raw
            .iter()
            .map(|&(speaker, start, length)| Segment { speaker, start: start as f64 / 100.0, end: (start + length) as f64 / 100.0 })
            .collect();
        let turns = parse_rttm(&to_rttm("a file", &segments), "ours.rttm").unwrap();
        prop_assert_eq!(turns.len(), segments.len());
        for (t, s) in turns.iter().zip(&segments) {
            prop_assert_eq!(t.uri.as_str(), "a_file");
            prop_assert_eq!(t.speaker.clone(), format!("spk{}", s.speaker));
            prop_assert!((t.start - s.start).abs() < 1e-9 && (t.duration - s.duration()).abs() < 1e-9);
        }
    }

    /// UEM: well-formed lines read back; anything else is a value or an error naming the file and a line.
    #[test]
    fn uem_reads_back_or_names_the_line(
        segments in prop::collection::vec((name(), seconds(), seconds()), 0..20),
        noise in "([a-z0-9. \t-]{0,12}\n){0,6}",
    ) {
        let segments: Vec<UemSegment> =
            segments.into_iter().map(|(uri, a, b)| UemSegment { uri, start: a.min(b), end: a.max(b) }).collect();
        let text: String = segments.iter().map(|s| format!("{} 1 {} {}\n", s.uri, s.start, s.end)).collect();
        prop_assert_eq!(parse_uem(&text, "w.uem").unwrap(), segments);
        match parse_uem(&noise, "n.uem") {
            Ok(read) => prop_assert!(read.iter().all(|s| 0.0 <= s.start && s.start <= s.end && s.end.is_finite())),
            Err(e) => prop_assert!(names_file_and_line(&e, "n.uem", noise.lines().count()), "{e}"),
        }
    }
}

fn settings() -> impl Strategy<Value = PostProcessing> {
    strategies::post_processing(0.0..=1.0f64, -0.5..2.0f64, 0.0..2.0f64)
}

proptest! {
    #![proptest_config(config(256))]

    /// NeMo YAML in either layout, any subset of keys, reads back; an unknown key is named.
    #[test]
    fn nemo_yaml_reads_back(s in settings(), keep in prop::collection::vec(any::<bool>(), 7), nested in any::<bool>(), extra in "[a-z_]{1,12}") {
        let values = [
            ("onset", s.onset.to_string()),
            ("offset", s.offset.to_string()),
            ("pad_onset", s.pad_onset.to_string()),
            ("pad_offset", s.pad_offset.to_string()),
            ("min_duration_on", s.min_duration_on.to_string()),
            ("min_duration_off", s.min_duration_off.to_string()),
            ("filter_speech_first", s.filter_speech_first.to_string()),
        ];
        let indent = if nested { "  " } else { "" };
        let mut text = if nested { "parameters:\n".to_string() } else { String::new() };
        let mut want = PostProcessing::default();
        for ((key, value), keep) in values.iter().zip(&keep) {
            if *keep {
                text.push_str(&format!("{indent}{key}: {value}  # comment\n"));
            }
        }
        let slots = [&mut want.onset, &mut want.offset, &mut want.pad_onset, &mut want.pad_offset, &mut want.min_duration_on, &mut want.min_duration_off];
        let given = [s.onset, s.offset, s.pad_onset, s.pad_offset, s.min_duration_on, s.min_duration_off];
        for ((slot, value), keep) in slots.into_iter().zip(given).zip(&keep) {
            if *keep {
                *slot = value;
            }
        }
        if keep[6] {
            want.filter_speech_first = s.filter_speech_first;
        }
        if keep.iter().any(|k| *k) {
            prop_assert_eq!(PostProcessing::from_nemo_yaml(&text, "p.yaml").unwrap(), want);
        }
        prop_assume!(!values.iter().any(|(key, _)| *key == extra) && extra != "parameters");
        let with_extra = format!("{text}{indent}{extra}: 1\n");
        let error = PostProcessing::from_nemo_yaml(&with_extra, "p.yaml").unwrap_err().to_string();
        prop_assert!(error.starts_with("p.yaml: unknown key") && error.contains(&format!("`{extra}`")), "{error}");
    }

    /// Any text: settings that pass validation, or an error naming the file.
    #[test]
    fn arbitrary_text_is_yaml_settings_or_a_named_error(
        text in "(parameters|onset|offset|pad_onset|min_duration_off|filter_speech_first|[:\\-\\[\\]{}&*!|>'\"#,. \t\n]|[a-z0-9.]{1,5}){0,40}",
    ) {
        match PostProcessing::from_nemo_yaml(&text, "t.yaml") {
            Ok(settings) => prop_assert!(settings.validate().is_ok()),
            Err(e) => prop_assert!(e.to_string().starts_with("t.yaml: "), "{e}"),
        }
    }
}
