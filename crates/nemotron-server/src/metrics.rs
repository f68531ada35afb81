//! Prometheus metrics (`GET /metrics`, text exposition format): requests and errors by route and code, the
//! sessions open, the most audio a session held waiting, the scheduler's queue, GPU time per step or request, the
//! audio processed and the GPU memory the engine holds.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Instant;

use axum::extract::{MatchedPath, Request, State};
use axum::http::header;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use nemotron_engine::Gpu;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::encoding::text::encode;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::{Registry, Unit};

use crate::error::ErrorCode;
use crate::stream::protocol::SAMPLE_RATE;

/// Labels of a finished HTTP request.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct RequestLabels {
    /// The route's pattern (`/v1/audio/diarizations`), `unmatched` for a path no route has: bounded cardinality.
    pub route: String,
    /// HTTP method.
    pub method: String,
    /// Status code.
    pub status: u16,
}

/// Labels of an error answered over HTTP or inside a WebSocket session.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ErrorLabels {
    /// The route's pattern.
    pub route: String,
    /// The error's code (`invalid_input`, `backpressure`, …).
    pub code: String,
}

/// Labels of work done on the GPU.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct TaskLabels {
    /// `stream`, `diarize`, `align` or `features`.
    pub task: &'static str,
}

/// Every metric of the server, registered once.
pub struct Metrics {
    registry: Registry,
    /// HTTP requests answered.
    pub requests: Family<RequestLabels, Counter>,
    /// Errors answered, by code.
    pub errors: Family<ErrorLabels, Counter>,
    /// Time to answer an HTTP request (a WebSocket route: until the upgrade).
    pub request_seconds: Family<RequestLabels, Histogram>,
    /// WebSocket sessions open now.
    pub active_sessions: Gauge,
    /// WebSocket sessions opened since the start.
    pub sessions: Counter,
    /// The most audio one session held received and not yet processed, in seconds, since the start.
    pub buffer_peak: Gauge<f64, AtomicU64>,
    /// Streaming steps waiting for the scheduler.
    pub queue_depth: Gauge,
    /// Steps the scheduler gathered per round.
    pub round_size: Histogram,
    /// Uploaded recordings in the diarization queue at each of its steps.
    pub diarize_queue: Histogram,
    /// Wall time of one streaming step or one offline request's engine call (GPU work and the host work around it).
    pub gpu_seconds: Family<TaskLabels, Histogram>,
    /// Seconds of audio processed.
    pub audio_seconds: Family<TaskLabels, Counter<f64, std::sync::atomic::AtomicU64>>,
    /// Bytes in the engine's GPU buffers, read at each scrape (0 until the model is loaded).
    pub gpu_memory: Gauge,
    /// The engine's GPU context, once the model is loaded.
    gpu: OnceLock<Gpu>,
}

impl Default for Metrics {
    fn default() -> Self {
        let seconds = || Histogram::new(exponential_buckets(0.001, 2.0, 16));
        let mut metrics = Self {
            registry: Registry::with_prefix("nemotron"),
            requests: Family::default(),
            errors: Family::default(),
            request_seconds: Family::new_with_constructor(seconds),
            active_sessions: Gauge::default(),
            sessions: Counter::default(),
            buffer_peak: Gauge::default(),
            queue_depth: Gauge::default(),
            round_size: Histogram::new(exponential_buckets(1.0, 2.0, 10)),
            diarize_queue: Histogram::new(exponential_buckets(1.0, 2.0, 10)),
            gpu_seconds: Family::new_with_constructor(seconds),
            audio_seconds: Family::default(),
            gpu_memory: Gauge::default(),
            gpu: OnceLock::new(),
        };
        let r = &mut metrics.registry;
        r.register("http_requests", "HTTP requests answered, by route, method and status", metrics.requests.clone());
        r.register("http_errors", "Errors answered (HTTP and WebSocket), by route and code", metrics.errors.clone());
        r.register("http_request_duration_seconds", "Time to answer a request", metrics.request_seconds.clone());
        r.register("stream_sessions_active", "WebSocket sessions open now", metrics.active_sessions.clone());
        r.register("stream_sessions", "WebSocket sessions opened", metrics.sessions.clone());
        let peak = "Most audio one session held waiting to be processed (at most --session-buffer and one frame)";
        r.register_with_unit("stream_buffer_peak", peak, Unit::Seconds, metrics.buffer_peak.clone());
        r.register("scheduler_queue_depth", "Streaming steps waiting for the scheduler", metrics.queue_depth.clone());
        r.register("scheduler_round_steps", "Streaming steps gathered per scheduler round", metrics.round_size.clone());
        let queue =
            "Uploaded recordings in the diarization queue at each of its steps (up to --offline-batch share one)";
        r.register("diarize_queue_recordings", queue, metrics.diarize_queue.clone());
        r.register("gpu_step_duration_seconds", "Time of one engine call, by task", metrics.gpu_seconds.clone());
        r.register("audio_processed_seconds", "Seconds of audio processed, by task", metrics.audio_seconds.clone());
        let memory = "Bytes in the engine's GPU buffers now (weights, live sessions' pages, workspaces)";
        r.register_with_unit("gpu_memory", memory, Unit::Bytes, metrics.gpu_memory.clone());
        metrics
    }
}

impl Metrics {
    /// Reads the GPU memory of `gpu` (the loaded engine's context) at every scrape from now on.
    pub fn watch_gpu(&self, gpu: &Gpu) {
        // Set once, by the one load.
        let _ = self.gpu.set(gpu.clone());
    }

    /// The text exposition of every metric.
    pub fn render(&self) -> String {
        if let Some(gpu) = self.gpu.get() {
            self.gpu_memory.set(i64::try_from(gpu.memory_in_use()).unwrap_or(i64::MAX));
        }
        let mut text = String::new();
        // Writing into a String cannot fail.
        let _ = encode(&mut text, &self.registry);
        text
    }

    /// Counts an error of `code` on `route`.
    pub fn error(&self, route: &str, code: &str) {
        self.errors.get_or_create(&ErrorLabels { route: route.into(), code: code.into() }).inc();
    }

    /// Raises the buffer's peak to `samples` of a stream if they are more.
    pub fn buffered(&self, samples: usize) {
        let seconds = samples as f64 / f64::from(SAMPLE_RATE);
        let higher = |bits: u64| (seconds > f64::from_bits(bits)).then_some(seconds.to_bits());
        // `Err` only says the peak was already as high.
        let _ = self.buffer_peak.inner().fetch_update(Ordering::Relaxed, Ordering::Relaxed, higher);
    }

    /// Records one engine call of `task` that took `started.elapsed()` over `audio_seconds` of audio.
    pub fn engine_call(&self, task: &'static str, started: Instant, audio_seconds: f64) {
        let labels = TaskLabels { task };
        self.gpu_seconds.get_or_create(&labels).observe(started.elapsed().as_secs_f64());
        self.audio_seconds.get_or_create(&labels).inc_by(audio_seconds);
    }
}

/// `GET /metrics`.
pub async fn metrics(State(metrics): State<Arc<Metrics>>) -> Response {
    let content_type = "application/openmetrics-text; version=1.0.0; charset=utf-8";
    ([(header::CONTENT_TYPE, content_type)], metrics.render()).into_response()
}

/// The middleware that counts every request by its route's pattern, and errors by their code.
pub async fn count_requests(State(metrics): State<Arc<Metrics>>, request: Request, next: Next) -> Response {
    let route = request.extensions().get::<MatchedPath>().map_or("unmatched", MatchedPath::as_str).to_string();
    let method = request.method().to_string();
    let started = Instant::now();
    let response = next.run(request).await;
    let labels = RequestLabels { route, method, status: response.status().as_u16() };
    metrics.request_seconds.get_or_create(&labels).observe(started.elapsed().as_secs_f64());
    metrics.requests.get_or_create(&labels).inc();
    if let Some(ErrorCode(code)) = response.extensions().get::<ErrorCode>() {
        metrics.error(&labels.route, code);
    }
    response
}
