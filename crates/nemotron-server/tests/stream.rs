//! The WebSocket route on the demo model: a session's events are `diarize --stream`'s JSON lines for the same audio
//! and settings whatever the frames' split, concurrent sessions each equal their solo run, every protocol error gets
//! its code and close code while the server keeps serving, and a shutdown ends streams with their final events
//! (flow control and `backpressure`: `flow_control.rs`).

mod common;

use std::time::Duration;

use common::{
    Socket, Transcript, audio, connect, expected, f32le, next, send_text, session, session_start, start, until_close,
};
use futures_util::SinkExt;
use nemotron_engine::{SegmentSettings, StreamingMode};
use nemotron_server::ServerOptions;
use serde_json::Value;
use tokio_tungstenite::tungstenite::Message;

fn check(transcript: &Transcript, samples: &[f32], mode: StreamingMode, settings: &SegmentSettings, what: &str) {
    let (events, segments) = expected(samples, mode, settings);
    assert_eq!(transcript.events, events, "{what}: the events");
    assert_eq!(transcript.done["segments"], segments, "{what}: session.done's segments");
    assert_eq!(transcript.done["seconds"].as_f64().unwrap(), samples.len() as f64 / 16_000.0, "{what}");
    assert!(transcript.acks.windows(2).all(|w| w[0] <= w[1]), "{what}: acks in order: {:?}", transcript.acks);
    assert!(!transcript.acks.is_empty(), "{what}: at least one ack");
    assert_eq!(transcript.close, Some(1000), "{what}: a normal close");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn events_are_diarize_streams_whatever_the_frames() {
    let server = start(ServerOptions::default()).await;
    let samples = audio(5.0, 5.0);
    assert!(
        expected(&samples, StreamingMode::LowLatency, &SegmentSettings::default())
            .1
            .as_array()
            .is_some_and(|s| !s.is_empty()),
        "the test audio has segments"
    );
    // f32 frames of an odd byte count: most samples straddle two frames.
    let mut socket = connect(&server).await;
    let transcript = session(&mut socket, &session_start("low", "pcm_f32le", ""), &f32le(&samples), 7_919).await;
    check(&transcript, &samples, StreamingMode::LowLatency, &SegmentSettings::default(), "f32le");
    // s16 frames of 1 s (the largest allowed), post-processing settings; the samples are what s16 carries.
    let s16: Vec<i16> = samples.iter().map(|&s| (s * 32768.0).round().clamp(-32768.0, 32767.0) as i16).collect();
    let heard: Vec<f32> = s16.iter().map(|&s| (f64::from(s) / 32768.0) as f32).collect();
    let bytes: Vec<u8> = s16.iter().flat_map(|s| s.to_le_bytes()).collect();
    let settings =
        SegmentSettings { onset: Some(0.55), offset: Some(0.45), min_duration_on: Some(0.1), ..Default::default() };
    let mut socket = connect(&server).await;
    let start = session_start("very-low", "pcm_s16le", r#","onset":0.55,"offset":0.45,"min_duration_on":0.1"#);
    let transcript = session(&mut socket, &start, &bytes, 32_000).await;
    check(&transcript, &heard, StreamingMode::VeryLowLatency, &settings, "s16le");
    server.stop().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sixteen_concurrent_streams_each_equal_their_solo_run() {
    let server = start(ServerOptions::default()).await;
    let latencies = ["low", "very-low", "ultra-low"];
    let runs = (0..16).map(|i| {
        let samples = audio(0.5 + 2.5 * i as f64, 2.0 + 0.25 * i as f64);
        let latency = latencies[i % 3];
        let (extra, settings) = match i % 2 {
            0 => (String::new(), SegmentSettings::default()),
            _ => (r#","threshold":0.4"#.to_string(), SegmentSettings { threshold: Some(0.4), ..Default::default() }),
        };
        let server = &server;
        async move {
            let mut socket = connect(server).await;
            let start = session_start(latency, "pcm_f32le", &extra);
            let transcript = session(&mut socket, &start, &f32le(&samples), 4_000 + 444 * i).await;
            (i, samples, latency, settings, transcript)
        }
    });
    let results = futures_util::future::join_all(runs).await;
    for (i, samples, latency, settings, transcript) in results {
        check(
            &transcript,
            &samples,
            latency.parse::<StreamingMode>().unwrap(),
            &settings,
            &format!("session {i} ({latency})"),
        );
    }
    let metrics = common::client().get(server.url("/metrics")).send().await.unwrap().text().await.unwrap();
    assert!(metrics.lines().any(|l| l == "nemotron_stream_sessions_total 16"), "{metrics}");
    assert!(metrics.lines().any(|l| l == "nemotron_stream_sessions_active 0"), "{metrics}");
    // The scheduler gathered the sessions' commands into shared rounds (where a batched step goes): more commands
    // than rounds.
    let value = |name: &str| -> f64 {
        let line = metrics.lines().find(|l| l.starts_with(name)).unwrap_or_else(|| panic!("no {name} in {metrics}"));
        line.rsplit(' ').next().unwrap().parse().unwrap()
    };
    let (commands, rounds) =
        (value("nemotron_scheduler_round_steps_sum "), value("nemotron_scheduler_round_steps_count "));
    assert!(commands > rounds, "{commands} commands in {rounds} rounds");
    server.stop().await.unwrap();
}

/// The error a session ends with: (code, close code).
async fn error_and_close(socket: &mut Socket) -> (String, Option<u16>) {
    let (texts, close) = until_close(socket).await;
    let last: Value = serde_json::from_str(texts.last().expect("an error message")).unwrap();
    assert_eq!(last["type"], "error", "{texts:?}");
    (last["code"].as_str().unwrap().to_string(), close)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn protocol_errors_get_their_codes_and_the_server_keeps_serving() {
    let options = ServerOptions { idle_timeout: Duration::from_millis(400), ..ServerOptions::default() };
    let server = start(options).await;
    let good = session_start("ultra-low", "pcm_f32le", "");
    type Steps = Vec<Message>;
    let cases: Vec<(&str, Steps, &str, u16)> = vec![
        ("audio first", vec![Message::binary(f32le(&audio(0.0, 1.0)))], "expected_session_start", 1008),
        ("not JSON", vec![Message::text("hello")], "expected_session_start", 1008),
        ("another type", vec![Message::text(r#"{"type":"session.end"}"#)], "expected_session_start", 1008),
        ("wrong encoding", vec![Message::text(session_start("low", "pcm_mulaw", ""))], "unsupported_encoding", 1003),
        (
            "wrong rate",
            vec![Message::text(r#"{"type":"session.start","sample_rate":48000,"encoding":"pcm_s16le"}"#)],
            "unsupported_sample_rate",
            1003,
        ),
        ("unknown latency", vec![Message::text(session_start("instant", "pcm_f32le", ""))], "invalid_setting", 1008),
        (
            "max_speakers",
            vec![Message::text(session_start("low", "pcm_f32le", r#","max_speakers":2"#))],
            "invalid_setting",
            1008,
        ),
        (
            "unknown setting",
            vec![Message::text(session_start("low", "pcm_f32le", r#","volume":11"#))],
            "invalid_setting",
            1008,
        ),
        (
            "a 2 MB frame",
            vec![Message::text(good.clone()), Message::binary(vec![0u8; 2 << 20])],
            "frame_too_large",
            1009,
        ),
        (
            "a 5 MiB frame, past the transport's limit",
            vec![Message::text(good.clone()), Message::binary(vec![0u8; 5 << 20])],
            "frame_too_large",
            1009,
        ),
        (
            "text where audio is due",
            vec![Message::text(good.clone()), Message::text("more audio")],
            "expected_audio",
            1003,
        ),
        (
            "a stream ending inside a sample",
            vec![
                Message::text(good.clone()),
                Message::binary(vec![0u8; 6]),
                Message::text(r#"{"type":"session.end"}"#),
            ],
            "partial_sample",
            1007,
        ),
        ("silence", vec![Message::text(good.clone())], "idle_timeout", 1001),
        ("no session.start at all", vec![], "idle_timeout", 1001),
    ];
    for (name, steps, code, close) in cases {
        let mut socket = connect(&server).await;
        for step in steps {
            // The server may close before all is sent (it stopped reading at the error).
            if socket.send(step).await.is_err() {
                break;
            }
        }
        assert_eq!(error_and_close(&mut socket).await, (code.to_string(), Some(close)), "{name}");
        // The server still serves: a whole session.
        let mut socket = connect(&server).await;
        let samples = audio(0.0, 1.0);
        let transcript = session(&mut socket, &good, &f32le(&samples), 6_400).await;
        check(
            &transcript,
            &samples,
            StreamingMode::UltraLowLatency,
            &SegmentSettings::default(),
            &format!("after {name}"),
        );
    }
    server.stop().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn session_slots_refuse_with_503_before_the_upgrade_and_free_on_disconnect() {
    let server = start(ServerOptions { max_sessions: 2, ..ServerOptions::default() }).await;
    // Ten times the slots at once: two upgrades, eighteen 503s with Retry-After.
    let attempts = (0..20).map(|_| tokio_tungstenite::connect_async(server.stream_url()));
    let mut open = Vec::new();
    let mut refused = 0;
    for attempt in futures_util::future::join_all(attempts).await {
        match attempt {
            Ok((socket, _)) => open.push(socket),
            Err(tokio_tungstenite::tungstenite::Error::Http(response)) => {
                assert_eq!(response.status(), 503);
                assert_eq!(response.headers()["retry-after"], "5");
                let body: Value = serde_json::from_slice(response.body().as_deref().unwrap()).unwrap();
                assert_eq!(body["error"]["code"], "too_many_sessions");
                refused += 1;
            }
            Err(other) => panic!("{other}"),
        }
    }
    assert_eq!((open.len(), refused), (2, 18));
    // One client starts a session and vanishes mid-stream (no close frame); the other closes politely.
    let mut first = open.pop().unwrap();
    send_text(&mut first, &session_start("low", "pcm_f32le", "")).await;
    assert!(matches!(next(&mut first).await, Some(Message::Text(_))));
    first.send(Message::binary(f32le(&audio(0.0, 0.5)))).await.unwrap();
    drop(first);
    open.pop().unwrap().close(None).await.unwrap();
    // Both slots come back: two full sessions run at once.
    let samples = audio(2.0, 1.0);
    let mut sockets = Vec::new();
    for _ in 0..200 {
        match tokio_tungstenite::connect_async(server.stream_url()).await {
            Ok((socket, _)) => sockets.push(socket),
            Err(_) => tokio::time::sleep(Duration::from_millis(25)).await,
        }
        if sockets.len() == 2 {
            break;
        }
    }
    assert_eq!(sockets.len(), 2, "the slots were freed");
    for mut socket in sockets {
        let transcript = session(&mut socket, &session_start("low", "pcm_f32le", ""), &f32le(&samples), 8_000).await;
        check(&transcript, &samples, StreamingMode::LowLatency, &SegmentSettings::default(), "after the disconnect");
    }
    server.stop().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shutdown_ends_a_stream_with_its_final_events() {
    let mut server = start(ServerOptions::default()).await;
    let samples = audio(10.0, 3.0);
    let mut socket = connect(&server).await;
    send_text(&mut socket, &session_start("low", "pcm_f32le", "")).await;
    assert!(matches!(next(&mut socket).await, Some(Message::Text(_))));
    socket.send(Message::binary(f32le(&samples[..16_000]))).await.unwrap();
    socket.send(Message::binary(f32le(&samples[16_000..32_000]))).await.unwrap();
    socket.send(Message::binary(f32le(&samples[32_000..]))).await.unwrap();
    // Once the server has taken all of it, shut down.
    let mut texts = Vec::new();
    loop {
        let Some(Message::Text(text)) = next(&mut socket).await else { panic!("the session ended early: {texts:?}") };
        let value: Value = serde_json::from_str(&text).unwrap();
        texts.push(text.to_string());
        if value["type"] == "audio.ack" && value["processed_until"].as_f64().unwrap() >= 3.0 {
            break;
        }
    }
    server.begin_shutdown();
    let (rest, close) = until_close(&mut socket).await;
    texts.extend(rest);
    assert_eq!(close, Some(1001), "going away: {texts:?}");
    let events: Vec<String> = texts.iter().filter(|t| !t.contains(r#""type""#)).cloned().collect();
    let (expected_events, segments) = expected(&samples, StreamingMode::LowLatency, &SegmentSettings::default());
    assert_eq!(events, expected_events);
    let done: Value = serde_json::from_str(texts.last().unwrap()).unwrap();
    assert_eq!(done["type"], "session.done");
    assert_eq!(done["segments"], segments);
    server.stop().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_stream_route_needs_a_key_in_the_header_or_the_query_when_keys_are_set() {
    use tokio_tungstenite::tungstenite::client::IntoClientRequest;
    let keys = nemotron_server::ApiKeys::parse("key-one\n").unwrap();
    let server = start(ServerOptions { api_keys: Some(keys), ..ServerOptions::default() }).await;
    let refused = |url: String, header: Option<&'static str>| async move {
        let mut request = url.into_client_request().unwrap();
        if let Some(value) = header {
            request.headers_mut().insert("authorization", value.parse().unwrap());
        }
        match tokio_tungstenite::connect_async(request).await {
            Err(tokio_tungstenite::tungstenite::Error::Http(response)) => {
                let body: Value = serde_json::from_slice(response.body().as_deref().unwrap()).unwrap();
                Some((response.status().as_u16(), body["error"]["code"].as_str().unwrap().to_string()))
            }
            Err(other) => panic!("{other}"),
            Ok(_) => None,
        }
    };
    let url = server.stream_url();
    let missing = Some((401, "missing_api_key".to_string()));
    let invalid = Some((401, "invalid_api_key".to_string()));
    assert_eq!(refused(url.clone(), None).await, missing);
    assert_eq!(refused(url.clone(), Some("Bearer key-two")).await, invalid);
    assert_eq!(refused(format!("{url}?access_token=key-two"), None).await, invalid);
    // Accepted either way: a whole session runs.
    let samples = audio(7.0, 1.0);
    for (url, header) in [(url.clone(), Some("Bearer key-one")), (format!("{url}?access_token=key-one"), None)] {
        let mut request = url.into_client_request().unwrap();
        if let Some(value) = header {
            request.headers_mut().insert("authorization", value.parse().unwrap());
        }
        let (mut socket, _) = tokio_tungstenite::connect_async(request).await.expect("the key is accepted");
        let transcript = session(&mut socket, &session_start("low", "pcm_f32le", ""), &f32le(&samples), 8_000).await;
        check(&transcript, &samples, StreamingMode::LowLatency, &SegmentSettings::default(), "with a key");
    }
    server.stop().await.unwrap();
}
