//! Output files appear whole or not at all, errors name the final path, and the stream's event lines keep the
//! CLI's layout.

use std::path::Path;

use nemotron_engine::{ErrorKind, SegmentEvent, event_json_line, output};

#[test]
fn a_failed_write_leaves_nothing_and_names_the_final_path() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("out.rttm");
    let error = output::write_atomic(&path, |temporary| {
        std::fs::write(temporary, b"partial")?;
        Err(std::io::Error::other("disk full"))
    })
    .unwrap_err();
    assert_eq!(error.kind(), ErrorKind::Io);
    assert_eq!(error.to_string(), format!("cannot write {}: disk full", path.display()));
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0, "a temporary file was left behind");
    output::write_bytes(&path, b"whole").unwrap();
    assert_eq!(std::fs::read(&path).unwrap(), b"whole");
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
}

#[test]
fn outputs_are_checked_before_any_work() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("a.json");
    let twice = output::check_files(&[&file, Path::new("b.csv"), &file]).unwrap_err();
    assert_eq!(twice.kind(), ErrorKind::Usage, "{twice}");
    let missing = dir.path().join("no/such/folder/a.json");
    let error = output::check_files(&[&missing]).unwrap_err();
    assert!(error.to_string().contains("does not exist"), "{error}");
    let error = output::check_files(&[dir.path()]).unwrap_err();
    assert!(error.to_string().ends_with("it is a folder"), "{error}");
    output::check_files(&[&file]).unwrap();
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0, "the probe was left behind");
}

#[test]
fn event_lines_keep_the_clis_layout() {
    let start = SegmentEvent::Start { speaker: 2, frame: 1_248 };
    assert_eq!(event_json_line(&start), r#"{"event":"start","speaker":2,"time":12.48}"#);
    let end = SegmentEvent::End { speaker: 3, start: 7, end: 1_310 };
    assert_eq!(event_json_line(&end), r#"{"event":"end","speaker":3,"time":13.10,"start":0.07,"end":13.10}"#);
    // An enrolled speaker's events carry the name, as a JSON string; a slot without one keeps the plain line.
    let names = [None, None, None, Some(r#"Ann"B"#.to_string())];
    assert_eq!(
        end.json_line_named(&names),
        r#"{"event":"end","speaker":3,"name":"Ann\"B","time":13.10,"start":0.07,"end":13.10}"#
    );
    assert_eq!(start.json_line_named(&names), event_json_line(&start));
    let named_start = SegmentEvent::Start { speaker: 3, frame: 5 };
    assert_eq!(named_start.json_line_named(&names), r#"{"event":"start","speaker":3,"name":"Ann\"B","time":0.05}"#);
}

#[test]
fn speaker_dict_entries_are_the_json_segment_files_values() {
    use nemotron_engine::{Segment, SegmentFormat, SpeakerDictEntry, write_segments};
    // Ties on the exact binary value (0.125 → 0.12, 0.375 → 0.38), one under a tie (0.075 → 0.07), long times.
    let segments = [(0, 0.0, 0.125), (3, 0.375, 1.0), (1, 0.075, 15.0), (2, 3599.994, 7201.005)]
        .map(|(speaker, start, end)| Segment { speaker, start, end });
    let written: serde_json::Value = serde_json::from_str(&write_segments(&segments, SegmentFormat::Json, "")).unwrap();
    let entries: Vec<SpeakerDictEntry> = segments.iter().map(SpeakerDictEntry::from).collect();
    assert_eq!(serde_json::to_value(&entries).unwrap(), written);
    assert_eq!(
        serde_json::to_string(&entries[..2]).unwrap(),
        r#"[{"Start":0.0,"End":0.12,"Speaker":0},{"Start":0.38,"End":1.0,"Speaker":3}]"#
    );
}
