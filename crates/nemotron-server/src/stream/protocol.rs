//! The WebSocket protocol's messages and error codes (docs/server.md has the exchange). Client → server: one
//! `session.start` text message, then binary PCM frames, then `session.end`. Server → client: `session.ready`, the
//! segment events exactly as `diarize --stream` prints them (objects with an `event` key), `audio.ack` after each
//! step, and at the end `session.done`; or an `error`, then a close frame whose code says why.

use axum::extract::ws::close_code;
use serde::Deserialize;
use serde_json::{Map, Value, json};

/// The latency names of `session.start` (the CLI's `--latency` values).
pub const LATENCIES: [&str; 3] = ["low", "very-low", "ultra-low"];

/// The only sample rate a stream takes (the model's; resample on the client, as browsers' `AudioContext` does).
pub const SAMPLE_RATE: u32 = 16_000;

/// The first message of a session, before its segment settings are read.
#[derive(Debug, Deserialize)]
pub struct SessionStart {
    /// `"session.start"`.
    #[serde(rename = "type")]
    pub kind: String,
    /// `low` (default), `very-low` or `ultra-low`.
    #[serde(default)]
    pub latency: Option<String>,
    /// Must be 16000.
    pub sample_rate: u32,
    /// `pcm_s16le` or `pcm_f32le`.
    pub encoding: String,
    /// The segment rule's settings (the names of the HTTP form fields) and any unknown key, which the engine's
    /// settings type refuses.
    #[serde(flatten)]
    pub settings: Map<String, Value>,
}

/// Why a session ends early: each has a code sent in the `error` message and a WebSocket close code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProtocolError {
    /// The first message was not a valid `session.start` (or was binary).
    ExpectedSessionStart,
    /// `encoding` is neither `pcm_s16le` nor `pcm_f32le`.
    UnsupportedEncoding,
    /// `sample_rate` is not 16000.
    UnsupportedSampleRate,
    /// A setting of `session.start` is unknown or out of range.
    InvalidSetting,
    /// A binary frame holds more than one second of audio.
    FrameTooLarge,
    /// A text message other than `session.end` came where audio was due.
    ExpectedAudio,
    /// The client sent audio faster than the server processes it for longer than the session's buffer.
    Backpressure,
    /// No message from the client for the idle timeout, or nothing read by it for as long.
    IdleTimeout,
    /// The stream ended inside a sample (its byte count is not a multiple of the sample width).
    PartialSample,
    /// The server failed (a GPU error); the message says what failed.
    Internal,
}

impl ProtocolError {
    /// The `code` of the `error` message.
    pub fn code(self) -> &'static str {
        match self {
            ProtocolError::ExpectedSessionStart => "expected_session_start",
            ProtocolError::UnsupportedEncoding => "unsupported_encoding",
            ProtocolError::UnsupportedSampleRate => "unsupported_sample_rate",
            ProtocolError::InvalidSetting => "invalid_setting",
            ProtocolError::FrameTooLarge => "frame_too_large",
            ProtocolError::ExpectedAudio => "expected_audio",
            ProtocolError::Backpressure => "backpressure",
            ProtocolError::IdleTimeout => "idle_timeout",
            ProtocolError::PartialSample => "partial_sample",
            ProtocolError::Internal => "internal",
        }
    }

    /// The close code that follows the `error` message (RFC 6455 §7.4.1).
    pub fn close_code(self) -> u16 {
        match self {
            ProtocolError::ExpectedSessionStart | ProtocolError::InvalidSetting => close_code::POLICY,
            ProtocolError::UnsupportedEncoding | ProtocolError::UnsupportedSampleRate => close_code::UNSUPPORTED,
            ProtocolError::ExpectedAudio => close_code::UNSUPPORTED,
            ProtocolError::FrameTooLarge => close_code::SIZE,
            ProtocolError::PartialSample => close_code::INVALID,
            ProtocolError::Backpressure => close_code::AGAIN,
            ProtocolError::IdleTimeout => close_code::AWAY,
            ProtocolError::Internal => close_code::ERROR,
        }
    }

    /// The `error` message.
    pub fn message(self, text: &str) -> String {
        json!({ "type": "error", "code": self.code(), "message": text }).to_string()
    }
}

/// `session.ready`: the session's id and what the server understood of `session.start`.
pub fn ready(id: &str, latency: &str, encoding: &str, max_frame_bytes: usize) -> String {
    json!({
        "type": "session.ready",
        "id": id,
        "latency": latency,
        "sample_rate": SAMPLE_RATE,
        "encoding": encoding,
        "max_frame_bytes": max_frame_bytes,
    })
    .to_string()
}

/// `audio.ack`: the seconds of audio from the stream's start the session has taken in (every chunk whose audio it
/// holds has run; the frames of the last look-ahead become final with later audio or at the end).
pub fn ack(processed_until: f64) -> String {
    json!({ "type": "audio.ack", "processed_until": processed_until }).to_string()
}

/// `session.done`: every segment of the stream (`segments`: what `diarize --stream --segments FILE.json` writes,
/// upstream's `{"Start","End","Speaker"}` objects) and the seconds of audio received.
pub fn done(id: &str, segments: Value, seconds: f64) -> String {
    json!({ "type": "session.done", "id": id, "segments": segments, "seconds": seconds }).to_string()
}

/// Whether a text message is `{"type":"session.end"}`.
pub fn is_session_end(text: &str) -> bool {
    serde_json::from_str::<Value>(text).is_ok_and(|v| v.get("type").and_then(Value::as_str) == Some("session.end"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_error_has_its_own_code_and_a_close_code_that_is_not_normal() {
        use ProtocolError::*;
        let all = [
            ExpectedSessionStart,
            UnsupportedEncoding,
            UnsupportedSampleRate,
            InvalidSetting,
            FrameTooLarge,
            ExpectedAudio,
            Backpressure,
            IdleTimeout,
            PartialSample,
            Internal,
        ];
        let codes: std::collections::HashSet<_> = all.iter().map(|e| e.code()).collect();
        assert_eq!(codes.len(), all.len());
        for error in all {
            assert_ne!(error.close_code(), close_code::NORMAL, "{error:?}");
            let message: Value = serde_json::from_str(&error.message("why")).unwrap();
            assert_eq!(message["type"], "error");
            assert_eq!(message["code"], error.code());
        }
    }

    #[test]
    fn session_start_keeps_the_segment_settings_apart() {
        let start: SessionStart = serde_json::from_str(
            r#"{"type":"session.start","latency":"ultra-low","sample_rate":16000,"encoding":"pcm_f32le","onset":0.6}"#,
        )
        .unwrap();
        assert_eq!(start.latency.as_deref(), Some("ultra-low"));
        assert_eq!(start.settings.get("onset"), Some(&json!(0.6)));
        assert!(!start.settings.contains_key("type"));
        assert!(is_session_end(r#"{"type":"session.end"}"#));
        assert!(!is_session_end(r#"{"type":"session.start"}"#));
        assert!(!is_session_end("session.end"));
    }
}
