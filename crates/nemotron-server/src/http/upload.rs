//! What an offline request carries: the audio file and text fields, from a `multipart/form-data` body (a `file`
//! part and one part per field) or from a raw body (`Content-Type: audio/*` or `application/octet-stream`) with the
//! fields in the query string. The body limit is axum's `DefaultBodyLimit` (set from `--max-body-bytes`): past it
//! reading fails and the client gets 413.

use std::collections::BTreeMap;
use std::path::Path;

use axum::body::Bytes;
use axum::extract::{FromRequest, Multipart, Query, Request};
use axum::http::{StatusCode, header};
use nemotron_engine::{AudioOptions, Channel};
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::error::ApiError;
use crate::names::parse_name;
use crate::settings::form_value;

/// An offline request's audio and fields.
pub struct Upload {
    /// The file's bytes.
    pub audio: Vec<u8>,
    /// The file's name as the client gave it (`audio` for a raw body or a part without one): errors name it.
    pub name: String,
    /// Text fields, by name (a repeated field keeps its last value).
    fields: BTreeMap<String, String>,
}

impl Upload {
    /// Reads the request's body: multipart or raw audio; anything else is 415.
    pub async fn read(request: Request) -> Result<Self, ApiError> {
        let (content_type, media) = media_type(&request);
        let upload = if media == "multipart/form-data" {
            Self::multipart(request).await?
        } else if media.starts_with("audio/") || media == "application/octet-stream" {
            Self::raw(request).await?
        } else {
            return Err(ApiError::new(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "unsupported_media_type",
                format!(
                    "Content-Type `{content_type}`: send multipart/form-data with a `file` part, or the file itself as \
                     audio/* (fields in the query string)"
                ),
            ));
        };
        if upload.audio.is_empty() {
            return Err(ApiError::bad_request("missing_audio", "the audio file is empty (or no `file` part was sent)"));
        }
        Ok(upload)
    }

    async fn multipart(request: Request) -> Result<Self, ApiError> {
        let mut upload = Upload { audio: Vec::new(), name: "audio".into(), fields: BTreeMap::new() };
        for part in parts(request).await? {
            if part.name == "file" {
                if let Some(name) = part.file_name {
                    upload.name = name;
                }
                upload.audio = part.bytes;
            } else {
                let text = String::from_utf8(part.bytes).map_err(|_| {
                    ApiError::bad_request("invalid_body", format!("field `{}` is not UTF-8", part.name))
                })?;
                upload.fields.insert(part.name, text);
            }
        }
        Ok(upload)
    }

    async fn raw(request: Request) -> Result<Self, ApiError> {
        let Query(fields) = Query::<BTreeMap<String, String>>::try_from_uri(request.uri())
            .map_err(|e| ApiError::bad_request("invalid_query", e.body_text()))?;
        let bytes = Bytes::from_request(request, &()).await.map_err(|e| body_error(e.status(), e.body_text()))?;
        Ok(Upload { audio: bytes.to_vec(), name: "audio".into(), fields })
    }

    /// Takes field `name` out.
    pub fn take(&mut self, name: &str) -> Option<String> {
        self.fields.remove(name)
    }

    /// The RTTM file id: the `uri` field, else the file's name without its extension (as the CLI's default).
    pub fn take_uri(&mut self) -> Result<String, ApiError> {
        match self.take("uri") {
            Some(uri) if uri.trim().is_empty() => Err(ApiError::bad_request("invalid_setting", "uri: empty")),
            Some(uri) => Ok(uri),
            None => Ok(Path::new(&self.name).file_stem().map_or("audio".into(), |s| s.to_string_lossy().into_owned())),
        }
    }

    /// How the audio is decoded: the `channel` field (`mix`, the default, or a channel number from 0).
    pub fn take_audio_options(&mut self) -> Result<AudioOptions, ApiError> {
        let channel = match self.take("channel") {
            Some(text) => text.parse::<Channel>().map_err(|e| ApiError::bad_request("invalid_setting", e))?,
            None => Channel::Mix,
        };
        Ok(AudioOptions { channel, ..AudioOptions::default() })
    }

    /// The `response_format` field (the route's default when not given).
    pub fn take_format<F: DeserializeOwned + Default>(&mut self) -> Result<F, ApiError> {
        match self.take("response_format") {
            None => Ok(F::default()),
            Some(name) => parse_name(&name)
                .map_err(|why| ApiError::bad_request("invalid_setting", format!("response_format: {why}"))),
        }
    }

    /// The fields not taken, as JSON values (numbers where they read as numbers).
    pub fn rest(self) -> Map<String, Value> {
        self.fields.into_iter().map(|(key, value)| (key, form_value(&value))).collect()
    }

    /// Refuses any field not taken (for routes without segment settings).
    pub fn no_more_fields(self) -> Result<(), ApiError> {
        match self.fields.keys().next() {
            Some(key) => Err(ApiError::bad_request("invalid_setting", format!("unknown field `{key}`"))),
            None => Ok(()),
        }
    }
}

/// The request's `Content-Type` and its media type, lowercase, without parameters.
pub fn media_type(request: &Request) -> (String, String) {
    let content_type = request.headers().get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or("");
    let media = content_type.split(';').next().unwrap_or("").trim().to_ascii_lowercase();
    (content_type.to_string(), media)
}

/// One part of a `multipart/form-data` body.
pub struct Part {
    /// The part's name (`Content-Disposition`'s `name`; empty when it has none).
    pub name: String,
    /// Its file name, when it has a non-empty one.
    pub file_name: Option<String>,
    /// Its bytes.
    pub bytes: Vec<u8>,
}

/// The parts of a `multipart/form-data` body, in order.
pub async fn parts(request: Request) -> Result<Vec<Part>, ApiError> {
    let mut multipart =
        Multipart::from_request(request, &()).await.map_err(|e| body_error(e.status(), e.body_text()))?;
    let mut parts = Vec::new();
    while let Some(field) = multipart.next_field().await.map_err(|e| body_error(e.status(), e.body_text()))? {
        let name = field.name().unwrap_or_default().to_string();
        let file_name = field.file_name().filter(|n| !n.is_empty()).map(String::from);
        let bytes = field.bytes().await.map_err(|e| body_error(e.status(), e.body_text()))?.to_vec();
        parts.push(Part { name, file_name, bytes });
    }
    Ok(parts)
}

/// A body that could not be read: 413 past the size limit, 400 for a malformed one.
fn body_error(status: StatusCode, text: String) -> ApiError {
    match status {
        StatusCode::PAYLOAD_TOO_LARGE => ApiError::new(status, "payload_too_large", text),
        _ => ApiError::bad_request("invalid_body", text),
    }
}
