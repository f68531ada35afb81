//! From speaker activity to segments a user can act on, and how good they are:
//!
//! - [`segments`]: the default rule (upstream's `extract_speaker_dict`: one threshold on the 10 ms logits) and
//!   keeping the most active speakers;
//! - [`postprocessing`]: NeMo's post-processing (hysteresis, padding, minimum durations) on the encoder-rate
//!   probabilities, causal and frame by frame, with [`PostProcessing::read_nemo_yaml`] for NeMo's parameter files;
//! - [`formats`]: RTTM, JSON (upstream's layout) and CSV;
//! - [`rttm`]: reading RTTM and UEM files;
//! - [`scoring`]: DER, its parts, the optimal mapping and JER, as pyannote.metrics computes them.

mod error;
pub mod formats;
mod nemo_yaml;
pub mod postprocessing;
pub mod rttm;
pub mod scoring;
pub mod segments;

pub use error::DiarizationError;
pub use formats::SegmentFormat;
pub use postprocessing::{FrameGrid, PostProcessing};
pub use segments::{Segment, keep_most_active, threshold_segments};
