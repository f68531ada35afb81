//! A transformer encoder tower on the GPU (the ASR tower and the Sortformer encoder share it).
//! Weights are uploaded once; activations live in a workspace that is reused across calls, grows when a call
//! needs more rows and shrinks after a run of much smaller calls (`gpu_core::Reused`); a call is one command
//! submission, whatever the batch.

use async_lock::Mutex;

use audio_kernels::gemm::{
    auto_slices, gemm_kernels, gemm_partials, gemm_partials_kernels, gemm_partials_scaled, wave_slices,
};
use audio_kernels::{
    Activation, AttentionKernels, AttentionRange, AttentionShape, Epilogue, GemmShape, QkNorm, QkPrologue, Residual,
    RopeTable, Weight, gemm, gemm_scaled, layer_norm, residual_layer_norm, rotary_attention, rotary_attention_kernels,
    rotary_attention_on_tensor_cores,
};
use audio_kernels::{MatmulOptions, Precision};
use gpu_core::{Gpu, GpuBuffer, GpuError, KernelVariant, Profile, Recorder, Reused, Timing, reuse_or_make};

use crate::checkpoint::Checkpoint;
use crate::config::EncoderConfig;
pub use crate::config::TowerKind;
use crate::error::{Error, Result};
use crate::names::{EncoderNames, ModelNames};
use crate::weights::{self, EncoderWeights, Expectations, GpuStore, GpuWeights, Linear, Norm};

mod record;

/// GPU-resident encoder weights.
pub(crate) type GpuEncoder = EncoderWeights<Weight, GpuBuffer>;

/// What the rows of a call are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InputKind<'a> {
    /// Stacked log-mel rows `[n, subsampling·mel]`, projected by the tower's input projection.
    Features,
    /// Already projected rows `[n, d]` (a lone Sortformer step of given rows, `Sortformer::logits`).
    Embeddings,
    /// Diarization steps, one per sequence (of one recording or live session each): sequence `i` starts with
    /// `gathered[i]` projected rows (speaker cache and FIFO) already on the GPU, which the caller's prologue copies
    /// into the tower's rows in the same submission (the cache and FIFO rows stay on the GPU between steps); its
    /// `rows` hold only the step's stacked log-mel rows `[n_i − gathered[i], subsampling·mel]` (a chunk with its
    /// context or look-ahead), which the same submission projects in place after them (the rows of all sequences in
    /// one product, each row's projection the same bits whatever the product's rows). Only this crate's diarization
    /// steps have rows on the GPU to give: [`Tower::forward`], [`Tower::forward_into`] and [`Tower::timed`] refuse it.
    GatheredThenFeatures {
        /// Per sequence, its rows at the start that the prologue writes.
        gathered: &'a [usize],
    },
}

/// What [`Tower::run`] records before the tower when nothing is gathered.
pub(crate) fn no_prologue(_: &mut Recorder<'_>, _: &GpuBuffer) -> Result<()> {
    Ok(())
}

/// One sequence of a batched call: its rows (row-major) and which rows are valid keys.
#[derive(Clone, Copy, Debug)]
pub struct Sequence<'a> {
    /// Row-major `[n, subsampling·mel]` features or `[n, d]` embeddings, as the call's [`InputKind`] says.
    pub rows: &'a [f32],
    /// One entry per row; padding rows are `false` (still computed, never attended to).
    pub valid: &'a [bool],
}

/// Activation buffers for `capacity` rows.
pub(crate) struct Workspace {
    capacity: usize,
    pub(crate) input: GpuBuffer,
    pub(crate) x: GpuBuffer,
    pub(crate) h: GpuBuffer,
    /// Normalised activations; holds the tower output after [`Tower::record`].
    pub(crate) a: GpuBuffer,
    /// The tensor-core row scales of `a` (`[rows]` pairs), written by the LayerNorms that write `a`.
    a_scales: GpuBuffer,
    pub(crate) qkv: GpuBuffer,
    pub(crate) attended: GpuBuffer,
    pub(crate) inner: GpuBuffer,
    pub(crate) mask: GpuBuffer,
}

impl Workspace {
    fn new(gpu: &Gpu, c: &EncoderConfig, rows: usize) -> Result<Self> {
        let d = c.hidden;
        Ok(Self {
            capacity: rows,
            input: gpu.zeros("tower input", rows * c.stacked_features().max(d))?,
            x: gpu.zeros("tower x", rows * d)?,
            h: gpu.zeros("tower h", rows * d)?,
            a: gpu.zeros("tower a", rows * d)?,
            a_scales: gpu.zeros("tower a row scales", rows * 2)?,
            qkv: gpu.zeros("tower qkv", rows * 3 * d)?,
            attended: gpu.zeros("tower attended", rows * d)?,
            inner: gpu.zeros("tower mlp", rows * c.intermediate)?,
            mask: gpu.zeros("tower key mask", rows)?,
        })
    }
}

/// Growth granularity of the workspace, so slowly growing calls do not reallocate every time.
const ROW_QUANTUM: usize = 64;

/// How a call's work goes to the queue.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Submission {
    /// One command buffer: a step whose output is awaited at once, or a timed run.
    Whole,
    /// Parts of at least `flops` floating-point operations ([`PART_FLOPS`] but in tests), cut between layers'
    /// halves ([`Recorder::submit_part`]), where no kernel pair shares scratch memory across the cut: the queue
    /// runs submissions in order, and the module's Sortformer steps, submitted from another thread while the ASR
    /// encoder runs a batch of chunks, then wait for a part or two instead of the whole batch.
    Parts { flops: f64 },
}

/// Most slices of k the q/k/v product is split into where the tensor-core attention adds them.
const MAX_QKV_SLICES: usize = 2;

/// Work of one part when a call is submitted in [`Submission::Parts`]: 1 to 2 ms on a large GPU, few enough parts
/// that submitting them costs nothing measurable. An 8-chunk batch of the release ASR tower cuts at every half
/// layer (80 and 125 GFLOP), a single chunk every second layer.
const PART_FLOPS: f64 = 40e9;

/// An encoder tower on the GPU.
pub struct Tower {
    gpu: Gpu,
    config: EncoderConfig,
    weights: GpuEncoder,
    /// Zeros of width d: the bias of a residual product that has none.
    zero_bias: GpuBuffer,
    state: Mutex<TowerState>,
}

struct TowerState {
    workspace: Reused<Workspace>,
    rope: Option<RopeTable>,
}

impl Tower {
    /// Checks the checkpoint for every tensor of the `kind` tower (any of the three name sets; all problems reported
    /// at once), then builds it as a model's load does (one check, then the tower from the checked checkpoint): for a
    /// checkpoint of one tower, such as a golden file.
    pub fn load(
        gpu: &Gpu,
        checkpoint: &Checkpoint,
        kind: TowerKind,
        config: &EncoderConfig,
        matmul: &MatmulOptions,
    ) -> Result<Self> {
        let names = ModelNames::detect(checkpoint)?;
        let names = names.encoder(kind, checkpoint)?;
        let mut expected = Expectations::default();
        weights::encoder(&mut expected, names, config)?;
        Self::build(&mut GpuStore::checked(gpu, checkpoint, matmul, &expected.0)?, names, config)
    }

    /// The tower whose tensors `names` names, from a checked (or random) store.
    pub(crate) fn build(store: &mut impl GpuWeights, names: &EncoderNames, config: &EncoderConfig) -> Result<Self> {
        let weights = weights::encoder(store, names, config)?;
        Self::new(store.gpu(), config.clone(), weights)
    }

    /// A tower from already uploaded weights.
    pub(crate) fn new(gpu: &Gpu, config: EncoderConfig, weights: GpuEncoder) -> Result<Self> {
        let zero_bias = gpu.zeros("tower zero bias", config.hidden)?;
        let state = Mutex::new(TowerState { workspace: Reused::default(), rope: None });
        Ok(Self { gpu: gpu.clone(), config, weights, zero_bias, state })
    }

    /// The encoder's shape (width, heads, layers, RoPE, q/k norm).
    pub fn config(&self) -> &EncoderConfig {
        &self.config
    }

    pub(crate) fn gpu(&self) -> &Gpu {
        &self.gpu
    }

    /// Frees the workspace and the context's scratch buffers (the next call makes them at its size; a call recording
    /// now keeps the scratch it holds), unless a call holds the workspace now: that call's owner decides again when it
    /// ends. The rotary table, sized by a sequence's length and not by the batch, stays.
    pub(crate) fn release_workspace(&self) {
        if let Some(mut state) = self.state.try_lock() {
            state.workspace.release();
            self.gpu.release_scratch();
        }
    }

    /// Most rows one call can take: every activation buffer must fit one storage binding.
    pub fn max_rows(&self) -> usize {
        let limit = self.gpu.limits().max_storage_buffer_binding_size as usize;
        (limit / (4 * self.widest_row())) / ROW_QUANTUM * ROW_QUANTUM
    }

    /// Values per row of the widest activation buffer.
    fn widest_row(&self) -> usize {
        let c = &self.config;
        c.intermediate.max(3 * c.hidden).max(c.stacked_features())
    }

    /// Runs a batch of independent sequences in one submission (padded to the longest, a key mask
    /// per sequence) and returns each sequence's `[n_i, d]` output.
    ///
    /// A batch of more than [`Tower::max_rows`] padded rows (sequences × longest) is refused with
    /// [`gpu_core::GpuError::LimitExceeded`] naming `max_storage_buffer_binding_size`: split it
    /// (as `AsrEncoder::encode` does).
    pub async fn forward(&self, kind: InputKind<'_>, batch: &[Sequence<'_>]) -> Result<Vec<Vec<f32>>> {
        let d = self.config.hidden;
        let mut outputs: Vec<Vec<f32>> = batch.iter().map(|s| gpu_core::host_vec(s.valid.len() * d)).collect();
        let mut targets: Vec<(usize, &mut [f32])> = outputs.iter_mut().map(|o| (0, o.as_mut_slice())).collect();
        self.forward_into(kind, batch, &mut targets).await?;
        Ok(outputs)
    }

    /// [`Tower::forward`] that reads only some output rows, straight into the caller's memory: `targets[i] = (first,
    /// rows)` receives sequence `i`'s output rows from `first` on (as many as `rows` holds, whole rows).
    pub async fn forward_into(
        &self,
        kind: InputKind<'_>,
        batch: &[Sequence<'_>],
        targets: &mut [(usize, &mut [f32])],
    ) -> Result<()> {
        let d = self.config.hidden;
        let seq_len = batch.iter().map(|s| s.valid.len()).max().unwrap_or(0);
        if targets.len() != batch.len() {
            let what = "forward_into: targets, one per sequence".to_string();
            return Err(Error::Length { what, expected: batch.len(), found: targets.len() });
        }
        for (i, (s, (first, rows))) in batch.iter().zip(targets.iter()).enumerate() {
            if !rows.len().is_multiple_of(d) || first + rows.len() / d > s.valid.len() {
                return Err(Error::Length {
                    what: format!("output rows {first}.. of sequence {i} ({} rows, width {d})", s.valid.len()),
                    expected: s.valid.len().saturating_sub(*first) * d,
                    found: rows.len(),
                });
            }
        }
        refuse_gathered(kind, "forward_into")?;
        self.run(kind, batch, Submission::Parts { flops: PART_FLOPS }, no_prologue, async |rec, out, _, _| {
            rec.submit()?;
            let ranges: Vec<(&GpuBuffer, usize)> =
                targets.iter().enumerate().map(|(i, (first, _))| (out, (i * seq_len + first) * d)).collect();
            let mut outputs: Vec<&mut [f32]> = targets.iter_mut().map(|(_, rows)| &mut **rows).collect();
            Ok(self.gpu.read_f32_into(&ranges, &mut outputs).await?)
        })
        .await
    }

    /// Runs the batch with GPU `timing` and returns the times instead of the output (benchmarks).
    pub async fn timed(&self, kind: InputKind<'_>, batch: &[Sequence<'_>], timing: Timing) -> Result<Profile> {
        refuse_gathered(kind, "timed")?;
        self.run(kind, batch, Submission::Whole, no_prologue, async |rec, _, _, _| {
            Ok(rec.with_timing(timing).submit_profiled().await?)
        })
        .await
    }

    /// Uploads the batch, records `prologue` (handed the recorder and the `[rows, d]` rows the tower starts from:
    /// where [`InputKind::GatheredThenFeatures`] wants its gathered rows), records the tower, and hands the recorder,
    /// the `[rows, d]` output buffer,
    /// the `[rows, d]` projected input rows and the row count to `finish`, which records any further
    /// work, submits and reads back (in [`Submission::Parts`], the parts before the last are submitted by then).
    /// The workspace stays locked until `finish` returns, so concurrent calls cannot overwrite the output before it
    /// is read.
    pub(crate) async fn run<T>(
        &self,
        kind: InputKind<'_>,
        batch: &[Sequence<'_>],
        submission: Submission,
        prologue: impl FnOnce(&mut Recorder<'_>, &GpuBuffer) -> Result<()>,
        finish: impl AsyncFnOnce(Recorder<'_>, &GpuBuffer, &GpuBuffer, usize) -> Result<T>,
    ) -> Result<T> {
        let seq_len = batch.iter().map(|s| s.valid.len()).max().unwrap_or(0);
        let rows = batch.len() * seq_len;
        self.check_rows(rows, &format!("a batch of {} sequences of up to {seq_len} rows", batch.len()))?;
        let mut state = self.state.lock().await;
        let (work, rope) = self.prepare(&mut state, rows.max(1), seq_len.max(1))?;
        let mut rec = Recorder::new(&self.gpu);
        if rows > 0 {
            self.upload_batch(work, kind, batch, seq_len)?;
            prologue(&mut rec, &work.x)?;
            if let InputKind::GatheredThenFeatures { gathered } = kind {
                self.record_step_projection(&mut rec, work, gathered, batch, seq_len)?;
            }
            self.record(&mut rec, work, rope, kind, (batch.len(), seq_len), submission)?;
        }
        finish(rec, &work.a, &work.x, rows).await
    }

    /// [`Tower::run`] over `seqs` sequences of `seq_len` embedded rows that `stage` records into the `[rows, d]`
    /// buffer it is handed (e.g. an upsampler's GEMM), in the same submission; `valid` marks each row's key.
    pub(crate) async fn run_staged<T>(
        &self,
        seqs: usize,
        seq_len: usize,
        valid: &[bool],
        stage: impl FnOnce(&mut Recorder<'_>, &GpuBuffer) -> Result<()>,
        finish: impl AsyncFnOnce(Recorder<'_>, &GpuBuffer, usize) -> Result<T>,
    ) -> Result<T> {
        let rows = seqs * seq_len;
        if valid.len() != rows {
            let what = format!("key flags of {seqs} sequences of {seq_len} rows");
            return Err(Error::Length { what, expected: rows, found: valid.len() });
        }
        self.check_rows(rows, &format!("a batch of {seqs} sequences of {seq_len} rows"))?;
        let mut state = self.state.lock().await;
        let (work, rope) = self.prepare(&mut state, rows.max(1), seq_len.max(1))?;
        let mut rec = Recorder::new(&self.gpu);
        if rows > 0 {
            self.gpu.write_u32(&work.mask, 0, &valid.iter().map(|&v| v as u32).collect::<Vec<_>>())?;
            stage(&mut rec, &work.x)?;
            self.record(&mut rec, work, rope, InputKind::Embeddings, (seqs, seq_len), Submission::Whole)?;
        }
        finish(rec, &work.a, rows).await
    }

    /// The stacked-features projection; a tower without one (the word-timestamp encoder) takes embedded rows only.
    fn input_projection(&self) -> Result<&Weight> {
        self.weights.input_projection.as_ref().ok_or(Error::NoInputProjection)
    }

    /// Refuses work of more than [`Tower::max_rows`] rows, naming the limit behind it.
    pub(crate) fn check_rows(&self, rows: usize, what: &str) -> Result<()> {
        let max_rows = self.max_rows();
        if rows <= max_rows && max_rows > 0 {
            return Ok(());
        }
        let widest = self.widest_row();
        Err(GpuError::LimitExceeded {
            what: format!("{what}: {rows} rows of up to {widest} values (at most {max_rows} rows fit)"),
            limit: "max_storage_buffer_binding_size",
            requested: (rows.max(1) as u64).saturating_mul(4 * widest as u64),
            max: self.gpu.limits().max_storage_buffer_binding_size,
        }
        .into())
    }

    /// The workspace for `rows` rows (grown, or shrunk after small calls) and the rotary table for `seq_len`
    /// positions (grown if needed).
    fn prepare<'s>(
        &self,
        state: &'s mut TowerState,
        rows: usize,
        seq_len: usize,
    ) -> Result<(&'s Workspace, &'s RopeTable)> {
        let c = &self.config;
        let before = state.workspace.held().map_or(0, |w| w.capacity);
        let work = state.workspace.get(
            rows.next_multiple_of(ROW_QUANTUM),
            |w| w.capacity,
            |rows| Workspace::new(&self.gpu, c, rows),
        )?;
        if work.capacity < before {
            // The context's scratch (the products' partial sums, the attention's slices) was grown by the same
            // large calls: it follows, each buffer made again at the size of the next call that asks. (Shrinking the
            // scratch by its own requests would let two towers of a model undo each other's sizes at every batch.)
            self.gpu.release_scratch();
        }
        let rope = reuse_or_make(
            &mut state.rope,
            |r| r.positions() >= seq_len,
            || RopeTable::new(&self.gpu, seq_len.next_multiple_of(ROW_QUANTUM), c.rotary_dims, c.rope_theta),
        )?;
        Ok((work, rope))
    }

    /// Uploads the batch as `[batch·seq_len]` rows (each sequence's rows written straight to its place, its padding
    /// rows zeroed: no packed copy on the host) and the key mask.
    fn upload_batch(
        &self,
        work: &Workspace,
        kind: InputKind<'_>,
        batch: &[Sequence<'_>],
        seq_len: usize,
    ) -> Result<()> {
        let (width, target) = match kind {
            InputKind::Features => (self.config.stacked_features(), &work.input),
            InputKind::Embeddings => (self.config.hidden, &work.x),
            InputKind::GatheredThenFeatures { gathered } => return self.upload_steps(work, gathered, batch, seq_len),
        };
        let mut mask = vec![0u32; batch.len() * seq_len];
        for (i, s) in batch.iter().enumerate() {
            if s.rows.len() != s.valid.len() * width {
                let (what, expected) = (format!("sequence {i} [{}, {width}]", s.valid.len()), s.valid.len() * width);
                return Err(Error::Length { what, expected, found: s.rows.len() });
            }
        }
        for (i, s) in batch.iter().enumerate() {
            self.gpu.write_f32(target, i * seq_len * width, s.rows)?;
            if s.valid.len() < seq_len {
                let padding = vec![0.0; (seq_len - s.valid.len()) * width];
                self.gpu.write_f32(target, (i * seq_len + s.valid.len()) * width, &padding)?;
            }
            for (m, &v) in mask[i * seq_len..].iter_mut().zip(s.valid) {
                *m = v as u32;
            }
        }
        self.gpu.write_u32(&work.mask, 0, &mask)?;
        Ok(())
    }

    /// Uploads diarization steps: each sequence's projected rows, where its `rows` hold them, to its rows of `x` (its
    /// padding rows zeroed), the stacked features of all sequences one after another to `input`, the key mask.
    fn upload_steps(&self, work: &Workspace, gathered: &[usize], batch: &[Sequence<'_>], seq_len: usize) -> Result<()> {
        let (d, width) = (self.config.hidden, self.config.stacked_features());
        if gathered.len() != batch.len() {
            let what = "diarization steps: counts of gathered rows, one per sequence".to_string();
            return Err(Error::Length { what, expected: batch.len(), found: gathered.len() });
        }
        let mut features = Vec::new();
        let mut mask = vec![0u32; batch.len() * seq_len];
        for (i, (step, &gathered)) in batch.iter().zip(gathered).enumerate() {
            let rows = step.valid.len();
            if gathered > rows {
                return Err(Error::Frames { what: "diarization step: gathered rows", found: gathered, frames: rows });
            }
            let expected = (rows - gathered) * width;
            if step.rows.len() != expected {
                let what = format!("diarization step {i} ({} feature rows of {width})", rows - gathered);
                return Err(Error::Length { what, expected, found: step.rows.len() });
            }
            if rows < seq_len {
                self.gpu.write_f32(&work.x, (i * seq_len + rows) * d, &vec![0.0; (seq_len - rows) * d])?;
            }
            features.extend_from_slice(step.rows);
            for (m, &v) in mask[i * seq_len..].iter_mut().zip(step.valid) {
                *m = v as u32;
            }
        }
        self.gpu.write_f32(&work.input, 0, &features)?;
        self.gpu.write_u32(&work.mask, 0, &mask)?;
        Ok(())
    }
}

/// Refuses [`InputKind::GatheredThenFeatures`] in `call`, which records no prologue.
fn refuse_gathered(kind: InputKind<'_>, call: &'static str) -> Result<()> {
    match kind {
        InputKind::GatheredThenFeatures { .. } => Err(Error::GatheredRows { call }),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests;
