//! What every handler shares: the options, the metrics, the known speakers, the model once it is loaded and warm, the
//! session slots and the shutdown signal.

use std::sync::{Arc, OnceLock};

use axum::http::StatusCode;
use nemotron_engine::Engine;
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::error::ApiError;
use crate::http::diarize_queue::DiarizeQueue;
use crate::metrics::Metrics;
use crate::options::ServerOptions;
use crate::speakers::{Known, Speakers};
use crate::stream::scheduler::SchedulerHandle;

/// Seconds a client is told to wait while the model loads or every session slot is taken.
pub const RETRY_AFTER_SECONDS: u32 = 5;

/// The handlers' shared state (cheap to clone).
#[derive(Clone)]
pub struct AppState {
    /// The server's settings.
    pub options: Arc<ServerOptions>,
    /// Every metric.
    pub metrics: Arc<Metrics>,
    /// One permit per WebSocket session that may be open.
    pub sessions: Arc<Semaphore>,
    /// Cancelled when the server starts shutting down.
    pub shutdown: CancellationToken,
    /// The WebSocket sessions running (the shutdown waits for them).
    pub tracker: TaskTracker,
    /// The speaker folder's profiles, when the server has one.
    pub speakers: Option<Arc<Speakers>>,
    loaded: Arc<OnceLock<Loaded>>,
}

/// The metrics' handlers take only the metrics.
impl axum::extract::FromRef<AppState> for Arc<Metrics> {
    fn from_ref(state: &AppState) -> Self {
        state.metrics.clone()
    }
}

/// The model, loaded and warmed up, the scheduler of its streams and the queue of its uploads' diarizations.
struct Loaded {
    engine: Arc<Engine>,
    scheduler: SchedulerHandle,
    diarize_queue: Arc<DiarizeQueue>,
}

impl AppState {
    /// The state of a server with `options`, the profiles of its speaker folder and no model yet.
    pub fn new(options: ServerOptions, speakers: Option<Speakers>) -> Self {
        Self {
            speakers: speakers.map(Arc::new),
            sessions: Arc::new(Semaphore::new(options.max_sessions)),
            options: Arc::new(options),
            metrics: Arc::new(Metrics::default()),
            shutdown: CancellationToken::new(),
            tracker: TaskTracker::new(),
            loaded: Arc::new(OnceLock::new()),
        }
    }

    /// The model is loaded and warm: requests may use it from now on.
    pub fn set_loaded(&self, engine: Arc<Engine>, scheduler: SchedulerHandle, diarize_queue: DiarizeQueue) {
        // Called once, after the one load.
        let _ = self.loaded.set(Loaded { engine, scheduler, diarize_queue: Arc::new(diarize_queue) });
    }

    /// The model, when requests are taken: it is loaded and warm, and the server is not shutting down.
    pub fn ready_engine(&self) -> Result<&Engine, ApiError> {
        Ok(&self.loaded()?.engine)
    }

    /// The engine, for a request's blocking work.
    pub fn engine(&self) -> Result<Arc<Engine>, ApiError> {
        Ok(self.loaded()?.engine.clone())
    }

    /// The streaming scheduler.
    pub fn scheduler(&self) -> Result<SchedulerHandle, ApiError> {
        Ok(self.loaded()?.scheduler.clone())
    }

    /// The queue that diarizes uploads side by side.
    pub fn diarize_queue(&self) -> Result<Arc<DiarizeQueue>, ApiError> {
        Ok(self.loaded()?.diarize_queue.clone())
    }

    /// The speaker folder; 404 `no_speaker_folder` when the server has none.
    pub fn speakers(&self) -> Result<&Arc<Speakers>, ApiError> {
        self.speakers.as_ref().ok_or_else(no_speaker_folder)
    }

    /// Profile `name` of the speaker folder; 404 `unknown_speakers` when there is none, `no_speaker_folder` when the
    /// server has no folder.
    pub fn known(&self, name: &str) -> Result<Arc<Known>, ApiError> {
        self.speakers()?.get(name).ok_or_else(|| unknown_speakers(name))
    }

    /// Stops the streaming scheduler's thread and the diarization queue's and waits for them (blocking; see
    /// [`SchedulerHandle::stop`]), when the model was loaded.
    pub fn stop_scheduler(&self) {
        if let Some(loaded) = self.loaded.get() {
            loaded.scheduler.stop();
            loaded.diarize_queue.stop();
        }
    }

    fn loaded(&self) -> Result<&Loaded, ApiError> {
        if self.shutdown.is_cancelled() {
            return Err(ApiError::unavailable("shutting_down", "the server is shutting down", RETRY_AFTER_SECONDS));
        }
        self.loaded.get().ok_or_else(|| {
            ApiError::unavailable("model_loading", "the model is loading and warming up", RETRY_AFTER_SECONDS)
        })
    }
}

/// 404: the server was started without `--speakers DIR`.
pub fn no_speaker_folder() -> ApiError {
    let message = "this server has no speaker folder (start it with --speakers DIR to use known speakers)";
    ApiError::new(StatusCode::NOT_FOUND, "no_speaker_folder", message)
}

/// 404: no profile `name` in the speaker folder.
pub fn unknown_speakers(name: &str) -> ApiError {
    ApiError::new(StatusCode::NOT_FOUND, "unknown_speakers", format!("no speaker profile `{name}`"))
}
