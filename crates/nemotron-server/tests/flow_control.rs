//! Flow control on the WebSocket route (demo model): a client that sends a recording as fast as it can is slowed
//! down by the server (which stops reading while a session's buffer is full), not dropped; its events are still
//! `diarize --stream`'s, each step takes at most one chunk of its audio (so it holds up no round for the others), the
//! audio a session holds stays within `--session-buffer` and one frame (`nemotron_stream_buffer_peak_seconds`), and
//! only a client that reads none of its events gets `backpressure`.

mod common;

use std::time::{Duration, Instant};

use common::{TestServer, audio, connect, expected, f32le, next, send_text, session_start, start};
use futures_util::{SinkExt, StreamExt};
use nemotron_engine::{SegmentSettings, StreamingMode};
use nemotron_server::ServerOptions;
use serde_json::Value;
use tokio_tungstenite::tungstenite::Message;

/// The value of the metric line that starts with `name ` (0 when there is none yet).
async fn metric(server: &TestServer, name: &str) -> f64 {
    let text = common::client().get(server.url("/metrics")).send().await.unwrap().text().await.unwrap();
    let prefix = format!("{name} ");
    text.lines().find_map(|line| line.strip_prefix(&prefix)).map_or(0.0, |value| value.parse().unwrap())
}

/// A session whose frames of `frame_bytes` (f32) are all written at once by a task of their own, `session.end`
/// last, while this task reads: the server's texts and its close code.
async fn at_once(server: &TestServer, samples: &[f32], frame_bytes: usize) -> (Vec<String>, Option<u16>) {
    let mut socket = connect(server).await;
    send_text(&mut socket, &session_start("low", "pcm_f32le", "")).await;
    assert!(matches!(next(&mut socket).await, Some(Message::Text(t)) if t.contains("session.ready")));
    let (mut sink, mut messages) = socket.split();
    let frames: Vec<Vec<u8>> = f32le(samples).chunks(frame_bytes).map(<[u8]>::to_vec).collect();
    let sender = tokio::spawn(async move {
        for frame in frames {
            sink.send(Message::binary(frame)).await.expect("the server takes every frame");
        }
        sink.send(Message::text(r#"{"type":"session.end"}"#)).await.expect("the server takes session.end");
    });
    let mut texts = Vec::new();
    let close = loop {
        match tokio::time::timeout(Duration::from_secs(120), messages.next()).await.expect("an answer within 120 s") {
            Some(Ok(Message::Text(text))) => texts.push(text.to_string()),
            Some(Ok(Message::Close(frame))) => break frame.map(|f| u16::from(f.code)),
            Some(Ok(_)) => {}
            Some(Err(_)) | None => break None,
        }
    };
    sender.await.expect("the sender ends");
    (texts, close)
}

/// Checks that `texts` hold `diarize --stream`'s events for `samples` and a `session.done`, and no error, and that no
/// step took more than one chunk of the session's audio (its `audio.ack`s advance by at most that much).
fn check(texts: &[String], samples: &[f32], what: &str) {
    let mut events = Vec::new();
    let mut done = Value::Null;
    let (mut processed, chunk) = (0.0, StreamingMode::LowLatency.chunk_samples() as f64 / 16_000.0);
    for text in texts {
        let value: Value = serde_json::from_str(text).unwrap();
        match value["type"].as_str() {
            None => events.push(text.clone()),
            Some("audio.ack") => {
                let until = value["processed_until"].as_f64().unwrap();
                assert!(until - processed <= chunk + 1e-9, "{what}: a step took {} s of audio", until - processed);
                processed = until;
            }
            Some("session.done") => done = value,
            Some(other) => panic!("{what}: unexpected {other}: {text}"),
        }
    }
    let (expected_events, segments) = expected(samples, StreamingMode::LowLatency, &SegmentSettings::default());
    assert_eq!(events, expected_events, "{what}: the events");
    assert_eq!(done["segments"], segments, "{what}: session.done's segments");
    assert_eq!(done["seconds"].as_f64(), Some(samples.len() as f64 / 16_000.0), "{what}");
}

/// Checks that the sessions filled their buffer (flow control held them) and held no more than it and one frame.
async fn check_peak(server: &TestServer, buffer: f64, frame_bytes: usize) {
    let peak = metric(server, "nemotron_stream_buffer_peak_seconds").await;
    let frame = (frame_bytes / 4 + 1) as f64 / 16_000.0;
    assert!(peak >= buffer, "the buffer filled: peak {peak} s, buffer {buffer} s");
    assert!(peak < buffer + frame, "peak {peak} s: more than the {buffer} s buffer and a frame ({frame} s)");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn thirty_five_seconds_sent_at_once_get_diarize_streams_events_and_no_error() {
    let server = start(ServerOptions::default()).await;
    let samples = audio(0.0, 35.0);
    // Frames of an odd byte count: most samples straddle two frames, and the buffer's edge falls inside a frame.
    let frame_bytes = 7_919;
    let started = Instant::now();
    let (texts, close) = at_once(&server, &samples, frame_bytes).await;
    eprintln!("35 s sent at once: served in {:.1} s", started.elapsed().as_secs_f64());
    check(&texts, &samples, "35 s at once");
    assert_eq!(close, Some(1000), "a normal close");
    check_peak(&server, ServerOptions::default().session_buffer_seconds, frame_bytes).await;
    server.stop().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_fast_sessions_each_hold_at_most_their_buffer_and_a_frame() {
    let buffer = 1.0;
    let server = start(ServerOptions { session_buffer_seconds: buffer, ..ServerOptions::default() }).await;
    let frame_bytes = 12_345;
    let runs = (0..3).map(|i| {
        let samples = audio(3.0 * f64::from(i), 4.0);
        let server = &server;
        async move { (at_once(server, &samples, frame_bytes).await, samples) }
    });
    for (i, ((texts, close), samples)) in futures_util::future::join_all(runs).await.into_iter().enumerate() {
        check(&texts, &samples, &format!("session {i}"));
        assert_eq!(close, Some(1000), "session {i}: a normal close");
    }
    check_peak(&server, buffer, frame_bytes).await;
    server.stop().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_reads_none_of_its_events_gets_backpressure_after_the_idle_timeout() {
    let idle = Duration::from_millis(300);
    // Small kernel buffers on both ends, so that a few hundred acks fill them (the system's grow to megabytes).
    let options = ServerOptions { idle_timeout: idle, socket_send_buffer: Some(4_096), ..ServerOptions::default() };
    let server = start(options).await;
    let tcp = tokio::net::TcpSocket::new_v4().unwrap();
    tcp.set_recv_buffer_size(2_048).unwrap();
    let tcp = tcp.connect(server.address).await.unwrap();
    let tcp = tokio_tungstenite::MaybeTlsStream::Plain(tcp);
    let (mut socket, _) = tokio_tungstenite::client_async(server.stream_url(), tcp).await.unwrap();
    send_text(&mut socket, &session_start("low", "pcm_f32le", "")).await;
    assert!(matches!(next(&mut socket).await, Some(Message::Text(t)) if t.contains("session.ready")));
    let (mut sink, mut messages) = socket.split();
    // 1 ms of audio each millisecond: the client is live and never silent, and each small step earns an ack.
    let samples = audio(0.0, 30.0);
    let sender = tokio::spawn(async move {
        let mut tick = tokio::time::interval(Duration::from_millis(1));
        for piece in samples.chunks(16) {
            tick.tick().await;
            if sink.send(Message::binary(f32le(piece))).await.is_err() {
                break;
            }
        }
    });
    let backpressure = r#"nemotron_http_errors_total{route="/v1/audio/diarizations/stream",code="backpressure"}"#;
    let started = Instant::now();
    while metric(&server, backpressure).await < 1.0 {
        assert!(started.elapsed() < Duration::from_secs(60), "no backpressure within 60 s");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    sender.abort();
    // Reading now, the client gets what was sent before (acks only), the error, and the close.
    let mut texts = Vec::new();
    let close = loop {
        match tokio::time::timeout(Duration::from_secs(60), messages.next()).await.expect("an answer within 60 s") {
            Some(Ok(Message::Text(text))) => texts.push(serde_json::from_str::<Value>(&text).unwrap()),
            Some(Ok(Message::Close(frame))) => break frame.map(|f| u16::from(f.code)),
            Some(Ok(_)) => {}
            Some(Err(_)) | None => break None,
        }
    };
    // Gone: the server stops waiting for the client's close frame.
    drop(messages);
    let (error, acks) = texts.split_last().expect("an error message");
    eprintln!("backpressure {:.2} s into the stream, after {} messages", started.elapsed().as_secs_f64(), acks.len());
    assert_eq!((error["type"].as_str(), error["code"].as_str()), (Some("error"), Some("backpressure")), "{error}");
    assert!(acks.len() > 10 && acks.iter().all(|a| a["type"] == "audio.ack" || a.get("event").is_some()));
    assert_eq!(close, Some(1013));
    let idle_timeouts = r#"nemotron_http_errors_total{route="/v1/audio/diarizations/stream",code="idle_timeout"}"#;
    assert_eq!(metric(&server, idle_timeouts).await, 0.0, "the client was never silent");
    server.stop().await.unwrap();
}
