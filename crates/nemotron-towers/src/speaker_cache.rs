//! The Sortformer's arrival-order speaker cache and FIFO (docs/model.md §6.2–§6.5): which pre-encoder
//! embeddings each step sees before its chunk, and how the cache is compressed to the frames
//! that best represent each speaker.

use crate::config::SpeakerCacheConfig;
use nemotron_postprocess::math::torch_top_k::top_k;

/// Cache and FIFO bookkeeping of one recording or stream (batch 1): how many rows each holds, the cache's
/// probabilities, and where each row of the next step's `[cache ; FIFO]` comes from ([`RowSource`]). The rows
/// themselves stay on the GPU (`crate::sortformer::resident`), where the next step gathers those the update names.
#[derive(Clone, Debug)]
pub struct SpeakerCache {
    config: SpeakerCacheConfig,
    speakers: usize,
    cache_rows: usize,
    fifo_rows: usize,
    /// `[cache_rows, speakers]` probabilities, meaningful once `compressed`.
    cache_probs: Vec<f64>,
    compressed: bool,
}

/// Where a row of the next step's `[speaker cache ; FIFO]` comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RowSource {
    /// This row of the step's input (its speaker cache, FIFO or chunk proper).
    Step(usize),
    /// The silence embedding, which the compression puts at the end of each speaker's group.
    Silence,
}

/// One step's rows: what [`SpeakerCache::cache_rows`] and [`SpeakerCache::fifo_rows`] say, then the chunk.
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
    pub fn new(config: SpeakerCacheConfig, speakers: usize) -> Self {
        Self { config, speakers, cache_rows: 0, fifo_rows: 0, cache_probs: Vec::new(), compressed: false }
    }

    pub fn cache_rows(&self) -> usize {
        self.cache_rows
    }

    pub fn fifo_rows(&self) -> usize {
        self.fifo_rows
    }

    /// First row of the next step whose probabilities [`SpeakerCache::update`] reads: once compressed, the cache
    /// keeps its own and the step's rows before the FIFO need no logits.
    pub fn first_row_read(&self) -> usize {
        if self.compressed { self.cache_rows } else { 0 }
    }

    /// Pushes the step's chunk proper into the FIFO and, when it overflows, moves the oldest frames into the cache,
    /// compressing it when it outgrows `cache_length`. `probs` are the step input's `[rows, speakers]` encoder-rate
    /// probabilities (0 on padding rows; rows before [`SpeakerCache::first_row_read`] are not read). Returns where
    /// each row of the next `[cache ; FIFO]` comes from, in order.
    pub fn update(&mut self, layout: StepLayout, probs: &[f64]) -> Vec<RowSource> {
        let s = self.speakers;
        let fifo = layout.cache_rows..layout.cache_rows + layout.fifo_rows;
        let chunk = layout.chunk_start()..layout.chunk_start() + layout.chunk_rows;
        let candidate: Vec<usize> = fifo.chain(chunk).collect();
        let keep_cache = (0..layout.cache_rows).map(RowSource::Step);
        if candidate.len() <= self.config.fifo_length {
            self.fifo_rows = candidate.len();
            return keep_cache.chain(candidate.into_iter().map(RowSource::Step)).collect();
        }
        let pop = self.config.update_period.max(candidate.len() - self.config.fifo_length).min(candidate.len());
        let mut cand_probs = if self.compressed {
            std::mem::take(&mut self.cache_probs)
        } else {
            probs[..layout.cache_rows * s].to_vec()
        };
        cand_probs.extend(candidate[..pop].iter().flat_map(|&r| &probs[r * s..(r + 1) * s]));
        let cand: Vec<RowSource> = keep_cache.chain(candidate[..pop].iter().map(|&r| RowSource::Step(r))).collect();
        let mut sources = if cand.len() > self.config.cache_length {
            let (picked, cache_probs) = compress(&self.config, s, &cand_probs);
            self.cache_probs = cache_probs;
            self.compressed = true;
            picked.into_iter().map(|p| p.map_or(RowSource::Silence, |i| cand[i])).collect()
        } else {
            self.cache_probs = cand_probs;
            cand
        };
        self.cache_rows = sources.len();
        self.fifo_rows = candidate.len() - pop;
        sources.extend(candidate[pop..].iter().map(|&r| RowSource::Step(r)));
        sources
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

/// Compresses the `[N, speakers]` probabilities of N > cache_length candidate frames to `cache_length` picks grouped
/// by speaker in arrival order, each group ending with its silence slots (docs/model.md §6.4): per pick, the candidate
/// frame (`None`: the silence embedding), and the picks' probabilities (0 for silence).
pub fn compress(c: &SpeakerCacheConfig, speakers: usize, probs: &[f64]) -> (Vec<Option<usize>>, Vec<f64>) {
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
    let mut frames_picked = Vec::with_capacity(c.cache_length);
    let mut cache_probs = Vec::with_capacity(c.cache_length * speakers);
    for i in picked {
        let frame = if i == disabled { frames } else { i % padded };
        if frame < frames {
            frames_picked.push(Some(frame));
            cache_probs.extend_from_slice(&probs[frame * speakers..(frame + 1) * speakers]);
        } else {
            frames_picked.push(None);
            cache_probs.extend(std::iter::repeat_n(0.0, speakers));
        }
    }
    (frames_picked, cache_probs)
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
        // 2 speakers, cache of 6 (3 per speaker: 2 frames + 1 silence), 8 frames.
        let c = config(6);
        let probs: Vec<f64> =
            [[0.9, 0.1], [0.2, 0.1], [0.8, 0.1], [0.1, 0.95], [0.1, 0.7], [0.99, 0.1], [0.1, 0.1], [0.1, 0.9]].concat();
        let (picked, cache_probs) = compress(&c, 2, &probs);
        // Speaker 0 speaks at 0, 2, 5 and keeps its two best frames, 5 (0.99) and 0 (0.9);
        // speaker 1 speaks at 3, 4, 7 and keeps 3 (0.95) and 7 (0.9, plus the latest-frame boost).
        assert_eq!(picked, vec![Some(0), Some(5), None, Some(3), Some(7), None]);
        assert_eq!(&cache_probs[4..6], &[0.0, 0.0]);
        assert_eq!(&cache_probs[0..2], &[0.9, 0.1]);
    }

    #[test]
    fn fifo_overflow_pops_update_period_frames_into_the_cache() {
        let c = config(6);
        let mut cache = SpeakerCache::new(c, 2);
        let layout = |cache: &SpeakerCache, chunk_rows| StepLayout {
            cache_rows: cache.cache_rows(),
            fifo_rows: cache.fifo_rows(),
            lookback: 0,
            chunk_rows,
        };
        let step = |rows: usize| (0..rows).map(RowSource::Step).collect::<Vec<_>>();
        assert_eq!(cache.update(layout(&cache, 2), &[0.0; 4]), step(2));
        assert_eq!((cache.cache_rows(), cache.fifo_rows()), (0, 2));
        // FIFO of 4 > 2: pop max(3, 4 − 2) = 3 frames into the cache, keep the newest one.
        assert_eq!(cache.update(layout(&cache, 2), &[0.0; 8]), step(4));
        assert_eq!((cache.cache_rows(), cache.fifo_rows()), (3, 1));
    }

    #[test]
    fn compression_names_the_kept_step_rows_and_silence() {
        // A cache of 4 for 2 speakers: per speaker one frame and one silence slot.
        let mut c = config(4);
        c.fifo_length = 1;
        c.update_period = 4;
        let mut cache = SpeakerCache::new(c, 2);
        // Step 1: 5 chunk rows; FIFO of 5 > 1 pops 4 into the cache (4 rows: no compression), keeps row 4.
        let probs = [[0.9, 0.1], [0.1, 0.9], [0.2, 0.2], [0.95, 0.1], [0.1, 0.8]].concat();
        let layout = StepLayout { cache_rows: 0, fifo_rows: 0, lookback: 0, chunk_rows: 5 };
        let sources = cache.update(layout, &probs);
        assert_eq!(sources, (0..5).map(RowSource::Step).collect::<Vec<_>>());
        assert_eq!((cache.cache_rows(), cache.fifo_rows(), cache.first_row_read()), (4, 1, 0));
        // Step 2: cache 0..4, FIFO 4, a look-back row 5, chunk 6..10: pops 4 (rows 4, 6, 7, 8) → 8 candidates,
        // compressed to 4 (per speaker one frame and one silence slot).
        let probs = [
            [0.9, 0.1],
            [0.1, 0.9],
            [0.2, 0.2],
            [0.95, 0.1],
            [0.1, 0.8],
            [0.5, 0.5],
            [0.1, 0.99],
            [0.2, 0.1],
            [0.99, 0.1],
            [0.1, 0.1],
        ]
        .concat();
        let layout = StepLayout { cache_rows: 4, fifo_rows: 1, lookback: 1, chunk_rows: 4 };
        let sources = cache.update(layout, &probs);
        let (picked, _) = compress(&c, 2, &[&probs[..8], &probs[8..10], &probs[12..18]].concat());
        let candidates = [0, 1, 2, 3, 4, 6, 7, 8];
        let expected: Vec<RowSource> = picked
            .iter()
            .map(|p| p.map_or(RowSource::Silence, |i| RowSource::Step(candidates[i])))
            .chain([RowSource::Step(9)])
            .collect();
        assert_eq!(sources, expected);
        assert!(sources.contains(&RowSource::Silence) && sources.contains(&RowSource::Step(8)), "{sources:?}");
        assert_eq!((cache.cache_rows(), cache.fifo_rows(), cache.first_row_read()), (4, 1, 4));
    }
}
