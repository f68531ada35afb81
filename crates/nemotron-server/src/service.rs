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

/// The page at `/` and the files it loads, each at `/<name>`: pick a file or the microphone, watch the speaker
/// timeline fill in (plain HTML and JS modules, no build). Beside its own script, the page imports the browser
/// package's page modules, embedded from that page's folder: one file for both pages, no copy.
pub(crate) const PAGE_FILES: [PageFile; 6] = [
    PageFile::html("/", include_str!("page/index.html")),
    PageFile::script("/page.js", include_str!("page/page.js")),
    PageFile::script("/decode.js", include_str!("../../nemotron-web/page/decode.js")),
    PageFile::script("/capture.js", include_str!("../../nemotron-web/page/capture.js")),
    PageFile::script("/capture-processor.js", include_str!("../../nemotron-web/page/capture-processor.js")),
    PageFile::script("/timeline.js", include_str!("../../nemotron-web/page/timeline.js")),
];

/// One of the page's files: its route, `Content-Type` and text.
#[derive(Clone, Copy, Debug)]
pub(crate) struct PageFile {
    /// The route it is served at.
    pub(crate) path: &'static str,
    content_type: &'static str,
    text: &'static str,
}

impl PageFile {
    const fn html(path: &'static str, text: &'static str) -> Self {
        Self { path, content_type: "text/html; charset=utf-8", text }
    }

    const fn script(path: &'static str, text: &'static str) -> Self {
        Self { path, content_type: "text/javascript; charset=utf-8", text }
    }

    /// `GET` of its route.
    pub(crate) fn response(self) -> Response {
        ([(header::CONTENT_TYPE, self.content_type)], self.text).into_response()
    }
}

/// The OpenAPI 3.1 document: `openapi.json`, written by hand (`tests/http.rs` checks its paths against the routes),
/// with the schema `SegmentSettings` made from the engine's settings (their names, types, ranges and descriptions).
pub static OPENAPI: LazyLock<String> = LazyLock::new(|| {
    let mut document: serde_json::Value =
        serde_json::from_str(include_str!("openapi.json")).expect("openapi.json is JSON (tests/http.rs reads it)");
    document["components"]["schemas"]["SegmentSettings"] = Origin::Remote.json_schema();
    document.to_string()
});

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
