//! `diarize --stream` and `bench --stream` run as a user runs them: the JSON-lines events against the segment file
//! written at the end and the offline rules, raw PCM on standard input, pacing, refusals.

mod cli_support;

use std::process::{Command, Output, Stdio};

use cli_support::{ok, path_str, run, testdata};
use nemotron_testkit::assert_close;
use nemotron_testkit::postprocess::diarization::formats::to_rttm;
use nemotron_testkit::postprocess::diarization::{FrameGrid, PostProcessing, threshold_segments};
use nemotron_testkit::towers::Checkpoint;

/// `nemotron-audio args` with `stdin` written to its standard input (from another thread: the binary prints
/// while it reads).
fn run_with_stdin(args: &[&str], stdin: &[u8]) -> Output {
    use std::io::Write;
    let mut child = Command::new(env!("CARGO_BIN_EXE_nemotron-audio"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary runs");
    let mut input = child.stdin.take().unwrap();
    std::thread::scope(|scope| {
        // The binary may stop reading early (an error): a broken pipe here is its answer, not a failure.
        scope.spawn(move || input.write_all(stdin));
        child.wait_with_output().unwrap()
    })
}

/// [`run_with_stdin`], asserting success; returns stdout.
fn ok_with_stdin(args: &[&str], stdin: &[u8]) -> String {
    let output = run_with_stdin(args, stdin);
    assert!(output.status.success(), "nemotron-audio {args:?} failed:\n{}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8(output.stdout).unwrap()
}

/// A closed segment: (speaker, start, end) in seconds.
type Closed = (usize, f64, f64);

/// Checks the documented JSON lines of `stdout` and returns the segments their end events close, ordered by start
/// then speaker: each line holds only its documented keys; per speaker, a start is closed by the next end, which
/// names it, and the next start comes after that end. With `in_time_order` (the default rule) all events come in
/// time order.
fn closed_segments(stdout: &str, in_time_order: bool) -> Vec<Closed> {
    let (mut open, mut last_end, mut closed, mut last_time) = (vec![None; 8], vec![0.0; 8], Vec::new(), 0.0);
    for line in stdout.lines() {
        let value: serde_json::Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("`{line}`: {e}"));
        let number = |key: &str| value[key].as_f64().unwrap_or_else(|| panic!("`{line}`: {key}"));
        let (speaker, time) = (value["speaker"].as_u64().unwrap() as usize, number("time"));
        assert!(!in_time_order || time >= last_time, "`{line}`: events come in time order");
        last_time = time;
        let keys = value.as_object().unwrap().len();
        match value["event"].as_str() {
            Some("start") => {
                assert_eq!(keys, 3, "`{line}`: event, speaker, time");
                assert!(open[speaker].replace(time).is_none(), "`{line}`: already open");
                assert!(time >= last_end[speaker], "`{line}`: before the speaker's previous end");
            }
            Some("end") => {
                assert_eq!(keys, 5, "`{line}`: event, speaker, time, start, end");
                assert_eq!(open[speaker].take(), Some(number("start")), "`{line}` closes the open segment");
                assert_eq!(number("end"), time, "`{line}`");
                assert!(time > number("start"), "`{line}`");
                last_end[speaker] = time;
                closed.push((speaker, number("start"), time));
            }
            _ => panic!("`{line}`: unknown event"),
        }
    }
    assert!(open.iter().all(Option::is_none), "every segment closed: {stdout}");
    closed.sort_by(|a, b| a.1.total_cmp(&b.1).then(a.0.cmp(&b.0)));
    closed
}

/// `diarize --stream` of diar-tiny's audio.wav in `latency` with `more` flags: (stdout, the `--out` tensors).
fn stream(latency: &str, more: &[&str], out: &std::path::Path) -> (String, Checkpoint) {
    let case = testdata("reference/diar-tiny");
    let audio = case.join("audio.wav");
    let args = ["--quiet", "diarize", "--model", path_str(&case), "--stream", "--latency", latency, "--audio"];
    let args = [&args[..], &[path_str(&audio), "--out", path_str(out)], more].concat();
    let stdout = String::from_utf8(ok(&args).stdout).unwrap();
    (stdout, Checkpoint::open(out).unwrap())
}

#[test]
fn diarize_stream_prints_events_that_close_the_segments_of_its_rttm() {
    let dir = tempfile::tempdir().unwrap();
    let (out, rttm) = (dir.path().join("s.safetensors"), dir.path().join("s.rttm"));
    let (stdout, got) = stream("ultra-low", &["--rttm", path_str(&rttm)], &out);
    let closed = closed_segments(&stdout, true);
    assert!(closed.len() > 3, "a test with segments: {stdout}");
    // The RTTM written at the end is offline's rule on the session's logits, and holds exactly the closed segments.
    let logits = got.f32("speaker_logits").unwrap();
    assert_eq!(got.tensor("speaker_logits").unwrap().shape, [913, 8]);
    assert_eq!(got.tensor("speaker_probabilities").unwrap().shape, [115, 8]);
    let offline = threshold_segments(&logits, 8, 913, 0.5);
    assert_eq!(std::fs::read_to_string(&rttm).unwrap(), to_rttm("audio", &offline));
    let offline: Vec<Closed> = offline.iter().map(|s| (s.speaker, s.start, s.end)).collect();
    assert_eq!(closed, offline);
    // The logits are upstream's session's.
    let case = testdata("reference/diar-tiny");
    let reference = Checkpoint::open(&case.join("streaming.safetensors")).unwrap();
    assert_close("stream cli logits", &logits, &reference.f64("ultra_low_latency.speaker_logits").unwrap(), 1e-5);
    // Raw PCM on standard input gives the same events as the file.
    let samples = Checkpoint::open(&case.join("reference.safetensors")).unwrap().f32("waveform").unwrap();
    let bytes: Vec<u8> = samples.iter().flat_map(|s| s.to_le_bytes()).collect();
    let raw = ["--quiet", "diarize", "--model", path_str(&case), "--stream", "--latency", "ultra-low"];
    let raw = [&raw[..], &["--audio", "-", "--raw-rate", "16000", "--raw-format", "f32le"]].concat();
    assert_eq!(ok_with_stdin(&raw, &bytes), stdout);
}

#[test]
fn diarize_stream_post_processes_causally_into_the_offline_segments() {
    let dir = tempfile::tempdir().unwrap();
    let (out, json, yaml) = (dir.path().join("s.safetensors"), dir.path().join("s.json"), dir.path().join("p.yaml"));
    let nemo =
        "parameters:\n  onset: 0.55\n  offset: 0.35\n  pad_onset: 0.05\n  pad_offset: 0.1\n  min_duration_on: 0.1\n";
    std::fs::write(&yaml, nemo).unwrap();
    // A NeMo file, a flag over it, and a JSON segment file.
    let flags = ["--postprocessing", path_str(&yaml), "--min-duration-off", "0.15", "--segments", path_str(&json)];
    let (stdout, got) = stream("very-low", &flags, &out);
    let closed = closed_segments(&stdout, false);
    // The JSON file (upstream's layout) holds the closed segments, and they are NeMo's post-processing of the
    // session's probabilities, offline.
    let file: Vec<serde_json::Value> = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let number = |v: &serde_json::Value| v.as_f64().unwrap();
    let written: Vec<Closed> = file
        .iter()
        .map(|s| (s["Speaker"].as_u64().unwrap() as usize, number(&s["Start"]), number(&s["End"])))
        .collect();
    assert_eq!(closed, written);
    let settings = PostProcessing { min_duration_off: 0.15, ..PostProcessing::read_nemo_yaml(&yaml).unwrap() };
    assert_eq!((settings.onset, settings.pad_offset, settings.min_duration_on), (0.55, 0.1, 0.1));
    let probabilities = got.f32("speaker_probabilities").unwrap();
    let offline = settings.segments(&probabilities, 8, probabilities.len() / 8, FrameGrid::sortformer(8));
    let offline: Vec<Closed> = offline.iter().map(|s| (s.speaker, s.start, s.end)).collect();
    assert!(offline.len() > 3, "a test with segments: {offline:?}");
    assert_eq!(closed, offline);
}

#[test]
fn diarize_stream_reads_16_bit_pcm_like_a_16_bit_wav_and_paces_files_in_real_time() {
    let dir = tempfile::tempdir().unwrap();
    let wav = dir.path().join("s16.wav");
    let samples: Vec<i16> = (0..24_000).map(|i| ((i as f32 * 0.031).sin() * 12_000.0) as i16).collect();
    let spec = hound::WavSpec {
        channels: 1,
        sample_rate: 16_000,
        bits_per_sample: 16,
        sample_format: hound::SampleFormat::Int,
    };
    let mut writer = hound::WavWriter::create(&wav, spec).unwrap();
    samples.iter().for_each(|&s| writer.write_sample(s).unwrap());
    writer.finalize().unwrap();
    let base = ["--quiet", "diarize", "--demo", "--stream", "--latency", "very-low"];
    let started = std::time::Instant::now();
    let from_file = String::from_utf8(ok(&[&base[..], &["--audio", path_str(&wav), "--realtime"]].concat()).stdout);
    let elapsed = started.elapsed().as_secs_f64();
    assert!(elapsed >= 1.4, "1.5 s of audio paced in real time took {elapsed:.2} s");
    let bytes: Vec<u8> = samples.iter().flat_map(|s| s.to_le_bytes()).collect();
    let raw = [&base[..], &["--audio", "-", "--raw-rate", "16000", "--raw-format", "s16le"]].concat();
    assert_eq!(ok_with_stdin(&raw, &bytes), from_file.unwrap());
}

#[test]
fn diarize_stream_refuses_what_it_cannot_do() {
    let wav = testdata("reference/tiny-chunks/audio.wav");
    let features = testdata("reference/tiny-chunks/reference.safetensors");
    let file = ["diarize", "--demo", "--stream", "--audio", path_str(&wav)];
    let raw = ["diarize", "--demo", "--stream", "--audio", "-"];
    for args in [
        &["diarize", "--demo", "--audio", path_str(&wav), "--latency", "low"][..],
        &["diarize", "--demo", "--stream", "--features", path_str(&features)],
        &["diarize", "--demo", "--stream"],
        &[&raw[..], &["--raw-rate", "16000"]].concat(),
        &[&raw[..], &["--raw-format", "s16le"]].concat(),
        &[&raw[..], &["--raw-rate", "8000", "--raw-format", "s16le"]].concat(),
        &[&raw[..], &["--raw-rate", "16000", "--raw-format", "u8"]].concat(),
        &[&raw[..], &["--raw-rate", "16000", "--raw-format", "s16le", "--realtime"]].concat(),
        &[&file[..], &["--raw-format", "s16le"]].concat(),
        // Standard output carries the events; the most active speakers are known only at the end.
        &[&file[..], &["--segments", "-"]].concat(),
        &[&file[..], &["--max-speakers", "2"]].concat(),
        &[&file[..], &["--onset", "0.6", "--max-speakers", "2"]].concat(),
        &["bench", "--stream", "--profile"],
    ] {
        let output = run(args);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "nemotron-audio {args:?}: {stderr}");
    }
    // A stream cut inside a sample is a runtime error that says so.
    let raw = [&["--quiet"][..], &raw, &["--raw-rate", "16000", "--raw-format", "f32le"]].concat();
    let output = run_with_stdin(&raw, &[0u8; 4 * 3000 + 3]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("ended inside a sample: 3 stray bytes after 3000 samples"), "{stderr}");
}

#[test]
fn bench_stream_measures_every_mode() {
    let config = testdata("reference/diar-tiny/config.json");
    let output = ok(&["bench", "--stream", "--config", path_str(&config), "--seconds", "2", "--max-sessions", "2"]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    for mode in ["low_latency", "very_low_latency", "ultra_low_latency"] {
        let lines: Vec<&str> = stdout.lines().filter(|l| l.trim_start().starts_with(mode)).collect();
        assert!(lines.iter().any(|l| l.contains("chunks of") && l.contains("p99")), "{mode}: {stdout}");
        let start = format!("{mode}: a session starts in median ");
        let started = |l: &&&str| l.starts_with(&start) && l.contains("with a 30 s speaker profile: primed in median");
        assert!(lines.iter().any(|l| started(&l) && l.contains("forked from a primed one in median")), "{stdout}");
        for how in ["each on its own", "batched"] {
            let trial = format!("{mode}, {how} × 1 sessions");
            assert!(lines.iter().any(|l| l.trim_start().starts_with(&trial)), "{mode}, {how}: {stdout}");
            let capacity = format!("{mode}, {how}: ");
            let said = |l: &&&str| l.starts_with(&capacity) && (l.contains("keep up") || l.contains("keeps up"));
            assert!(lines.iter().any(|l| said(&l)), "{mode}, {how}: {stdout}");
        }
    }
}

#[test]
fn bench_serve_loads_the_server_with_real_time_clients() {
    let config = testdata("reference/diar-tiny/config.json");
    let args = ["--latencies", "ultra-low", "--clients", "1,3", "--seconds", "3", "--admission-trials", "1"];
    let output = ok(&[&["bench", "--serve", "--config", path_str(&config)][..], &args[..]].concat());
    let stdout = String::from_utf8_lossy(&output.stdout);
    // One narrowing trial after the two asked for: 6 clients if both kept up, 2 if 3 fell behind, none if 1 did.
    let trials: Vec<&str> = stdout.lines().filter(|l| l.starts_with("serve ultra-low × ")).collect();
    let kept = |clients: usize| {
        trials.iter().any(|l| l.starts_with(&format!("serve ultra-low × {clients} clients:")) && l.contains("keeps up"))
    };
    let narrowing = if kept(3) {
        Some(6)
    } else if kept(1) {
        Some(2)
    } else {
        None
    };
    assert_eq!(trials.len(), 2 + narrowing.iter().len(), "{stdout}");
    let admission =
        stdout.lines().find(|l| l.starts_with("admission ultra-low: ")).unwrap_or_else(|| panic!("{stdout}"));
    let most = [1, 3].into_iter().chain(narrowing).filter(|&c| kept(c)).max();
    match most {
        Some(most) => assert!(admission.contains(&format!(": {most} clients keep up (p99 ")), "{admission}"),
        None => assert!(admission.contains("none of the counts tried keeps up"), "{admission}"),
    }
    for clients in [1, 3] {
        let line = stdout
            .lines()
            .find(|l| l.starts_with(&format!("serve ultra-low × {clients} clients: per-chunk latency")))
            .unwrap_or_else(|| panic!("no trial of {clients} clients: {stdout}"));
        // 3 s in frames of 0.24 s: 12 whole frames and a short one per client, each acknowledged; half of them end in
        // the second half.
        assert!(line.contains(&format!("({} chunks)", 7 * clients)), "{line}");
        assert!(!line.contains("failed"), "{line}");
    }
    let refused = run(&["bench", "--serve", "--clients", "0"]);
    assert_eq!(refused.status.code(), Some(2), "zero clients is a usage error");
}
