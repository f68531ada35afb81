//! The offline speaker-cache loop over whole recordings (docs/model.md §6), one or many at a time. Each recording's
//! steps depend on each other (the speaker cache and FIFO carry over), so a recording never runs two steps at
//! once; several recordings instead run their next steps side by side, one submission for all of them, as the live
//! sessions of `streaming::push_many` do. [`DiarizerBatch`] takes recordings at any time (a server's concurrent
//! requests, a front end's list of files); [`Sortformer::diarize`] runs the same steps for one recording.

use std::collections::VecDeque;

use gpu_core::Timing;

use super::{Diarization, Diarizer};
use crate::chunks::{Chunk, MAX_CHUNKS_PER_BATCH, schedule};
use crate::config::DiarizationConfig;
use crate::error::{Error, Result};
use crate::frontend::Features;
use crate::model::{Progress, check_features, report};
use crate::sortformer::{Sortformer, each_step, encoder_rate_probabilities};
use crate::speaker_cache::{self, SpeakerCache, StepLayout};
use crate::tower::{InputKind, Sequence, Tower, no_prologue};

/// The stage [`Sortformer::diarize`] reports.
const DIARIZATION: &str = "diarization";

/// How many recordings a [`DiarizerBatch`] runs side by side: at most `max_recordings` steps, and at most
/// `max_rows` encoder rows (every step counted at the schedule's largest), per submission.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BatchLimits {
    /// Most recordings whose steps share one submission.
    pub max_recordings: usize,
    /// Most encoder rows of one submission; `None`: as many as the device's storage bindings hold
    /// ([`Tower::max_rows`]).
    pub max_rows: Option<usize>,
}

impl Default for BatchLimits {
    /// As many steps as the chunk batches of one recording hold ([`MAX_CHUNKS_PER_BATCH`]): the same bound on the
    /// tower's workspace, which grows with the rows of a submission.
    fn default() -> Self {
        Self { max_recordings: MAX_CHUNKS_PER_BATCH, max_rows: None }
    }
}

/// One recording's place in the loop: its features, the embeddings of the chunks around the next one, the
/// speaker cache and FIFO, and the logits so far.
struct Recording<F> {
    features: F,
    valid_frames: usize,
    chunks: Vec<Chunk>,
    next: usize,
    cache: SpeakerCache,
    /// The `[speaker cache ; FIFO]` rows `[cache_rows + fifo_rows, d]` of the next step.
    cached: Vec<f32>,
    /// Projected rows from encoder frame `first` on.
    embedded: Vec<f32>,
    first: usize,
    logits: Vec<f32>,
}

/// A step a recording has prepared: `[speaker cache ; FIFO ; chunk with context]` rows and their key mask.
struct Step {
    rows: Vec<f32>,
    valid: Vec<bool>,
    layout: StepLayout,
}

impl<F: AsRef<[f32]>> Recording<F> {
    /// Raw (un-normalised) log-mel `[frames, mel]` with `valid_frames` real frames (`frames` a multiple of the
    /// subsampling factor).
    fn new(c: &DiarizationConfig, features: F, valid_frames: usize) -> Result<Self> {
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
            cache: SpeakerCache::new(c.cache, c.speakers),
            cached: Vec::new(),
            embedded: Vec::new(),
            first: 0,
            logits: Vec::with_capacity(frames * sub * c.speakers),
        })
    }

    fn done(&self) -> bool {
        self.next == self.chunks.len()
    }

    /// The next chunk's step, embedding the frames it reads first where they are not yet.
    async fn prepare(&mut self, c: &DiarizationConfig, tower: &Tower) -> Result<Step> {
        let (d, width, sub) = (c.encoder.hidden, c.encoder.stacked_features(), c.encoder.subsampling);
        let chunk = self.chunks[self.next];
        let features = self.features.as_ref();
        let frames = features.len() / width;
        // The input projection runs over blocks of a fixed number of frames, kept in a window that slides along the
        // chunks: the embeddings of the whole recording would be as large as its features, and blocks of chunks
        // (with their overlapping contexts) would vary in size and grow the tower's workspace with the length of the
        // recording.
        if self.first + self.embedded.len() / d < chunk.context_end {
            // No later chunk looks back past this one's context.
            self.embedded.drain(..(chunk.context_start - self.first) * d);
            self.first = chunk.context_start;
            let from = self.first + self.embedded.len() / d;
            let to = (from + MAX_CHUNKS_PER_BATCH * c.chunks.length).max(chunk.context_end).min(frames);
            self.embedded.extend(tower.embed(&features[from * width..to * width]).await?);
        }
        let valid: Vec<bool> = (chunk.context_start..chunk.context_end).map(|t| t * sub < self.valid_frames).collect();
        let context = &self.embedded[(chunk.context_start - self.first) * d..(chunk.context_end - self.first) * d];
        let rows = [self.cached.as_slice(), context].concat();
        let valid = [vec![true; self.cached.len() / d], valid].concat();
        let layout = StepLayout {
            cache_rows: self.cache.cache_rows(),
            fifo_rows: self.cache.fifo_rows(),
            lookback: chunk.lookback(),
            chunk_rows: chunk.end - chunk.start,
        };
        Ok(Step { rows, valid, layout })
    }

    /// Takes a step's logits `[rows·subsampling, speakers]`: keeps its chunk's, and updates the cache and FIFO.
    fn complete(&mut self, c: &DiarizationConfig, step: Step, logits: &[f32], silence: &[f32]) {
        let (sub, speakers) = (c.encoder.subsampling, c.speakers);
        let Step { rows, valid, layout } = step;
        let first_logit = layout.chunk_start() * sub * speakers;
        self.logits.extend_from_slice(&logits[first_logit..first_logit + layout.chunk_rows * sub * speakers]);
        let probs = encoder_rate_probabilities(logits, &valid, sub, speakers);
        let sources = self.cache.update(layout, &probs);
        self.cached = speaker_cache::gather(&sources, &rows, silence);
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
        let mut running = [(0, Recording::new(self.config(), features, valid_frames))];
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
        let (cache, chunks) = (&self.config().cache, &self.config().chunks);
        let step_rows =
            cache.cache_length + cache.fifo_length + chunks.left_context + chunks.length + chunks.right_context;
        self.steps_per_submission(step_rows, limits.max_recordings, limits.max_rows)
    }

    /// The next step of each recording of `running` (its number and its state), as one submission; a failure of the
    /// submission is each one's ([`each_step`]).
    async fn run_steps<F: AsRef<[f32]>>(
        &self,
        running: &mut [(usize, Result<Recording<F>>)],
        progress: &mut dyn FnMut(usize, usize, usize),
    ) {
        let c = self.config();
        let mut steps: Vec<(usize, Step)> = Vec::with_capacity(running.len());
        for (i, (_, state)) in running.iter_mut().enumerate() {
            let Ok(recording) = state else { continue };
            match recording.prepare(c, self.tower()).await {
                Ok(step) => steps.push((i, step)),
                Err(error) => *state = Err(error),
            }
        }
        if steps.is_empty() {
            return;
        }
        let batch: Vec<Sequence<'_>> = steps.iter().map(|(_, s)| Sequence { rows: &s.rows, valid: &s.valid }).collect();
        let all: Vec<_> = batch.iter().map(|s| 0..s.valid.len()).collect();
        let outputs = self.steps(InputKind::Embeddings, &batch, &all, (no_prologue, no_prologue), Timing::Off).await;
        drop(batch);
        let count = steps.len();
        for ((i, step), output) in steps.into_iter().zip(each_step(outputs, count)) {
            let (number, state) = &mut running[i];
            match output {
                Ok(output) => {
                    if let Ok(recording) = state {
                        recording.complete(c, step, &output.logits, self.silence());
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
    waiting: VecDeque<(usize, Result<Recording<Features>>)>,
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
        let valid = features.valid;
        self.waiting.push_back((self.added, Recording::new(c, features, valid)));
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
        while self.running.len() < self.per_submission
            && let Some(entry) = self.waiting.pop_front()
        {
            match entry {
                (number, Ok(recording)) if !recording.done() => self.running.push((number, Ok(recording))),
                other => finished.push(other),
            }
        }
        self.diarizer.sortformer().run_steps(&mut self.running, progress).await;
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
