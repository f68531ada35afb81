//! API keys: `Authorization: Bearer <key>` on every route but the health checks (and the page at `/` with its
//! scripts, which hold no data: the page asks for a key itself). Browsers cannot set headers on a WebSocket, so the
//! stream route also takes the key as the `access_token` query parameter (RFC 6750 §2.3). Keys are compared in
//! constant time and never logged: the server logs routes, not URIs or headers.

use std::collections::HashMap;
use std::fmt;
use std::path::Path;
use std::sync::Arc;

use axum::extract::{Query, Request, State};
use axum::http::{StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use subtle::ConstantTimeEq;

use crate::ServerError;
use crate::error::ApiError;
use crate::service;

/// The keys a request may present. `Debug` shows how many there are, never what they are.
#[derive(Clone)]
pub struct ApiKeys(Arc<Vec<Vec<u8>>>);

impl fmt::Debug for ApiKeys {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ApiKeys({} keys)", self.0.len())
    }
}

impl ApiKeys {
    /// The keys of a file: one per line, surrounding whitespace trimmed, empty lines and `#` comments skipped.
    /// A file without any key is refused (it would lock every client out).
    pub fn read(path: &Path) -> Result<Self, ServerError> {
        let text = std::fs::read_to_string(path)
            .map_err(|source| ServerError::KeyFile { path: path.to_path_buf(), source })?;
        Self::parse(&text).ok_or_else(|| ServerError::NoKeys(path.to_path_buf()))
    }

    /// The keys of a key file's text; `None` when it holds none.
    pub fn parse(text: &str) -> Option<Self> {
        let keys: Vec<Vec<u8>> = text
            .lines()
            .map(str::trim)
            .filter(|line| !line.is_empty() && !line.starts_with('#'))
            .map(|line| line.as_bytes().to_vec())
            .collect();
        (!keys.is_empty()).then(|| Self(Arc::new(keys)))
    }

    /// Whether `presented` is one of the keys. Every key is compared, each in time independent of where the bytes
    /// differ (`subtle`), so the answer's timing tells nothing about the keys but their lengths.
    pub fn accepts(&self, presented: &[u8]) -> bool {
        self.0.iter().fold(subtle::Choice::from(0), |found, key| found | key.as_slice().ct_eq(presented)).into()
    }
}

/// Routes anyone may call: the load balancer's probes and the page's files (the metrics are not among them).
fn is_public(path: &str) -> bool {
    matches!(path, "/health/live" | "/health/ready") || service::PAGE_FILES.iter().any(|file| file.path == path)
}

/// The middleware: refuses requests to non-public routes without an accepted key with 401 and
/// `WWW-Authenticate: Bearer`.
pub async fn require_key(State(keys): State<Option<ApiKeys>>, request: Request, next: Next) -> Response {
    let Some(keys) = keys else { return next.run(request).await };
    if is_public(request.uri().path()) {
        return next.run(request).await;
    }
    let presented = bearer(&request).or_else(|| access_token(&request));
    match presented {
        Some(key) if keys.accepts(key.as_bytes()) => next.run(request).await,
        Some(_) => unauthorized("invalid_api_key", "the API key is not valid"),
        None => unauthorized("missing_api_key", "this server needs an API key: `Authorization: Bearer <key>`"),
    }
}

fn unauthorized(code: &'static str, message: &str) -> Response {
    let mut response = ApiError::new(StatusCode::UNAUTHORIZED, code, message).into_response();
    response.headers_mut().insert(header::WWW_AUTHENTICATE, header::HeaderValue::from_static("Bearer"));
    response
}

/// The key of `Authorization: Bearer <key>` (the scheme in any case, as RFC 7235 has it).
fn bearer(request: &Request) -> Option<String> {
    let value = request.headers().get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, key) = value.split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then(|| key.trim().to_string())
}

/// The `access_token` query parameter, on the WebSocket route only (browsers cannot send headers there).
fn access_token(request: &Request) -> Option<String> {
    if request.uri().path() != crate::stream::STREAM {
        return None;
    }
    let Query(mut query) = Query::<HashMap<String, String>>::try_from_uri(request.uri()).ok()?;
    query.remove("access_token")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_files_skip_blanks_and_comments_and_accept_only_their_keys() {
        let keys = ApiKeys::parse("# team keys\n\n  alpha  \nbeta\n").expect("two keys");
        assert!(keys.accepts(b"alpha"));
        assert!(keys.accepts(b"beta"));
        for wrong in [&b""[..], b"alph", b"alphaa", b"# team keys", b"Alpha"] {
            assert!(!keys.accepts(wrong), "{:?} accepted", String::from_utf8_lossy(wrong));
        }
        assert!(ApiKeys::parse("# nothing\n\n").is_none());
        assert_eq!(format!("{keys:?}"), "ApiKeys(2 keys)");
    }
}
