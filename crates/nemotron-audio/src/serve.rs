//! `serve`: the HTTP and WebSocket server of the `nemotron-server` crate on the model of `--model` or `--demo`. This
//! module only turns the flags into the server's options; the server loads the model while it already answers its
//! health checks.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use clap::Args;
use nemotron_server::{ApiKeys, ServerOptions};

use crate::failure::Failure;
use crate::{Settings, batch, model};

/// The flags of `serve`.
#[derive(Args)]
pub struct ServeArgs {
    /// A checkpoint folder or a Hugging Face Hub id `owner/name[@revision]` (a folder that exists wins).
    #[arg(long, conflicts_with = "demo")]
    model: Option<PathBuf>,
    /// Serve the built-in demo model (random weights: meaningless outputs).
    #[arg(long)]
    demo: bool,
    /// Address to listen on (loopback by default; `0.0.0.0:8000` for every interface).
    #[arg(long, default_value_t = ServerOptions::default().listen)]
    listen: SocketAddr,
    /// WebSocket sessions open at once; one more is refused with 503 and Retry-After.
    #[arg(long, default_value_t = ServerOptions::default().max_sessions, value_parser = at_least_one)]
    max_sessions: usize,
    /// Require `Authorization: Bearer KEY` with one of this file's keys (one per line, `#` comments) on every route
    /// but the page (`/` and the files it loads) and the health checks.
    #[arg(long, value_name = "FILE")]
    api_key_file: Option<PathBuf>,
    /// Largest request body; a larger one is refused with 413.
    #[arg(long, default_value_t = ServerOptions::default().max_body_bytes, value_parser = at_least_one)]
    max_body_bytes: usize,
    /// Longest HTTP request, upload and work together, in seconds (then 408).
    #[arg(long, value_name = "SECONDS", default_value_t = ServerOptions::default().request_timeout.as_secs_f64(), value_parser = seconds)]
    request_timeout: f64,
    /// Longest silence from a WebSocket client, in seconds (then `idle_timeout`); also how long a client may read
    /// none of its events while the server has more to send (then `backpressure`).
    #[arg(long, value_name = "SECONDS", default_value_t = ServerOptions::default().idle_timeout.as_secs_f64(), value_parser = seconds)]
    idle_timeout: f64,
    /// Seconds of audio a session may hold received and not yet processed (at least 1, a frame's worth); then the
    /// server stops reading that connection until it has caught up, so a client sending faster waits (flow
    /// control, no error).
    #[arg(long, value_name = "SECONDS", default_value_t = ServerOptions::default().session_buffer_seconds, value_parser = buffer_seconds)]
    session_buffer: f64,
    /// The kernel's send buffer of each connection (SO_SNDBUF), in bytes; default: the system's, which grows with
    /// the connection. Bounds what a WebSocket client that reads nothing leaves unsent before `backpressure`.
    #[arg(long, value_name = "BYTES", value_parser = at_least_one)]
    socket_send_buffer: Option<usize>,
    /// Most streaming steps the scheduler gathers per round.
    #[arg(long, default_value_t = ServerOptions::default().max_batch, value_parser = at_least_one)]
    max_batch: usize,
    /// How long the scheduler waits for more steps after a round's first, in milliseconds.
    #[arg(long, default_value_t = ServerOptions::default().max_wait.as_millis() as u64)]
    max_wait_ms: u64,
    /// Most uploaded recordings whose diarization steps share one GPU submission (concurrent requests run side
    /// by side, each answered as soon as its own recording is done).
    #[arg(long, default_value_t = ServerOptions::default().offline_batch, value_parser = recordings)]
    offline_batch: usize,
    /// How long a shutdown (SIGTERM, Ctrl-C) waits for requests and sessions in flight, in seconds.
    #[arg(long, value_name = "SECONDS", default_value_t = ServerOptions::default().shutdown_grace.as_secs_f64(), value_parser = seconds)]
    shutdown_grace: f64,
    /// The folder of known speakers' profiles (`NAME.safetensors`, as `enroll` writes them), each read at start
    /// and used by its name (`speakers=NAME`); `PUT`/`DELETE /v1/speakers/NAME` enroll and remove profiles there.
    #[arg(long, value_name = "DIR")]
    speakers: Option<PathBuf>,
    /// Load only the diarizer of a Transcribe checkpoint, as `diarize` does (no ASR tower, head or projector on the
    /// GPU; a Hub id fetches only the shards that hold it): `/v1/audio/features` and `/v1/audio/alignments` then
    /// answer 422.
    #[arg(long)]
    diarizer_only: bool,
    /// Print the server's OpenAPI 3.1 document (what `GET /openapi.json` answers) and exit, loading no model: for
    /// client generators and validators.
    #[arg(long, conflicts_with_all = ["model", "demo"])]
    openapi: bool,
}

/// Runs the server until SIGTERM or Ctrl-C.
pub fn serve(settings: &Settings, args: &ServeArgs) -> Result<(), Failure> {
    if args.openapi {
        println!("{}", nemotron_server::OPENAPI.as_str());
        return Ok(());
    }
    let source = model::source(args.model.as_deref(), args.demo)?;
    let api_keys = match &args.api_key_file {
        Some(path) => Some(ApiKeys::read(path).map_err(|e| Failure::Runtime(Box::new(e)))?),
        None => None,
    };
    let options = ServerOptions {
        listen: args.listen,
        max_sessions: args.max_sessions,
        api_keys,
        max_body_bytes: args.max_body_bytes,
        request_timeout: Duration::from_secs_f64(args.request_timeout),
        idle_timeout: Duration::from_secs_f64(args.idle_timeout),
        session_buffer_seconds: args.session_buffer,
        socket_send_buffer: args.socket_send_buffer,
        max_batch: args.max_batch,
        max_wait: Duration::from_millis(args.max_wait_ms),
        offline_batch: args.offline_batch,
        shutdown_grace: Duration::from_secs_f64(args.shutdown_grace),
        speakers: args.speakers.clone(),
    };
    let settings = if args.diarizer_only { settings.diarizer_only() } else { settings.clone() };
    let (engine, quiet) = (settings.engine, settings.quiet);
    nemotron_server::serve_until_signal(options, move || model::load_source(&source, &engine, quiet).map(Arc::new))
        .map_err(|e| Failure::Runtime(Box::new(e)))
}

/// `--offline-batch`: as `diarize --batch-size`.
fn recordings(text: &str) -> Result<usize, String> {
    batch::batch_limits(text).map(|limits| limits.max_recordings)
}

fn at_least_one(text: &str) -> Result<usize, String> {
    match text.parse::<usize>() {
        Ok(0) => Err("must be at least 1".into()),
        Ok(n) => Ok(n),
        Err(e) => Err(e.to_string()),
    }
}

/// Seconds: finite and above 0.
fn seconds(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(s) if s.is_finite() && s > 0.0 => Ok(s),
        Ok(s) => Err(format!("{s} is not a positive number of seconds")),
        Err(e) => Err(e.to_string()),
    }
}

/// `--session-buffer`: at least the 1 s a frame may hold.
fn buffer_seconds(text: &str) -> Result<f64, String> {
    match seconds(text)? {
        s if s >= 1.0 => Ok(s),
        s => Err(format!("{s} s is less than the 1 s one frame may hold")),
    }
}
