//! The WebSocket upgrade of the live diarization route: the session slot is taken before it, so a full server
//! answers 503 with `Retry-After` over plain HTTP.

use axum::extract::ws::rejection::WebSocketUpgradeRejection;
use axum::extract::{State, WebSocketUpgrade};
use axum::http::StatusCode;
use axum::response::Response;

use crate::error::ApiError;
use crate::state::{AppState, RETRY_AFTER_SECONDS};
use crate::stream::{self, Context, MAX_MESSAGE_BYTES, protocol};

/// `GET /v1/audio/diarizations/stream`: the WebSocket upgrade. The session slot is taken here, before the upgrade,
/// so a full server answers 503 over plain HTTP.
pub async fn upgrade(
    State(state): State<AppState>,
    upgrade: Result<WebSocketUpgrade, WebSocketUpgradeRejection>,
) -> Result<Response, ApiError> {
    let upgrade = upgrade.map_err(|e| {
        let message = format!("this route speaks WebSocket only: {}", e.body_text());
        ApiError::new(StatusCode::UPGRADE_REQUIRED, "websocket_required", message)
    })?;
    let (scheduler, engine) = (state.scheduler()?, state.engine()?);
    let permit = state.sessions.clone().try_acquire_owned().map_err(|_| {
        let message = format!("all {} session slots are taken", state.options.max_sessions);
        ApiError::unavailable("too_many_sessions", message, RETRY_AFTER_SECONDS)
    })?;
    let context = Context {
        scheduler,
        engine,
        speakers: state.speakers.clone(),
        idle_timeout: state.options.idle_timeout,
        buffer_samples: (state.options.session_buffer_seconds * f64::from(protocol::SAMPLE_RATE)) as usize,
        shutdown: state.shutdown.clone(),
        metrics: state.metrics.clone(),
    };
    let tracker = state.tracker.clone();
    Ok(upgrade.max_message_size(MAX_MESSAGE_BYTES).max_frame_size(MAX_MESSAGE_BYTES).on_upgrade(move |socket| {
        tracker.track_future(async move {
            stream::run(socket, context).await;
            // The slot frees when the session is over, disconnects included.
            drop(permit);
        })
    }))
}
