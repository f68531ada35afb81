//! Recordings diarized side by side, added at any time: an [`OfflineBatch`] on the diarizer's inputs (log-mel
//! [`Features`]) and outputs ([`Diarization`]), for a caller that takes work as it comes (a server's requests).

use super::{Diarization, Diarizer, check_features};
use crate::error::{Error, Result};
use crate::frontend::Features;
use crate::offline::{BatchLimits, Finished, OfflineBatch};

/// Recordings' features diarized side by side, any number added at any time ([`Diarizer::batch`]); each one's speaker
/// activity is what [`Diarizer::diarize_features`] gives it, within what [`crate::sortformer::Sortformer::diarize_many`] says.
pub struct DiarizerBatch<'d> {
    diarizer: &'d Diarizer,
    batch: OfflineBatch<'d, Features>,
}

impl Diarizer {
    /// An empty batch whose recordings' steps share submissions within `limits`.
    pub fn batch(&self, limits: &BatchLimits) -> DiarizerBatch<'_> {
        DiarizerBatch { diarizer: self, batch: OfflineBatch::new(self.sortformer(), limits) }
    }
}

impl DiarizerBatch<'_> {
    /// Adds a recording's features (as the front end makes them); returns its number, in the order added from 0.
    /// Features the diarizer cannot read are refused by the next [`DiarizerBatch::step`].
    pub fn add(&mut self, features: Features) -> usize {
        let c = self.diarizer.config();
        match check_features(&features, c.encoder.mel_bins, c.encoder.subsampling) {
            Ok(()) => {
                let valid = features.valid;
                self.batch.add(features, valid)
            }
            Err(error) => self.batch.refuse(error),
        }
    }

    /// Counts a recording refused before its features were made: the next step reports `error` under its number.
    pub fn refuse(&mut self, error: Error) -> usize {
        self.batch.refuse(error)
    }

    /// Whether every recording added has been reported.
    pub fn is_empty(&self) -> bool {
        self.batch.is_empty()
    }

    /// One submission for the next step of every running recording ([`OfflineBatch::step`]): the recordings done
    /// with it, by number. `progress(recording, chunks done, chunks)` follows each recording's step.
    pub async fn step(&mut self, progress: &mut dyn FnMut(usize, usize, usize)) -> Vec<(usize, Result<Diarization>)> {
        let finished = self.batch.step(progress).await;
        finished
            .into_iter()
            .map(|Finished { recording, result }| {
                let diarization = result.map(|(features, speaker_logits)| {
                    let speaker_probabilities = self.diarizer.probabilities(&speaker_logits);
                    Diarization { features, speaker_logits, speaker_probabilities }
                });
                (recording, diarization)
            })
            .collect()
    }
}
