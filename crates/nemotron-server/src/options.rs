//! The server's settings, as typed values (the CLI's `serve` flags fill them; nothing here reads the environment).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use nemotron_engine::BatchLimits;

use crate::auth::ApiKeys;

/// How the server listens, what it admits and how long it waits.
#[derive(Clone, Debug)]
pub struct ServerOptions {
    /// Address to listen on (loopback by default: exposing the server is a decision).
    pub listen: SocketAddr,
    /// WebSocket sessions open at once; one more is refused with 503 and `Retry-After` before the upgrade.
    pub max_sessions: usize,
    /// Keys a request must present as `Authorization: Bearer …` (health checks exempt); `None`: no authentication.
    pub api_keys: Option<ApiKeys>,
    /// Largest request body (an upload); a larger one is refused with 413.
    pub max_body_bytes: usize,
    /// Longest an HTTP request may take, upload and work together; then 408 (work already on the GPU finishes and
    /// is dropped).
    pub request_timeout: Duration,
    /// Longest a WebSocket session may stay silent (no frame from the client) before it is closed, and longest it
    /// waits for a client that reads none of its events (then `backpressure`).
    pub idle_timeout: Duration,
    /// Seconds of audio a session may hold received and not yet processed (one frame may pass it); then it stops
    /// reading its connection until the scheduler has taken the audio in, so TCP slows a client that sends faster.
    pub session_buffer_seconds: f64,
    /// The kernel's send buffer of every accepted connection (`SO_SNDBUF`, bytes); `None`: the system's, which
    /// grows with the connection (on Linux up to `net.ipv4.tcp_wmem`'s maximum). It bounds what a WebSocket client
    /// that reads nothing leaves waiting in the kernel before the server's sends wait, and with them the time until
    /// its `backpressure`; it also caps the throughput of large responses over long paths (buffer / round trip).
    pub socket_send_buffer: Option<usize>,
    /// Most streaming steps the scheduler gathers into one round.
    pub max_batch: usize,
    /// How long the scheduler waits for more steps after the first one of a round.
    pub max_wait: Duration,
    /// Most uploaded recordings (`POST /v1/audio/diarizations`) whose diarization steps share one GPU submission.
    pub offline_batch: usize,
    /// How long a shutdown waits for requests and sessions in flight before it drops them.
    pub shutdown_grace: Duration,
    /// The folder of known speakers' profiles (`NAME.safetensors`, read at start; `PUT`/`DELETE /v1/speakers/NAME`
    /// write and remove them); `None`: no known speakers.
    pub speakers: Option<PathBuf>,
}

impl Default for ServerOptions {
    fn default() -> Self {
        Self {
            listen: SocketAddr::from(([127, 0, 0, 1], 8000)),
            max_sessions: 64,
            api_keys: None,
            max_body_bytes: 256 << 20,
            request_timeout: Duration::from_secs(600),
            idle_timeout: Duration::from_secs(30),
            session_buffer_seconds: 10.0,
            socket_send_buffer: None,
            max_batch: 64,
            max_wait: Duration::from_millis(2),
            offline_batch: BatchLimits::default().max_recordings,
            shutdown_grace: Duration::from_secs(30),
            speakers: None,
        }
    }
}
