//! The diarizer: the Sortformer with its front end, and everything it is asked — one recording
//! ([`Diarizer::diarize_audio`], [`Diarizer::diarize_features`]), recordings side by side in shared steps
//! ([`Diarizer::batch`], `offline.rs`), a live session ([`Diarizer::session`], `crate::streaming`).

use std::sync::Arc;

use crate::config::DiarizationConfig;
use crate::error::Result;
use crate::frontend::{Features, LogMel};
use crate::model::{Progress, check_features, check_samples};
use crate::sortformer::{Sortformer, encoder_rate_probabilities};
use crate::streaming::{DiarizerSession, StreamingMode};

mod offline;

pub use offline::{BatchLimits, DiarizerBatch};

/// What the diarizer computes for one recording.
#[derive(Clone, Debug)]
pub struct Diarization {
    /// The raw log-mel frames the Sortformer read (`[F8, mel]`).
    pub features: Features,
    /// `[F, speakers]` at 10 ms.
    pub speaker_logits: Vec<f32>,
    /// `[T, speakers]` at the encoder rate.
    pub speaker_probabilities: Vec<f32>,
}

/// The Sortformer with its front end. A handle: its clones share one loaded diarizer, so a live session
/// ([`Diarizer::session`]) holds one and borrows nothing. `Send + Sync`, shared between threads like [`AudioModel`](crate::AudioModel).
#[derive(Clone)]
pub struct Diarizer {
    parts: Arc<DiarizerParts>,
}

/// What a [`Diarizer`]'s clones share.
struct DiarizerParts {
    frontend: LogMel,
    sortformer: Sortformer,
}

impl Diarizer {
    /// The handle of a diarizer made of `frontend` and `sortformer`.
    pub(crate) fn new(frontend: LogMel, sortformer: Sortformer) -> Self {
        Self { parts: Arc::new(DiarizerParts { frontend, sortformer }) }
    }

    /// The diarizer's resolved config (encoder, head, chunk schedule, speaker cache).
    pub fn config(&self) -> &DiarizationConfig {
        self.parts.sortformer.config()
    }

    /// The log-mel front end, with the checkpoint's window and filter bank when it has them.
    pub fn frontend(&self) -> &LogMel {
        &self.parts.frontend
    }

    /// Whether `other` is a handle of the same loaded diarizer (whose sessions can share a batched step).
    pub(crate) fn is(&self, other: &Diarizer) -> bool {
        Arc::ptr_eq(&self.parts, &other.parts)
    }

    /// The GPU Sortformer (encoder, head and speaker-cache loop) behind [`Diarizer::diarize_features`].
    pub fn sortformer(&self) -> &Sortformer {
        &self.parts.sortformer
    }

    /// 16 kHz mono samples (at least [`MIN_SAMPLES`](nemotron_postprocess::time::MIN_SAMPLES), all finite) → speaker activity.
    pub async fn diarize_audio(&self, samples: &[f32], progress: Progress<'_>) -> Result<Diarization> {
        self.diarize_features(self.features(samples)?, progress).await
    }

    /// 16 kHz mono samples (at least [`MIN_SAMPLES`](nemotron_postprocess::time::MIN_SAMPLES), all finite) → the log-mel features the diarizer reads.
    pub fn features(&self, samples: &[f32]) -> Result<Features> {
        check_samples(samples)?;
        Ok(self.frontend().compute(samples)?)
    }

    /// Log-mel features (as the front end makes them) → speaker activity.
    pub async fn diarize_features(&self, features: Features, progress: Progress<'_>) -> Result<Diarization> {
        let (speaker_logits, speaker_probabilities) = self.speaker_activity(&features, progress).await?;
        Ok(Diarization { features, speaker_logits, speaker_probabilities })
    }

    /// Speaker logits at 10 ms and probabilities at the encoder rate of `features`.
    pub(crate) async fn speaker_activity(
        &self,
        features: &Features,
        progress: Progress<'_>,
    ) -> Result<(Vec<f32>, Vec<f32>)> {
        let c = self.config();
        check_features(features, c.encoder.mel_bins, c.encoder.subsampling)?;
        let speaker_logits = self.sortformer().diarize(&features.data, features.valid, progress).await?;
        let probabilities = self.probabilities(&speaker_logits);
        Ok((speaker_logits, probabilities))
    }

    /// Probabilities at the encoder rate of logits `[frames, speakers]` at 10 ms.
    pub(crate) fn probabilities(&self, speaker_logits: &[f32]) -> Vec<f32> {
        let c = self.config();
        let frame_logits = c.encoder.subsampling * c.speakers;
        let mut probabilities = Vec::with_capacity(speaker_logits.len() / c.encoder.subsampling);
        // A block at a time: the f64 probabilities of a long recording would outweigh the output.
        for block in speaker_logits.chunks(1024 * frame_logits) {
            let valid = vec![true; block.len() / frame_logits];
            let block_probabilities = encoder_rate_probabilities(block, &valid, c.encoder.subsampling, c.speakers);
            probabilities.extend(block_probabilities.into_iter().map(|p| p as f32));
        }
        probabilities
    }

    /// An empty batch whose recordings' steps share submissions within `limits`.
    pub fn batch(&self, limits: &BatchLimits) -> DiarizerBatch<'_> {
        DiarizerBatch::new(self, limits)
    }

    /// A streaming session on this diarizer (see [`DiarizerSession`]).
    pub fn session(&self, mode: StreamingMode) -> Result<DiarizerSession> {
        DiarizerSession::new(self.clone(), mode)
    }
}
