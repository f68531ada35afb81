//! The Sortformer's arrival-order speaker cache and FIFO (docs/model.md §6.2–§6.5): which pre-encoder
//! embeddings each step sees before its chunk, and how the cache is compressed to the frames
//! that best represent each speaker.

use crate::config::SpeakerCacheConfig;
use nemotron_postprocess::math::torch_top_k::top_k;

/// Cache and FIFO state of one recording (batch 1).
#[derive(Clone, Debug)]
pub struct SpeakerCache {
    config: SpeakerCacheConfig,
    speakers: usize,
    width: usize,
    /// `[n_c, width]` pre-encoder embeddings.
    cache: Vec<f32>,
    /// `[n_c, speakers]` probabilities, meaningful once `compressed`.
    cache_probs: Vec<f64>,
    /// `[n_f, width]` pre-encoder embeddings.
    fifo: Vec<f32>,
    compressed: bool,
}

/// One step's rows: what [`SpeakerCache::step_input`] laid out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StepLayout {
    pub cache_rows: usize,
    pub fifo_rows: usize,
    /// Rows of chunk frames before the chunk proper (left context).
    pub lookback: usize,
    pub chunk_rows: usize,
}

impl StepLayout {
    /// Row of the step input where the chunk proper starts.
    pub fn chunk_start(&self) -> usize {
        self.cache_rows + self.fifo_rows + self.lookback
    }
}

impl SpeakerCache {
    pub fn new(config: SpeakerCacheConfig, speakers: usize, width: usize) -> Self {
        Self {
            config,
            speakers,
            width,
            cache: Vec::new(),
            cache_probs: Vec::new(),
            fifo: Vec::new(),
            compressed: false,
        }
    }

    pub fn cache_rows(&self) -> usize {
        self.cache.len() / self.width
    }

    pub fn fifo_rows(&self) -> usize {
        self.fifo.len() / self.width
    }

    /// `[cache ; fifo ; context]` rows and their key mask (cache and FIFO rows are always valid).
    pub fn step_input(&self, context: &[f32], context_valid: &[bool]) -> (Vec<f32>, Vec<bool>) {
        let mut rows = Vec::with_capacity(self.cache.len() + self.fifo.len() + context.len());
        rows.extend_from_slice(&self.cache);
        rows.extend_from_slice(&self.fifo);
        rows.extend_from_slice(context);
        let mut valid = vec![true; self.cache_rows() + self.fifo_rows()];
        valid.extend_from_slice(context_valid);
        (rows, valid)
    }

    /// Pushes the step's chunk frames (`chunk_rows`, `[layout.chunk_rows, width]`, the chunk proper of the
    /// step input) into the FIFO and, when it overflows, moves the oldest frames into the cache,
    /// compressing it when it outgrows `cache_length`. `probs` are the step input's `[rows, speakers]`
    /// encoder-rate probabilities (0 on padding rows).
    pub fn update(&mut self, layout: StepLayout, chunk_rows: &[f32], probs: &[f64], silence: &[f32]) {
        let (w, s) = (self.width, self.speakers);
        let chunk = layout.chunk_start()..layout.chunk_start() + layout.chunk_rows;
        let mut candidate = std::mem::take(&mut self.fifo);
        candidate.extend_from_slice(&chunk_rows[..layout.chunk_rows * w]);
        let len = candidate.len() / w;
        if len <= self.config.fifo_length {
            self.fifo = candidate;
            return;
        }
        let pop = self.config.update_period.max(len - self.config.fifo_length).min(len);
        let fifo_start = layout.cache_rows;
        let mut fifo_probs = probs[fifo_start * s..(fifo_start + layout.fifo_rows) * s].to_vec();
        fifo_probs.extend_from_slice(&probs[chunk.start * s..chunk.end * s]);
        let mut cand_probs = if self.compressed {
            std::mem::take(&mut self.cache_probs)
        } else {
            probs[..layout.cache_rows * s].to_vec()
        };
        cand_probs.extend_from_slice(&fifo_probs[..pop * s]);
        let mut cand = std::mem::take(&mut self.cache);
        cand.extend_from_slice(&candidate[..pop * w]);
        self.fifo = candidate[pop * w..].to_vec();
        if cand.len() / w > self.config.cache_length {
            let (cache, cache_probs) = compress(&self.config, s, w, &cand, &cand_probs, silence);
            self.cache = cache;
            self.cache_probs = cache_probs;
            self.compressed = true;
        } else {
            self.cache = cand;
            self.cache_probs = cand_probs;
        }
    }
}

/// Per-(frame, speaker) scores of docs/model.md §6.4 steps 1–4, `[frames, speakers]`.
fn frame_scores(c: &SpeakerCacheConfig, speakers: usize, probs: &[f64]) -> Vec<f64> {
    let frames = probs.len() / speakers;
    let tau = c.score_threshold;
    let budget = c.cache_length / speakers - c.silence_frames_per_speaker;
    let min_positive = (c.min_positive_scores_rate * budget as f64) as usize;
    let mut scores = vec![f64::NEG_INFINITY; probs.len()];
    for (row, score_row) in probs.chunks(speakers).zip(scores.chunks_mut(speakers)) {
        let silent: f64 = row.iter().map(|p| (1.0 - p).max(tau).ln()).sum();
        for (&p, score) in row.iter().zip(score_row.iter_mut()) {
            if p > 0.5 {
                *score = p.max(tau).ln() - (1.0 - p).max(tau).ln() + silent - 0.5f64.ln();
            }
        }
    }
    for s in 0..speakers {
        let positive = (0..frames).filter(|&t| scores[t * speakers + s] > 0.0).count();
        if positive >= min_positive {
            // Overlapped speech: a speaker with enough clean frames keeps only those.
            for t in 0..frames {
                if probs[t * speakers + s] > 0.5 && scores[t * speakers + s] <= 0.0 {
                    scores[t * speakers + s] = f64::NEG_INFINITY;
                }
            }
        }
    }
    for score in scores.iter_mut().skip(c.cache_length * speakers) {
        *score += c.latest_frames_boost;
    }
    for (rate, boost) in [(c.strong_boost_rate, -2.0 * 0.5f64.ln()), (c.weak_boost_rate, -0.5f64.ln())] {
        let k = (rate * budget as f64) as usize;
        for s in 0..speakers {
            let column: Vec<f64> = (0..frames).map(|t| scores[t * speakers + s]).collect();
            for t in top_k(&column, k) {
                scores[t * speakers + s] += boost;
            }
        }
    }
    scores
}

/// Compresses `embeds [N, width]` / `probs [N, speakers]` (N > cache_length) to
/// `cache_length` rows grouped by speaker in arrival order, each group ending with its silence
/// slots (docs/model.md §6.4).
pub fn compress(
    c: &SpeakerCacheConfig,
    speakers: usize,
    width: usize,
    embeds: &[f32],
    probs: &[f64],
    silence: &[f32],
) -> (Vec<f32>, Vec<f64>) {
    let frames = probs.len() / speakers;
    let scores = frame_scores(c, speakers, probs);
    let sil = c.silence_frames_per_speaker;
    let padded = frames + sil;
    // Speaker-major flattening with `sil` always-kept silence frames after each speaker's frames.
    let flat: Vec<f64> = (0..speakers)
        .flat_map(|s| (0..padded).map(move |t| (s, t)))
        .map(|(s, t)| if t < frames { scores[t * speakers + s] } else { f64::INFINITY })
        .collect();
    let disabled = usize::MAX;
    let mut picked: Vec<usize> = top_k(&flat, c.cache_length)
        .into_iter()
        .map(|i| if flat[i] == f64::NEG_INFINITY { disabled } else { i })
        .collect();
    picked.sort_unstable();
    let mut cache = Vec::with_capacity(c.cache_length * width);
    let mut cache_probs = Vec::with_capacity(c.cache_length * speakers);
    for i in picked {
        let frame = if i == disabled { frames } else { i % padded };
        if frame < frames {
            cache.extend_from_slice(&embeds[frame * width..(frame + 1) * width]);
            cache_probs.extend_from_slice(&probs[frame * speakers..(frame + 1) * speakers]);
        } else {
            cache.extend_from_slice(silence);
            cache_probs.extend(std::iter::repeat_n(0.0, speakers));
        }
    }
    (cache, cache_probs)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(cache_length: usize) -> SpeakerCacheConfig {
        SpeakerCacheConfig {
            fifo_length: 2,
            update_period: 3,
            cache_length,
            silence_frames_per_speaker: 1,
            score_threshold: 0.25,
            latest_frames_boost: 0.05,
            strong_boost_rate: 0.75,
            weak_boost_rate: 1.5,
            min_positive_scores_rate: 0.5,
        }
    }

    #[test]
    fn compress_keeps_speaker_frames_in_arrival_order_then_silence() {
        // 2 speakers, cache of 6 (3 per speaker: 2 frames + 1 silence), 8 frames of one width.
        let c = config(6);
        let probs: Vec<f64> =
            [[0.9, 0.1], [0.2, 0.1], [0.8, 0.1], [0.1, 0.95], [0.1, 0.7], [0.99, 0.1], [0.1, 0.1], [0.1, 0.9]].concat();
        let embeds: Vec<f32> = (0..8).map(|t| t as f32).collect();
        let (cache, cache_probs) = compress(&c, 2, 1, &embeds, &probs, &[-1.0]);
        // Speaker 0 speaks at 0, 2, 5 and keeps its two best frames, 5 (0.99) and 0 (0.9);
        // speaker 1 speaks at 3, 4, 7 and keeps 3 (0.95) and 7 (0.9, plus the latest-frame boost).
        assert_eq!(cache, vec![0.0, 5.0, -1.0, 3.0, 7.0, -1.0]);
        assert_eq!(&cache_probs[4..6], &[0.0, 0.0]);
        assert_eq!(&cache_probs[0..2], &[0.9, 0.1]);
    }

    #[test]
    fn fifo_overflow_pops_update_period_frames_into_the_cache() {
        let c = config(6);
        let mut cache = SpeakerCache::new(c, 2, 1);
        let layout = |cache: &SpeakerCache, chunk_rows| StepLayout {
            cache_rows: cache.cache_rows(),
            fifo_rows: cache.fifo_rows(),
            lookback: 0,
            chunk_rows,
        };
        cache.update(layout(&cache, 2), &[1.0, 2.0], &[0.0; 4], &[0.0]);
        assert_eq!((cache.cache_rows(), cache.fifo_rows()), (0, 2));
        assert_eq!(cache.step_input(&[3.0, 4.0], &[true, true]).0, vec![1.0, 2.0, 3.0, 4.0]);
        cache.update(layout(&cache, 2), &[3.0, 4.0], &[0.0; 8], &[0.0]);
        // FIFO of 4 > 2: pop max(3, 4 − 2) = 3 frames into the cache, keep the newest one.
        assert_eq!((cache.cache, cache.fifo.clone()), (vec![1.0, 2.0, 3.0], vec![4.0]));
    }
}
