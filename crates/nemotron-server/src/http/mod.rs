//! The offline routes and how they read their uploads.

pub mod tasks;
mod upload;
