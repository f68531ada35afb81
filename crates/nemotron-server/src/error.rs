//! The one error shape of every HTTP route: `{"error":{"code","message"}}` with the status that says whose fault it
//! is. Codes are stable identifiers a client may branch on (docs/server.md lists them); messages are for people.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use nemotron_engine::{EngineError, ErrorKind};

/// An error answered to an HTTP request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiError {
    /// The response's status.
    pub status: StatusCode,
    /// Stable, machine-readable code (`invalid_audio`, `payload_too_large`, …).
    pub code: &'static str,
    /// What went wrong, in a sentence.
    pub message: String,
    /// Seconds after which the client may try again (`Retry-After`), for 503s that pass.
    pub retry_after: Option<u32>,
}

impl ApiError {
    /// An error of `status` with `code` and `message`.
    pub fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> Self {
        Self { status, code, message: message.into(), retry_after: None }
    }

    /// 400: the request itself is wrong (a missing field, a bad setting).
    pub fn bad_request(code: &'static str, message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, code, message)
    }

    /// 503 with `Retry-After`: the server cannot take this now, later it may.
    pub fn unavailable(code: &'static str, message: impl Into<String>, retry_after: u32) -> Self {
        Self { retry_after: Some(retry_after), ..Self::new(StatusCode::SERVICE_UNAVAILABLE, code, message) }
    }

    /// The JSON body, as written.
    pub fn body(&self) -> String {
        serde_json::json!({ "error": { "code": self.code, "message": self.message } }).to_string()
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut response = (self.status, [(header::CONTENT_TYPE, "application/json")], self.body()).into_response();
        if let Some(seconds) = self.retry_after {
            response.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from(seconds));
        }
        // The metrics layer counts errors by code without parsing the body.
        response.extensions_mut().insert(ErrorCode(self.code));
        response
    }
}

/// The code of an error response, for the metrics layer.
#[derive(Clone, Copy, Debug)]
pub struct ErrorCode(pub &'static str);

impl From<EngineError> for ApiError {
    /// The engine's classification decides the status: what the client asked or handed over is a 4xx, the
    /// server's own trouble a 5xx. (The server never hands the engine a path a client named, so `NotFound` can only
    /// be a file of the server's model, such as the alignment tokenizer: the model cannot do this.)
    fn from(error: EngineError) -> Self {
        let message = error.to_string();
        match error.kind() {
            ErrorKind::Usage => Self::bad_request("invalid_setting", message),
            ErrorKind::BadInput => Self::new(StatusCode::UNPROCESSABLE_ENTITY, "invalid_input", message),
            ErrorKind::NotFound => Self::new(StatusCode::NOT_IMPLEMENTED, "unsupported_by_model", message),
            _ => Self::new(StatusCode::INTERNAL_SERVER_ERROR, "internal", message),
        }
    }
}
