//! Live "who speaks now": streaming diarization sessions on a shared [`crate::Diarizer`], as upstream's
//! Nemotron 3 Diarization streaming mode computes them, and segment events as frames become final.
//!
//! ```no_run
//! use nemotron_towers::streaming::{LiveSegments, SegmentRule, StreamingMode};
//! use nemotron_towers::{Gpu, Model, ModelOptions};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let gpu = Gpu::new()?;
//! let model = Model::load(&gpu, "path/to/diarization-checkpoint".as_ref(), &ModelOptions::default())?;
//! let diarizer = model.diarizer();
//! let mut session = diarizer.session(StreamingMode::LowLatency)?;
//! let mut segments = LiveSegments::new(SegmentRule::Threshold(0.5), diarizer.config())?;
//! # let pieces: Vec<Vec<f32>> = Vec::new();
//! for piece in pieces {
//!     let output = session.push(&piece)?; // 16 kHz mono, any length
//!     for event in segments.push(&output) {
//!         println!("{event:?}");
//!     }
//! }
//! let output = session.finish()?;
//! let mut events = segments.push(&output);
//! events.extend(segments.finish());
//! # Ok(())
//! # }
//! ```

mod batch;
mod events;
mod mode;
mod session;

pub use batch::push_many;
pub use events::{LiveSegments, SegmentEvent, SegmentRule};
pub use mode::{StreamingMode, UnknownStreamingMode};
pub use session::{ChunkReport, DiarizerSession, StreamOutput};
