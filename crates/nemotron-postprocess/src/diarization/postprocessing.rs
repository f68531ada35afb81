//! NeMo's diarization post-processing (nemo_toolkit 3.0.0, `vad_utils.py`: `binarization`, `filtering`,
//! `merge_overlap_segment`; Sortformer's `diarize` through `ts_vad_post_processing`), reproduced to the bit: the
//! same order of steps, the same strict and non-strict comparisons, the same float32 times.
//!
//! Per speaker, each input row (an 80 ms probability for Sortformer) is repeated [`FrameGrid::repeat`] times into
//! frames of [`FrameGrid::frame_seconds`] (10 ms), then:
//!
//! 1. **hysteresis**: speech starts on a frame with `p > onset` and ends on a frame with `p < offset` (equality
//!    neither starts nor ends); the frame that ends a segment never starts one. A run of speech frames `i0..i1`
//!    ended by frame `i1` is `[i0·frame, i1·frame]`; speech still on after the last frame `n−1` ends at
//!    `(n−1)·frame`, the start of that frame (NeMo's quirk: 10 ms short).
//! 2. **padding**: `[max(0, start − pad_onset), end + pad_offset]` (the end is not clamped to the audio), kept when
//!    its end is after its start; times are computed in `f64` and stored as `f32`, as NeMo's tensors are.
//! 3. **merging**: a padded segment that starts at or before the end of the previous one (touching included)
//!    extends it.
//! 4. **filtering**, in NeMo's order when `filter_speech_first` (its default): segments shorter than
//!    `min_duration_on` are dropped (equal is kept), then gaps shorter than `min_duration_off` between the
//!    remaining segments are filled (equal is kept open); otherwise the gaps are filled first. Durations are `f32`
//!    differences compared with the `f32` threshold; a zero duration turns the step off.
//! 5. **rounding**: times to 0.01 s as Python's `round(t, 2)` on the `f32` value (ties to even); segments empty
//!    after rounding are dropped (NeMo's `merge_float_intervals` in its output lines).
//!
//! Probabilities compare with the thresholds in their own precision ([`Probability`]): an `f32` probability with the
//! threshold rounded to `f32`, as torch compares a float32 tensor with a Python float.
//!
//! Every step is causal: [`SpeakerPostProcessor`] takes one row at a time and returns each segment once no later
//! input can change it. A segment's end is known at the first frame below `offset`; it is final after a further
//! `pad_offset + pad_onset` (a later padded start could still reach it), plus `min_duration_off` when gaps are
//! filled (a later segment could still join it), plus up to `min_duration_on` when speech is filtered first (the
//! segment after the gap must prove long enough). The offline [`PostProcessing::segments`] is built on it.

use super::error::DiarizationError;
use super::segments::{Segment, keep_most_active, round_hundredths, sort_segments};

/// NeMo's post-processing settings (seconds and probabilities), plus [`PostProcessing::max_speakers`].
/// `Default` is NeMo's defaults: onset = offset = 0.5, no padding, no filtering, speech filtered first.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PostProcessing {
    /// Speech starts where the probability is above this.
    pub onset: f64,
    /// Speech ends where the probability is below this.
    pub offset: f64,
    /// Seconds added before each segment (clamped at 0).
    pub pad_onset: f64,
    /// Seconds added after each segment.
    pub pad_offset: f64,
    /// Segments shorter than this are dropped (0: off).
    pub min_duration_on: f64,
    /// Gaps shorter than this are filled (0: off).
    pub min_duration_off: f64,
    /// Drop short segments before filling short gaps (NeMo's default), or fill first.
    pub filter_speech_first: bool,
    /// Keep only this many speakers, those with the most active time after post-processing (not a NeMo setting;
    /// see [`keep_most_active`]).
    pub max_speakers: Option<usize>,
}

impl Default for PostProcessing {
    fn default() -> Self {
        PostProcessing {
            onset: 0.5,
            offset: 0.5,
            pad_onset: 0.0,
            pad_offset: 0.0,
            min_duration_on: 0.0,
            min_duration_off: 0.0,
            filter_speech_first: true,
            max_speakers: None,
        }
    }
}

/// How input rows become frames: each row is repeated `repeat` times into frames of `frame_seconds`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FrameGrid {
    /// Frames per input row.
    pub repeat: usize,
    /// Length of one frame in seconds.
    pub frame_seconds: f64,
}

impl FrameGrid {
    /// Sortformer's: its encoder-rate probabilities (one row per `subsampling` mel frames) repeated into 10 ms
    /// frames, as NeMo's `diarize` does (`unit_10ms_frame_count = subsampling`).
    pub fn sortformer(subsampling: usize) -> Self {
        FrameGrid { repeat: subsampling, frame_seconds: crate::time::FRAME_SECONDS }
    }
}

/// A probability compared with a threshold in its own precision.
pub trait Probability: Copy {
    /// `self > threshold`.
    fn above(self, threshold: f64) -> bool;
    /// `self < threshold`.
    fn below(self, threshold: f64) -> bool;
}

impl Probability for f32 {
    fn above(self, threshold: f64) -> bool {
        self > threshold as f32
    }
    fn below(self, threshold: f64) -> bool {
        self < threshold as f32
    }
}

impl Probability for f64 {
    fn above(self, threshold: f64) -> bool {
        self > threshold
    }
    fn below(self, threshold: f64) -> bool {
        self < threshold
    }
}

/// A segment as NeMo stores it before rounding: `f32` seconds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Interval {
    /// Start, seconds.
    pub start: f32,
    /// End, seconds.
    pub end: f32,
}

impl Interval {
    /// The speaker's segment rounded to 0.01 s as NeMo's `diarize` rounds it, or `None` when rounding empties it.
    pub fn rounded(&self, speaker: usize) -> Option<Segment> {
        let (start, end) = (round_hundredths(self.start as f64), round_hundredths(self.end as f64));
        (end > start).then_some(Segment { speaker, start, end })
    }
}

impl PostProcessing {
    /// Checks that every value is usable: thresholds in [0, 1], finite pads (NeMo allows negative ones),
    /// durations ≥ 0, at least one speaker kept.
    pub fn validate(&self) -> Result<(), DiarizationError> {
        let bad = |name: &str, value: f64, range: &str| {
            Err(DiarizationError::Setting(format!("{name} = {value} (must be {range})")))
        };
        for (name, value) in [("onset", self.onset), ("offset", self.offset)] {
            if !(0.0..=1.0).contains(&value) {
                return bad(name, value, "a probability in [0, 1]");
            }
        }
        for (name, value) in [("pad_onset", self.pad_onset), ("pad_offset", self.pad_offset)] {
            if !value.is_finite() {
                return bad(name, value, "a finite number of seconds");
            }
        }
        for (name, value) in [("min_duration_on", self.min_duration_on), ("min_duration_off", self.min_duration_off)] {
            if !(value.is_finite() && value >= 0.0) {
                return bad(name, value, "a number of seconds ≥ 0");
            }
        }
        if self.max_speakers == Some(0) {
            return Err(DiarizationError::Setting("max_speakers = 0 (must be at least 1)".into()));
        }
        Ok(())
    }

    /// Post-processes `probabilities [rows, speakers]` (the first `valid_rows` rows) into segments on the 10 ms
    /// grid, ordered by start then speaker; then keeps the [`PostProcessing::max_speakers`] most active speakers.
    pub fn segments<P: Probability>(
        &self,
        probabilities: &[P],
        speakers: usize,
        valid_rows: usize,
        grid: FrameGrid,
    ) -> Vec<Segment> {
        let rows = probabilities.len().checked_div(speakers).unwrap_or(0).min(valid_rows);
        let mut out = Vec::new();
        for s in 0..speakers {
            let column = (0..rows).map(|r| probabilities[r * speakers + s]);
            out.extend(self.intervals(column, grid).iter().filter_map(|interval| interval.rounded(s)));
        }
        if let Some(n) = self.max_speakers {
            keep_most_active(&mut out, n);
        }
        sort_segments(&mut out);
        out
    }

    /// One speaker's segments before rounding, exactly as NeMo's `ts_vad_post_processing` returns them.
    pub fn intervals<P: Probability>(&self, column: impl IntoIterator<Item = P>, grid: FrameGrid) -> Vec<Interval> {
        let mut processor = SpeakerPostProcessor::new(self, grid);
        let mut out = Vec::new();
        for p in column {
            processor.push(p, &mut out);
        }
        processor.finish(&mut out);
        out
    }
}

/// One speaker's post-processing, fed one input row at a time (see the module's documentation for the delay).
#[derive(Clone, Debug)]
pub struct SpeakerPostProcessor {
    settings: PostProcessing,
    grid: FrameGrid,
    /// Frames seen so far.
    frames: usize,
    /// Start time of the speech in progress, if any.
    speech_start: Option<f64>,
    /// Merging of padded segments, then NeMo's filtering, in order.
    stages: Vec<Stage>,
}

/// One step after hysteresis and padding.
#[derive(Clone, Debug)]
enum Stage {
    /// Joins a segment into the one held when the gap between them is ≤ 0 (merging of padded segments) or below
    /// `fill_below` (gap filling, `f32`), and passes the held one on when the next one stays apart.
    Join { fill_below: Option<f32>, held: Option<Interval> },
    /// Drops segments shorter than this (`f32` duration).
    MinDuration(f32),
}

impl Stage {
    /// Takes a segment; returns the one it lets go, if any.
    fn push(&mut self, interval: Interval) -> Option<Interval> {
        match self {
            Stage::MinDuration(min) => (interval.end - interval.start >= *min).then_some(interval),
            Stage::Join { fill_below, held } => match held {
                Some(last) if joins(last.end, interval.start, *fill_below) => {
                    last.end = interval.end;
                    None
                }
                _ => held.replace(interval),
            },
        }
    }

    /// Lets go of the segment held when the next one this stage can receive starts at or after `earliest`, too late
    /// to join it.
    fn release(&mut self, earliest: f32) -> Option<Interval> {
        match self {
            Stage::Join { fill_below, held } if held.is_some_and(|h| !joins(h.end, earliest, *fill_below)) => {
                held.take()
            }
            _ => None,
        }
    }

    /// The start of the segment held, if any.
    fn held_start(&self) -> Option<f32> {
        match self {
            Stage::Join { held, .. } => held.map(|h| h.start),
            Stage::MinDuration(_) => None,
        }
    }

    /// At the end of the input: what is still held.
    fn flush(&mut self) -> Option<Interval> {
        match self {
            Stage::MinDuration(_) => None,
            Stage::Join { held, .. } => held.take(),
        }
    }
}

/// Whether a segment starting at `next_start` joins one ending at `end`: they overlap or touch (NeMo's merge of
/// padded segments), or the gap is below `fill_below` (its gap filling). In `f32`, as NeMo's tensors; the gap
/// grows with `next_start`, so a later start joins no more.
fn joins(end: f32, next_start: f32, fill_below: Option<f32>) -> bool {
    let gap = next_start - end;
    gap <= 0.0 || fill_below.is_some_and(|fill| gap < fill)
}

impl SpeakerPostProcessor {
    /// A fresh speaker. The settings are taken as they are (see [`PostProcessing::validate`]).
    pub fn new(settings: &PostProcessing, grid: FrameGrid) -> Self {
        let min_on = (settings.min_duration_on > 0.0).then_some(Stage::MinDuration(settings.min_duration_on as f32));
        let fill = (settings.min_duration_off > 0.0)
            .then_some(Stage::Join { fill_below: Some(settings.min_duration_off as f32), held: None });
        let filters = match settings.filter_speech_first {
            true => [min_on, fill],
            false => [fill, min_on],
        };
        let mut stages = vec![Stage::Join { fill_below: None, held: None }];
        stages.extend(filters.into_iter().flatten());
        SpeakerPostProcessor { settings: *settings, grid, frames: 0, speech_start: None, stages }
    }

    /// Feeds one input row (repeated over [`FrameGrid::repeat`] frames); appends the segments that became final.
    pub fn push<P: Probability>(&mut self, p: P, out: &mut Vec<Interval>) {
        for _ in 0..self.grid.repeat {
            let now = self.frames as f64 * self.grid.frame_seconds;
            match self.speech_start {
                Some(start) if p.below(self.settings.offset) => {
                    let padded_start = (start - self.settings.pad_onset).max(0.0);
                    let padded_end = now + self.settings.pad_offset;
                    if padded_end > padded_start {
                        self.pass(0, Interval { start: padded_start as f32, end: padded_end as f32 }, out);
                    }
                    self.speech_start = None;
                }
                None if p.above(self.settings.onset) => self.speech_start = Some(now),
                _ => {}
            }
            self.frames += 1;
        }
        self.release(out);
    }

    /// Ends the input; appends the segments still held. Speech still on ends at the start of the last frame, as in
    /// NeMo (without its `end > start` check).
    pub fn finish(mut self, out: &mut Vec<Interval>) {
        if let Some(start) = self.speech_start.take() {
            let last = self.frames.saturating_sub(1) as f64 * self.grid.frame_seconds;
            let start = (start - self.settings.pad_onset).max(0.0) as f32;
            self.pass(0, Interval { start, end: (last + self.settings.pad_offset) as f32 }, out);
        }
        for i in 0..self.stages.len() {
            if let Some(held) = self.stages[i].flush() {
                self.pass(i + 1, held, out);
            }
        }
    }

    /// Passes on the segments no later input can change. The next segment any stage can receive starts no earlier
    /// than the speech in progress (or, without one, the next frame) less `pad_onset`, nor than what an earlier
    /// stage holds.
    fn release(&mut self, out: &mut Vec<Interval>) {
        let next_frame = self.frames as f64 * self.grid.frame_seconds;
        let mut earliest = (self.speech_start.unwrap_or(next_frame) - self.settings.pad_onset).max(0.0) as f32;
        for i in 0..self.stages.len() {
            if let Some(done) = self.stages[i].release(earliest) {
                self.pass(i + 1, done, out);
            }
            if let Some(start) = self.stages[i].held_start() {
                earliest = earliest.min(start);
            }
        }
    }

    /// Sends a segment through the stages from `first` on.
    fn pass(&mut self, first: usize, interval: Interval, out: &mut Vec<Interval>) {
        let mut current = Some(interval);
        for stage in &mut self.stages[first..] {
            match current {
                Some(interval) => current = stage.push(interval),
                None => return,
            }
        }
        out.extend(current);
    }
}
