//! Which rule turns speaker activity into segments, offline and live alike: upstream's one threshold on the 10 ms
//! logits, or NeMo's post-processing on the encoder-rate probabilities.

use super::postprocessing::{FrameGrid, PostProcessing};
use super::segments::{Segment, keep_most_active, threshold_segments};

/// How speaker activity becomes segments. Offline, [`SegmentRule::segments`] applies it to a whole recording; live,
/// [`super::live::LiveSegments`] gives the same segments as events, as their frames become final.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum SegmentRule {
    /// Upstream's `extract_speaker_dict`: `sigmoid(logit) > threshold` on each valid 10 ms frame.
    Threshold {
        /// In [0, 1).
        threshold: f64,
        /// Speakers kept, the most active first (a whole recording's only: not live).
        max_speakers: Option<usize>,
    },
    /// NeMo's post-processing on the encoder-rate probabilities (its `max_speakers` included, which a live stream
    /// cannot have).
    PostProcessing(PostProcessing),
}

impl SegmentRule {
    /// The segments of one recording, ordered by start then speaker: `logits` `[frames, speakers]` (the valid 10 ms
    /// frames first), `probabilities` `[rows, speakers]` at the encoder rate of `subsampling` 10 ms frames per row.
    pub fn segments(
        &self,
        logits: &[f32],
        probabilities: &[f32],
        speakers: usize,
        frames: usize,
        subsampling: usize,
    ) -> Vec<Segment> {
        match self {
            SegmentRule::Threshold { threshold, max_speakers } => {
                let mut segments = threshold_segments(logits, speakers, frames, *threshold);
                if let Some(n) = max_speakers {
                    keep_most_active(&mut segments, *n);
                }
                segments
            }
            SegmentRule::PostProcessing(settings) => {
                // The encoder rows that hold valid frames: NeMo's encoder length, ⌈valid / subsampling⌉.
                let rows = frames.div_ceil(subsampling);
                settings.segments(probabilities, speakers, rows, FrameGrid::sortformer(subsampling))
            }
        }
    }

    /// The thresholds a timeline draws: `(name, value)`.
    pub fn thresholds(&self) -> Vec<(&'static str, f64)> {
        match self {
            SegmentRule::Threshold { threshold, .. } => vec![("threshold", *threshold)],
            SegmentRule::PostProcessing(p) if p.onset == p.offset => vec![("onset = offset", p.onset)],
            SegmentRule::PostProcessing(p) => vec![("onset", p.onset), ("offset", p.offset)],
        }
    }

    /// How many of the most active speakers it keeps, if it drops the others: known only at the end of a recording,
    /// so a live stream cannot.
    pub fn max_speakers(&self) -> Option<usize> {
        match self {
            SegmentRule::Threshold { max_speakers, .. } => *max_speakers,
            SegmentRule::PostProcessing(settings) => settings.max_speakers,
        }
    }
}
