//! Live diarization over WebSocket: the protocol, each session's state machine, and the scheduler all sessions' steps
//! go through (the upgrade that starts a session is an HTTP route: `http/stream_upgrade.rs`).

pub mod protocol;
pub mod scheduler;
mod session;

pub(crate) use session::{Context, run};

/// The live diarization WebSocket's route.
pub const STREAM: &str = "/v1/audio/diarizations/stream";

/// Largest WebSocket message or frame the transport reads (a PCM frame holds at most 1 s, 64,000 bytes of f32; a
/// larger one up to this size gets the protocol's `frame_too_large` error, past it the transport refuses it).
pub(crate) const MAX_MESSAGE_BYTES: usize = 4 << 20;
