//! Input and files without a GPU: audio files and streams turned into the 16 kHz mono samples the model takes, the
//! manifests of batch runs, known speakers' profiles, and files written whole. Pure Rust (symphonia, rubato,
//! safetensors); the engine's [`Input`](crate::Input) and tasks read through it.
//!
//! - [`audio`]: any common audio file (WAV, FLAC, MP3, Ogg Vorbis, AAC, M4A), standard input or in-memory samples
//!   → 16 kHz mono f32, one channel or the mix, a stretch cut out, other rates resampled.
//! - [`raw_pcm`]: raw PCM byte streams (no header) → samples, a piece at a time (live sources).
//! - [`manifest`]: NeMo-style JSON-lines manifests of recordings.
//! - [`speakers`]: known speakers' profiles (safetensors: each name's enrollment clip), read and written.
//! - [`atomic`]: files written whole or not at all.
//!
//! Cargo feature `decode` (default): audio files decoded (symphonia). Without it — the `wasm32-unknown-unknown`
//! build of a browser, which decodes audio itself — samples in memory are still resampled and mixed.
//!
//! ```no_run
//! # fn main() -> Result<(), nemotron_engine::AudioError> {
//! let samples = nemotron_engine::io::audio::read_audio("speech.wav".as_ref())?;
//! println!("{:.1} s at 16 kHz", samples.len() as f64 / 16_000.0);
//! # Ok(())
//! # }
//! ```

#![forbid(unsafe_code)]

pub mod atomic;
pub mod audio;
pub mod manifest;
pub mod raw_pcm;
pub mod speakers;
