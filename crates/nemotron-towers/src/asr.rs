//! The ASR tower over a whole recording: log-mel in, `[T, d]` hidden states out. All chunks are
//! independent, so they run as batches of sequences, up to [`MAX_CHUNKS_PER_BATCH`] per
//! submission (fewer when the device's storage-binding limit says so), a much shorter chunk in a
//! batch of its own ([`batches`]).

use crate::chunks::{MAX_CHUNKS_PER_BATCH, batches, schedule};
use crate::config::ChunkConfig;
use crate::error::{Error, Result};
use crate::frontend::Features;
use crate::tower::{InputKind, Sequence, Tower};

/// The ASR encoder with its chunk schedule.
pub struct AsrEncoder {
    tower: Tower,
    chunks: ChunkConfig,
}

impl AsrEncoder {
    pub fn new(tower: Tower, chunks: ChunkConfig) -> Self {
        Self { tower, chunks }
    }

    pub fn tower(&self) -> &Tower {
        &self.tower
    }

    /// The pipelines [`AsrEncoder::encode`] can record: the tower over batches of the schedule's chunks.
    pub(crate) fn kernels(&self) -> Vec<gpu_core::KernelVariant> {
        let c = &self.chunks;
        self.tower.kernels(c.length + c.left_context + c.right_context)
    }

    /// Log-mel `features` (frames a multiple of the subsampling factor) → `[frames / subsampling, d]`.
    /// The features are normalised a batch at a time, never as a whole copy of the recording.
    pub async fn encode(&self, features: &Features) -> Result<Vec<f32>> {
        let c = self.tower.config();
        let (sub, width) = (c.subsampling, c.stacked_features());
        if features.data.len() != features.frames * c.mel_bins || !features.frames.is_multiple_of(sub) {
            return Err(Error::features(format!(
                "ASR features: {} values for {} frames are not whole groups of {sub} frames × {} mel bins",
                features.data.len(),
                features.frames,
                c.mel_bins
            )));
        }
        let frames = features.frames / sub;
        let normalization = features.normalization();
        // docs/model.md §4: an encoder frame is a valid key when its first mel frame is.
        let valid: Vec<bool> = (0..frames).map(|t| t * sub < features.valid).collect();
        let chunks = schedule(frames, &self.chunks);
        let per_batch = self.chunks_per_batch();
        let mut hidden = gpu_core::host_vec(frames * c.hidden);
        for group in batches(&chunks, per_batch) {
            let (first, last) = (group[0].context_start, group[group.len() - 1].context_end);
            let normalized = normalization.apply(features, first * sub..last * sub);
            let batch: Vec<Sequence<'_>> = group
                .iter()
                .map(|k| Sequence {
                    rows: &normalized[(k.context_start - first) * width..(k.context_end - first) * width],
                    valid: &valid[k.context_start..k.context_end],
                })
                .collect();
            // Each chunk's kept rows go straight to their place in `hidden` (the chunks of a group are consecutive).
            let mut rest = &mut hidden[group[0].start * c.hidden..group[group.len() - 1].end * c.hidden];
            let mut targets = Vec::with_capacity(group.len());
            for k in group {
                let (rows, tail) = std::mem::take(&mut rest).split_at_mut((k.end - k.start) * c.hidden);
                targets.push((k.lookback(), rows));
                rest = tail;
            }
            self.tower.forward_into(InputKind::Features, &batch, &mut targets).await?;
        }
        Ok(hidden)
    }

    /// Chunks per submission: as many as one storage binding holds, but at most
    /// [`MAX_CHUNKS_PER_BATCH`].
    pub fn chunks_per_batch(&self) -> usize {
        let chunk_rows = self.chunks.length + self.chunks.left_context + self.chunks.right_context;
        (self.tower.max_rows() / chunk_rows.max(1)).clamp(1, MAX_CHUNKS_PER_BATCH)
    }
}
