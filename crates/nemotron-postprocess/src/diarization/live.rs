//! Live speaker segments: per speaker, a start event as soon as a segment's start is final, an end event as soon
//! as the whole segment is, from the frames a session emits, by either of offline diarization's rules.
//!
//! - [`SegmentRule::Threshold`] (upstream's rule, [`threshold_segments`]) decides each 10 ms frame on its own: every
//!   event is final on the frame that decides it.
//! - [`SegmentRule::PostProcessing`] (NeMo's, [`PostProcessing`]) runs each speaker's [`SpeakerPostProcessor`] on
//!   the 80 ms probabilities as they come. A segment ends once no later input can change it (its delay is in the
//!   `postprocessing` module's documentation); it starts once it exists whatever comes next: once both shortest
//!   ways the stream could go on, ending now and falling silent now, give it. Any longer continuation only
//!   lengthens segments and joins later ones to them (a joined segment keeps the earlier start), and what survives
//!   a minimum duration now survives it longer, so that start is final. Each speaker has one segment open at a
//!   time, so the next segment's start waits for the previous end.
//!
//! Either way, the end events' segments are exactly the offline rule's segments of the whole stream
//! ([`threshold_segments`] of the logits, [`PostProcessing::segments`] of the probabilities).
//!
//! [`threshold_segments`]: super::threshold_segments
//! [`PostProcessing`]: super::PostProcessing
//! [`PostProcessing::segments`]: super::PostProcessing::segments

use super::postprocessing::{FrameGrid, Interval, Probability, SpeakerPostProcessor};
use super::rule::SegmentRule;
use super::{DiarizationError, Segment};
use crate::math::sigmoid;
use crate::time::frame_time;

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

    /// The event as `diarize --stream` prints it: `{"event":"start","speaker":2,"time":12.48}` or
    /// `{"event":"end","speaker":2,"time":13.10,"start":12.48,"end":13.10}` (times in seconds, 10 ms steps; no
    /// newline).
    pub fn json_line(&self) -> String {
        self.json_line_named(&[])
    }

    /// [`SegmentEvent::json_line`] with `"name"` after `"speaker"` when `names` (one per slot, `None` for a slot
    /// without one) names the event's speaker: `{"event":"start","speaker":2,"name":"Alice","time":12.48}`.
    pub fn json_line_named(&self, names: &[Option<String>]) -> String {
        let speaker = self.speaker();
        let name = match names.get(speaker).and_then(Option::as_deref) {
            Some(name) => format!(r#","name":{}"#, serde_json::to_string(name).unwrap_or_default()),
            None => String::new(),
        };
        match self.segment() {
            Some(segment) => format!(
                r#"{{"event":"end","speaker":{speaker}{name},"time":{:.2},"start":{:.2},"end":{:.2}}}"#,
                segment.end, segment.start, segment.end
            ),
            None => format!(r#"{{"event":"start","speaker":{speaker}{name},"time":{:.2}}}"#, self.seconds()),
        }
    }

    /// The segment an end event closes, with the times the offline rules give.
    pub fn segment(&self) -> Option<Segment> {
        match *self {
            SegmentEvent::Start { .. } => None,
            SegmentEvent::End { speaker, start, end } => {
                Some(Segment { speaker, start: frame_time(start), end: frame_time(end) })
            }
        }
    }
}

/// Segment events from a streaming session's outputs, in the order they become final (each speaker's in time
/// order). A clone continues independently (a forked session's events).
#[derive(Clone)]
pub struct LiveSegments {
    speakers: usize,
    rule: Rule,
    /// 10 ms frames seen so far.
    frames: usize,
}

#[derive(Clone)]
enum Rule {
    Threshold {
        threshold: f64,
        /// Per speaker, the first frame of its open segment.
        open: Vec<Option<usize>>,
    },
    PostProcessing(Vec<LiveSpeaker>),
}

/// One speaker under NeMo's post-processing.
#[derive(Clone)]
struct LiveSpeaker {
    processor: SpeakerPostProcessor,
    /// Whether a probability of 0 ends speech (`offset > 0`); with `offset = 0` only the stream's end does.
    silence_ends_speech: bool,
    /// The start frame of the segment announced and not yet ended.
    announced: Option<usize>,
}

impl LiveSegments {
    /// Events of a diarizer of `speakers` speakers whose encoder rows are `subsampling` 10 ms frames, under `rule`;
    /// refused when the rule's settings are out of range or keep the most active speakers.
    pub fn new(rule: SegmentRule, speakers: usize, subsampling: usize) -> Result<Self, DiarizationError> {
        if rule.max_speakers().is_some() {
            return Err(DiarizationError::Setting(
                "max_speakers: which speakers are the most active is known only at the end of a stream".into(),
            ));
        }
        let rule = match rule {
            SegmentRule::Threshold { threshold, .. } if (0.0..=1.0).contains(&threshold) => {
                Rule::Threshold { threshold, open: vec![None; speakers] }
            }
            SegmentRule::Threshold { threshold, .. } => {
                return Err(DiarizationError::Setting(format!("threshold = {threshold} (must be in [0, 1])")));
            }
            SegmentRule::PostProcessing(settings) => {
                settings.validate()?;
                let grid = FrameGrid::sortformer(subsampling);
                let speaker = || LiveSpeaker {
                    processor: SpeakerPostProcessor::new(&settings, grid),
                    silence_ends_speech: 0.0f32.below(settings.offset),
                    announced: None,
                };
                Rule::PostProcessing((0..speakers).map(|_| speaker()).collect())
            }
        };
        Ok(Self { speakers, rule, frames: 0 })
    }

    /// The events a session's output made final: its `speaker_logits` `[frames, speakers]` of the 10 ms frames that
    /// became final and its `speaker_probabilities` at the encoder rate.
    pub fn push(&mut self, speaker_logits: &[f32], speaker_probabilities: &[f32]) -> Vec<SegmentEvent> {
        let mut events = Vec::new();
        let speakers = self.speakers.max(1);
        match &mut self.rule {
            Rule::Threshold { threshold, open } => {
                for row in speaker_logits.chunks_exact(speakers) {
                    for (speaker, (open, &logit)) in open.iter_mut().zip(row).enumerate() {
                        let active = sigmoid(f64::from(logit)) > *threshold;
                        match *open {
                            None if active => {
                                *open = Some(self.frames);
                                events.push(SegmentEvent::Start { speaker, frame: self.frames });
                            }
                            Some(start) if !active => {
                                *open = None;
                                events.push(SegmentEvent::End { speaker, start, end: self.frames });
                            }
                            _ => {}
                        }
                    }
                    self.frames += 1;
                }
            }
            Rule::PostProcessing(live) => {
                let mut released = Vec::new();
                for row in speaker_probabilities.chunks_exact(speakers) {
                    for (speaker, (live, &p)) in live.iter_mut().zip(row).enumerate() {
                        live.processor.push(p, &mut released);
                        end(&mut live.announced, speaker, released.drain(..), &mut events);
                        live.announce(speaker, &mut events);
                    }
                }
                self.frames += speaker_logits.len() / speakers;
            }
        }
        events
    }

    /// The stream ended: the events still to come (segments still open end with the stream, or where NeMo's rule
    /// ends them). Nothing comes after.
    pub fn finish(&mut self) -> Vec<SegmentEvent> {
        let mut events = Vec::new();
        match &mut self.rule {
            Rule::Threshold { open, .. } => {
                for (speaker, open) in open.iter_mut().enumerate() {
                    if let Some(start) = open.take() {
                        events.push(SegmentEvent::End { speaker, start, end: self.frames });
                    }
                }
            }
            Rule::PostProcessing(live) => {
                for (speaker, LiveSpeaker { processor, mut announced, .. }) in
                    std::mem::take(live).into_iter().enumerate()
                {
                    let mut released = Vec::new();
                    processor.finish(&mut released);
                    end(&mut announced, speaker, released, &mut events);
                }
            }
        }
        events
    }

    /// 10 ms frames seen so far.
    pub fn frames(&self) -> usize {
        self.frames
    }
}

impl LiveSpeaker {
    /// Announces the next segment's start once it is final: once both shortest ways the stream could go on have
    /// it, ending now (where NeMo keeps even a segment that padding turned inside out) and going silent now.
    fn announce(&mut self, speaker: usize, events: &mut Vec<SegmentEvent>) {
        if self.announced.is_some() {
            return;
        }
        let first = |processor: SpeakerPostProcessor, mut segments: Vec<Interval>| {
            processor.finish(&mut segments);
            segments.iter().find_map(|interval| frames(interval, speaker)).map(|(start, _)| start)
        };
        let if_ended_now = first(self.processor.clone(), Vec::new());
        let if_silent_now = match self.silence_ends_speech {
            true => {
                let (mut processor, mut segments) = (self.processor.clone(), Vec::new());
                processor.push(0.0f32, &mut segments);
                first(processor, segments)
            }
            false => if_ended_now,
        };
        if let Some(start) = if_ended_now.filter(|&start| if_silent_now == Some(start)) {
            self.announced = Some(start);
            events.push(SegmentEvent::Start { speaker, frame: start });
        }
    }
}

/// Ends the segments a speaker's processor `released`, announcing the start of one not `announced` yet.
fn end(
    announced: &mut Option<usize>,
    speaker: usize,
    released: impl IntoIterator<Item = Interval>,
    events: &mut Vec<SegmentEvent>,
) {
    for (start, end) in released.into_iter().filter_map(|interval| frames(&interval, speaker)) {
        if announced.take() != Some(start) {
            events.push(SegmentEvent::Start { speaker, frame: start });
        }
        events.push(SegmentEvent::End { speaker, start, end });
    }
}

/// A post-processed segment as 10 ms frames `(start, end)`, as NeMo rounds it (`None`: rounding empties it).
fn frames(interval: &Interval, speaker: usize) -> Option<(usize, usize)> {
    let frame = |seconds: f64| (seconds * 100.0).round() as usize;
    interval.rounded(speaker).map(|segment| (frame(segment.start), frame(segment.end)))
}
