//! The ASR tower over a whole recording: normalised log-mel in, `[T, d]` hidden states out.
//! All chunks are independent, so they run as batches of sequences, as many per submission as
//! the device's storage-binding limit allows.

use gpu_core::Gpu;

use crate::checkpoint::Checkpoint;
use crate::chunks::schedule;
use crate::config::{ChunkConfig, EncoderConfig};
use crate::error::{Error, Result};
use crate::names::EncoderNames;
use crate::tower::{InputKind, Sequence, Tower};

/// The ASR encoder with its chunk schedule.
pub struct AsrEncoder {
    tower: Tower,
    chunks: ChunkConfig,
}

impl AsrEncoder {
    pub fn load(
        gpu: &Gpu,
        checkpoint: &Checkpoint,
        names: &EncoderNames,
        config: &EncoderConfig,
        chunks: ChunkConfig,
    ) -> Result<Self> {
        Ok(Self::new(Tower::load(gpu, checkpoint, names, config)?, chunks))
    }

    pub fn new(tower: Tower, chunks: ChunkConfig) -> Self {
        Self { tower, chunks }
    }

    pub fn tower(&self) -> &Tower {
        &self.tower
    }

    /// `normalized` is `[frames, mel]` with `frames` a multiple of the subsampling factor and
    /// `valid_frames` real mel frames; returns `[frames / subsampling, d]`.
    pub fn encode(&self, normalized: &[f32], valid_frames: usize) -> Result<Vec<f32>> {
        let c = self.tower.config();
        let width = c.stacked_features();
        if !normalized.len().is_multiple_of(width) {
            return Err(Error::Input(format!(
                "ASR features: {} values are not whole groups of {} frames × {} mel bins",
                normalized.len(),
                c.subsampling,
                c.mel_bins
            )));
        }
        let frames = normalized.len() / width;
        // Spec §4.2: an encoder frame is a valid key when its first mel frame is.
        let valid: Vec<bool> = (0..frames).map(|t| t * c.subsampling < valid_frames).collect();
        let chunks = schedule(frames, &self.chunks);
        let per_batch = (self.tower.max_rows()
            / (self.chunks.length + self.chunks.left_context + self.chunks.right_context))
            .max(1);
        let mut hidden = vec![0.0f32; frames * c.hidden];
        for group in chunks.chunks(per_batch) {
            let batch: Vec<Sequence<'_>> = group
                .iter()
                .map(|k| Sequence {
                    rows: &normalized[k.context_start * width..k.context_end * width],
                    valid: &valid[k.context_start..k.context_end],
                })
                .collect();
            let outputs = self.tower.forward(InputKind::Features, &batch)?;
            for (k, out) in group.iter().zip(outputs) {
                let rows = &out[k.lookback() * c.hidden..(k.lookback() + k.end - k.start) * c.hidden];
                hidden[k.start * c.hidden..k.end * c.hidden].copy_from_slice(rows);
            }
        }
        Ok(hidden)
    }
}
