//! One speaker tag's words: CTC forced alignment on the frames where its speaker is likely active
//! (`_align_words`), then the snapping to its diarization segments (`_refine_word_timestamps`). Times are f64,
//! computed in upstream's order.

use super::ctc::{forced_align, merge_tokens};
use super::logprobs::FrameLogProbs;
use super::transcript::Stream;

/// A word (or character) with its times, before the speaker is attached.
#[derive(Clone, Debug, PartialEq)]
pub struct TimedWord {
    /// The word.
    pub text: String,
    /// Start, seconds.
    pub start: f64,
    /// End, seconds.
    pub end: f64,
}

/// `_align_words`: the stream's units force-aligned on the frames whose `probabilities` are at least 0.01, each
/// frame's token scores raised by the log of its probability (the blank's left as is). `None` when the target does
/// not fit on those frames.
pub fn align_words(
    log_probs: &FrameLogProbs,
    stream: &Stream,
    probabilities: &[f32],
    frame_duration: f64,
    max_word_duration: f64,
) -> Option<Vec<TimedWord>> {
    let target = stream.target();
    let frames: Vec<usize> = (0..probabilities.len()).filter(|&t| probabilities[t] >= 0.01f32).collect();
    let repeats = target.windows(2).filter(|w| w[0] == w[1]).count();
    if frames.len() < target.len() + repeats {
        return None;
    }
    // Columns: the target's distinct tokens, then the blank.
    let mut columns: Vec<u32> = target.clone();
    columns.sort_unstable();
    columns.dedup();
    let blank = columns.len();
    let width = blank + 1;
    let mut em = Vec::with_capacity(frames.len() * width);
    for &t in &frames {
        let weight = ((probabilities[t].max(1e-6f32) as f64).ln()) as f32;
        em.extend(columns.iter().map(|&c| log_probs.get(t, c) + weight));
        em.push(log_probs.get(t, log_probs.blank()));
    }
    let local: Vec<usize> = target.iter().map(|t| columns.partition_point(|c| c < t)).collect();
    let path = forced_align(&em, width, &local, blank);
    let mut spans = merge_tokens(&path, blank).into_iter();
    let mut words = Vec::with_capacity(stream.units.len());
    for unit in &stream.units {
        let unit_spans: Vec<_> = spans.by_ref().take(unit.ids.len()).collect();
        let (first, last) = (unit_spans.first()?, unit_spans.last()?);
        let start = frames[first.start] as f64 * frame_duration;
        let end = ((frames[last.end - 1] + 1) as f64 * frame_duration).min(start + max_word_duration);
        words.push(TimedWord { text: unit.text.clone(), start, end });
    }
    Some(words)
}

/// `_refine_word_timestamps`: the first word of each of the speaker's `segments` starts with it when it starts at
/// most `limit` after it; a word ends where the next word of its segment starts, its segment's last word with the
/// segment, a word outside segments where the next word starts; every word lasts at most `limit`, where
/// `limit = max_word_frames · min(frame_duration, 0.08)`.
pub fn refine_word_timestamps(
    words: &mut [TimedWord],
    segments: &[(f64, f64)],
    frame_duration: f64,
    max_word_frames: usize,
) {
    let limit = max_word_frames as f64 * frame_duration.min(0.08);
    let mut segments = segments.to_vec();
    segments.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
    let segment_of: Vec<Option<usize>> = words
        .iter()
        .map(|w| {
            let index = segments.partition_point(|s| s.0 <= w.start).checked_sub(1)?;
            (w.start < segments[index].1).then_some(index)
        })
        .collect();
    for i in 0..words.len() {
        if let Some(segment) = segment_of[i] {
            let first_of_segment = i == 0 || segment_of[i - 1] != Some(segment);
            let shift = words[i].start - segments[segment].0;
            if first_of_segment && 0.0 < shift && shift <= limit {
                words[i].start = segments[segment].0;
            }
        }
    }
    for i in 0..words.len() {
        let end = match segment_of[i] {
            Some(segment) if segment_of.get(i + 1).copied().flatten() != Some(segment) => segments[segment].1,
            _ => words.get(i + 1).map_or(words[i].end, |next| next.start),
        };
        words[i].end = words[i].start.max(end.min(words[i].start + limit));
    }
}
