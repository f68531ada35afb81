//! Continuous batching of diarizations ([`DiarizeBatch`]): inputs added while the batch runs, as the server's
//! concurrent requests come.

use nemotron_towers::blocking::Block;
use nemotron_towers::{BatchLimits, Diarizer, DiarizerBatch};

use crate::error::EngineError;
use crate::input::Input;
use crate::tasks::Diarized;

/// Up to `recordings` inputs diarized side by side, the other limits their defaults: the CLI's `--batch-size`, the
/// server's `--offline-batch` and Python's `batch_size` (each defaults to [`BatchLimits::default`]'s). Refused
/// below 1.
pub fn batch_limits(recordings: i64) -> Result<BatchLimits, EngineError> {
    match usize::try_from(recordings) {
        Ok(max_recordings) if max_recordings >= 1 => Ok(BatchLimits { max_recordings, ..BatchLimits::default() }),
        _ => Err(EngineError::BatchSize { recordings }),
    }
}

/// Inputs diarized side by side, added at any time ([`Engine::diarize_batch`](crate::Engine::diarize_batch);
/// continuous batching, as the server's concurrent requests need): each [`DiarizeBatch::step`] runs the next step of
/// every running input as one GPU submission, and an input that ends leaves its place to the next one added. Each
/// result is what [`Engine::diarize`](crate::Engine::diarize) gives the input alone (within what
/// [`Engine::diarize_many`](crate::Engine::diarize_many) says).
pub struct DiarizeBatch<'e> {
    diarizer: &'e Diarizer,
    batch: DiarizerBatch<'e>,
}

impl<'e> DiarizeBatch<'e> {
    pub(crate) fn new(diarizer: &'e Diarizer, batch: DiarizerBatch<'e>) -> Self {
        Self { diarizer, batch }
    }

    /// Adds an input (its front end runs now); returns its number, in the order added from 0. An input the
    /// diarizer cannot take is refused by the next [`DiarizeBatch::step`].
    pub fn add(&mut self, input: Input) -> usize {
        let features = match input {
            Input::Samples(samples) => self.diarizer.features(&samples),
            Input::Features(features) => Ok(features),
        };
        match features {
            Ok(features) => self.batch.add(features),
            Err(error) => self.batch.refuse(error),
        }
    }

    /// Whether every input added has been reported by a step.
    pub fn is_empty(&self) -> bool {
        self.batch.is_empty()
    }

    /// One GPU submission for the next step of every running input (blocking until its results are read): the
    /// inputs done with it, by number, in no particular order. `progress(input, chunks done, chunks)` follows each
    /// input's step.
    pub fn step(
        &mut self,
        progress: &mut dyn FnMut(usize, usize, usize),
    ) -> Vec<(usize, Result<Diarized, EngineError>)> {
        let finished = self.batch.step(progress).block();
        let diarizer = self.diarizer;
        finished
            .into_iter()
            .map(|(i, result)| (i, result.map(|d| Diarized::offline(d, diarizer)).map_err(EngineError::from)))
            .collect()
    }
}
