//! The diarization side of the alignment, in upstream's f32 arithmetic: speaker probabilities at the head's rate
//! (sigmoid of the 10 ms logits, mean over each encoder frame's mel frames, linear resampling with torch's
//! `linspace`), the diarization segments at 10 ms, and the one-to-one matching of speaker tags to diarizer speakers.

use super::logprobs::FrameLogProbs;
use super::transcript::Stream;
use crate::math::{linear_sum_assignment, sigmoid_f32 as sigmoid};

/// torch's f32 `mean` over a short axis: four interleaved accumulators, summed in order, then divided.
fn mean(values: impl Iterator<Item = f32>, n: usize) -> f32 {
    let mut lanes = [0.0f32; 4];
    for (i, v) in values.enumerate() {
        lanes[i % 4] += v;
    }
    (((lanes[0] + lanes[1]) + lanes[2]) + lanes[3]) / n as f32
}

/// torch's f32 `linspace(start, end, steps)` on the CPU: each half from its end with one fused multiply-add.
pub fn linspace(start: f32, end: f32, steps: usize) -> Vec<f32> {
    if steps == 1 {
        return vec![start];
    }
    let step = (end - start) / (steps - 1) as f32;
    (0..steps)
        .map(
            |k| {
                if k < steps / 2 { step.mul_add(k as f32, start) } else { (-step).mul_add((steps - 1 - k) as f32, end) }
            },
        )
        .collect()
}

/// Speaker probabilities `[frames, speakers]` of the head's `frames` frames: the sigmoid of the 10 ms `logits`
/// (`[≥ encoder_frames·subsampling, speakers]`, padding frames of the last group included, as the model does)
/// averaged per encoder frame, then linearly resampled (`_resample_frames`).
pub fn head_rate_probabilities(
    logits: &[f32],
    speakers: usize,
    encoder_frames: usize,
    subsampling: usize,
    frames: usize,
) -> Vec<f32> {
    let encoder: Vec<f32> = (0..encoder_frames)
        .flat_map(|t| {
            (0..speakers).map(move |s| {
                let group = (0..subsampling).map(|j| sigmoid(logits[((t * subsampling) + j) * speakers + s]));
                mean(group, subsampling)
            })
        })
        .collect();
    if encoder_frames == frames {
        return encoder;
    }
    let mut out = Vec::with_capacity(frames * speakers);
    for position in linspace(0.0, (encoder_frames - 1) as f32, frames) {
        let (lower, upper) = (position.floor(), position.ceil());
        let fraction = position - lower;
        let (lower, upper) = (lower as usize * speakers, upper as usize * speakers);
        for s in 0..speakers {
            out.push(encoder[lower + s] * (1.0 - fraction) + encoder[upper + s] * fraction);
        }
    }
    out
}

/// One run of a speaker's activity.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Segment {
    /// The diarizer's speaker slot.
    pub speaker: usize,
    /// Start, seconds.
    pub start: f64,
    /// End, seconds (at most the recording's duration).
    pub end: f64,
}

/// `_diarization_segments`: each speaker's runs of `sigmoid(logit) > threshold` over the first `frames` 10 ms
/// frames, as `[frame·seconds_per_frame, min(end·seconds_per_frame, duration))`, non-empty, sorted by
/// (start, end, speaker).
pub fn diarization_segments(
    logits: &[f32],
    speakers: usize,
    frames: usize,
    threshold: f32,
    seconds_per_frame: f64,
    duration: f64,
) -> Vec<Segment> {
    let mut segments = Vec::new();
    for speaker in 0..speakers {
        let mut start = None;
        for t in 0..=frames {
            let active = t < frames && sigmoid(logits[t * speakers + speaker]) > threshold;
            match (active, start) {
                (true, None) => start = Some(t),
                (false, Some(first)) => {
                    let segment = Segment {
                        speaker,
                        start: first as f64 * seconds_per_frame,
                        end: (t as f64 * seconds_per_frame).min(duration),
                    };
                    if segment.end > segment.start {
                        segments.push(segment);
                    }
                    start = None;
                }
                _ => {}
            }
        }
    }
    segments.sort_by(|a, b| {
        (a.start, a.end, a.speaker).partial_cmp(&(b.start, b.end, b.speaker)).unwrap_or(std::cmp::Ordering::Equal)
    });
    segments
}

/// `_match_tags_to_speakers`: each stream's diarizer speaker (or `None`), one to one, maximising the IDF-weighted
/// cosine similarity of the stream's token counts and the greedy tokens decoded while each speaker is active
/// (`probability ≥ threshold`), less 0.1·|ln| of the ratio of their amounts of speech.
pub fn match_tags_to_speakers(
    log_probs: &FrameLogProbs,
    streams: &[Stream],
    probabilities: &[f32],
    speakers: usize,
    threshold: f32,
) -> Vec<Option<usize>> {
    let frames = probabilities.len() / speakers.max(1);
    // The transcript's classes, blank first: argmax keeps the first maximum, so the blank wins ties.
    let mut tokens: Vec<u32> = streams.iter().flat_map(|s| s.target()).collect();
    tokens.sort_unstable();
    tokens.dedup();
    let blank = log_probs.blank();
    let classes: Vec<u32> = std::iter::once(blank).chain(tokens.iter().copied()).collect();
    let greedy: Vec<u32> = (0..frames)
        .map(|t| {
            let mut best = 0;
            for (i, &class) in classes.iter().enumerate().skip(1) {
                if log_probs.get(t, class) > log_probs.get(t, classes[best]) {
                    best = i;
                }
            }
            classes[best]
        })
        .collect();
    let column = |token: u32| tokens.binary_search(&token).ok();
    let count = |values: &mut [f64], token: u32| {
        if let Some(c) = column(token) {
            values[c] += 1.0;
        }
    };
    let mut tag_counts = vec![vec![0.0f64; tokens.len()]; streams.len()];
    for (row, stream) in tag_counts.iter_mut().zip(streams) {
        stream.target().into_iter().for_each(|token| count(row, token));
    }
    let mut speaker_counts = vec![vec![0.0f64; tokens.len()]; speakers];
    for t in 0..frames {
        let onset = greedy[t] != blank && (t == 0 || greedy[t] != greedy[t - 1]);
        if !onset {
            continue;
        }
        for (s, row) in speaker_counts.iter_mut().enumerate() {
            if probabilities[t * speakers + s] >= threshold {
                count(row, greedy[t]);
            }
        }
    }
    let idf: Vec<f64> = (0..tokens.len())
        .map(|v| {
            let speaking = speaker_counts.iter().filter(|row| row[v] > 0.0).count();
            (speakers as f64 / (1.0 + speaking as f64)).ln_1p()
        })
        .collect();
    let weigh = |row: &Vec<f64>| -> Vec<f64> { row.iter().zip(&idf).map(|(c, w)| (c * w).sqrt()).collect() };
    let norm = |v: &[f64]| v.iter().map(|x| x * x).sum::<f64>().sqrt();
    let (tag_vectors, speaker_vectors): (Vec<Vec<f64>>, Vec<Vec<f64>>) =
        (tag_counts.iter().map(weigh).collect(), speaker_counts.iter().map(weigh).collect());
    let mut cost = Vec::with_capacity(streams.len() * speakers);
    for (g, tv) in tag_vectors.iter().enumerate() {
        for (s, sv) in speaker_vectors.iter().enumerate() {
            let dot: f64 = tv.iter().zip(sv).map(|(a, b)| a * b).sum();
            let cosine = dot / (norm(tv) * norm(sv)).max(1e-8);
            let ratio = (tag_counts[g].iter().sum::<f64>() + 1.0) / (speaker_counts[s].iter().sum::<f64>() + 1.0);
            cost.push(-(cosine - 0.1 * ratio.ln().abs()));
        }
    }
    let mut assigned = vec![None; streams.len()];
    for (tag, speaker) in linear_sum_assignment(&cost, streams.len(), speakers).unwrap_or_default() {
        assigned[tag] = Some(speaker);
    }
    assigned
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn linspace_is_symmetric_from_both_ends() {
        let values = linspace(0.0, 79.0, 160);
        assert_eq!((values[0], values[159]), (0.0, 79.0));
        assert_eq!(values.len(), 160);
        assert!(values.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(linspace(2.0, 5.0, 1), [2.0]);
    }

    #[test]
    fn segments_are_runs_sorted_by_time() {
        let logits = [5.0, -5.0, 5.0, 5.0, -5.0, 5.0, -5.0, -5.0];
        let segments = diarization_segments(&logits, 2, 4, 0.5, 0.01, 0.035);
        assert_eq!(
            segments,
            [Segment { speaker: 0, start: 0.0, end: 0.02 }, Segment { speaker: 1, start: 0.01, end: 0.03 },]
        );
    }
}
