//! The routes and the layers around them: panics caught (500), the `Authorization` header marked sensitive, every
//! request counted, the API key checked, the request timeout (not on the WebSocket route, which has its idle
//! timeout), the body size limit, `Connection: close` on an error answer to a request with a body; a JSON 404/405
//! for anything else.

use std::time::Duration;

use axum::Router;
use axum::extract::{DefaultBodyLimit, Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post, put};
use tower_http::catch_panic::CatchPanicLayer;
use tower_http::sensitive_headers::SetSensitiveRequestHeadersLayer;

use crate::error::ApiError;
use crate::state::AppState;
use crate::stream::STREAM;
use crate::{auth, http, metrics, service};

/// The whole application.
pub fn router(state: AppState) -> Router {
    let page = service::PAGE_FILES
        .into_iter()
        .fold(Router::new(), |router, file| router.route(file.path, get(move || async move { file.response() })));
    page.route("/health/live", get(service::live))
        .route("/health/ready", get(service::ready))
        .route("/metrics", get(metrics::metrics))
        .route("/openapi.json", get(service::openapi))
        .route("/v1/models", get(service::models))
        .route("/v1/audio/diarizations", post(http::tasks::diarize))
        .route("/v1/audio/alignments", post(http::tasks::align))
        .route("/v1/audio/features", post(http::tasks::features))
        .route(STREAM, get(http::stream_upgrade::upgrade))
        .route("/v1/speakers", get(http::speakers::list))
        .route("/v1/speakers/{profile}", put(http::speakers::put).delete(http::speakers::delete))
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(DefaultBodyLimit::max(state.options.max_body_bytes))
        .layer(middleware::from_fn_with_state(state.options.request_timeout, request_timeout))
        .layer(middleware::from_fn_with_state(state.options.api_keys.clone(), auth::require_key))
        .layer(middleware::from_fn_with_state(state.metrics.clone(), metrics::count_requests))
        .layer(SetSensitiveRequestHeadersLayer::new([header::AUTHORIZATION]))
        .layer(CatchPanicLayer::custom(|_| {
            ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "internal", "the request failed unexpectedly (a bug)")
                .into_response()
        }))
        .layer(middleware::from_fn(close_after_refused_body))
        .with_state(state)
}

async fn not_found(request: Request) -> ApiError {
    ApiError::new(StatusCode::NOT_FOUND, "not_found", format!("no route {}", request.uri().path()))
}

async fn method_not_allowed(request: Request) -> ApiError {
    let message = format!("{} is not a method of {}", request.method(), request.uri().path());
    ApiError::new(StatusCode::METHOD_NOT_ALLOWED, "method_not_allowed", message)
}

/// Adds `Connection: close` to an error answer to a request that carried a body. Such answers often come before the
/// body is read (401, 408, 413, 503 while the model loads); hyper then closes the connection rather than read on, and
/// without the header a client that pools connections sends its next request on the closed one and gets no answer
/// (seen in the tests as an incomplete message, now and then).
async fn close_after_refused_body(request: Request, next: Next) -> Response {
    let headers = request.headers();
    let length = headers.get(header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()?.parse::<u64>().ok());
    let carries_body = headers.contains_key(header::TRANSFER_ENCODING) || length.is_some_and(|n| n > 0);
    let mut response = next.run(request).await;
    let status = response.status();
    if carries_body && (status.is_client_error() || status.is_server_error()) {
        response.headers_mut().insert(header::CONNECTION, HeaderValue::from_static("close"));
    }
    response
}

/// Answers 408 when a request (upload and work) takes longer than `limit`. Work already on the GPU runs to its end
/// on its blocking thread; its result is dropped.
async fn request_timeout(State(limit): State<Duration>, request: Request, next: Next) -> Response {
    if request.uri().path() == STREAM {
        return next.run(request).await;
    }
    match tokio::time::timeout(limit, next.run(request)).await {
        Ok(response) => response,
        Err(_) => {
            let message = format!("the request took longer than {} s", limit.as_secs_f64());
            ApiError::new(StatusCode::REQUEST_TIMEOUT, "request_timeout", message).into_response()
        }
    }
}
