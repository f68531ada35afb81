//! The offline routes and how they read their uploads, the known speakers' routes, and the live route's WebSocket
//! upgrade.

pub mod diarize_queue;
pub mod formats;
pub mod speakers;
pub mod stream_upgrade;
pub mod tasks;
mod upload;
