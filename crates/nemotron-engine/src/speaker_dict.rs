//! Segments as typed values of the JSON segment format, for front ends that embed them in JSON of their own (the
//! server's `session.done`) rather than write the format's text.

use nemotron_postprocess::diarization::Segment;
use serde::Serialize;

/// One segment as the JSON segment format ([`crate::SegmentFormat::Json`], upstream's `extract_speaker_dict`) has it:
/// `{"Start","End","Speaker"}`, in that order, the times rounded to 0.01 s as Python's `round(x, 2)` rounds them.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct SpeakerDictEntry {
    /// Start, in seconds, rounded to 0.01.
    pub start: f64,
    /// End, in seconds, rounded to 0.01.
    pub end: f64,
    /// Speaker slot.
    pub speaker: usize,
}

impl From<&Segment> for SpeakerDictEntry {
    fn from(segment: &Segment) -> Self {
        Self { start: round_hundredths(segment.start), end: round_hundredths(segment.end), speaker: segment.speaker }
    }
}

/// The rounding of the JSON segment writer (`nemotron_postprocess::diarization::formats::to_json`): on the exact
/// binary value, ties to even, as Rust's formatting rounds (`tests/output.rs` checks both give the same values).
fn round_hundredths(x: f64) -> f64 {
    format!("{x:.2}").parse().unwrap_or(x)
}
