//! Known speakers on the diar-tiny checkpoint: a profile enrolled over HTTP is the engine's enrollment, written into
//! the speaker folder; uploads and streams that name it get what `diarize --speakers` writes and prints for the same
//! profile and audio (names in RTTM, JSON, CSV, events and `session.done`), a replaced profile's primed sessions are
//! not reused, and unknown, invalid or missing profiles and folders get their documented errors.

mod common;

use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use common::{TestServer, client, connect, f32le, session, session_start, start_on, until_close, wav};
use nemotron_engine::{
    AudioOptions, Engine, EngineOptions, Input, ModelSource, SegmentFormat, SegmentSettings, SpeakerProfile,
    StreamingMode, write_named_segments,
};
use nemotron_server::{Server, ServerError, ServerOptions};
use reqwest::StatusCode;
use reqwest::multipart::{Form, Part};
use serde_json::{Value, json};

fn testdata(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata").join(path)
}

/// The diar-tiny checkpoint, loaded once per test binary.
fn engine() -> Arc<Engine> {
    static ENGINE: OnceLock<Arc<Engine>> = OnceLock::new();
    ENGINE
        .get_or_init(|| {
            let source = ModelSource::from_path(&testdata("reference/diar-tiny")).expect("diar-tiny");
            Arc::new(Engine::load(&source, &EngineOptions::default(), &mut |_, _, _| {}).expect("diar-tiny loads"))
        })
        .clone()
}

/// `duration` seconds of diar-tiny's recording from `offset` (all of it with `None`).
fn audio(offset: f64, duration: Option<f64>) -> Vec<f32> {
    let options = AudioOptions { offset, duration, ..AudioOptions::default() };
    match Input::read_path(&testdata("reference/diar-tiny/audio.wav"), &options).expect("audio.wav") {
        Input::Samples(samples) => samples,
        Input::Features(_) => unreachable!("audio decodes to samples"),
    }
}

/// Two clips this random model hears in two different slots (the engine's tests chose them), in `order`.
fn clips(order: [&str; 2]) -> Vec<(String, Vec<f32>)> {
    order
        .iter()
        .map(|&name| match name {
            "alice" => (name.to_string(), audio(0.0, Some(1.23))),
            _ => (name.to_string(), audio(3.0, Some(1.99))),
        })
        .collect()
}

/// One WAV part per clip, named by the speaker.
fn enrollment(clips: &[(String, Vec<f32>)]) -> Form {
    clips.iter().fold(Form::new(), |form, (name, samples)| {
        form.part(name.clone(), Part::bytes(wav(samples)).file_name(format!("{name}.wav")))
    })
}

async fn server(dir: Option<&Path>) -> TestServer {
    start_on(ServerOptions { speakers: dir.map(Path::to_path_buf), ..ServerOptions::default() }, engine()).await
}

/// The error of a response: (status, code, message).
async fn error_of(response: reqwest::Response) -> (StatusCode, String, String) {
    let status = response.status();
    let body: Value = response.json().await.expect("a JSON error body");
    (status, body["error"]["code"].as_str().unwrap().into(), body["error"]["message"].as_str().unwrap().into())
}

/// What `diarize --stream --speakers` prints (events fed 0.1 s at a time, as it feeds a file) and its JSON segment
/// file, parsed.
fn expected_stream(samples: &[f32], mode: StreamingMode, profile: &SpeakerProfile) -> (Vec<String>, Value) {
    let engine = engine();
    let mut live = engine.stream_with_speakers(mode, &SegmentSettings::default(), profile).unwrap();
    let mut lines = Vec::new();
    for piece in samples.chunks(1_600) {
        let events = live.push(piece).unwrap();
        lines.extend(events.iter().map(|e| e.json_line_named(live.names())));
    }
    let recording = live.finish_recording().unwrap();
    let names = recording.diarized.names();
    lines.extend(recording.events.iter().map(|e| e.json_line_named(names)));
    let json = write_named_segments(&recording.segments, SegmentFormat::Json, "", names);
    (lines, serde_json::from_str(&json).unwrap())
}

/// A whole stream of diar-tiny's recording naming `profile`, checked against the engine's.
async fn check_stream(server: &TestServer, latency: &str, profile: &SpeakerProfile, what: &str) {
    let samples = audio(0.0, None);
    let mode: StreamingMode = latency.parse().unwrap();
    let mut socket = connect(server).await;
    let start = session_start(latency, "pcm_f32le", r#","speakers":"team""#);
    let transcript = session(&mut socket, &start, &f32le(&samples), 6_400).await;
    let (events, segments) = expected_stream(&samples, mode, profile);
    assert!(events.iter().any(|e| e.contains(r#""name":"#)), "{what}: no named event in {events:?}");
    assert_eq!(transcript.events, events, "{what}: the events");
    assert_eq!(transcript.done["segments"], segments, "{what}: session.done's segments");
    assert_eq!(transcript.close, Some(1000), "{what}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_enrolled_profile_names_uploads_and_streams_as_the_cli_does() {
    let dir = tempfile::tempdir().unwrap();
    let server = server(Some(dir.path())).await;
    let c = client();
    let listed = c.get(server.url("/v1/speakers")).send().await.unwrap();
    assert_eq!(listed.json::<Value>().await.unwrap(), json!({ "profiles": [] }));

    // The enrollment is the engine's: the same profile, each name's slot.
    let (want, slots) = engine().enroll(clips(["alice", "bob"])).unwrap();
    let put = c.put(server.url("/v1/speakers/team")).multipart(enrollment(&clips(["alice", "bob"])));
    let answer: Value = put.send().await.unwrap().json().await.unwrap();
    let speakers = json!([{ "name": "alice", "slot": slots[0] }, { "name": "bob", "slot": slots[1] }]);
    assert_eq!(answer, json!({ "profile": "team", "speakers": speakers }));
    assert_ne!(slots[0], slots[1]);
    let written = std::fs::read(dir.path().join("team.safetensors")).expect("the profile file");
    assert!(written == want.to_bytes().unwrap(), "the profile file is not the engine's, byte for byte");
    let listed: Value = c.get(server.url("/v1/speakers")).send().await.unwrap().json().await.unwrap();
    assert_eq!(listed, json!({ "profiles": [{ "profile": "team", "names": ["alice", "bob"] }] }));

    // Uploads: `diarize --speakers --segments - --format F`.
    let recording = std::fs::read(testdata("reference/diar-tiny/audio.wav")).unwrap();
    let diarized = engine()
        .diarize_with_speakers(Input::Samples(audio(0.0, None)), &want, &mut |_, _, _| ControlFlow::Continue(()))
        .unwrap();
    let segments = diarized.segments(&SegmentSettings::default()).unwrap();
    for (format, name) in [(SegmentFormat::Rttm, "rttm"), (SegmentFormat::Json, "json"), (SegmentFormat::Csv, "csv")] {
        let form = Form::new()
            .part("file", Part::bytes(recording.clone()).file_name("audio.wav"))
            .text("speakers", "team")
            .text("response_format", name);
        let response = c.post(server.url("/v1/audio/diarizations")).multipart(form).send().await.unwrap();
        assert_eq!(response.status(), 200, "{name}");
        let want = write_named_segments(&segments, format, "audio", diarized.names());
        assert_eq!(response.text().await.unwrap(), want, "{name}");
        assert!(want.contains("alice") || want.contains("bob"), "{name}: no name in\n{want}");
    }

    // Streams: `diarize --stream --speakers`, twice per mode (the second forks the primed session).
    for latency in ["low", "very-low", "low"] {
        check_stream(&server, latency, &want, latency).await;
    }

    // A replaced profile is served from then on: its own priming, not the old one's.
    let put = c.put(server.url("/v1/speakers/team")).multipart(enrollment(&clips(["bob", "alice"])));
    assert_eq!(put.send().await.unwrap().status(), 200);
    let (swapped, _) = engine().enroll(clips(["bob", "alice"])).unwrap();
    let whole = audio(0.0, None);
    let (old_events, new_events) = (
        expected_stream(&whole, StreamingMode::LowLatency, &want),
        expected_stream(&whole, StreamingMode::LowLatency, &swapped),
    );
    assert_ne!(old_events.0, new_events.0, "the case needs a replacement that changes the events");
    check_stream(&server, "low", &swapped, "replaced").await;

    // Deleted: the file goes, and the name is unknown everywhere.
    let deleted = c.delete(server.url("/v1/speakers/team")).send().await.unwrap();
    assert_eq!(deleted.json::<Value>().await.unwrap(), json!({ "profile": "team", "deleted": true }));
    assert!(!dir.path().join("team.safetensors").exists());
    let (status, code, message) = error_of(c.delete(server.url("/v1/speakers/team")).send().await.unwrap()).await;
    assert_eq!((status, code.as_str()), (StatusCode::NOT_FOUND, "unknown_speakers"));
    assert!(message.contains("team"), "{message}");
    let form = Form::new().part("file", Part::bytes(recording).file_name("a.wav")).text("speakers", "team");
    let response = c.post(server.url("/v1/audio/diarizations")).multipart(form).send().await.unwrap();
    let (status, code, message) = error_of(response).await;
    assert_eq!((status, code.as_str()), (StatusCode::NOT_FOUND, "unknown_speakers"));
    assert!(message.contains("`team`"), "{message}");
    let mut socket = connect(&server).await;
    common::send_text(&mut socket, &session_start("low", "pcm_f32le", r#","speakers":"team""#)).await;
    let (texts, close) = until_close(&mut socket).await;
    let error: Value = serde_json::from_str(texts.last().expect("an error")).unwrap();
    assert_eq!((error["code"].as_str(), close), (Some("unknown_speakers"), Some(1008)), "{texts:?}");
    assert!(error["message"].as_str().unwrap().contains("`team`"), "{error}");
    server.stop().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_profile_names_clips_and_bodies_are_refused_and_nothing_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let server = server(Some(dir.path())).await;
    let c = client();
    let alice = clips(["alice", "bob"]);
    for bad in [".hidden", "a%2Fb", "two%20words", &"n".repeat(65)] {
        let put = c.put(server.url(&format!("/v1/speakers/{bad}"))).multipart(enrollment(&alice));
        let (status, code, _) = error_of(put.send().await.unwrap()).await;
        assert_eq!((status, code.as_str()), (StatusCode::BAD_REQUEST, "invalid_profile_name"), "{bad}");
        let (status, code, _) =
            error_of(c.delete(server.url(&format!("/v1/speakers/{bad}"))).send().await.unwrap()).await;
        assert_eq!((status, code.as_str()), (StatusCode::BAD_REQUEST, "invalid_profile_name"), "{bad}");
    }
    // A clip under 1 s is the audio's fault and names the speaker.
    let short = vec![("sam".to_string(), audio(0.0, Some(0.5)))];
    let put = c.put(server.url("/v1/speakers/short")).multipart(enrollment(&short));
    let (status, code, message) = error_of(put.send().await.unwrap()).await;
    assert_eq!((status, code.as_str()), (StatusCode::UNPROCESSABLE_ENTITY, "invalid_input"));
    assert!(message.contains("sam"), "{message}");
    // A name with whitespace is the request's.
    let spaced = vec![("two words".to_string(), audio(0.0, Some(1.5)))];
    let put = c.put(server.url("/v1/speakers/spaced")).multipart(enrollment(&spaced));
    assert_eq!(error_of(put.send().await.unwrap()).await.0, StatusCode::BAD_REQUEST);
    let put = c.put(server.url("/v1/speakers/raw")).header("content-type", "audio/wav").body(wav(&alice[0].1));
    assert_eq!(error_of(put.send().await.unwrap()).await.0, StatusCode::UNSUPPORTED_MEDIA_TYPE);
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0, "a refused enrollment wrote a file");
    server.stop().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_speaker_folder_known_speakers_are_refused_saying_so() {
    let server = server(None).await;
    let c = client();
    let put = c.put(server.url("/v1/speakers/team")).multipart(enrollment(&clips(["alice", "bob"])));
    let form = Form::new().part("file", Part::bytes(wav(&audio(0.0, Some(2.0))))).text("speakers", "team");
    for response in [
        c.get(server.url("/v1/speakers")).send().await.unwrap(),
        put.send().await.unwrap(),
        c.delete(server.url("/v1/speakers/team")).send().await.unwrap(),
        c.post(server.url("/v1/audio/diarizations")).multipart(form).send().await.unwrap(),
    ] {
        let (status, code, message) = error_of(response).await;
        assert_eq!((status, code.as_str()), (StatusCode::NOT_FOUND, "no_speaker_folder"));
        assert!(message.contains("--speakers"), "{message}");
    }
    let mut socket = connect(&server).await;
    common::send_text(&mut socket, &session_start("low", "pcm_f32le", r#","speakers":"team""#)).await;
    let (texts, close) = until_close(&mut socket).await;
    let error: Value = serde_json::from_str(texts.last().expect("an error")).unwrap();
    assert_eq!((error["code"].as_str(), close), (Some("unknown_speakers"), Some(1008)), "{texts:?}");
    assert!(error["message"].as_str().unwrap().contains("speaker folder"), "{error}");
    server.stop().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_folder_with_a_bad_profile_file_stops_the_start_naming_it() {
    let bind = |dir: &Path| {
        let options = ServerOptions {
            listen: "127.0.0.1:0".parse().unwrap(),
            speakers: Some(dir.to_path_buf()),
            ..ServerOptions::default()
        };
        Server::bind(options)
    };
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.txt"), "not a profile, not read").unwrap();
    let profile = SpeakerProfile::new(clips(["alice", "bob"])).unwrap();
    profile.write(&dir.path().join("team.safetensors")).unwrap();
    assert!(bind(dir.path()).await.is_ok(), "a folder of profiles and other files starts");
    for (file, bytes) in [("broken.safetensors", &b"not safetensors"[..]), (".hidden.safetensors", &b""[..])] {
        let bad = tempfile::tempdir().unwrap();
        profile.write(&bad.path().join("team.safetensors")).unwrap();
        std::fs::write(bad.path().join(file), bytes).unwrap();
        let Err(error) = bind(bad.path()).await else { panic!("{file} accepted") };
        assert!(matches!(error, ServerError::Speakers(_)), "{error}");
        assert!(error.to_string().contains(file), "{error}");
    }
    let missing = dir.path().join("missing");
    let Err(error) = bind(&missing).await else { panic!("a missing folder accepted") };
    assert!(error.to_string().contains("missing"), "{error}");
}
