//! `bench --serve`: the server under load, measured as its clients see it. A release-sized diarizer with random
//! weights is served on a loopback port in this process; per mode and client count, that many WebSocket clients
//! stream synthetic audio in real time (one frame per chunk of the mode, sent when its audio would have been
//! captured, the clients' starts spread over one chunk), and each frame's latency is the time from its send to the
//! `audio.ack` that covers it: the chunk's step, batched with the other sessions' by the server's scheduler.

use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::Args;
use futures_util::{SinkExt, StreamExt};
use nemotron_bench::seeded_audio;
use nemotron_bench::stream::Spread;
use nemotron_engine::{Engine, ModelConfig, StreamingMode};
use nemotron_server::{Server, ServerOptions};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_tungstenite::tungstenite::Message;

use crate::Settings;
use crate::failure::Failure;
use crate::stream::latency_parser;

/// The flags of `bench --serve`.
#[derive(Args)]
pub struct ServeBenchArgs {
    /// Load the server (standalone diarization release model, random weights, loopback WebSocket) with real-time
    /// clients: per mode and client count, each chunk's latency from its audio's send to its acknowledgement.
    #[arg(long, conflicts_with_all = ["profile", "stream"])]
    pub serve: bool,
    /// With --serve: the numbers of clients to try, one trial each per mode.
    #[arg(long, requires = "serve", value_delimiter = ',', default_value = "64,256,512",
          value_parser = clap::value_parser!(u32).range(1..))]
    pub clients: Vec<u32>,
    /// With --serve: the modes to try (low, very-low, ultra-low).
    #[arg(long, requires = "serve", value_delimiter = ',', default_value = "low,very-low,ultra-low",
          value_parser = latency_parser())]
    pub latencies: Vec<StreamingMode>,
    /// With --serve: the server's `--max-batch` (default: the most clients of a trial).
    #[arg(long, requires = "serve", value_parser = clap::value_parser!(u32).range(1..))]
    pub serve_max_batch: Option<u32>,
    /// With --serve: the server's `--max-wait-ms`.
    #[arg(long, requires = "serve", default_value_t = ServerOptions::default().max_wait.as_millis() as u64)]
    pub serve_max_wait_ms: u64,
    /// With --serve: trials per mode after the --clients ones that narrow down its admission (the most clients that
    /// keep up), by halving the gap between the most that kept up and the fewest that fell behind (doubling while
    /// all keep up).
    #[arg(long, requires = "serve", default_value_t = 0)]
    pub admission_trials: u32,
}

/// One trial: `clients` sessions of `latency` at once.
struct Trial {
    latency: StreamingMode,
    clients: usize,
    chunk_seconds: f64,
    /// Latency of every chunk whose audio ends in the stream's second half (the speaker cache has filled by then).
    steady: Vec<f64>,
    /// Of every chunk.
    all: Vec<f64>,
    /// Clients that ended with an error, and the first error.
    failed: Vec<String>,
}

pub fn bench_serve(
    settings: &Settings,
    seconds: Option<&[u32]>,
    args: &ServeBenchArgs,
    config: Option<&Path>,
) -> Result<(), Failure> {
    let seconds = match seconds {
        Some([seconds]) => f64::from(*seconds),
        Some(_) => return Err(Failure::Usage("bench --serve takes one --seconds value (each stream's length)".into())),
        None => 45.0,
    };
    let config = match config {
        Some(path) => ModelConfig::from_file(path),
        None => ModelConfig::from_json(r#"{"model_type":"nemotron3_diarization"}"#),
    }?;
    let started = Instant::now();
    let engine = Arc::new(Engine::random(&config, 0x5eed, &settings.engine)?);
    let info = engine.gpu().adapter_info();
    println!(
        "nemotron-audio bench --serve on {} ({:?}, driver {} {}); random weights in {:.1} s",
        info.name,
        info.backend,
        info.driver,
        info.driver_info,
        started.elapsed().as_secs_f64()
    );
    let most = args.clients.iter().copied().max().unwrap_or(1) as usize;
    let options = ServerOptions {
        listen: SocketAddr::from(([127, 0, 0, 1], 0)),
        max_sessions: most,
        max_batch: args.serve_max_batch.map_or(most, |b| b as usize),
        max_wait: Duration::from_millis(args.serve_max_wait_ms),
        ..ServerOptions::default()
    };
    println!("server: --max-batch {} --max-wait-ms {}", options.max_batch, options.max_wait.as_millis());
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| Failure::Runtime(format!("starting the async runtime: {e}").into()))?;
    let audio = Arc::new(seeded_audio(seconds, 7));
    // The server takes the engine; the trials read its GPU context's memory between them.
    let measured = Arc::clone(&engine);
    runtime.block_on(async move {
        let server = Server::bind(options).await.map_err(|e| Failure::Runtime(Box::new(e)))?;
        let address = server.local_addr().map_err(|e| Failure::Runtime(Box::new(e)))?;
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let serving = tokio::spawn(server.run(move || Ok(engine), async move {
            let _ = stopped.await;
        }));
        ready(address).await?;
        for &latency in &args.latencies {
            let mut tried: Vec<Outcome> = Vec::new();
            let given = args.clients.iter().map(|&c| c as usize);
            for clients in given.map(Some).chain((0..args.admission_trials).map(|_| None)) {
                // The --clients counts, then the narrowing ones.
                let Some(clients) = clients.or_else(|| next_count(&tried)) else { break };
                let gpu = measured.gpu();
                let before = gpu.memory_in_use();
                gpu.reset_peak_memory();
                let trial = trial(address, latency, clients, &audio).await;
                println!("{}", report(&trial));
                println!("{}", memory_report(clients, before, gpu.peak_memory(), gpu.memory_in_use()));
                tried.push(Outcome::of(&trial));
            }
            println!("{}", admission(latency, &tried));
        }
        let _ = stop.send(());
        match serving.await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(error)) => Err(Failure::Runtime(Box::new(error))),
            Err(panic) => Err(Failure::Runtime(format!("the server task failed: {panic}").into())),
        }
    })
}

/// Waits until `/health/ready` answers 200 (the model loaded and warmed up), for up to ten minutes.
async fn ready(address: SocketAddr) -> Result<(), Failure> {
    let deadline = Instant::now() + Duration::from_secs(600);
    while Instant::now() < deadline {
        if let Ok(mut stream) = tokio::net::TcpStream::connect(address).await {
            let request = format!("GET /health/ready HTTP/1.1\r\nHost: {address}\r\nConnection: close\r\n\r\n");
            let mut answer = Vec::new();
            if stream.write_all(request.as_bytes()).await.is_ok()
                && stream.read_to_end(&mut answer).await.is_ok()
                && answer.starts_with(b"HTTP/1.1 200")
            {
                return Ok(());
            }
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    Err(Failure::Runtime("the server was not ready after 10 minutes".into()))
}

/// `clients` real-time sessions of `latency` at once, their starts spread over one chunk.
async fn trial(address: SocketAddr, latency: StreamingMode, clients: usize, audio: &Arc<Vec<f32>>) -> Trial {
    let chunk = Duration::from_secs_f64(latency.frames().0 as f64 * 0.08);
    let epoch = tokio::time::Instant::now() + Duration::from_millis(200);
    let tasks: Vec<_> = (0..clients)
        .map(|i| {
            let start = epoch + chunk.mul_f64(i as f64 / clients as f64);
            let audio = audio.clone();
            tokio::spawn(async move { client(address, latency, start, chunk, &audio).await })
        })
        .collect();
    let half = audio.len() as f64 / 2.0;
    let mut trial = Trial {
        latency,
        clients,
        chunk_seconds: chunk.as_secs_f64(),
        steady: Vec::new(),
        all: Vec::new(),
        failed: Vec::new(),
    };
    for task in tasks {
        match task.await {
            Ok(Ok(latencies)) => {
                trial.steady.extend(latencies.iter().filter(|(end, _)| *end as f64 > half).map(|(_, ms)| ms));
                trial.all.extend(latencies.iter().map(|(_, ms)| ms));
            }
            Ok(Err(error)) => trial.failed.push(error),
            Err(panic) => trial.failed.push(format!("client task failed: {panic}")),
        }
    }
    trial
}

/// One client: `session.start`, then one frame of `chunk` audio each time that much would have been captured
/// (from `start` on), then `session.end`; returns each frame's (end sample, latency in ms) from its send to the
/// first `audio.ack` covering it.
async fn client(
    address: SocketAddr,
    latency: StreamingMode,
    start: tokio::time::Instant,
    chunk: Duration,
    audio: &[f32],
) -> Result<Vec<(usize, f64)>, String> {
    tokio::time::sleep_until(start).await;
    let url = format!("ws://{address}/v1/audio/diarizations/stream");
    let (socket, _) = tokio_tungstenite::connect_async(url.as_str()).await.map_err(|e| format!("connect: {e}"))?;
    let (mut sink, mut messages) = socket.split();
    let begin = json!({"type": "session.start", "latency": latency, "sample_rate": 16000, "encoding": "pcm_f32le"});
    sink.send(Message::text(begin.to_string())).await.map_err(|e| format!("session.start: {e}"))?;
    match next_json(&mut messages).await? {
        message if message["type"] == "session.ready" => {}
        other => return Err(format!("expected session.ready, got {other}")),
    }
    let frame = (chunk.as_secs_f64() * 16_000.0).round() as usize;
    let frames: Vec<&[f32]> = audio.chunks(frame).collect();
    let mut sent: Vec<(usize, Instant)> = Vec::with_capacity(frames.len());
    let mut latencies = Vec::with_capacity(frames.len());
    let mut next = 0;
    let mut end_sent = false;
    loop {
        let due = start + chunk * (next as u32 + 1);
        tokio::select! {
            () = tokio::time::sleep_until(due), if !end_sent => {
                if let Some(piece) = frames.get(next) {
                    let bytes: Vec<u8> = piece.iter().flat_map(|s| s.to_le_bytes()).collect();
                    sink.send(Message::binary(bytes)).await.map_err(|e| format!("audio: {e}"))?;
                    let end = sent.last().map_or(0, |&(end, _)| end) + piece.len();
                    sent.push((end, Instant::now()));
                    next += 1;
                } else {
                    let end = json!({"type": "session.end"}).to_string();
                    sink.send(Message::text(end)).await.map_err(|e| format!("session.end: {e}"))?;
                    end_sent = true;
                }
            }
            message = next_json(&mut messages) => {
                let message = message?;
                match message["type"].as_str() {
                    Some("audio.ack") => {
                        let until = message["processed_until"].as_f64().unwrap_or(0.0) * 16_000.0;
                        let now = Instant::now();
                        while let Some(&(end, at)) = sent.get(latencies.len()).filter(|(end, _)| *end as f64 <= until + 0.5) {
                            latencies.push((end, now.duration_since(at).as_secs_f64() * 1e3));
                        }
                    }
                    Some("session.done") => return Ok(latencies),
                    Some("error") => return Err(format!("server error: {message}")),
                    _ => {}
                }
            }
        }
    }
}

type Messages = futures_util::stream::SplitStream<
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>,
>;

/// The next text message, parsed (binary and control messages skipped).
async fn next_json(messages: &mut Messages) -> Result<Value, String> {
    loop {
        match messages.next().await {
            Some(Ok(Message::Text(text))) => return serde_json::from_str(&text).map_err(|e| format!("{e}: {text}")),
            Some(Ok(Message::Close(frame))) => return Err(format!("closed by the server: {frame:?}")),
            Some(Ok(_)) => {}
            Some(Err(error)) => return Err(format!("reading: {error}")),
            None => return Err("the connection ended".into()),
        }
    }
}

/// Whether a trial's clients kept up, and its steady p99.
struct Outcome {
    clients: usize,
    keeps_up: bool,
    p99_ms: Option<f64>,
    chunk_ms: f64,
}

impl Outcome {
    fn of(t: &Trial) -> Self {
        let p99_ms = Spread::of(t.steady.clone()).map(|s| s.p99);
        let chunk_ms = t.chunk_seconds * 1e3;
        let keeps_up = t.failed.is_empty() && p99_ms.is_some_and(|p99| p99 < chunk_ms);
        Self { clients: t.clients, keeps_up, p99_ms, chunk_ms }
    }
}

/// The most clients that kept up and the fewest that fell behind, of the trials so far.
fn bounds(tried: &[Outcome]) -> (Option<&Outcome>, Option<&Outcome>) {
    let kept = tried.iter().filter(|o| o.keeps_up).max_by_key(|o| o.clients);
    let behind = tried.iter().filter(|o| !o.keeps_up).min_by_key(|o| o.clients);
    (kept, behind)
}

/// The next count to try toward the admission: twice the most that kept up while none fell behind, half the fewest
/// that fell behind while none kept up, else the middle of the gap; `None` once the gap is within 3 % (or one client).
fn next_count(tried: &[Outcome]) -> Option<usize> {
    match bounds(tried) {
        (Some(kept), None) => Some(kept.clients * 2),
        (None, Some(behind)) => (behind.clients > 1).then_some(behind.clients / 2),
        (Some(kept), Some(behind)) => {
            let (low, high) = (kept.clients, behind.clients);
            (high > low + (low / 32).max(1)).then_some(low + (high - low) / 2)
        }
        (None, None) => None,
    }
}

/// The admission line of a mode: the most clients that kept up (the `--max-sessions` a deployment of this mode
/// alone would set) and the fewest that fell behind.
fn admission(latency: StreamingMode, tried: &[Outcome]) -> String {
    let p99 = |o: &Outcome| o.p99_ms.map_or_else(|| "no chunk".into(), |p| format!("{p:.1} ms"));
    match bounds(tried) {
        (Some(kept), behind) => {
            let chunk = kept.chunk_ms;
            let mut line = format!(
                "admission {latency}: {} clients keep up (p99 {} under the {chunk:.0} ms chunk)",
                kept.clients,
                p99(kept)
            );
            match behind {
                Some(b) => line += &format!("; {} fall behind (p99 {})", b.clients, p99(b)),
                None => line += "; no count tried fell behind",
            }
            line
        }
        (None, Some(behind)) => {
            format!(
                "admission {latency}: none of the counts tried keeps up (the fewest, {}: p99 {})",
                behind.clients,
                p99(behind)
            )
        }
        (None, None) => format!("admission {latency}: no trial ran"),
    }
}

/// The GPU memory a trial's sessions took: the engine's buffers before it, at its peak and once its clients left.
fn memory_report(clients: usize, before: u64, peak: u64, after: u64) -> String {
    const MIB: f64 = 1024.0 * 1024.0;
    let per_session = peak.saturating_sub(before) as f64 / clients.max(1) as f64;
    format!(
        "  GPU memory: {:.1} MiB before, peak {:.1} MiB ({:.2} MiB per session), {:.1} MiB after the clients left",
        before as f64 / MIB,
        peak as f64 / MIB,
        per_session / MIB,
        after as f64 / MIB
    )
}

fn report(t: &Trial) -> String {
    let spread = |values: &[f64]| {
        Spread::of(values.to_vec()).map_or_else(
            || "no chunk".to_string(),
            |s| format!("median {:.1} ms, p99 {:.1} ms, max {:.1} ms", s.median, s.p99, s.max),
        )
    };
    let keeps_up = Outcome::of(t).keeps_up;
    let mut line = format!(
        "serve {} × {} clients: per-chunk latency (send → ack) in the streams' second half {} ({} chunks); all \
         chunks {}; {}",
        t.latency,
        t.clients,
        spread(&t.steady),
        t.steady.len(),
        spread(&t.all),
        if keeps_up { "keeps up (p99 under the chunk)" } else { "falls behind" }
    );
    if let Some(first) = t.failed.first() {
        line += &format!("; {} clients failed, first: {first}", t.failed.len());
    }
    line
}
