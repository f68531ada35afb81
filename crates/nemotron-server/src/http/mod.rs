//! The offline routes and how they read their uploads, and the live route's WebSocket upgrade.

pub mod diarize_queue;
pub mod formats;
pub mod stream_upgrade;
pub mod tasks;
mod upload;
