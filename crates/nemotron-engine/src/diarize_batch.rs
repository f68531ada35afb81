//! Continuous batching of diarizations: [`DiarizeBatch`] takes inputs while it runs (the server's concurrent
//! requests), and [`Engine::diarize_many`] feeds it a list of entries (the CLI's manifests and folders, Python's
//! `diarize_many`), read and put through the front end on other threads while the GPU runs.

use std::collections::HashMap;
use std::ops::ControlFlow;
use std::thread;

use nemotron_towers::blocking::Block;
use nemotron_towers::{BatchLimits, Diarizer, DiarizerBatch};

use crate::engine::Engine;
use crate::error::EngineError;
use crate::input::Input;
use crate::read_ahead::ReadAhead;
use crate::tasks::Diarized;

/// Entries [`Engine::diarize_many`] reads ahead of its batch: read and not yet added, each holding its samples and
/// features.
const READ_AHEAD: usize = 4;

/// Inputs diarized side by side, added at any time ([`Engine::diarize_batch`]; continuous batching): each
/// [`DiarizeBatch::step`] runs the next step of every running input as one GPU submission, and an input that ends
/// leaves its place to the next one added. Each result is what [`Engine::diarize`] gives the input alone (bit for bit
/// where no kernel splits its work by the batch's size, within float rounding where one does: see
/// `nemotron_towers`' [`DiarizerBatch`]).
pub struct DiarizeBatch<'e> {
    diarizer: &'e Diarizer,
    batch: DiarizerBatch<'e>,
}

impl Engine {
    /// An empty [`DiarizeBatch`]: inputs diarized side by side as they come, the steps of up to `limits` of them in
    /// one GPU submission.
    pub fn diarize_batch(&self, limits: &BatchLimits) -> DiarizeBatch<'_> {
        let diarizer = self.diarizer();
        DiarizeBatch { diarizer, batch: diarizer.batch(limits) }
    }

    /// `input` as the diarizer reads it: samples through its front end (features stay as they are), so that the
    /// front end can run elsewhere than a [`DiarizeBatch`]'s steps.
    pub fn diarizer_features(&self, input: Input) -> Result<Input, EngineError> {
        match input {
            Input::Samples(samples) => Ok(Input::Features(self.diarizer().features(&samples)?)),
            features => Ok(features),
        }
    }

    /// [`Engine::diarize`] of many entries through one [`DiarizeBatch`]: the steps of up to `limits` recordings share
    /// each GPU submission, and a recording that ends gives its place to the next entry at once, so that a long one
    /// holds no short one back. `read` turns an entry into its input (decoding a file, say) and what the caller keeps
    /// with it; it and the front end run on a few threads, a few entries ahead of the batch, while the GPU works.
    ///
    /// `done(position, result)` hears of each entry (its position among `entries`) as it is done, in the order they
    /// finish: its diarization and what `read` kept, or why it failed (`read`'s error, or the engine's). A refused or
    /// failed entry does not stop the others; [`ControlFlow::Break`] from `done` stops the run (entries still running
    /// are dropped). Recordings join the batch in the entries' order, as places free, so the recordings a step holds
    /// depend on the entries alone, not on how fast they are read: a run gives the same bits every time.
    pub fn diarize_many<T, K, E>(
        &self,
        entries: impl IntoIterator<Item = T, IntoIter: Send>,
        read: impl Fn(T) -> Result<(Input, K), E> + Sync,
        limits: &BatchLimits,
        done: &mut dyn FnMut(usize, Result<(Diarized, K), E>) -> ControlFlow<()>,
    ) where
        T: Send,
        K: Send,
        E: From<EngineError> + Send,
    {
        let prepare = |entry: T| -> Result<(Input, K), E> {
            let (input, kept) = read(entry)?;
            Ok((self.diarizer_features(input)?, kept))
        };
        let readers = thread::available_parallelism().map_or(1, |n| n.get()).min(READ_AHEAD);
        thread::scope(|scope| {
            let mut ready = ReadAhead::start(scope, entries.into_iter(), &prepare, readers, READ_AHEAD).enumerate();
            let mut batch = self.diarize_batch(limits);
            // Each recording in the batch, by its number there: its entry's position and what `read` kept.
            let mut running: HashMap<usize, (usize, K)> = HashMap::new();
            let mut more = true;
            loop {
                while more && batch.len() < batch.capacity() {
                    match ready.next() {
                        Some((position, Ok((input, kept)))) => {
                            running.insert(batch.add(input), (position, kept));
                        }
                        Some((position, Err(error))) => {
                            if done(position, Err(error)).is_break() {
                                return;
                            }
                        }
                        None => more = false,
                    }
                }
                if batch.is_empty() {
                    return;
                }
                for (number, result) in batch.step(&mut |_, _, _| {}) {
                    // Every number a step reports is one `add` gave, reported once.
                    let Some((position, kept)) = running.remove(&number) else { continue };
                    let result = result.map(|diarized| (diarized, kept)).map_err(E::from);
                    if done(position, result).is_break() {
                        return;
                    }
                }
            }
        });
    }
}

impl DiarizeBatch<'_> {
    /// Adds an input (its front end runs now, unless it is features already: [`Engine::diarizer_features`]); returns
    /// its number, in the order added from 0. An input the diarizer cannot take is refused by the next
    /// [`DiarizeBatch::step`].
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

    /// Inputs added and not yet reported by a step.
    pub fn len(&self) -> usize {
        self.batch.len()
    }

    /// Whether every input added has been reported by a step.
    pub fn is_empty(&self) -> bool {
        self.batch.is_empty()
    }

    /// Inputs whose steps share one submission: more added wait for a place.
    pub fn capacity(&self) -> usize {
        self.batch.capacity()
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
