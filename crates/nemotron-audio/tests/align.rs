//! `nemotron-audio align` and `encode --word-timestamps` run as a user runs them: the words of upstream's alignment
//! from the demo model, SRT and WebVTT files that parse back to the same cues, and the errors of a checkpoint
//! without the head or without its tokenizer.

#[path = "../../nemotron-towers/tests/common/mod.rs"]
mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::{edited_weights, model_dir};
use nemotron_testkit::postprocess::alignment::subtitles::{Cue, cues};
use nemotron_testkit::postprocess::alignment::{Alignment, DiarizationSegment, WordChunk};
use nemotron_testkit::towers::Checkpoint;
use serde_json::Value;

fn testdata(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata").join(path)
}

/// Runs the binary; never a panic.
fn nemotron_audio(args: &[&str]) -> Output {
    let output = Command::new(env!("CARGO_BIN_EXE_nemotron-audio")).args(args).output().expect("the binary runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!stderr.contains("panicked"), "nemotron-audio {args:?} panicked:\n{stderr}");
    output
}

fn status_and_stderr(args: &[&str]) -> (Option<i32>, String) {
    let output = nemotron_audio(args);
    (output.status.code(), String::from_utf8_lossy(&output.stderr).into_owned())
}

fn upstream_runs() -> Value {
    let text = std::fs::read(testdata("reference/tiny-release-chunks/word_timestamps.json")).unwrap();
    serde_json::from_slice(&text).unwrap()
}

/// An alignment read back from the JSON `align` writes.
fn read_alignment(json: &Value) -> Alignment {
    let pair = |v: &Value| (v[0].as_f64().unwrap(), v[1].as_f64().unwrap());
    Alignment {
        chunks: json["chunks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|w| WordChunk {
                text: w["text"].as_str().unwrap().into(),
                timestamp: pair(&w["timestamp"]),
                speaker: w["speaker"].as_u64(),
            })
            .collect(),
        diarization: json["diarization"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| DiarizationSegment {
                speaker: s["speaker"].as_u64().unwrap() as usize,
                timestamp: pair(&s["timestamp"]),
            })
            .collect(),
        speaker_tag_to_diarization_speaker: Vec::new(),
        failed_speakers: Vec::new(),
    }
}

/// `HH:MM:SS<separator>mmm` → seconds; anything else fails the test.
fn parse_clock(text: &str, separator: char) -> f64 {
    let (hms, ms) = text.split_once(separator).unwrap_or_else(|| panic!("no `{separator}` in {text:?}"));
    let parts: Vec<&str> = hms.split(':').collect();
    assert!(parts.len() == 3 && parts.iter().all(|p| p.len() == 2) && ms.len() == 3, "bad time {text:?}");
    let number = |s: &str| s.parse::<u64>().unwrap_or_else(|_| panic!("bad time {text:?}")) as f64;
    assert!(number(parts[1]) < 60.0 && number(parts[2]) < 60.0, "bad time {text:?}");
    number(parts[0]) * 3600.0 + number(parts[1]) * 60.0 + number(parts[2]) + number(ms) / 1000.0
}

/// A cue's timing line `start --> end`.
fn parse_timing(line: &str, separator: char) -> (f64, f64) {
    let (start, end) = line.split_once(" --> ").unwrap_or_else(|| panic!("bad timing line {line:?}"));
    let (start, end) = (parse_clock(start, separator), parse_clock(end, separator));
    assert!(start <= end, "cue ends before it starts: {line:?}");
    (start, end)
}

/// Parses SubRip: blocks of a number (1, 2, …), a timing line, a text line `[speaker N] words`.
fn parse_srt(text: &str) -> Vec<Cue> {
    assert!(text.ends_with("\n\n") || text.is_empty(), "every cue ends with a blank line");
    text.split_terminator("\n\n")
        .enumerate()
        .map(|(i, block)| {
            let lines: Vec<&str> = block.lines().collect();
            assert_eq!(lines.len(), 3, "cue {block:?}");
            assert_eq!(lines[0], (i + 1).to_string(), "cues are numbered from 1");
            let (start, end) = parse_timing(lines[1], ',');
            let (speaker, text) = match lines[2].strip_prefix("[speaker ") {
                Some(rest) => {
                    let (n, text) = rest.split_once("] ").expect("speaker label");
                    (Some(n.parse().unwrap()), text)
                }
                None => (None, lines[2]),
            };
            Cue { start, end, speaker, name: None, text: text.into() }
        })
        .collect()
}

/// Parses WebVTT: the header, then blocks of a timing line and `<v speaker N>words</v>`.
fn parse_vtt(text: &str) -> Vec<Cue> {
    let body = text.strip_prefix("WEBVTT\n\n").expect("WEBVTT header");
    body.split_terminator("\n\n")
        .map(|block| {
            let lines: Vec<&str> = block.lines().collect();
            assert_eq!(lines.len(), 2, "cue {block:?}");
            let (start, end) = parse_timing(lines[0], '.');
            let (speaker, text) = match lines[1].strip_prefix("<v speaker ") {
                Some(rest) => {
                    let (n, text) = rest.split_once('>').expect("voice span");
                    (Some(n.parse().unwrap()), text.strip_suffix("</v>").expect("closed voice span"))
                }
                None => (None, lines[1]),
            };
            Cue {
                start,
                end,
                speaker,
                name: None,
                text: text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&"),
            }
        })
        .collect()
}

fn rounded(cues: &[Cue]) -> Vec<Cue> {
    let ms = |t: f64| (t * 1000.0).round() / 1000.0;
    cues.iter().map(|c| Cue { start: ms(c.start), end: ms(c.end), ..c.clone() }).collect()
}

#[test]
fn align_with_the_demo_model_gives_upstreams_words_and_subtitles_that_parse_back() {
    let dir = tempfile::tempdir().unwrap();
    let (out, srt, vtt) = (dir.path().join("words.json"), dir.path().join("subs.srt"), dir.path().join("subs.vtt"));
    let runs = upstream_runs();
    let run = &runs["runs"][0];
    assert_eq!(run["name"], "diarized");
    let features = testdata("reference/tiny-release-chunks/reference.safetensors");
    let output = nemotron_audio(&[
        "--quiet",
        "align",
        "--demo",
        "--features",
        features.to_str().unwrap(),
        "--transcript",
        run["transcript"].as_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--srt",
        srt.to_str().unwrap(),
        "--vtt",
        vtt.to_str().unwrap(),
    ]);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let json: Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    let want = &run["result"];
    assert_eq!(json["speaker_tag_to_diarization_speaker"], want["speaker_tag_to_diarization_speaker"]);
    assert_eq!(json["failed_speakers"], want["failed_speakers"]);
    let (got, expected) = (json["chunks"].as_array().unwrap(), want["chunks"].as_array().unwrap());
    assert_eq!(got.len(), expected.len());
    for (g, w) in got.iter().zip(expected) {
        assert_eq!((&g["text"], &g["speaker"]), (&w["text"], &w["speaker"]));
        for k in 0..2 {
            let (a, b) = (g["timestamp"][k].as_f64().unwrap(), w["timestamp"][k].as_f64().unwrap());
            assert!((a - b).abs() <= 1e-6, "{g} vs {w}");
        }
    }
    let alignment = read_alignment(&json);
    let want_cues = rounded(&cues(&alignment, &[]));
    assert!(!want_cues.is_empty());
    let srt_cues = parse_srt(&std::fs::read_to_string(&srt).unwrap());
    let vtt_cues = parse_vtt(&std::fs::read_to_string(&vtt).unwrap());
    assert_eq!(srt_cues, want_cues, "SRT cues");
    assert_eq!(vtt_cues, want_cues, "WebVTT cues");
    // Every word is in exactly one cue, in its speaker's order.
    let words: usize = srt_cues.iter().map(|c| c.text.split(' ').count()).sum();
    assert_eq!(words, alignment.chunks.len());
    assert!(srt_cues.iter().all(|c| c.speaker.is_some()));
}

#[test]
fn align_prints_json_without_outputs_and_reads_a_transcript_file() {
    let dir = tempfile::tempdir().unwrap();
    let transcript = dir.path().join("transcript.txt");
    std::fs::write(&transcript, "hello there how are you fine thanks and you\n").unwrap();
    let case = testdata("reference/tiny-chunks");
    let output = nemotron_audio(&[
        "--quiet",
        "align",
        "--model",
        case.to_str().unwrap(),
        "--audio",
        case.join("audio.wav").to_str().unwrap(),
        "--transcript-file",
        transcript.to_str().unwrap(),
    ]);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let json: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(json["chunks"].as_array().unwrap().len(), 9);
    assert_eq!(json["speaker_tag_to_diarization_speaker"].as_object().unwrap().len(), 1, "untagged: tag 0 only");
}

#[test]
fn align_errors_name_what_is_missing() {
    let case = testdata("reference/tiny-chunks");
    let audio = case.join("audio.wav");
    let (status, stderr) = status_and_stderr(&["align", "--demo", "--audio", audio.to_str().unwrap()]);
    assert_eq!(status, Some(2), "no transcript is a usage error: {stderr}");
    // Weights without the head, and a folder without alignment_tokenizer/.
    let without_head = model_dir(&edited_weights(|name, t| (!name.starts_with("ctc_timestamp.")).then_some(t)));
    std::fs::create_dir(without_head.path().join("alignment_tokenizer")).unwrap();
    std::fs::copy(
        testdata("reference/tiny-release-chunks/alignment_tokenizer/tokenizer.json"),
        without_head.path().join("alignment_tokenizer/tokenizer.json"),
    )
    .unwrap();
    let model = without_head.path().to_str().unwrap();
    let args = ["--quiet", "align", "--model", model, "--audio", audio.to_str().unwrap(), "--transcript", "hello"];
    let (status, stderr) = status_and_stderr(&args);
    assert_eq!(status, Some(1), "{stderr}");
    assert!(stderr.contains("the checkpoint has no word-timestamp head"), "{stderr}");
    let proto_only = model_dir(&edited_weights(|_, t| Some(t)));
    let model = proto_only.path().to_str().unwrap();
    let args = ["--quiet", "align", "--model", model, "--audio", audio.to_str().unwrap(), "--transcript", "hello"];
    let (status, stderr) = status_and_stderr(&args);
    assert_eq!(status, Some(1), "{stderr}");
    assert!(stderr.contains("alignment_tokenizer/tokenizer.json") && stderr.contains("model_proto"), "{stderr}");
}

#[test]
fn encode_writes_word_timestamp_logits_only_when_asked() {
    let dir = tempfile::tempdir().unwrap();
    let features = testdata("reference/tiny-chunks/reference.safetensors");
    let model = testdata("reference/tiny-chunks");
    for (flag, expected) in [(None, false), (Some("--word-timestamps"), true)] {
        let out = dir.path().join("out.safetensors");
        let mut args = vec!["--quiet", "encode", "--model", model.to_str().unwrap(), "--features"];
        args.extend([features.to_str().unwrap(), "--out", out.to_str().unwrap()]);
        args.extend(flag);
        let output = nemotron_audio(&args);
        assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
        let file = Checkpoint::open(&out).unwrap();
        assert_eq!(file.contains("word_timestamp_logits"), expected);
        if expected {
            let want = Checkpoint::open(&features).unwrap();
            assert_eq!(file.shape("word_timestamp_logits").unwrap(), want.shape("word_timestamp_logits").unwrap());
            nemotron_testkit::assert_close(
                "encode --word-timestamps",
                &file.f32("word_timestamp_logits").unwrap(),
                &want.f64("word_timestamp_logits").unwrap(),
                1e-5,
            );
        }
    }
}
