//! A server on an ephemeral loopback port with the demo model (one engine per test binary, shared), the test
//! audio, and clients: HTTP (reqwest) and WebSocket (tokio-tungstenite), every wait bounded.

#![allow(dead_code)] // each test binary uses a different part of this module

use std::net::SocketAddr;
use std::path::Path;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use nemotron_engine::{
    AudioOptions, Engine, EngineOptions, ModelSource, SegmentFormat, SegmentSettings, StreamingMode, event_json_line,
    write_segments,
};
use nemotron_server::{Server, ServerError, ServerOptions};
use serde_json::Value;
use tokio::net::TcpStream;
use tokio::sync::oneshot;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

/// The demo model, loaded once per test binary.
pub fn engine() -> Arc<Engine> {
    static ENGINE: OnceLock<Arc<Engine>> = OnceLock::new();
    ENGINE
        .get_or_init(|| {
            let engine = Engine::load(&ModelSource::Demo, &EngineOptions::default(), &mut |_, _, _| {});
            Arc::new(engine.expect("the demo model loads"))
        })
        .clone()
}

/// What `diarize --stream` prints for `samples` (fed 0.1 s at a time, as it feeds a file) and the segment file it
/// writes (`--segments FILE.json`), parsed.
pub fn expected(samples: &[f32], mode: StreamingMode, settings: &SegmentSettings) -> (Vec<String>, serde_json::Value) {
    let engine = engine();
    let mut session = engine.stream(mode, settings).unwrap();
    let mut lines = Vec::new();
    for piece in samples.chunks(1_600) {
        lines.extend(session.push(piece).unwrap().iter().map(event_json_line));
    }
    let (events, segments) = session.finish().unwrap();
    lines.extend(events.iter().map(event_json_line));
    (lines, serde_json::from_str(&write_segments(&segments, SegmentFormat::Json, "")).unwrap())
}

/// `seconds` of the demo model's recording from `offset`, 16 kHz mono.
pub fn audio(offset: f64, seconds: f64) -> Vec<f32> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/reference/tiny-release-chunks/audio.wav");
    let options = AudioOptions { offset, duration: Some(seconds), ..AudioOptions::default() };
    match nemotron_engine::Input::read_path(&path, &options).expect("the test audio decodes") {
        nemotron_engine::Input::Samples(samples) => samples,
        nemotron_engine::Input::Features(_) => unreachable!("an audio file decodes to samples"),
    }
}

/// A 32-bit float WAV of `samples` at 16 kHz: the server decodes exactly these samples back.
pub fn wav(samples: &[f32]) -> Vec<u8> {
    let spec = hound::WavSpec {
        channels: 1,
        sample_rate: 16_000,
        bits_per_sample: 32,
        sample_format: hound::SampleFormat::Float,
    };
    let mut bytes = std::io::Cursor::new(Vec::new());
    let mut writer = hound::WavWriter::new(&mut bytes, spec).unwrap();
    samples.iter().for_each(|&s| writer.write_sample(s).unwrap());
    writer.finalize().unwrap();
    bytes.into_inner()
}

/// `samples` as little-endian f32 bytes.
pub fn f32le(samples: &[f32]) -> Vec<u8> {
    samples.iter().flat_map(|s| s.to_le_bytes()).collect()
}

/// A running server.
pub struct TestServer {
    /// Where it listens.
    pub address: SocketAddr,
    stop: Option<oneshot::Sender<()>>,
    task: tokio::task::JoinHandle<Result<(), ServerError>>,
}

/// Starts a server with `options` (its address replaced by an ephemeral loopback port) on the shared demo engine
/// and waits until it is ready.
pub async fn start(options: ServerOptions) -> TestServer {
    start_on(options, engine()).await
}

/// [`start`] on an engine of the test's own.
pub async fn start_on(options: ServerOptions, engine: Arc<Engine>) -> TestServer {
    let options = ServerOptions { listen: SocketAddr::from(([127, 0, 0, 1], 0)), ..options };
    let server = Server::bind(options).await.expect("binds a loopback port");
    let address = server.local_addr().unwrap();
    let (stop, stopped) = oneshot::channel::<()>();
    let task = tokio::spawn(server.run(move || Ok(engine), async move {
        let _ = stopped.await;
    }));
    let server = TestServer { address, stop: Some(stop), task };
    for _ in 0..1200 {
        if let Ok(response) = client().get(server.url("/health/ready")).send().await
            && response.status() == 200
        {
            return server;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("the server was not ready within 60 s");
}

/// An HTTP client with a bounded wait.
pub fn client() -> reqwest::Client {
    reqwest::Client::builder().timeout(Duration::from_secs(120)).build().unwrap()
}

impl TestServer {
    /// `http://address/path`.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.address)
    }

    /// The stream route's WebSocket URL.
    pub fn stream_url(&self) -> String {
        format!("ws://{}/v1/audio/diarizations/stream", self.address)
    }

    /// Starts the shutdown (as SIGTERM would) and waits for the server to end.
    pub async fn stop(mut self) -> Result<(), ServerError> {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        tokio::time::timeout(Duration::from_secs(60), &mut self.task).await.expect("the server stops").unwrap()
    }

    /// Starts the shutdown without waiting.
    pub fn begin_shutdown(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

/// A WebSocket client connection.
pub type Socket = WebSocketStream<MaybeTlsStream<TcpStream>>;

/// Connects to the stream route.
pub async fn connect(server: &TestServer) -> Socket {
    let (socket, _) = tokio_tungstenite::connect_async(server.stream_url()).await.expect("the upgrade succeeds");
    socket
}

/// The next message within 60 s (`None` when the connection ended).
pub async fn next(socket: &mut Socket) -> Option<Message> {
    match tokio::time::timeout(Duration::from_secs(60), socket.next()).await.expect("an answer within 60 s") {
        Some(Ok(message)) => Some(message),
        _ => None,
    }
}

/// Sends a text message.
pub async fn send_text(socket: &mut Socket, text: &str) {
    socket.send(Message::text(text)).await.expect("sends");
}

/// Everything the server says until it closes: text messages, then the close code (`None`: no close frame).
pub async fn until_close(socket: &mut Socket) -> (Vec<String>, Option<u16>) {
    let mut texts = Vec::new();
    while let Some(message) = next(socket).await {
        match message {
            Message::Text(text) => texts.push(text.to_string()),
            Message::Close(frame) => return (texts, frame.map(|f| u16::from(f.code))),
            _ => {}
        }
    }
    (texts, None)
}

/// The `session.start` message of `latency` with `extra` JSON fields (`""` or `,"onset":0.6`).
pub fn session_start(latency: &str, encoding: &str, extra: &str) -> String {
    format!(r#"{{"type":"session.start","latency":"{latency}","sample_rate":16000,"encoding":"{encoding}"{extra}}}"#)
}

/// What a session said: its segment events, its acks, its `session.done`, its close code.
pub struct Transcript {
    /// The segment events' lines.
    pub events: Vec<String>,
    /// Each `audio.ack`'s `processed_until`.
    pub acks: Vec<f64>,
    /// `session.done`.
    pub done: Value,
    /// The close code.
    pub close: Option<u16>,
}

/// A whole session: `start`, `bytes` in frames of `frame` bytes, `session.end`; checks `session.ready` first.
pub async fn session(socket: &mut Socket, start: &str, bytes: &[u8], frame: usize) -> Transcript {
    send_text(socket, start).await;
    let ready: Value = match next(socket).await {
        Some(Message::Text(text)) => serde_json::from_str(&text).unwrap(),
        other => panic!("expected session.ready, got {other:?}"),
    };
    assert_eq!(ready["type"], "session.ready", "{ready}");
    assert!(ready["id"].as_str().is_some_and(|id| !id.is_empty()));
    for piece in bytes.chunks(frame) {
        socket.send(Message::binary(piece.to_vec())).await.unwrap();
    }
    send_text(socket, r#"{"type":"session.end"}"#).await;
    let (texts, close) = until_close(socket).await;
    let (mut events, mut acks, mut done) = (Vec::new(), Vec::new(), Value::Null);
    for text in texts {
        let value: Value = serde_json::from_str(&text).unwrap();
        match value["type"].as_str() {
            None => events.push(text),
            Some("audio.ack") => acks.push(value["processed_until"].as_f64().unwrap()),
            Some("session.done") => done = value,
            Some(other) => panic!("unexpected {other}: {text}"),
        }
    }
    assert_eq!(done["id"], ready["id"]);
    Transcript { events, acks, done, close }
}
