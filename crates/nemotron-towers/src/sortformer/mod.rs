//! The Sortformer diarizer (docs/model.md §6): the encoder and the head over steps `[speaker cache ; FIFO ; chunk
//! with context]`, one submission for the steps of one or several recordings or streams (`step.rs`). The offline
//! loop over whole recordings is `crate::diarizer`'s, the live one `crate::streaming`'s; both keep their cache and
//! FIFO rows on the GPU (`resident.rs`), and the cache update is decided on the host.

use std::ops::Range;
use std::sync::{Arc, MutexGuard};

use async_lock::Mutex;

use audio_kernels::MatmulOptions;
use audio_kernels::gemm::gemm_kernels;
use audio_kernels::{Activation, ConvBatch, Epilogue, GemmShape, Weight, conv_im2col, gemm};
use gpu_core::{Gpu, GpuBuffer, KernelVariant, Recorder, Reused, Timing};

use crate::checkpoint::Checkpoint;
use crate::config::{DiarizationConfig, SpeakerCacheConfig};
use crate::error::{Error, Result};
use crate::names::ModelNames;
use crate::streaming::StreamingMode;
use crate::tower::{InputKind, Sequence, Submission, Tower, no_prologue};
use crate::weights::{self, Expectations, GpuStore, GpuWeights, HeadWeights, Linear};
use resident::{ResidentRows, StepRows};
pub use step::encoder_rate_probabilities;
pub(crate) use step::{CacheRows, StepInput, StepOutput, each_step, mean_sigmoid};

mod resident;
mod step;

fn epilogue(l: &Linear<Weight, GpuBuffer>, activation: Activation) -> Epilogue<'_> {
    Epilogue { bias: l.bias.as_ref(), activation, accumulate: false }
}

/// Buffers of the head for `capacity` encoder rows.
struct HeadWorkspace {
    capacity: usize,
    projected: GpuBuffer,
    columns: GpuBuffer,
    upsampled: GpuBuffer,
    hidden: GpuBuffer,
    logits: GpuBuffer,
    /// Rows of each sequence of a batch (at most one sequence per row).
    lengths: GpuBuffer,
}

impl HeadWorkspace {
    fn new(gpu: &Gpu, c: &DiarizationConfig, rows: usize) -> Result<Self> {
        let (h, sub) = (c.head_hidden, c.encoder.subsampling);
        Ok(Self {
            capacity: rows,
            projected: gpu.zeros("head projected", rows * h)?,
            columns: gpu.zeros("head conv columns", rows * 3 * h)?,
            upsampled: gpu.zeros("head upsampled", rows * sub * h)?,
            hidden: gpu.zeros("head hidden", rows * sub * h)?,
            logits: gpu.zeros("speaker logits", rows * sub * c.speakers)?,
            lengths: gpu.zeros("head sequence lengths", rows)?,
        })
    }
}

/// The diarization encoder, its head and its speaker-cache schedule.
pub struct Sortformer {
    tower: Tower,
    head: HeadWeights<Weight, GpuBuffer>,
    config: DiarizationConfig,
    workspace: Mutex<Reused<HeadWorkspace>>,
    /// The speaker cache and FIFO rows of the recordings and live sessions.
    resident: Arc<ResidentRows>,
    /// [`crate::ModelOptions::lose_device_at_step_of`].
    lose_device_at_step_of: Option<usize>,
    /// Live sessions and offline batches with recordings ([`Sortformer::join`]): while there is one, the workspaces
    /// sized by the batches of its steps are kept between steps.
    users: std::sync::Mutex<usize>,
}

impl Sortformer {
    /// Checks every tensor of the encoder and the head of any checkpoint that has them (all problems at once), then
    /// builds the diarizer as a model's load does: for a checkpoint of the diarizer alone, such as a golden file.
    pub async fn load(
        gpu: &Gpu,
        checkpoint: &Checkpoint,
        config: &DiarizationConfig,
        matmul: &MatmulOptions,
    ) -> Result<Self> {
        let names = ModelNames::detect(checkpoint)?;
        let mut expected = Expectations::default();
        weights::encoder(&mut expected, &names.diarization, &config.encoder)?;
        weights::head(&mut expected, &names.head, config)?;
        Self::build(&mut GpuStore::checked(gpu, checkpoint, matmul, &expected.0)?, &names, config).await
    }

    /// The encoder and the head from a checked (or random) store.
    pub(crate) async fn build(
        store: &mut impl GpuWeights,
        names: &ModelNames,
        config: &DiarizationConfig,
    ) -> Result<Self> {
        let tower = Tower::build(store, &names.diarization, &config.encoder)?;
        let head = weights::head(store, &names.head, config)?;
        // Each page of rows starts with the silence embedding, which the compression gathers like any row.
        let silence = tower.gpu().read_f32_range(&head.silence, 0, config.encoder.hidden).await?;
        let resident = Arc::new(ResidentRows::new(tower.gpu(), silence));
        let workspace = Mutex::new(Reused::default());
        let users = Default::default();
        Ok(Self { tower, head, config: config.clone(), workspace, resident, lose_device_at_step_of: None, users })
    }

    /// This diarizer, losing its device at its first step of at least `steps` sequences (a test's setting).
    pub(crate) fn losing_device_at_step_of(self, steps: Option<usize>) -> Self {
        Self { lose_device_at_step_of: steps, ..self }
    }

    /// The diarizer's resolved config (encoder, head, chunk schedule, speaker cache).
    pub fn config(&self) -> &DiarizationConfig {
        &self.config
    }

    /// The Sortformer encoder on the GPU, without the head.
    pub fn tower(&self) -> &Tower {
        &self.tower
    }

    /// Every pipeline this diarizer's calls can record: offline steps of its schedule and the live sessions' steps of
    /// every named mode ([`StreamingMode::NAMED`], what the front ends take), the encoder of any batch of them
    /// ([`Tower::kernels`]), the head, the live rows' gathers. A custom mode's longer steps may need more, made at
    /// their first use.
    pub(crate) fn kernels(&self) -> Vec<KernelVariant> {
        let c = &self.config;
        let offline = c.offline_step_rows();
        let live = StreamingMode::NAMED.iter().map(|mode| mode.step_rows(&c.streaming_cache)).max().unwrap_or(0);
        let mut kernels = self.tower.kernels(offline.max(live));
        let (w, gpu) = (&self.head, self.tower.gpu());
        for (linear, activation) in [
            (&w.proj, Activation::None),
            (&w.upsample, Activation::Relu),
            (&w.dense, Activation::Relu),
            (&w.out, Activation::None),
        ] {
            kernels.extend(gemm_kernels(gpu, &linear.weight, &epilogue(linear, activation), false));
        }
        kernels.extend(audio_kernels::conv_im2col::variants());
        kernels.extend(audio_kernels::gather_rows::variants());
        kernels
    }

    /// Steps of `step_rows` encoder rows each that one submission takes: at most `max_steps`, at most `max_rows`
    /// rows and what the device's storage bindings hold ([`Tower::max_rows`]), and at least one.
    pub(crate) fn steps_per_submission(&self, step_rows: usize, max_steps: usize, max_rows: Option<usize>) -> usize {
        let rows = max_rows.unwrap_or(usize::MAX).min(self.tower.max_rows());
        (rows / step_rows.max(1)).min(max_steps).max(1)
    }

    /// One step: embedded rows `[n, d]` (with their key mask) through the encoder and the head;
    /// returns logits `[n·subsampling, speakers]`.
    pub async fn logits(&self, rows: &[f32], valid: &[bool]) -> Result<Vec<f32>> {
        let every_row = 0..valid.len();
        let all = std::slice::from_ref(&every_row);
        let batch = [Sequence { rows, valid }];
        let steps = self.submit(InputKind::Embeddings, &batch, all, (no_prologue, no_prologue), Timing::Off).await;
        // A lone step: unless a session or a batch is live, none follows that would reuse the workspaces.
        self.release_if_idle();
        Ok(steps?.pop().ok_or_else(|| Error::Internal("a step's output is missing".into()))?.logits)
    }

    /// Steps of recordings or live sessions, one each, as one submission and one readback (each sequence padded to
    /// the longest; padding rows are no keys and zeros to the head's conv, so each step's output is its own). The rows
    /// of each step's `[speaker cache ; FIFO]` are gathered on the GPU from its slot, its features projected after
    /// them in the same submission, and its rows up to the chunk's end written back to the slot's other half for the
    /// next step. Returns per step the logits of its rows `logits` (`[rows·subsampling, speakers]`).
    pub(crate) async fn steps(&self, steps: &[StepInput<'_>], timing: Timing) -> Result<Vec<StepOutput>> {
        let width = self.config.encoder.stacked_features();
        // Rows the values make; a step whose values are no whole rows is refused by the tower's upload.
        let rows: Vec<usize> = steps.iter().map(|s| s.rows.sources.len() + s.features.len() / width).collect();
        let seq_len = rows.iter().copied().max().unwrap_or(0);
        let valid: Vec<Vec<bool>> =
            steps.iter().zip(&rows).map(|(s, &n)| (0..n).map(|r| r < s.valid_rows).collect()).collect();
        let batch: Vec<Sequence<'_>> =
            steps.iter().zip(&valid).map(|(s, v)| Sequence { rows: s.features, valid: v }).collect();
        let gathered: Vec<usize> = steps.iter().map(|s| s.rows.sources.len()).collect();
        let logits: Vec<Range<usize>> = steps.iter().map(|s| s.logits.clone()).collect();
        let slots: Vec<StepRows<'_>> = steps.iter().map(|s| s.rows.clone()).collect();
        let copies = self.resident.copies(&slots, seq_len).await?;
        let total = steps.len() * seq_len;
        let kind = InputKind::GatheredThenFeatures { gathered: &gathered };
        let prologue = |rec: &mut Recorder<'_>, x: &GpuBuffer| copies.record_into(rec, x, total);
        let epilogue = |rec: &mut Recorder<'_>, x: &GpuBuffer| copies.record_back(rec, x, total);
        self.submit(kind, &batch, &logits, (prologue, epilogue), timing).await
    }

    /// An empty speaker cache and FIFO of `config`'s sizes for a recording or a live session, its rows in a slot on
    /// the GPU for steps of up to `step_rows` rows.
    pub(crate) fn cache_rows(&self, step_rows: usize, config: SpeakerCacheConfig) -> Result<CacheRows> {
        Ok(CacheRows::new(self.resident.lease(step_rows)?, config, self.config.speakers))
    }

    /// Counts a live session, an offline batch with recordings or a lone recording, which will step again: the
    /// workspaces its steps grew stay until the last such user has gone ([`Sortformer::leave`]).
    pub(crate) fn join(&self) {
        *self.users() += 1;
    }

    /// A user counted by [`Sortformer::join`] has gone: after the last one, the workspaces sized by the batches of
    /// their steps are freed (what a step of 500 sessions grew is not kept for the next session alone; the
    /// workspaces also shrink while users remain, after a run of much smaller steps: `gpu_core::Reused`).
    pub(crate) fn leave(&self) {
        let mut users = self.users();
        *users = users.saturating_sub(1);
        if *users == 0 {
            self.release_workspaces();
        }
    }

    /// Frees the workspaces when no user is left.
    fn release_if_idle(&self) {
        if *self.users() == 0 {
            self.release_workspaces();
        }
    }

    /// The tower's workspace (with the context's scratch), the head's, and the row pairs of the steps' copies.
    /// Called under the users' lock: a lone step that ends as the last user leaves either finds no user and frees them
    /// itself, or has unlocked them before the one leaving tries.
    fn release_workspaces(&self) {
        self.tower.release_workspace();
        if let Some(mut head) = self.workspace.try_lock() {
            head.release();
        }
        self.resident.release_pairs();
    }

    fn users(&self) -> MutexGuard<'_, usize> {
        // A count changed in one statement is consistent whatever panicked while it was held.
        self.users.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The encoder and head over a batch of sequences in one submission; reads back, in one round trip, the logits of
    /// each sequence's rows `logits[i]`, with the GPU time of the submission when `timing` asks. `around` records
    /// work into the same submission on the tower's `[rows, d]` input rows: before the tower (after the upload) and
    /// after the head.
    async fn submit(
        &self,
        kind: InputKind<'_>,
        batch: &[Sequence<'_>],
        logits: &[Range<usize>],
        around: (
            impl FnOnce(&mut Recorder<'_>, &GpuBuffer) -> Result<()>,
            impl FnOnce(&mut Recorder<'_>, &GpuBuffer) -> Result<()>,
        ),
        timing: Timing,
    ) -> Result<Vec<StepOutput>> {
        let c = &self.config;
        let (sub, speakers) = (c.encoder.subsampling, c.speakers);
        let seq_len = batch.iter().map(|s| s.valid.len()).max().unwrap_or(0);
        let lengths: Vec<u32> = batch.iter().map(|s| s.valid.len() as u32).collect();
        for (i, (s, rows)) in batch.iter().zip(logits).enumerate() {
            if rows.start > rows.end || rows.end > s.valid.len() {
                let rows = format!("{rows:?}");
                return Err(Error::Internal(format!("step {i}: logits of rows {rows} asked of {}", s.valid.len())));
            }
        }
        if self.lose_device_at_step_of.is_some_and(|steps| batch.len() >= steps) {
            // Through wgpu's own loss: its callback and the fault log report it as they report a driver reset.
            self.tower.gpu().device().destroy();
        }
        let (prologue, epilogue) = around;
        self.tower
            .run(kind, batch, Submission::Whole, prologue, async |mut rec, encoded, projected, n| {
                let mut guard = self.workspace.lock().await;
                let work = guard.get(
                    n.next_multiple_of(64),
                    |w| w.capacity,
                    |rows| HeadWorkspace::new(self.tower.gpu(), c, rows),
                )?;
                self.tower.gpu().write_u32(&work.lengths, 0, &lengths)?;
                let conv = ConvBatch { sequences: batch.len(), seq_len, lengths: &work.lengths };
                self.record_head(&mut rec, encoded, work, n, conv)?;
                epilogue(&mut rec, projected)?;
                let gpu_ms = match timing {
                    Timing::Off => {
                        rec.submit()?;
                        None
                    }
                    // Empty when the adapter has no timestamp queries.
                    timing => Some(rec.with_timing(timing).submit_profiled().await?)
                        .filter(|profile| !profile.entries.is_empty())
                        .map(|profile| profile.total_ns() / 1e6),
                };
                let ranges: Vec<(&GpuBuffer, usize, usize)> = logits
                    .iter()
                    .enumerate()
                    .map(|(i, rows)| {
                        (&work.logits, (i * seq_len + rows.start) * sub * speakers, rows.len() * sub * speakers)
                    })
                    .collect();
                let read = self.tower.gpu().read_f32_ranges(&ranges).await?;
                Ok(read.into_iter().map(|logits| StepOutput { logits, gpu_ms }).collect())
            })
            .await
    }

    fn record_head(
        &self,
        rec: &mut Recorder<'_>,
        encoded: &GpuBuffer,
        work: &HeadWorkspace,
        n: usize,
        conv: ConvBatch<'_>,
    ) -> Result<()> {
        let c = &self.config;
        let (d, h, sub) = (c.encoder.hidden, c.head_hidden, c.encoder.subsampling);
        let w = &self.head;
        let shape = GemmShape { n, m: h, k: d };
        gemm(rec, encoded, &w.proj.weight, &work.projected, shape, &epilogue(&w.proj, Activation::None))?;
        conv_im2col(rec, &work.projected, &work.columns, conv, h)?;
        // The classifier applies ReLU to the upsampled frames first: fused into the conv GEMM.
        let shape = GemmShape { n, m: sub * h, k: 3 * h };
        gemm(rec, &work.columns, &w.upsample.weight, &work.upsampled, shape, &epilogue(&w.upsample, Activation::Relu))?;
        // Each frame's `sub·h` channels are `sub` consecutive sub-frames of `h`: no copy needed.
        let shape = GemmShape { n: n * sub, m: h, k: h };
        gemm(rec, &work.upsampled, &w.dense.weight, &work.hidden, shape, &epilogue(&w.dense, Activation::Relu))?;
        let shape = GemmShape { n: n * sub, m: c.speakers, k: h };
        gemm(rec, &work.hidden, &w.out.weight, &work.logits, shape, &epilogue(&w.out, Activation::None))?;
        Ok(())
    }
}
