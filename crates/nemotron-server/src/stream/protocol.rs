//! The WebSocket protocol's messages and error codes (docs/server.md has the exchange). Client → server: one
//! `session.start` text message, then binary PCM frames, then `session.end`. Server → client: `session.ready`, the
//! segment events exactly as `diarize --stream` prints them (objects with an `event` key), `audio.ack` after each
//! step, and at the end `session.done`; or an `error`, then a close frame whose code says why.

use axum::extract::ws::close_code;
use nemotron_engine::{RawFormat, Segment, SpeakerDictEntry, StreamingMode};
use serde::{Deserialize, Serialize, Serializer};
use serde_json::{Map, Value};

use crate::names::Named;

/// The only sample rate a stream takes (the model's; resample on the client, as browsers' `AudioContext` does).
pub const SAMPLE_RATE: u32 = 16_000;

/// The `type` of a client's text message.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
pub enum ClientMessage {
    /// `session.start`: the first message.
    #[serde(rename = "session.start")]
    SessionStart,
    /// `session.end`: the end of the stream.
    #[serde(rename = "session.end")]
    SessionEnd,
}

/// `encoding`: the sample format of the binary frames (16 kHz mono).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Encoding {
    /// Signed 16-bit little-endian.
    #[serde(rename = "pcm_s16le")]
    PcmS16le,
    /// 32-bit float little-endian.
    #[serde(rename = "pcm_f32le")]
    PcmF32le,
}

impl From<Encoding> for RawFormat {
    fn from(encoding: Encoding) -> Self {
        match encoding {
            Encoding::PcmS16le => RawFormat::S16le,
            Encoding::PcmF32le => RawFormat::F32le,
        }
    }
}

/// The first message of a session, before its segment settings are read.
#[derive(Debug, Deserialize)]
pub struct SessionStart {
    /// `"session.start"`.
    #[serde(rename = "type")]
    pub kind: Named<ClientMessage>,
    /// `low` (default), `very-low` or `ultra-low`.
    #[serde(default)]
    pub latency: Option<Named<StreamingMode>>,
    /// Must be 16000.
    pub sample_rate: u32,
    /// `pcm_s16le` or `pcm_f32le`.
    pub encoding: Named<Encoding>,
    /// A profile of the server's speaker folder: its speakers' names on the events and segments.
    #[serde(default)]
    pub speakers: Option<String>,
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
    /// `speakers` names no profile of the speaker folder, or the server has none.
    UnknownSpeakers,
    /// The profile's speakers cannot be named in this stream (a clip without speech in this mode, two clips in one
    /// slot, more speakers than the model has slots).
    SpeakersUnusable,
    /// A binary frame holds more than one second of audio.
    FrameTooLarge,
    /// A text message other than `session.end` came where audio was due.
    ExpectedAudio,
    /// The client read none of its events for the idle timeout: the server's send buffer for it stayed full. (A
    /// client that sends faster than the server processes is slowed down by flow control, not refused.)
    Backpressure,
    /// No message from the client for the idle timeout.
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
            ProtocolError::UnknownSpeakers => "unknown_speakers",
            ProtocolError::SpeakersUnusable => "speakers_unusable",
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
            ProtocolError::UnknownSpeakers | ProtocolError::SpeakersUnusable => close_code::POLICY,
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
    pub fn message(self, text: &str) -> Result<String, serde_json::Error> {
        ServerMessage::Error { code: self, message: text }.to_text()
    }
}

/// Written as its code.
impl Serialize for ProtocolError {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.code())
    }
}

/// A segment of `session.done`: upstream's `{"Start","End","Speaker"}` and, for an enrolled speaker, `"Name"` (as
/// `diarize --stream --speakers --segments FILE.json` writes it).
#[derive(Debug, Serialize)]
pub struct DoneSegment {
    /// The segment.
    #[serde(flatten)]
    pub entry: SpeakerDictEntry,
    /// The speaker's enrolled name.
    #[serde(rename = "Name", skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

impl DoneSegment {
    /// `segment`, named by `names` (one per slot, `None` for a slot without one).
    pub fn new(segment: &Segment, names: &[Option<String>]) -> Self {
        Self { entry: SpeakerDictEntry::from(segment), name: names.get(segment.speaker).cloned().flatten() }
    }
}

/// A server's text message other than a segment event, its keys in the documented order.
#[derive(Debug, Serialize)]
#[serde(tag = "type")]
pub enum ServerMessage<'a> {
    /// `session.ready`: the session's id and what the server understood of `session.start`.
    #[serde(rename = "session.ready")]
    Ready {
        /// The session's public id (`sess_<n>`).
        id: &'a str,
        /// The session's mode.
        latency: StreamingMode,
        /// Always [`SAMPLE_RATE`].
        sample_rate: u32,
        /// The frames' sample format.
        encoding: Encoding,
        /// Most bytes in one frame (1 s of audio).
        max_frame_bytes: usize,
    },
    /// `audio.ack`: the seconds of audio from the stream's start the session has taken in (every chunk whose audio
    /// it holds has run; the frames of the last look-ahead become final with later audio or at the end).
    #[serde(rename = "audio.ack")]
    Ack {
        /// Seconds of audio taken in.
        processed_until: f64,
    },
    /// `session.done`: every segment of the stream (what `diarize --stream --segments FILE.json` writes, upstream's
    /// `{"Start","End","Speaker"}` objects) and the seconds of audio received.
    #[serde(rename = "session.done")]
    Done {
        /// The session's public id.
        id: &'a str,
        /// Every segment, ordered by start then speaker.
        segments: Vec<DoneSegment>,
        /// Seconds of audio received.
        seconds: f64,
    },
    /// `error`: why the session ends, before the close frame.
    #[serde(rename = "error")]
    Error {
        /// The error's code.
        code: ProtocolError,
        /// What went wrong.
        message: &'a str,
    },
}

impl ServerMessage<'_> {
    /// The message's JSON text.
    pub fn to_text(&self) -> Result<String, serde_json::Error> {
        serde_json::to_string(self)
    }
}

/// Whether a text message is `{"type":"session.end"}`.
pub fn is_session_end(text: &str) -> bool {
    #[derive(Deserialize)]
    struct Typed {
        #[serde(rename = "type")]
        kind: Named<ClientMessage>,
    }
    serde_json::from_str::<Typed>(text).is_ok_and(|message| message.kind.0 == Ok(ClientMessage::SessionEnd))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn every_error_has_its_own_code_and_a_close_code_that_is_not_normal() {
        use ProtocolError::*;
        let all = [
            ExpectedSessionStart,
            UnsupportedEncoding,
            UnsupportedSampleRate,
            InvalidSetting,
            UnknownSpeakers,
            SpeakersUnusable,
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
            let message: Value = serde_json::from_str(&error.message("why").unwrap()).unwrap();
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
        assert_eq!(start.kind, Named(Ok(ClientMessage::SessionStart)));
        assert_eq!(start.latency, Some(Named(Ok(StreamingMode::UltraLowLatency))));
        assert_eq!(start.encoding, Named(Ok(Encoding::PcmF32le)));
        assert_eq!(start.settings.get("onset"), Some(&json!(0.6)));
        assert!(!start.settings.contains_key("type"));
        assert!(is_session_end(r#"{"type":"session.end"}"#));
        assert!(!is_session_end(r#"{"type":"session.start"}"#));
        assert!(!is_session_end("session.end"));
    }

    #[test]
    fn unknown_names_are_kept_apart_with_the_accepted_ones() {
        let start: SessionStart = serde_json::from_str(
            r#"{"type":"session.begin","latency":"instant","sample_rate":16000,"encoding":"pcm_u8"}"#,
        )
        .unwrap();
        assert_eq!(
            start.kind.0.unwrap_err(),
            "unknown variant `session.begin`, expected `session.start` or `session.end`"
        );
        assert_eq!(start.latency.unwrap().0.unwrap_err(), "latency `instant`: one of low, very-low, ultra-low");
        assert_eq!(start.encoding.0.unwrap_err(), "unknown variant `pcm_u8`, expected `pcm_s16le` or `pcm_f32le`");
        // A value of the wrong type is a malformed message, as before.
        assert!(
            serde_json::from_str::<SessionStart>(r#"{"type":"session.start","sample_rate":16000,"encoding":1}"#)
                .is_err()
        );
    }

    #[test]
    fn server_messages_keep_the_documented_bytes() {
        let ready = ServerMessage::Ready {
            id: "sess_1",
            latency: StreamingMode::LowLatency,
            sample_rate: SAMPLE_RATE,
            encoding: Encoding::PcmS16le,
            max_frame_bytes: 32_000,
        };
        assert_eq!(
            ready.to_text().unwrap(),
            r#"{"type":"session.ready","id":"sess_1","latency":"low","sample_rate":16000,"encoding":"pcm_s16le","max_frame_bytes":32000}"#
        );
        assert_eq!(
            ServerMessage::Ack { processed_until: 0.72 }.to_text().unwrap(),
            r#"{"type":"audio.ack","processed_until":0.72}"#
        );
        let segments = [(0, 0.0, 1.95), (1, 2.0, 3.0)].map(|(speaker, start, end)| Segment { speaker, start, end });
        let names = [None, Some("alice".to_string())];
        assert_eq!(
            ServerMessage::Done { id: "sess_1", segments: vec![DoneSegment::new(&segments[0], &[])], seconds: 2.0 }
                .to_text()
                .unwrap(),
            r#"{"type":"session.done","id":"sess_1","segments":[{"Start":0.0,"End":1.95,"Speaker":0}],"seconds":2.0}"#
        );
        let named = segments.iter().map(|s| DoneSegment::new(s, &names)).collect();
        assert_eq!(
            ServerMessage::Done { id: "sess_1", segments: named, seconds: 3.0 }.to_text().unwrap(),
            r#"{"type":"session.done","id":"sess_1","segments":[{"Start":0.0,"End":1.95,"Speaker":0},{"Start":2.0,"End":3.0,"Speaker":1,"Name":"alice"}],"seconds":3.0}"#
        );
        assert_eq!(
            ProtocolError::InvalidSetting.message("why").unwrap(),
            r#"{"type":"error","code":"invalid_setting","message":"why"}"#
        );
    }
}
