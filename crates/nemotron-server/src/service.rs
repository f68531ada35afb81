//! The routes around the model: health checks, the model list, the OpenAPI document and the page.

use std::sync::LazyLock;

use axum::Json;
use axum::extract::State;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use nemotron_engine::{Origin, StreamingMode};
use serde_json::json;

use crate::error::ApiError;
use crate::state::AppState;

/// The page at `/`: pick a file or the microphone, watch the speaker timeline fill in (plain HTML and JS, no build).
const PAGE: &str = include_str!("page/index.html");
/// The page's script.
const PAGE_SCRIPT: &str = include_str!("page/page.js");
/// The speaker timeline it draws: the browser package's page's module, one file for both pages.
const TIMELINE_SCRIPT: &str = include_str!("../../nemotron-web/page/timeline.js");
/// The OpenAPI 3.1 document: `openapi.json`, written by hand (`tests/http.rs` checks its paths against the routes),
/// with the schema `SegmentSettings` made from the engine's settings (their names, types, ranges and descriptions).
pub static OPENAPI: LazyLock<String> = LazyLock::new(|| {
    let mut document: serde_json::Value =
        serde_json::from_str(include_str!("openapi.json")).expect("openapi.json is JSON (tests/http.rs reads it)");
    document["components"]["schemas"]["SegmentSettings"] = Origin::Remote.json_schema();
    document.to_string()
});

/// `GET /`.
pub async fn page() -> Response {
    ([(header::CONTENT_TYPE, "text/html; charset=utf-8")], PAGE).into_response()
}

/// `GET /page.js`.
pub async fn page_script() -> Response {
    ([(header::CONTENT_TYPE, "text/javascript; charset=utf-8")], PAGE_SCRIPT).into_response()
}

/// `GET /timeline.js`.
pub async fn timeline_script() -> Response {
    ([(header::CONTENT_TYPE, "text/javascript; charset=utf-8")], TIMELINE_SCRIPT).into_response()
}

/// `GET /openapi.json`.
pub async fn openapi() -> Response {
    ([(header::CONTENT_TYPE, "application/json")], OPENAPI.as_str()).into_response()
}

/// `GET /health/live`: the process answers.
pub async fn live() -> Json<serde_json::Value> {
    Json(json!({ "status": "live" }))
}

/// `GET /health/ready`: 200 once the model is loaded and warmed up, 503 before and while shutting down.
pub async fn ready(State(state): State<AppState>) -> Result<Json<serde_json::Value>, ApiError> {
    state.ready_engine()?;
    Ok(Json(json!({ "status": "ready" })))
}

/// `GET /v1/models`: the one model this process serves.
pub async fn models(State(state): State<AppState>) -> Result<Json<serde_json::Value>, ApiError> {
    let engine = state.ready_engine()?;
    Ok(Json(json!({
        "object": "list",
        "data": [{
            "id": engine.description(),
            "object": "model",
            "demo": engine.is_demo(),
            "tasks": ["diarization", "alignment", "features", "streaming_diarization"],
            // The latency names of `session.start`: ["low", "very-low", "ultra-low"].
            "streaming_latencies": StreamingMode::NAMED,
        }],
    })))
}
