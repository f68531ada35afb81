//! One step of the speaker-cache loop (docs/model.md §6.2, §10), the same for an offline recording and a live
//! session: what it hands the GPU, what it gets back, and the speaker cache and FIFO that carry over, their
//! bookkeeping on the host and their rows on the GPU.

use std::ops::Range;
use std::sync::Arc;

use nemotron_postprocess::math::sigmoid;

use super::resident::{Slot, StepRows};
use crate::config::SpeakerCacheConfig;
use crate::error::{Error, Result};
use crate::speaker_cache::{RowSource, SpeakerCache, StepLayout};

/// One step of a recording or a session: the stacked features `[n, subsampling·mel]` of its frames (an offline
/// chunk with its left and right context, a live chunk with its look-ahead) after the `[speaker cache ; FIFO]` rows
/// kept on the GPU.
pub(crate) struct StepInput<'a> {
    pub features: &'a [f32],
    /// Rows from the first that are valid keys (the cache, the FIFO, and the frames of docs/model.md §4's mask);
    /// the rest are the recording's padding.
    pub valid_rows: usize,
    /// The cache and FIFO rows: which to gather before the features, which to keep after the step.
    pub rows: StepRows<'a>,
    /// The step's rows whose logits are read back.
    pub logits: Range<usize>,
}

/// What one step gives back.
pub(crate) struct StepOutput {
    /// `[rows·subsampling, speakers]` of the rows asked for.
    pub logits: Vec<f32>,
    /// GPU time of the submission, when timed.
    pub gpu_ms: Option<f64>,
}

/// What each of `steps` steps gets of the submission they shared (`outputs`, one per step, from
/// [`super::Sortformer::steps`]): its output; or, when the submission failed, the failure: alone, the error itself;
/// side by side, [`Error::BatchedStep`] for each, all sharing the error as their source (a lost device stays a GPU
/// error for each). The live sessions' batches and the offline recordings' take their steps' outcomes from here.
pub(crate) fn each_step<O>(outputs: Result<Vec<O>>, steps: usize) -> Vec<Result<O>> {
    let error = match outputs {
        Ok(outputs) if outputs.len() == steps => return outputs.into_iter().map(Ok).collect(),
        Ok(outputs) => Error::Internal(format!("{} outputs for {steps} steps", outputs.len())),
        Err(error) => error,
    };
    if steps == 1 {
        return vec![Err(error)];
    }
    let error = Arc::new(error);
    (0..steps).map(|_| Err(Error::BatchedStep(Arc::clone(&error)))).collect()
}

/// The speaker cache and FIFO of one recording or live session: the bookkeeping on the host, the rows in a slot on
/// the GPU, and where each row of the next step's `[cache ; FIFO]` is in the slot. Only the update's answer (which
/// rows, or the silence embedding) moves between host and GPU, never an embedding.
pub(crate) struct CacheRows {
    cache: SpeakerCache,
    slot: Slot,
    sources: Vec<RowSource>,
}

impl CacheRows {
    /// An empty cache and FIFO of `config`'s sizes for `speakers`, its rows in `slot`.
    pub(crate) fn new(slot: Slot, config: SpeakerCacheConfig, speakers: usize) -> Self {
        Self { cache: SpeakerCache::new(config, speakers), slot, sources: Vec::new() }
    }

    /// A copy that continues independently, its rows copied into a slot of its own.
    pub(crate) fn fork(&self) -> Result<Self> {
        Ok(Self { cache: self.cache.clone(), slot: self.slot.fork()?, sources: self.sources.clone() })
    }

    /// The next step's rows: the cache and FIFO, `lookback` rows of left context, the chunk proper's `chunk_rows`.
    pub(crate) fn layout(&self, lookback: usize, chunk_rows: usize) -> StepLayout {
        StepLayout { cache_rows: self.cache.cache_rows(), fifo_rows: self.cache.fifo_rows(), lookback, chunk_rows }
    }

    /// The next step: `features` after the cache and FIFO, laid out as `layout` says ([`CacheRows::layout`]), its
    /// first `valid_rows` rows keys; the rows up to the chunk's end kept for the step after it, unless it is the
    /// `last`; the logits read back from the first row the update reads to the chunk's end.
    pub(crate) fn step<'s>(
        &'s self,
        features: &'s [f32],
        layout: StepLayout,
        valid_rows: usize,
        last: bool,
    ) -> StepInput<'s> {
        let chunk_end = layout.chunk_start() + layout.chunk_rows;
        StepInput {
            features,
            valid_rows,
            rows: StepRows {
                slot: &self.slot,
                sources: &self.sources,
                // After the last chunk no step reads the rows.
                keep: if last { 0..0 } else { 0..chunk_end },
            },
            logits: self.cache.first_row_read()..chunk_end,
        }
    }

    /// Takes the output of the step [`CacheRows::step`] made with `layout` and `valid_rows` (`logits`, `[rows·sub,
    /// speakers]` from its first row read): updates the cache and FIFO (docs/model.md §6.3), makes the rows the step
    /// kept current, and returns the chunk proper's logits.
    pub(crate) fn complete<'l>(
        &mut self,
        layout: StepLayout,
        logits: &'l [f32],
        valid_rows: usize,
        (sub, speakers): (usize, usize),
    ) -> &'l [f32] {
        let first_read = self.cache.first_row_read();
        let read_rows = first_read..first_read + logits.len() / (sub * speakers);
        let valid: Vec<bool> = read_rows.map(|r| r < valid_rows).collect();
        let mut probs = vec![0.0; first_read * speakers];
        probs.extend(encoder_rate_probabilities(logits, &valid, sub, speakers));
        self.sources = self.cache.update(layout, &probs);
        self.slot.flip();
        let start = (layout.chunk_start() - first_read) * sub * speakers;
        &logits[start..start + layout.chunk_rows * sub * speakers]
    }
}

/// `P[r, s] = mean_j sigmoid(logits[r·sub + j, s])`, 0 on rows that are not valid (docs/model.md §6.3).
pub fn encoder_rate_probabilities(logits: &[f32], valid: &[bool], sub: usize, speakers: usize) -> Vec<f64> {
    let mut probs = vec![0.0; valid.len() * speakers];
    for (r, _) in valid.iter().enumerate().filter(|(_, v)| **v) {
        let rows = &logits[r * sub * speakers..(r + 1) * sub * speakers];
        probs[r * speakers..(r + 1) * speakers].copy_from_slice(&mean_sigmoid(rows, speakers));
    }
    probs
}

/// Per speaker, the mean of `sigmoid(logit)` over the rows of `logits` (`[rows, speakers]`).
pub(crate) fn mean_sigmoid(logits: &[f32], speakers: usize) -> Vec<f64> {
    let rows = logits.len() / speakers;
    (0..speakers)
        .map(|s| (0..rows).map(|j| sigmoid(logits[j * speakers + s] as f64)).sum::<f64>() / rows as f64)
        .collect()
}
