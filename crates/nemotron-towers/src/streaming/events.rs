//! Live speaker segments: per speaker, a start event as soon as a segment's first 10 ms frame is final, an
//! end event as soon as its end is, from the frames a session emits.
//!
//! The rule that turns frame probabilities into segments is a [`SegmentTracker`], fed one frame at a time
//! and free to hold events back (a causal post-processing that needs to look ahead, such as a minimum
//! duration, delays its events by that much). [`Hysteresis`] is the one here; [`LiveSegments`] drives any
//! tracker from a session's logits.

use crate::diarization::Segment;
use crate::diarization::segments::frame_time;
use crate::sortformer::sigmoid;

/// A segment of one speaker opened or closed, in 10 ms frames of the stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SegmentEvent {
    /// `speaker` is active from frame `frame` on.
    Start {
        /// Speaker slot (logit column).
        speaker: usize,
        /// First active frame.
        frame: usize,
    },
    /// `speaker` was active over frames `[start, end)`.
    End {
        /// Speaker slot (logit column).
        speaker: usize,
        /// First active frame.
        start: usize,
        /// First frame after the segment.
        end: usize,
    },
}

impl SegmentEvent {
    /// The speaker slot.
    pub fn speaker(&self) -> usize {
        match *self {
            SegmentEvent::Start { speaker, .. } | SegmentEvent::End { speaker, .. } => speaker,
        }
    }

    /// When it happens, in seconds: the segment's start or end.
    pub fn seconds(&self) -> f64 {
        match *self {
            SegmentEvent::Start { frame, .. } | SegmentEvent::End { end: frame, .. } => frame_time(frame),
        }
    }

    /// The segment an end event closes, with the times [`crate::diarization::threshold_segments`] gives.
    pub fn segment(&self) -> Option<Segment> {
        match *self {
            SegmentEvent::Start { .. } => None,
            SegmentEvent::End { speaker, start, end } => Some(Segment {
                speaker,
                start: frame_time(start),
                end: frame_time(end),
            }),
        }
    }
}

/// Turns per-frame speaker probabilities into segment events, causally: the seam where post-processing
/// (thresholds, padding, minimum durations) plugs into a live stream.
pub trait SegmentTracker: Send {
    /// Frame `frame` (0, 1, 2, … in order) with one probability per speaker; appends to `events` the events
    /// it made final, in time order.
    fn frame(&mut self, frame: usize, probabilities: &[f64], events: &mut Vec<SegmentEvent>);

    /// The stream ended after `frames` frames: appends the events still held back (segments still open
    /// end at `frames`).
    fn finish(&mut self, frames: usize, events: &mut Vec<SegmentEvent>);
}

/// A speaker becomes active on a frame whose probability exceeds `onset`, and stays active while it
/// exceeds `offset`. With `onset == offset == t` the segments are exactly those of
/// [`crate::diarization::threshold_segments`] at threshold `t` (the offline rule), and every event is emitted on the frame
/// that decides it.
#[derive(Clone, Debug)]
pub struct Hysteresis {
    onset: f64,
    offset: f64,
    /// Per speaker, the first frame of its open segment.
    open: Vec<Option<usize>>,
}

impl Hysteresis {
    /// Onset and offset thresholds on the 10 ms probability, for `speakers` speakers.
    pub fn new(speakers: usize, onset: f64, offset: f64) -> Self {
        Self { onset, offset, open: vec![None; speakers] }
    }

    /// One threshold for both: the offline extraction's rule.
    pub fn threshold(speakers: usize, threshold: f64) -> Self {
        Self::new(speakers, threshold, threshold)
    }
}

impl SegmentTracker for Hysteresis {
    fn frame(&mut self, frame: usize, probabilities: &[f64], events: &mut Vec<SegmentEvent>) {
        for (speaker, (open, &p)) in self.open.iter_mut().zip(probabilities).enumerate() {
            match *open {
                None if p > self.onset => {
                    *open = Some(frame);
                    events.push(SegmentEvent::Start { speaker, frame });
                }
                Some(start) if p <= self.offset => {
                    *open = None;
                    events.push(SegmentEvent::End { speaker, start, end: frame });
                }
                _ => {}
            }
        }
    }

    fn finish(&mut self, frames: usize, events: &mut Vec<SegmentEvent>) {
        for (speaker, open) in self.open.iter_mut().enumerate() {
            if let Some(start) = open.take() {
                events.push(SegmentEvent::End { speaker, start, end: frames });
            }
        }
    }
}

/// Segment events from a stream's 10 ms logits, through any [`SegmentTracker`].
pub struct LiveSegments<T: SegmentTracker = Hysteresis> {
    tracker: T,
    speakers: usize,
    frames: usize,
}

impl<T: SegmentTracker> LiveSegments<T> {
    /// Events of `speakers` speakers, decided by `tracker`.
    pub fn new(tracker: T, speakers: usize) -> Self {
        Self { tracker, speakers, frames: 0 }
    }

    /// The next frames' logits (`[frames, speakers]`, e.g. [`super::StreamOutput::speaker_logits`]) → the
    /// events they made final.
    pub fn push(&mut self, logits: &[f32]) -> Vec<SegmentEvent> {
        let mut events = Vec::new();
        for row in logits.chunks_exact(self.speakers.max(1)) {
            let probabilities: Vec<f64> = row.iter().map(|&x| sigmoid(f64::from(x))).collect();
            self.tracker.frame(self.frames, &probabilities, &mut events);
            self.frames += 1;
        }
        events
    }

    /// The stream ended: the events still to come.
    pub fn finish(&mut self) -> Vec<SegmentEvent> {
        let mut events = Vec::new();
        self.tracker.finish(self.frames, &mut events);
        events
    }

    /// Frames seen so far.
    pub fn frames(&self) -> usize {
        self.frames
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hysteresis_opens_above_onset_and_closes_at_offset() {
        let mut tracker = Hysteresis::new(2, 0.6, 0.3);
        let mut events = Vec::new();
        // Speaker 0: 0.5 (below onset), 0.7 (opens), 0.4 (stays: above offset), 0.3 (closes), 0.9 (opens).
        for (frame, p0) in [0.5, 0.7, 0.4, 0.3, 0.9].into_iter().enumerate() {
            tracker.frame(frame, &[p0, 0.0], &mut events);
        }
        tracker.finish(5, &mut events);
        assert_eq!(
            events,
            vec![
                SegmentEvent::Start { speaker: 0, frame: 1 },
                SegmentEvent::End { speaker: 0, start: 1, end: 3 },
                SegmentEvent::Start { speaker: 0, frame: 4 },
                SegmentEvent::End { speaker: 0, start: 4, end: 5 },
            ]
        );
        let segment = events[1].segment().unwrap();
        assert_eq!((segment.speaker, segment.start, segment.end), (0, 0.01, 0.03));
        assert!((events[3].seconds() - 0.05).abs() < 1e-12);
    }
}
