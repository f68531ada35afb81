//! Speaker segments, the one-threshold rule on the 10 ms logits (upstream's `extract_speaker_dict`), and keeping
//! the most active speakers.

use std::collections::HashMap;

use crate::math::sigmoid;
use crate::time::frame_time;

/// One speaker's continuous activity. Times are seconds on the 10 ms grid: every function of this module that
/// makes segments gives the `f64` nearest to a multiple of 0.01.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Segment {
    /// Speaker slot (the model's output column, arrival order; `spk<k>` in RTTM and CSV).
    pub speaker: usize,
    /// Start, in seconds.
    pub start: f64,
    /// End, in seconds (exclusive).
    pub end: f64,
}

impl Segment {
    /// Length in seconds.
    pub fn duration(&self) -> f64 {
        self.end - self.start
    }
}

/// The `f64` nearest to `x` rounded to 0.01 s as Python's `round(x, 2)` does it: on the exact binary value, ties to
/// even. Rust's formatting is correctly rounded in the same way; `(x * 100.0).round() / 100.0` is not (half away
/// from zero, after a rounded product).
pub(crate) fn round_hundredths(x: f64) -> f64 {
    format!("{x:.2}").parse().unwrap_or(x)
}

/// Orders segments by start, then speaker (the order of upstream's `extract_speaker_dict` and of every output).
pub fn sort_segments(segments: &mut [Segment]) {
    segments.sort_by(|a, b| a.start.total_cmp(&b.start).then(a.speaker.cmp(&b.speaker)));
}

/// The default rule, upstream's `extract_speaker_dict`: a speaker is active on a 10 ms frame when
/// `sigmoid(logit) > threshold` (strict), over the first `valid_frames` frames of `logits [frames, speakers]`; a
/// segment is a maximal run of active frames `[i0, i1)` → `[i0 / 100, i1 / 100]` s. Ordered by start, then
/// speaker. `T` is the logits' float type; the sigmoid and the comparison are in `f64`.
pub fn threshold_segments<T: Copy + Into<f64>>(
    logits: &[T],
    speakers: usize,
    valid_frames: usize,
    threshold: f64,
) -> Vec<Segment> {
    let frames = logits.len().checked_div(speakers).unwrap_or(0).min(valid_frames);
    let mut out = Vec::new();
    for s in 0..speakers {
        let mut start = None;
        for f in 0..=frames {
            let active = f < frames && sigmoid(logits[f * speakers + s].into()) > threshold;
            match (active, start) {
                (true, None) => start = Some(f),
                (false, Some(f0)) => {
                    out.push(Segment { speaker: s, start: frame_time(f0), end: frame_time(f) });
                    start = None;
                }
                _ => {}
            }
        }
    }
    sort_segments(&mut out);
    out
}

/// Keeps the segments of the `max_speakers` speakers with the most active time (sum of their segments' durations,
/// in whole microseconds so that equal times compare equal); on equal time the lower speaker index wins. The
/// speakers keep their indices.
pub fn keep_most_active(segments: &mut Vec<Segment>, max_speakers: usize) {
    let mut active: HashMap<usize, i64> = HashMap::new();
    for s in segments.iter() {
        *active.entry(s.speaker).or_default() += (s.duration() * 1e6).round() as i64;
    }
    if active.len() <= max_speakers {
        return;
    }
    let mut ranked: Vec<(usize, i64)> = active.into_iter().collect();
    ranked.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let kept: Vec<usize> = ranked.iter().take(max_speakers).map(|(speaker, _)| *speaker).collect();
    segments.retain(|s| kept.contains(&s.speaker));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seg(speaker: usize, start: f64, end: f64) -> Segment {
        Segment { speaker, start, end }
    }

    #[test]
    fn threshold_segments_follow_the_threshold_and_stop_at_valid_frames() {
        // 2 speakers, 6 frames; speaker 0 on in frames 1–2, speaker 1 on in 3–5 (5 is past the valid frames).
        let (on, off) = (5.0f32, -5.0f32);
        let logits = [off, off, on, off, on, off, off, on, off, on, off, on];
        assert_eq!(threshold_segments(&logits, 2, 5, 0.5), [seg(0, 0.01, 0.03), seg(1, 0.03, 0.05)]);
        // logit 0 is sigmoid 0.5: not above the threshold; a run to the last frame ends at its end.
        assert_eq!(threshold_segments(&[0.0f64, 1e-9], 1, 2, 0.5), [seg(0, 0.01, 0.02)]);
        assert!(threshold_segments::<f32>(&[], 0, 0, 0.5).is_empty());
    }

    #[test]
    fn rounding_to_hundredths_is_pythons() {
        // 0.125 and 2.125 are exact binary ties (to even); 0.075 is 0.07499999999999999722 as an f64, while the f32
        // 0.075 is 0.07500000298023224.
        for (x, want) in [(0.125, 0.12), (2.125, 2.12), (0.375, 0.38), (0.075, 0.07), (0.075f32 as f64, 0.08)] {
            assert_eq!(round_hundredths(x), want, "{x}");
        }
    }

    #[test]
    fn the_most_active_speakers_are_kept() {
        // Active time: speaker 0 0.3 s, speaker 1 0.2 + 0.3 = 0.5 s, speaker 2 0.2 s, speaker 3 0.1 s.
        let all = vec![seg(0, 0.0, 0.3), seg(1, 0.0, 0.2), seg(2, 0.1, 0.3), seg(1, 0.4, 0.7), seg(3, 0.5, 0.6)];
        let mut three = all.clone();
        keep_most_active(&mut three, 3);
        assert_eq!(three, all[..4]);
        // Speaker 2 gets 0.1 s more: 0.3 s, as speaker 0, but summed in floats (0.19999999999999998 +
        // 0.09999999999999998). The tie goes to the lower index.
        let mut tie = all.clone();
        tie.push(seg(2, 0.8, 0.9));
        keep_most_active(&mut tie, 2);
        assert_eq!(tie, [seg(0, 0.0, 0.3), seg(1, 0.0, 0.2), seg(1, 0.4, 0.7)]);
        let mut every = all.clone();
        keep_most_active(&mut every, 4);
        assert_eq!(every, all);
    }
}
