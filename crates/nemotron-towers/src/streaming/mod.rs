//! Live "who speaks now": streaming diarization sessions on a shared [`crate::Diarizer`], as upstream's
//! Nemotron 3 Diarization streaming mode computes them. Their outputs become segment events as frames become final
//! in `nemotron_postprocess::diarization::LiveSegments`.
//!
//! ```no_run
//! use nemotron_postprocess::diarization::{LiveSegments, SegmentRule};
//! use nemotron_towers::blocking::Block;
//! use nemotron_towers::streaming::StreamingMode;
//! use nemotron_towers::{Gpu, Model, ModelOptions};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let gpu = Gpu::new().block()?;
//! let model = Model::load(&gpu, "path/to/diarization-checkpoint".as_ref(), &ModelOptions::default()).block()?;
//! let diarizer = model.diarizer();
//! let mut session = diarizer.session(StreamingMode::LowLatency)?;
//! let config = diarizer.config();
//! let rule = SegmentRule::Threshold { threshold: 0.5, max_speakers: None };
//! let mut segments = LiveSegments::new(rule, config.speakers, config.encoder.subsampling)?;
//! # let pieces: Vec<Vec<f32>> = Vec::new();
//! for piece in pieces {
//!     let output = session.push(&piece).block()?; // 16 kHz mono, any length
//!     for event in segments.push(&output.speaker_logits, &output.speaker_probabilities) {
//!         println!("{event:?}");
//!     }
//! }
//! let output = session.finish().block()?;
//! let mut events = segments.push(&output.speaker_logits, &output.speaker_probabilities);
//! events.extend(segments.finish());
//! # Ok(())
//! # }
//! ```

mod batch;
mod mode;
mod session;

pub use batch::push_many;
pub use mode::{StreamingMode, UnknownStreamingMode};
pub use session::{ChunkReport, DiarizerSession, StreamOutput};
