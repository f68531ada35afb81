//! What every handler shares: the options, the metrics, the model once it is loaded and warm, the session slots and
//! the shutdown signal.

use std::sync::{Arc, OnceLock};

use nemotron_engine::Engine;
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::error::ApiError;
use crate::http::diarize_queue::DiarizeQueue;
use crate::metrics::Metrics;
use crate::options::ServerOptions;
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
    /// The state of a server with `options` and no model yet.
    pub fn new(options: ServerOptions) -> Self {
        Self {
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
