//! The offline speaker-cache loop over whole recordings (docs/model.md §6), one or many at a time. Each recording's
//! steps depend on each other (the speaker cache and FIFO carry over), so a recording never runs two steps at
//! once; several recordings instead run their next steps side by side, one submission for all of them
//! (`Sortformer::steps`, the live sessions' steps too: each recording's cache and FIFO rows stay on the GPU, and a
//! step uploads its chunk's features with their context). [`DiarizerBatch`] takes recordings at any time (a server's
//! concurrent requests, a front end's list of files); [`Sortformer::diarize`] runs the same steps for one recording.

use std::collections::VecDeque;

use gpu_core::Timing;

use super::{Diarization, Diarizer};
use crate::chunks::{Chunk, MAX_CHUNKS_PER_BATCH, schedule};
use crate::config::DiarizationConfig;
use crate::error::{Error, Result};
use crate::frontend::Features;
use crate::model::{Progress, check_features, report};
use crate::sortformer::{CacheRows, Sortformer, StepInput, each_step};
use crate::speaker_cache::StepLayout;

/// The stage [`Sortformer::diarize`] reports.
const DIARIZATION: &str = "diarization";

/// How many recordings a [`DiarizerBatch`] runs side by side: at most `max_recordings` steps, and at most
/// `max_rows` encoder rows (every step counted at the schedule's largest), per submission.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BatchLimits {
    /// Most recordings whose steps share one submission.
    pub max_recordings: usize,
    /// Most encoder rows of one submission; `None`: as many as the device's storage bindings hold
    /// ([`Tower::max_rows`](crate::tower::Tower::max_rows)).
    pub max_rows: Option<usize>,
}

impl Default for BatchLimits {
    /// As many steps as the chunk batches of one recording hold ([`MAX_CHUNKS_PER_BATCH`]): the same bound on the
    /// tower's workspace, which grows with the rows of a submission.
    fn default() -> Self {
        Self { max_recordings: MAX_CHUNKS_PER_BATCH, max_rows: None }
    }
}

/// One recording's place in the loop: its features, the speaker cache and FIFO (their rows on the GPU), the logits
/// so far.
struct Recording<F> {
    features: F,
    valid_frames: usize,
    chunks: Vec<Chunk>,
    next: usize,
    cache: CacheRows,
    logits: Vec<f32>,
}

impl<F: AsRef<[f32]>> Recording<F> {
    /// Raw (un-normalised) log-mel `[frames, mel]` with `valid_frames` real frames (`frames` a multiple of the
    /// subsampling factor), its cache and FIFO rows leased on `sortformer`'s GPU.
    fn new(sortformer: &Sortformer, features: F, valid_frames: usize) -> Result<Self> {
        let c = sortformer.config();
        let (sub, width) = (c.encoder.subsampling, c.encoder.stacked_features());
        let values = features.as_ref().len();
        if !values.is_multiple_of(width) {
            return Err(Error::features(format!(
                "diarization features: {values} values are not whole groups of {sub} frames × {} mel bins",
                c.encoder.mel_bins
            )));
        }
        let frames = values / width;
        Ok(Self {
            features,
            valid_frames,
            chunks: schedule(frames, &c.chunks),
            next: 0,
            cache: sortformer.cache_rows(c.offline_step_rows(), c.cache)?,
            logits: Vec::with_capacity(frames * sub * c.speakers),
        })
    }

    fn done(&self) -> bool {
        self.next == self.chunks.len()
    }

    /// The next chunk's rows and how many of them, from the first, are keys: the cache and FIFO, then the frames of
    /// its context window that docs/model.md §4's mask keeps.
    fn layout(&self, c: &DiarizationConfig) -> (StepLayout, usize) {
        let chunk = self.chunks[self.next];
        let layout = self.cache.layout(chunk.lookback(), chunk.end - chunk.start);
        // Frame `t` is a key while `t · subsampling < valid_frames`.
        let keys = self.valid_frames.div_ceil(c.encoder.subsampling).clamp(chunk.context_start, chunk.context_end);
        (layout, layout.cache_rows + layout.fifo_rows + keys - chunk.context_start)
    }

    /// The next chunk's step: the stacked features of its context window after the cache and FIFO.
    fn step(&self, c: &DiarizationConfig) -> StepInput<'_> {
        let width = c.encoder.stacked_features();
        let chunk = self.chunks[self.next];
        let features = &self.features.as_ref()[chunk.context_start * width..chunk.context_end * width];
        let (layout, keys) = self.layout(c);
        self.cache.step(features, layout, keys, self.next + 1 == self.chunks.len())
    }

    /// Takes the step's logits (from its first row read): keeps its chunk's, and updates the cache and FIFO.
    fn complete(&mut self, c: &DiarizationConfig, logits: &[f32]) {
        let (layout, keys) = self.layout(c);
        let chunk = self.cache.complete(layout, logits, keys, (c.encoder.subsampling, c.speakers));
        self.logits.extend_from_slice(chunk);
        self.next += 1;
    }
}

impl Sortformer {
    /// The whole recording: raw (un-normalised) log-mel `[frames, mel]` with `valid_frames` real
    /// frames (`frames` a multiple of the subsampling factor) → logits `[frames, speakers]`. Its steps are those a
    /// [`DiarizerBatch`] runs, one submission each; `progress` hears of them as the stage `diarization` (chunks done,
    /// chunks), and may cancel the rest at each report ([`Error::Cancelled`]).
    pub async fn diarize(&self, features: &[f32], valid_frames: usize, progress: Progress<'_>) -> Result<Vec<f32>> {
        // A user while its steps run: the workspaces they grow are kept from one step to the next, and freed after
        // the last (if no live session or batch is left), or when a cancelled run returns early.
        let _user = Joined::new(self);
        let mut running = [(0, Recording::new(self, features, valid_frames))];
        if let Ok(recording) = &running[0].1 {
            report(progress, DIARIZATION, 0, recording.chunks.len())?;
        }
        while matches!(&running[0].1, Ok(recording) if !recording.done()) {
            self.run_steps(&mut running, &mut |_, _, _| {}).await;
            if let Ok(recording) = &running[0].1 {
                report(progress, DIARIZATION, recording.next, recording.chunks.len())?;
            }
        }
        let [(_, state)] = running;
        state.map(|recording| recording.logits)
    }

    /// Steps per submission under `limits`, every step counted at the schedule's largest.
    fn recordings_per_submission(&self, limits: &BatchLimits) -> usize {
        self.steps_per_submission(self.config().offline_step_rows(), limits.max_recordings, limits.max_rows)
    }

    /// The next step of each recording of `running` (its number and its state), as one submission; a failure of the
    /// submission is each one's ([`each_step`]).
    async fn run_steps<F: AsRef<[f32]>>(
        &self,
        running: &mut [(usize, Result<Recording<F>>)],
        progress: &mut dyn FnMut(usize, usize, usize),
    ) {
        let c = self.config();
        let inputs: Vec<StepInput<'_>> =
            running.iter().filter_map(|(_, state)| state.as_ref().ok()).map(|recording| recording.step(c)).collect();
        if inputs.is_empty() {
            return;
        }
        let outputs = each_step(self.steps(&inputs, Timing::Off).await, inputs.len());
        drop(inputs);
        let stepped = running.iter_mut().filter(|(_, state)| state.is_ok());
        for ((number, state), output) in stepped.zip(outputs) {
            match output {
                Ok(output) => {
                    if let Ok(recording) = state {
                        recording.complete(c, &output.logits);
                        progress(*number, recording.next, recording.chunks.len());
                    }
                }
                Err(error) => *state = Err(error),
            }
        }
    }
}

/// Recordings' features diarized side by side, added at any time (continuous batching, as the live scheduler's
/// rounds): each [`DiarizerBatch::step`] runs the next step of every running recording, at most `limits` of them, as
/// one submission (each step its own padded sequence, the padding masked), and a recording that ends leaves its place
/// to the next one waiting, in the order they were added.
///
/// Each recording's speaker activity is what [`Diarizer::diarize_features`] gives it alone: the same bits where no
/// kernel splits its work by the size of the batch, the f32 path on a device a step already fills (lavapipe:
/// `tests/diarize_many.rs`). Where a split follows the batch's rows (the attention's keys on a large GPU, the
/// tensor-core products' slices of k), the sums run in another order and the logits agree within float rounding, as
/// [`crate::streaming::push_many`]'s sessions do.
pub struct DiarizerBatch<'d> {
    diarizer: &'d Diarizer,
    per_submission: usize,
    added: usize,
    /// Checked, not yet started: a recording leases its cache and FIFO rows when it takes a place.
    waiting: VecDeque<(usize, Features)>,
    running: Vec<(usize, Result<Recording<Features>>)>,
    /// Refused before they could wait.
    refused: Vec<(usize, Error)>,
    /// While the batch holds recordings, it is one of its diarizer's users (it will step again).
    joined: Option<Joined<'d>>,
}

/// One user of a diarizer ([`Sortformer::join`]) for as long as it lives.
struct Joined<'s>(&'s Sortformer);

impl<'s> Joined<'s> {
    fn new(sortformer: &'s Sortformer) -> Self {
        sortformer.join();
        Self(sortformer)
    }
}

impl Drop for Joined<'_> {
    fn drop(&mut self) {
        self.0.leave();
    }
}

impl<'d> DiarizerBatch<'d> {
    /// An empty batch on `diarizer` ([`Diarizer::batch`]).
    pub(super) fn new(diarizer: &'d Diarizer, limits: &BatchLimits) -> Self {
        DiarizerBatch {
            diarizer,
            per_submission: diarizer.sortformer().recordings_per_submission(limits),
            added: 0,
            waiting: VecDeque::new(),
            running: Vec::new(),
            refused: Vec::new(),
            joined: None,
        }
    }
}

impl DiarizerBatch<'_> {
    /// Adds a recording's features (as the front end makes them); returns its number, in the order added from 0.
    /// Features the diarizer cannot read are refused by the next [`DiarizerBatch::step`].
    pub fn add(&mut self, features: Features) -> usize {
        let c = self.diarizer.config();
        if let Err(error) = check_features(&features, c.encoder.mel_bins, c.encoder.subsampling) {
            return self.refuse(error);
        }
        self.waiting.push_back((self.added, features));
        self.added += 1;
        self.follow_recordings();
        self.added - 1
    }

    /// Counts a recording that was refused before it could be added (its features could not be made, say): the next
    /// [`DiarizerBatch::step`] reports `error` under its number, which this returns.
    pub fn refuse(&mut self, error: Error) -> usize {
        self.refused.push((self.added, error));
        self.added += 1;
        self.follow_recordings();
        self.added - 1
    }

    /// Recordings added and not yet reported by a step.
    pub fn len(&self) -> usize {
        self.waiting.len() + self.running.len() + self.refused.len()
    }

    /// Whether every recording added has been reported.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Recordings whose steps share one submission: a caller that keeps [`DiarizerBatch::len`] at this keeps every
    /// place busy and none waiting.
    pub fn capacity(&self) -> usize {
        self.per_submission
    }

    /// The next step of each running recording (the first waiting ones take the free places) as one submission;
    /// returns the recordings done with it, by number, in no particular order: those whose last step it ran, those
    /// refused or failed. `progress(recording, chunks done, chunks)` follows each recording's step. A failure of the
    /// shared step is every recording's in it ([`Error::BatchedStep`], the step's error its source; alone, the error
    /// itself), and the others go on.
    pub async fn step(&mut self, progress: &mut dyn FnMut(usize, usize, usize)) -> Vec<(usize, Result<Diarization>)> {
        let mut finished: Vec<(usize, Result<Recording<Features>>)> =
            self.refused.drain(..).map(|(number, error)| (number, Err(error))).collect();
        let sortformer = self.diarizer.sortformer();
        while self.running.len() < self.per_submission
            && let Some((number, features)) = self.waiting.pop_front()
        {
            let valid = features.valid;
            match Recording::new(sortformer, features, valid) {
                Ok(recording) if !recording.done() => self.running.push((number, Ok(recording))),
                other => finished.push((number, other)),
            }
        }
        sortformer.run_steps(&mut self.running, progress).await;
        let (done, going): (Vec<_>, Vec<_>) =
            self.running.drain(..).partition(|(_, state)| !matches!(state, Ok(recording) if !recording.done()));
        self.running = going;
        finished.extend(done);
        self.follow_recordings();
        let diarizer = self.diarizer;
        finished
            .into_iter()
            .map(|(number, state)| {
                let diarization = state.map(|Recording { features, logits: speaker_logits, .. }| {
                    let speaker_probabilities = diarizer.probabilities(&speaker_logits);
                    Diarization { features, speaker_logits, speaker_probabilities }
                });
                (number, diarization)
            })
            .collect()
    }

    /// Joins the diarizer's users when the batch has recordings, leaves them when it has none: the workspaces its
    /// steps grew are kept from one step to the next, and freed once it is done (if no live session is left).
    fn follow_recordings(&mut self) {
        if self.is_empty() {
            self.joined = None;
        } else if self.joined.is_none() {
            self.joined = Some(Joined::new(self.diarizer.sortformer()));
        }
    }
}
