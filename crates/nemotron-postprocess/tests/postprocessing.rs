//! NeMo's post-processing: hand-derived cases for each parameter and their interactions, NeMo's own outputs on
//! the worked examples of `testdata/postprocessing/expected.json` (written by `scripts/diarization_expected.py`
//! from nemo_toolkit 3.0.0), and NeMo's YAML files.

use std::path::{Path, PathBuf};

use nemotron_postprocess::diarization::postprocessing::{Interval, Probability, SpeakerPostProcessor};
use nemotron_postprocess::diarization::{FrameGrid, PostProcessing, Segment};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde_json::Value;

fn testdata(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/postprocessing").join(path)
}

/// Frames of 0.1 s, one per input value: times in the comments below are `index × 0.1`.
const TENTHS: FrameGrid = FrameGrid { repeat: 1, frame_seconds: 0.1 };

/// NeMo stores times as f32.
fn iv(start: f64, end: f64) -> Interval {
    Interval { start: start as f32, end: end as f32 }
}

fn run(settings: PostProcessing, p: &[f32]) -> Vec<Interval> {
    settings.intervals(p.iter().copied(), TENTHS)
}

fn with(f: impl FnOnce(&mut PostProcessing)) -> PostProcessing {
    let mut settings = PostProcessing::default();
    f(&mut settings);
    settings
}

#[test]
fn hysteresis_starts_above_onset_and_ends_below_offset() {
    // onset = offset = 0.5. Frame 1 (0.6) starts at 0.1; frame 3 (0.5) is not below 0.5, speech goes on; frame 4
    // (0.4) ends it: [0.1, 0.4]. Frame 5 (0.5) is not above 0.5: no start. Frame 6 starts at 0.6, frame 7 ends: [0.6,
    // 0.7].
    let p = [0.1, 0.6, 0.7, 0.5, 0.4, 0.5, 0.9, 0.2];
    assert_eq!(run(PostProcessing::default(), &p), [iv(0.1, 0.4), iv(0.6, 0.7)]);
    // onset 0.7, offset 0.3: 0.5 does not start (frame 0); 0.8 starts at 0.1; 0.5 and 0.35 keep it; 0.2 ends it at
    // 0.4. 0.6 does not start; 0.75 starts at 0.6; 0.4 keeps it; 0.29 ends it at 0.8.
    let p = [0.5, 0.8, 0.5, 0.35, 0.2, 0.6, 0.75, 0.4, 0.29];
    assert_eq!(run(with(|s| (s.onset, s.offset) = (0.7, 0.3)), &p), [iv(0.1, 0.4), iv(0.6, 0.8)]);
    // offset above onset: 0.6 starts (> 0.5) on one frame and ends (< 0.8) on the next, which cannot restart;
    // the third frame starts again: [0, 0.1], [0.2, 0.3].
    let p = [0.6, 0.6, 0.6, 0.1];
    assert_eq!(run(with(|s| (s.onset, s.offset) = (0.5, 0.8)), &p), [iv(0.0, 0.1), iv(0.2, 0.3)]);
}

#[test]
fn speech_on_at_the_end_stops_at_the_last_frames_start() {
    // Starts at 0.1 and is still on after frame 2: NeMo ends it at 2 × 0.1 = 0.2, not 0.3.
    assert_eq!(run(PostProcessing::default(), &[0.1, 0.9, 0.9]), [iv(0.1, 0.2)]);
    // Starting on the last frame gives [0.2, 0.2]: kept here, dropped once rounded (an empty segment).
    let last = run(PostProcessing::default(), &[0.1, 0.1, 0.9]);
    assert_eq!(last, [iv(0.2, 0.2)]);
    assert_eq!(last[0].rounded(0), None);
    // With 80 ms rows repeated into 10 ms frames: 0.9 from frame 8 to 15, ends at 15 × 0.01 = 0.15.
    let sortformer = PostProcessing::default().intervals([0.1f32, 0.9], FrameGrid::sortformer(8));
    assert_eq!(sortformer, [iv(0.08, 0.15)]);
}

#[test]
fn padding_widens_clamps_and_merges() {
    // Raw [0.1, 0.2] and [0.5, 0.7] (the second still on at the end: 7 × 0.1). pad_onset 0.15, pad_offset 0.05:
    // [max(0, −0.05), 0.25] = [0, 0.25] and [0.35, 0.75] (not clamped to the audio's 0.8 s end either way).
    let p = [0.1, 0.9, 0.1, 0.1, 0.1, 0.9, 0.9, 0.9];
    let padded = with(|s| (s.pad_onset, s.pad_offset) = (0.15, 0.05));
    assert_eq!(run(padded, &p), [iv(0.0, 0.25), iv(0.35, 0.75)]);
    // Raw [0, 0.1] and [0.3, 0.4], both padded by 0.1: [0, 0.2] and [0.2, 0.5] touch (0.3 − 0.1 and 0.1 + 0.1 are
    // the same f32) and merge.
    let p = [0.9, 0.1, 0.1, 0.9, 0.1, 0.1];
    assert_eq!(run(with(|s| (s.pad_onset, s.pad_offset) = (0.1, 0.1)), &p), [iv(0.0, 0.5)]);
}

#[test]
fn short_segments_go_and_short_gaps_fill() {
    // Raw [0, 0.1], [0.2, 0.4], [0.5, 0.7]: durations 0.1, 0.2, 0.2 (f32 0.7 − 0.5 = 0.19999999).
    let p = [0.9, 0.1, 0.9, 0.9, 0.1, 0.9, 0.9, 0.9];
    assert_eq!(run(with(|s| s.min_duration_on = 0.15), &p), [iv(0.2, 0.4), iv(0.5, 0.7)]);
    // An equal duration is kept: f32 0.4 − 0.2 is f32 0.2. The last one, 0.19999999 in f32, is not.
    assert_eq!(run(with(|s| s.min_duration_on = 0.2), &p), [iv(0.2, 0.4)]);
    // Raw [0, 0.2], [0.3, 0.4], [0.6, 0.7]: gaps 0.1 (filled: < 0.15) and 0.2 (kept).
    let p = [0.9, 0.9, 0.1, 0.9, 0.1, 0.1, 0.9, 0.1];
    assert_eq!(run(with(|s| s.min_duration_off = 0.15), &p), [iv(0.0, 0.4), iv(0.6, 0.7)]);
    // Nothing before the first segment or after the last is filled: gaps of 0.2 and 0.1 at the edges stay.
    let p = [0.1, 0.1, 0.9, 0.1];
    assert_eq!(run(with(|s| s.min_duration_off = 0.5), &p), [iv(0.2, 0.3)]);
}

#[test]
fn filter_speech_first_decides_the_order_of_the_two_filters() {
    // Raw [0, 0.2], [0.3, 0.4], [0.5, 0.7]; min_duration_on = min_duration_off = 0.15.
    let p = [0.9, 0.9, 0.1, 0.9, 0.1, 0.9, 0.9, 0.1];
    // Speech first: [0.3, 0.4] (0.1 s) goes, which leaves a 0.3 s gap, not filled: [0, 0.2], [0.5, 0.7].
    let speech_first = with(|s| (s.min_duration_on, s.min_duration_off) = (0.15, 0.15));
    assert_eq!(run(speech_first, &p), [iv(0.0, 0.2), iv(0.5, 0.7)]);
    // Gaps first: both 0.1 s gaps fill, so the short segment joins one 0.7 s segment, which stays.
    let gaps_first = PostProcessing { filter_speech_first: false, ..speech_first };
    assert_eq!(run(gaps_first, &p), [iv(0.0, 0.7)]);
}

#[test]
fn filters_see_padded_segments() {
    // Raw [0.1, 0.3] is 0.2 s: too short for min_duration_on 0.25, but padded by 0.1 after, 0.3 s: kept.
    let p = [0.1, 0.9, 0.9, 0.1, 0.1];
    assert_eq!(run(with(|s| s.min_duration_on = 0.25), &p), []);
    assert_eq!(run(with(|s| (s.min_duration_on, s.pad_offset) = (0.25, 0.1)), &p), [iv(0.1, 0.4)]);
    // Raw [0, 0.2] and [0.4, 0.5]: a 0.2 s gap stays with min_duration_off 0.15; padded by 0.1 after, the gap is
    // 0.1 s and fills: [0, 0.6].
    let p = [0.9, 0.9, 0.1, 0.1, 0.9, 0.1, 0.1];
    assert_eq!(run(with(|s| s.min_duration_off = 0.15), &p), [iv(0.0, 0.2), iv(0.4, 0.5)]);
    assert_eq!(run(with(|s| (s.min_duration_off, s.pad_offset) = (0.15, 0.1)), &p), [iv(0.0, 0.6)]);
}

#[test]
fn segments_are_rounded_sorted_and_limited_to_the_most_active_speakers() {
    // Two speakers × 6 rows of 80 ms ([speaker 0, speaker 1] per row), repeated into 10 ms frames. Speaker 0: rows
    // 1–2 → [0.08, 0.24]; speaker 1: rows 0–4. The last row is past `valid_rows` (5): speaker 0's 0.9 there is not
    // seen.
    let p: [f32; 12] = [0.1, 0.9, 0.9, 0.9, 0.9, 0.9, 0.1, 0.9, 0.1, 0.9, 0.9, 0.9];
    let grid = FrameGrid::sortformer(8);
    let seg = |speaker, start, end| Segment { speaker, start, end };
    let all = PostProcessing::default().segments(&p, 2, 5, grid);
    // Speaker 1 is still on after the last valid row: it ends at (5 × 8 − 1) × 0.01 = 0.39.
    assert_eq!(all, [seg(1, 0.0, 0.39), seg(0, 0.08, 0.24)]);
    let one = PostProcessing { max_speakers: Some(1), ..PostProcessing::default() }.segments(&p, 2, 5, grid);
    assert_eq!(one, [seg(1, 0.0, 0.39)]);
}

#[test]
fn the_stream_gives_what_the_offline_function_gives_and_no_later() {
    // Callhome-v2 settings on a long random column: every segment comes out once final, and the stream as a whole
    // equals `intervals`.
    let settings = PostProcessing {
        onset: 0.641,
        offset: 0.561,
        pad_onset: 0.229,
        pad_offset: 0.079,
        min_duration_on: 0.511,
        min_duration_off: 0.296,
        ..PostProcessing::default()
    };
    let mut rng = StdRng::seed_from_u64(11);
    let column: Vec<f32> = (0..3000).map(|_| rng.random::<f64>().powf(0.7) as f32).collect();
    let grid = FrameGrid::sortformer(8);
    let mut stream = SpeakerPostProcessor::new(&settings, grid);
    let mut out = Vec::new();
    let mut latest = 0.0f32;
    for (row, &p) in column.iter().enumerate() {
        let before = out.len();
        stream.push(p, &mut out);
        for interval in &out[before..] {
            // A segment is released at most pad_onset + pad_offset + min_duration_off + min_duration_on after it
            // ended (plus a frame).
            let now = (row + 1) as f32 * 0.08;
            assert!(now - interval.end <= 0.229 + 0.079 + 0.296 + 0.511 + 0.09, "released late: {interval:?} at {now}");
            assert!(interval.start >= latest, "out of order");
            latest = interval.end;
        }
    }
    stream.finish(&mut out);
    assert!(out.len() > 10, "the random column should give segments: {}", out.len());
    assert_eq!(out, settings.intervals(column.iter().copied(), grid));
}

// ---- NeMo's own outputs ----

fn number(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

fn intervals_of(v: &Value) -> Vec<Vec<(f64, f64)>> {
    let speakers = v.as_array().expect("per speaker");
    speakers
        .iter()
        .map(|s| s.as_array().expect("segments").iter().map(|p| (number(&p[0]), number(&p[1]))).collect())
        .collect()
}

fn settings_of(params: &Value) -> PostProcessing {
    PostProcessing {
        onset: number(&params["onset"]),
        offset: number(&params["offset"]),
        pad_onset: number(&params["pad_onset"]),
        pad_offset: number(&params["pad_offset"]),
        min_duration_on: number(&params["min_duration_on"]),
        min_duration_off: number(&params["min_duration_off"]),
        filter_speech_first: params.get("filter_speech_first").is_none_or(|f| number(f) == 1.0),
        max_speakers: None,
    }
}

/// Runs one speaker's column in the example's precision.
fn speaker<P: Probability>(settings: &PostProcessing, column: Vec<P>, grid: FrameGrid) -> Vec<(f64, f64)> {
    settings.intervals(column, grid).iter().map(|i| (i.start as f64, i.end as f64)).collect()
}

#[test]
fn nemo_examples_reproduce_exactly() {
    let expected: Value = serde_json::from_str(&std::fs::read_to_string(testdata("expected.json")).unwrap()).unwrap();
    let examples = expected["examples"].as_array().unwrap();
    assert_eq!(examples.len(), 24);
    for ex in examples {
        let name = ex["name"].as_str().unwrap();
        let settings = settings_of(&ex["params"]);
        let grid = FrameGrid {
            repeat: ex["unit_10ms_frame_count"].as_u64().unwrap() as usize,
            frame_seconds: number(&ex["frame_length_in_sec"]),
        };
        let binarize_only = PostProcessing { min_duration_on: 0.0, min_duration_off: 0.0, ..settings };
        let columns: Vec<Vec<f64>> = ex["probabilities"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c.as_array().unwrap().iter().map(number).collect())
            .collect();
        let run = |s: &PostProcessing, column: &[f64]| match ex["dtype"].as_str().unwrap() {
            "float32" => speaker(s, column.iter().map(|&p| p as f32).collect(), grid),
            _ => speaker(s, column.to_vec(), grid),
        };
        let binarized: Vec<_> = columns.iter().map(|c| run(&binarize_only, c)).collect();
        assert_eq!(binarized, intervals_of(&ex["binarized"]), "{name}: binarized");
        let final_segments: Vec<_> = columns.iter().map(|c| run(&settings, c)).collect();
        assert_eq!(final_segments, intervals_of(&ex["segments"]), "{name}: segments");

        // Rounded as NeMo's diarize rounds; its output lines drop what rounding emptied.
        let mut lines = Vec::new();
        for (k, (column, rounded)) in columns.iter().zip(intervals_of(&ex["segments_rounded"])).enumerate() {
            let segments = match ex["dtype"].as_str() {
                Some("float32") => {
                    let column: Vec<f32> = column.iter().map(|&p| p as f32).collect();
                    settings.segments(&column, 1, usize::MAX, grid)
                }
                _ => settings.segments(column, 1, usize::MAX, grid),
            };
            let got: Vec<(f64, f64)> = segments.iter().map(|s| (s.start, s.end)).collect();
            let nonempty: Vec<(f64, f64)> = rounded.into_iter().filter(|(s, e)| e > s).collect();
            assert_eq!(got, nonempty, "{name}: speaker {k} rounded");
            lines.extend(got.iter().map(|(s, e)| format!("{s:.3} {e:.3} speaker_{k}")));
        }
        let want: Vec<&str> = ex["output_lines"].as_array().unwrap().iter().map(|l| l.as_str().unwrap()).collect();
        assert_eq!(lines, want, "{name}: output lines");
    }
}

// ---- YAML ----

#[test]
fn nemo_yaml_files_are_read_in_both_layouts() {
    let expected: Value = serde_json::from_str(&std::fs::read_to_string(testdata("expected.json")).unwrap()).unwrap();
    // What NeMo's loader makes of the files it can read.
    for name in ["parameters.yaml", "partial.yaml"] {
        let ours = PostProcessing::read_nemo_yaml(&testdata("yaml").join(name)).unwrap();
        assert_eq!(ours, settings_of(&expected["yaml"][name]["nemo"]), "{name}");
    }
    // The top-level layout, which NeMo's loader refuses (`KeyError: 'parameters'`), is read too.
    assert_eq!(expected["yaml"]["top_level.yaml"]["nemo_error"], "KeyError: 'parameters'");
    let top = PostProcessing::read_nemo_yaml(&testdata("yaml/top_level.yaml")).unwrap();
    let want = PostProcessing {
        onset: 0.64,
        offset: 0.74,
        pad_onset: 0.06,
        pad_offset: 0.0,
        min_duration_on: 0.1,
        min_duration_off: 0.15,
        ..PostProcessing::default()
    };
    assert_eq!(top, want);
    // NeMo ignores unknown keys; here they are an error naming the key.
    let with_unknown = testdata("yaml/parameters_filter_speech_first.yaml");
    let error = PostProcessing::read_nemo_yaml(&with_unknown).unwrap_err().to_string();
    assert!(
        error.contains("parameters_filter_speech_first.yaml") && error.contains("unknown key `window_length_in_sec`"),
        "{error}"
    );
    // Without it: NeMo's values (integers read as floats), and filter_speech_first: false.
    let text = std::fs::read_to_string(&with_unknown).unwrap().replace("  window_length_in_sec: 0.63\n", "");
    let read = PostProcessing::from_nemo_yaml(&text, "edited.yaml").unwrap();
    let nemo = settings_of(&expected["yaml"]["parameters_filter_speech_first.yaml"]["nemo"]);
    assert_eq!(read, PostProcessing { filter_speech_first: false, ..nemo });
}

#[test]
fn bad_yaml_is_named() {
    for (text, needle) in [
        ("onset: 0.5\nonsett: 0.6\n", "bad.yaml: unknown key `onsett`"),
        ("parameters:\n  onset: 0.5\nextra: 1\n", "unknown key `extra` next to `parameters`"),
        ("parameters: 3\n", "`parameters` is not a mapping"),
        ("onset: high\n", "`onset` is a string, expected a number"),
        ("onset: 1.5\n", "onset = 1.5 (must be a probability in [0, 1])"),
        ("min_duration_on: -0.1\n", "min_duration_on = -0.1"),
        ("filter_speech_first: maybe\n", "`filter_speech_first` is a string (maybe)"),
        ("filter_speech_first: 0.5\n", "`filter_speech_first` is a number (0.5), expected true or false"),
        ("- 1\n- 2\n", "expected a mapping"),
        ("onset: [0.5\n", "bad.yaml: not YAML"),
        ("", "bad.yaml: expected a mapping"),
    ] {
        let error = PostProcessing::from_nemo_yaml(text, "bad.yaml").unwrap_err().to_string();
        assert!(error.contains(needle), "{text:?}: {error:?} should contain {needle:?}");
    }
    let flags = PostProcessing::from_nemo_yaml("filter_speech_first: True\nmin_duration_off: 1\n", "ok.yaml").unwrap();
    assert_eq!((flags.filter_speech_first, flags.min_duration_off), (true, 1.0));
    let zero = PostProcessing::from_nemo_yaml("parameters:\n  filter_speech_first: 0.0\n", "ok.yaml").unwrap();
    assert!(!zero.filter_speech_first);
}
