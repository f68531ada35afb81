//! `enroll` and `diarize --speakers` as a user runs them: the profile file is what the engine writes and reads, the
//! slots printed are the offline run's, the segments are the engine's diarization with speakers (names in RTTM, JSON
//! and CSV), and bad clips, names and combinations are refused with the right exit status.

mod cli_support;

use std::ops::ControlFlow;
use std::path::{Path, PathBuf};

use cli_support::{fails, ok, path_str, run, testdata};
use nemotron_engine::{
    AudioOptions, Engine, EngineOptions, Input, ModelSource, SegmentFormat, SegmentSettings, SpeakerProfile,
    StreamingMode, write_named_segments,
};

/// `duration` seconds of diar-tiny's recording from `offset`, written as a 16 kHz WAV in `dir`.
fn clip(dir: &Path, name: &str, offset: f64, duration: f64) -> PathBuf {
    let options = AudioOptions { offset, duration: Some(duration), ..AudioOptions::default() };
    let Input::Samples(samples) = Input::read_path(&testdata("reference/diar-tiny/audio.wav"), &options).unwrap()
    else {
        unreachable!("audio decodes to samples")
    };
    let path = dir.join(format!("{name}.wav"));
    let spec = hound::WavSpec {
        channels: 1,
        sample_rate: 16_000,
        bits_per_sample: 32,
        sample_format: hound::SampleFormat::Float,
    };
    let mut writer = hound::WavWriter::create(&path, spec).unwrap();
    samples.iter().for_each(|&s| writer.write_sample(s).unwrap());
    writer.finalize().unwrap();
    path
}

fn text(args: &[&str]) -> String {
    String::from_utf8(ok(args).stdout).expect("UTF-8 output")
}

#[test]
fn an_enrolled_profile_names_the_speakers_of_diarize_as_the_engine_does() {
    let dir = tempfile::tempdir().unwrap();
    let model = testdata("reference/diar-tiny");
    let recording = testdata("reference/diar-tiny/audio.wav");
    // Two clips that this random model hears in two different slots (the engine's tests chose them).
    let (alice, bob) = (clip(dir.path(), "alice", 0.0, 1.23), clip(dir.path(), "bob", 3.0, 1.99));
    let profile_path = dir.path().join("team.safetensors");
    let alice_arg = format!("alice={}", path_str(&alice));
    let bob_arg = format!("bob={}", path_str(&bob));
    let model_arg = path_str(&model);
    let slots = text(&[
        "-q",
        "enroll",
        "--model",
        model_arg,
        "--speaker",
        &alice_arg,
        "--speaker",
        &bob_arg,
        "--out",
        path_str(&profile_path),
    ]);

    let profile = SpeakerProfile::read(&profile_path).expect("enroll wrote a profile");
    assert_eq!(profile.names().collect::<Vec<_>>(), ["alice", "bob"]);
    let engine =
        Engine::load(&ModelSource::from_path(&model).unwrap(), &EngineOptions::default(), &mut |_, _, _| {}).unwrap();
    let silence = Input::Samples(vec![0.0; 16_000]);
    let named = engine.diarize_with_speakers(silence, &profile, &mut |_, _, _| ControlFlow::Continue(())).unwrap();
    let want_slots: String = ["alice", "bob"]
        .iter()
        .map(|name| {
            let slot = named.names().iter().position(|n| n.as_deref() == Some(*name)).unwrap();
            format!("{name}\tspk{slot}\n")
        })
        .collect();
    assert_eq!(slots, want_slots);

    let input = Input::read_path(&recording, &AudioOptions::default()).unwrap();
    let diarized = engine.diarize_with_speakers(input, &profile, &mut |_, _, _| ControlFlow::Continue(())).unwrap();
    let segments = diarized.segments_by(&SegmentSettings::default().segmenter().unwrap());
    let args =
        ["-q", "diarize", "--model", model_arg, "--audio", path_str(&recording), "--speakers", path_str(&profile_path)];
    for (format, name) in [(SegmentFormat::Rttm, "rttm"), (SegmentFormat::Json, "json"), (SegmentFormat::Csv, "csv")] {
        let got = text(&[&args[..], &["--segments", "-", "--format", name]].concat());
        let want = write_named_segments(&segments, format, "audio", diarized.names());
        assert_eq!(got, want, "{name}");
    }
    let rttm = text(&[&args[..], &["--segments", "-"]].concat());
    assert!(rttm.lines().any(|l| l.contains(" alice ") || l.contains(" bob ")), "no enrolled name in\n{rttm}");
}

#[test]
fn bad_clips_names_and_combinations_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let model = testdata("reference/diar-tiny");
    let model_arg = path_str(&model);
    let out = dir.path().join("p.safetensors");
    let short = clip(dir.path(), "short", 0.0, 0.5);
    let long = clip(dir.path(), "long", 0.0, 1.5);
    let enroll =
        |speaker: &str| run(&["-q", "enroll", "--model", model_arg, "--speaker", speaker, "--out", path_str(&out)]);
    // Under 1 s: the audio's fault (1), named.
    let short_run = enroll(&format!("sam={}", path_str(&short)));
    assert_eq!(short_run.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&short_run.stderr).contains("sam"),
        "{}",
        String::from_utf8_lossy(&short_run.stderr)
    );
    // Not NAME=AUDIO, a name with whitespace: usage (2).
    assert_eq!(enroll(path_str(&long)).status.code(), Some(2));
    assert_eq!(enroll(&format!("two words={}", path_str(&long))).status.code(), Some(2));
    assert!(!out.exists(), "a refused enrollment wrote a profile");
    // A file that is not a profile, named, offline and live.
    let recording = testdata("reference/diar-tiny/audio.wav");
    let args = ["-q", "diarize", "--model", model_arg, "--audio", path_str(&recording), "--speakers"];
    fails(&[&args[..], &[path_str(&recording)]].concat(), "audio.wav");
    fails(&[&args[..], &[path_str(&recording), "--stream", "--segments", path_str(&out)]].concat(), "audio.wav");
}

/// Two clips the model hears in two slots, as a profile file in `dir`.
fn two_speakers(dir: &Path) -> (PathBuf, SpeakerProfile) {
    let clips = [("alice", 0.0, 1.23), ("bob", 3.0, 1.99)].map(|(name, offset, duration)| {
        let options = AudioOptions { offset, duration: Some(duration), ..AudioOptions::default() };
        match Input::read_path(&testdata("reference/diar-tiny/audio.wav"), &options).unwrap() {
            Input::Samples(samples) => (name.to_string(), samples),
            Input::Features(_) => unreachable!("audio decodes to samples"),
        }
    });
    let profile = SpeakerProfile::new(clips.into()).unwrap();
    let path = dir.join("team.safetensors");
    profile.write(&path).unwrap();
    (path, profile)
}

fn diar_tiny() -> Engine {
    let source = ModelSource::from_path(&testdata("reference/diar-tiny")).unwrap();
    Engine::load(&source, &EngineOptions::default(), &mut |_, _, _| {}).unwrap()
}

#[test]
fn a_stream_with_speakers_prints_the_engines_named_events_and_segments() {
    let dir = tempfile::tempdir().unwrap();
    let (profile_path, profile) = two_speakers(dir.path());
    let recording = testdata("reference/diar-tiny/audio.wav");
    let Input::Samples(samples) = Input::read_path(&recording, &AudioOptions::default()).unwrap() else {
        unreachable!("audio decodes to samples")
    };
    let engine = diar_tiny();
    let settings = SegmentSettings::default();
    let mut session = engine.stream_with_speakers(StreamingMode::VeryLowLatency, &settings, &profile).unwrap();
    let mut want = Vec::new();
    for piece in samples.chunks(1_600) {
        let events = session.push(piece).unwrap();
        want.extend(events.iter().map(|e| e.json_line_named(session.names())));
    }
    let finished = session.finish_recording().unwrap();
    want.extend(finished.events.iter().map(|e| e.json_line_named(finished.diarized.names())));
    assert!(want.iter().any(|line| line.contains(r#""name":"#)), "no named event: {want:?}");
    let rttm = dir.path().join("live.rttm");
    let got = text(&[
        "-q",
        "diarize",
        "--model",
        path_str(&testdata("reference/diar-tiny")),
        "--audio",
        path_str(&recording),
        "--stream",
        "--latency",
        "very-low",
        "--speakers",
        path_str(&profile_path),
        "--rttm",
        path_str(&rttm),
    ]);
    let mut got: Vec<String> = got.lines().map(str::to_string).collect();
    // Events that become final in one push may come in either order; the definition fixes which, not that order.
    got.sort();
    want.sort();
    assert_eq!(got, want);
    let want_rttm = write_named_segments(&finished.segments, SegmentFormat::Rttm, "audio", finished.diarized.names());
    assert_eq!(std::fs::read_to_string(&rttm).unwrap(), want_rttm);
}

#[test]
fn a_folder_or_a_manifest_with_speakers_names_each_entrys_speakers() {
    let dir = tempfile::tempdir().unwrap();
    let (profile_path, profile) = two_speakers(dir.path());
    let audio = dir.path().join("audio");
    std::fs::create_dir(&audio).unwrap();
    let pieces = [("a", 2.0, 6.0), ("b", 0.5, 0.7), ("c", 4.0, 3.1)];
    for (name, offset, duration) in pieces {
        let path = clip(&audio, name, offset, duration);
        assert!(path.is_file());
    }
    let out = dir.path().join("out");
    let model = testdata("reference/diar-tiny");
    ok(&[
        "-q",
        "diarize",
        "--model",
        path_str(&model),
        "--audio",
        path_str(&audio),
        "--out-dir",
        path_str(&out),
        "--speakers",
        path_str(&profile_path),
    ]);
    let engine = diar_tiny();
    let rule = SegmentSettings::default().segmenter().unwrap();
    let named_rttm = |input: Input, id: &str| {
        let diarized = engine.diarize_with_speakers(input, &profile, &mut |_, _, _| ControlFlow::Continue(())).unwrap();
        assert!(diarized.names().iter().flatten().count() == 2, "{id}: both named");
        write_named_segments(&diarized.segments_by(&rule), SegmentFormat::Rttm, id, diarized.names())
    };
    for (name, _, _) in pieces {
        let input = Input::read_path(&audio.join(format!("{name}.wav")), &AudioOptions::default()).unwrap();
        let got = std::fs::read_to_string(out.join(format!("{name}.rttm"))).unwrap();
        assert_eq!(got, named_rttm(input, name), "{name}");
    }

    // A manifest: the same stretches cut by each entry's offset and duration.
    let recording = testdata("reference/diar-tiny/audio.wav");
    let manifest = dir.path().join("manifest.jsonl");
    let lines: Vec<String> = pieces
        .iter()
        .map(|(name, offset, duration)| {
            let entry = serde_json::json!({
                "audio_filepath": recording, "offset": offset, "duration": duration, "uniq_id": format!("m-{name}")
            });
            entry.to_string()
        })
        .collect();
    std::fs::write(&manifest, lines.join("\n")).unwrap();
    let manifest_out = dir.path().join("manifest-out");
    ok(&[
        "-q",
        "diarize",
        "--model",
        path_str(&model),
        "--manifest",
        path_str(&manifest),
        "--out-dir",
        path_str(&manifest_out),
        "--speakers",
        path_str(&profile_path),
    ]);
    for (name, offset, duration) in pieces {
        let options = AudioOptions { offset, duration: Some(duration), ..AudioOptions::default() };
        let id = format!("m-{name}");
        let got = std::fs::read_to_string(manifest_out.join(format!("{id}.rttm"))).unwrap();
        assert_eq!(got, named_rttm(Input::read_path(&recording, &options).unwrap(), &id), "{id}");
    }
}

#[test]
fn align_with_speakers_writes_the_engines_named_alignment() {
    let dir = tempfile::tempdir().unwrap();
    let recording = testdata("reference/tiny-chunks/audio.wav");
    let Input::Samples(samples) = Input::read_path(&recording, &AudioOptions::default()).unwrap() else {
        unreachable!("audio decodes to samples")
    };
    let profile = SpeakerProfile::new(vec![("alice".to_string(), samples[..24_000].to_vec())]).unwrap();
    let profile_path = dir.path().join("alice.safetensors");
    profile.write(&profile_path).unwrap();
    let transcript = "<spk:0> the quick brown fox <spk:1> she sells sea shells";
    let engine = Engine::load(&ModelSource::Demo, &EngineOptions::default(), &mut |_, _, _| {}).unwrap();
    let request = nemotron_engine::AlignRequest { transcript: transcript.into(), language: None };
    let want = engine
        .align_with_speakers(Input::Samples(samples), &request, &profile, &mut |_, _, _| ControlFlow::Continue(()))
        .unwrap();
    let got = text(&[
        "-q",
        "align",
        "--demo",
        "--audio",
        path_str(&recording),
        "--transcript",
        transcript,
        "--speakers",
        path_str(&profile_path),
    ]);
    assert_eq!(got, want.to_json().unwrap());
    assert!(got.contains("\"speaker_names\""), "{got}");
}
