//! From speaker activity to segments a user can act on, and how good they are:
//!
//! - [`segments`]: the default rule (upstream's `extract_speaker_dict`: one threshold on the 10 ms logits) and
//!   keeping the most active speakers;
//! - [`postprocessing`]: NeMo's post-processing (hysteresis, padding, minimum durations) on the encoder-rate
//!   probabilities, causal and frame by frame, with [`PostProcessing::read_nemo_yaml`] for NeMo's parameter files;
//! - [`SegmentSettings`]: the rule as the front ends' options ask for it, each value checked, read from what each
//!   front end hands over ([`SegmentSettings::from_fields`], [`Origin`]);
//! - [`SegmentRule`]: which of the two turns activity into segments, offline ([`SegmentRule::segments`]) and live
//!   ([`live::LiveSegments`]: start and end events as a stream's frames become final);
//! - [`formats`]: RTTM, JSON (upstream's layout) and CSV;
//! - [`rttm`]: reading RTTM and UEM files;
//! - [`scoring`]: DER, its parts, the optimal mapping and JER, as pyannote.metrics computes them.

mod error;
mod fields;
pub mod formats;
pub mod live;
mod nemo_yaml;
pub mod postprocessing;
pub mod rttm;
mod rule;
pub mod scoring;
pub mod segments;
mod settings;

pub use error::DiarizationError;
pub use fields::{NemoParameters, Origin};
pub use formats::SegmentFormat;
pub use live::{LiveSegments, SegmentEvent};
pub use postprocessing::{FrameGrid, PostProcessing};
pub use rule::SegmentRule;
pub use segments::{Segment, keep_most_active, threshold_segments};
pub use settings::SegmentSettings;
