//! `nemotron-io`: what feeds `nemotron-towers` and needs no GPU — audio files and streams turned into the 16 kHz
//! mono samples the model takes, the manifests of batch runs, and known speakers' profiles. Pure Rust (symphonia,
//! rubato, safetensors), no wgpu.
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
//! # fn main() -> Result<(), nemotron_io::AudioError> {
//! let samples = nemotron_io::read_audio("speech.wav".as_ref())?;
//! println!("{:.1} s at 16 kHz", samples.len() as f64 / 16_000.0);
//! # Ok(())
//! # }
//! ```

#![warn(missing_docs)]
#![forbid(unsafe_code)]

pub mod atomic;
pub mod audio;
pub mod manifest;
pub mod raw_pcm;
pub mod speakers;

#[cfg(feature = "decode")]
pub use audio::read_audio;
pub use audio::{AudioError, AudioOptions, Channel, SampleError};
pub use manifest::{ManifestEntry, ManifestError, read_manifest};
pub use raw_pcm::{PartialSample, RawDecoder, RawFormat};
pub use speakers::{ProfileError, SpeakerError, SpeakerProfile};
