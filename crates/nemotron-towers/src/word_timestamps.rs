//! The word-timestamp head on the GPU (Transformers 5.23 `get_word_timestamp_hidden_states` and
//! `get_word_timestamp_logits`; NeMo `ctc_timestamp`): ASR states `[T, d]` → per chunk of the ASR schedule, the
//! transposed-convolution upsampler (one GEMM whose `[n, f·d]` output is the `[f·n, d]` frames in time order), the
//! transformer ([`Tower`], positions restarting at 0 per chunk), `y = x + residual_scale·LN(h)`, and the k=1
//! classifier → `[f·T, vocab]` CTC logits. Chunks run in batches, one submission per batch, as the ASR tower does.

use async_lock::Mutex;

use audio_kernels::gemm::gemm_kernels;
use audio_kernels::{Epilogue, GemmShape, MatmulOptions, Weight, gemm, log_softmax_gather};
use gpu_core::{Gpu, GpuBuffer, KernelVariant, Profile, Recorder, Timing, reuse_or_make};

use crate::checkpoint::Checkpoint;
use crate::chunks::{Chunk, MAX_CHUNKS_PER_BATCH, schedule};
use crate::config::{ChunkConfig, TranscribeConfig, WordTimestampConfig, check_word_timestamp_width};
use crate::error::{Error, Result};
use crate::names::{ModelNames, WordTimestampNames};
use crate::tower::Tower;
use crate::weights::{self, Expectations, GpuStore, GpuWeights, Linear, Norm, WordTimestampWeights};

/// Consecutive head frames of one batch of chunks, in time order.
#[derive(Clone, Copy, Debug)]
pub struct HeadBlock<'a> {
    /// Index of the first head frame (`upsampling_factor ·` the first chunk's start).
    pub first_frame: usize,
    /// `[frames, d]` hidden states (`word_timestamp_hidden_states`).
    pub hidden: &'a [f32],
    /// `[frames, vocab]` raw logits, the blank last (`word_timestamp_logits`).
    pub logits: &'a [f32],
}

/// Both outputs of the head over a whole recording.
#[derive(Clone, Debug)]
pub struct WordTimestampOutputs {
    /// `[f·T, d]` hidden states.
    pub hidden: Vec<f32>,
    /// `[f·T, vocab]` raw logits (rows past the valid frames are computed but meaningless, as upstream's).
    pub logits: Vec<f32>,
}

/// Which encoder frames of a chunk's window are keys: the valid ones. A window without any (only a recording
/// padded to a longer one's length has one) is run unmasked: upstream's eager attention gives NaN rows there and
/// its sdpa attention garbage, rows the alignment never reads; unmasked, they do not depend on the batch.
pub(crate) fn window_keys(k: &Chunk, valid_frames: usize) -> Vec<bool> {
    let keys: Vec<bool> = (k.context_start..k.context_end).map(|t| t < valid_frames).collect();
    if keys.contains(&true) { keys } else { vec![true; keys.len()] }
}

/// GPU buffers of one batch: the ASR states of the chunks' windows, and the kept frames' outputs.
struct HeadWorkspace {
    state_rows: usize,
    kept_rows: usize,
    states: GpuBuffer,
    hidden: GpuBuffer,
    logits: GpuBuffer,
}

impl HeadWorkspace {
    fn new(gpu: &Gpu, c: &WordTimestampConfig, state_rows: usize, kept_rows: usize) -> Result<Self> {
        let d = c.encoder.hidden;
        Ok(Self {
            state_rows,
            kept_rows,
            states: gpu.zeros("word-timestamp states", state_rows * d)?,
            hidden: gpu.zeros("word-timestamp hidden", kept_rows * d)?,
            logits: gpu.zeros("word-timestamp logits", kept_rows * c.vocab_size)?,
        })
    }
}

/// The word-timestamp encoder, upsampler and classifier on the GPU.
pub struct WordTimestampHead {
    tower: Tower,
    /// The upsampler with its bias repeated for each of the `f` phases of the `[f·d]`-wide GEMM output.
    upsampler: Linear<Weight, GpuBuffer>,
    classifier: Linear<Weight, GpuBuffer>,
    config: WordTimestampConfig,
    chunks: ChunkConfig,
    workspace: Mutex<Option<HeadWorkspace>>,
}

impl WordTimestampHead {
    /// The head of a Transcribe checkpoint (either name set; all tensor problems reported at once), reading the ASR
    /// tower's states in its chunk schedule, built as a model's load builds it: for a checkpoint of the head alone,
    /// such as a golden file.
    pub async fn load(
        gpu: &Gpu,
        checkpoint: &Checkpoint,
        config: &TranscribeConfig,
        matmul: &MatmulOptions,
    ) -> Result<Self> {
        let names = ModelNames::detect(checkpoint)?;
        let names = names.word_timestamp_names(checkpoint)?;
        check_word_timestamp_width(&config.word_timestamps, &config.asr)?;
        let mut expected = Expectations::default();
        weights::word_timestamps(&mut expected, names, &config.word_timestamps)?;
        let mut store = GpuStore::checked(gpu, checkpoint, matmul, &expected.0)?;
        Self::build(&mut store, names, &config.word_timestamps, config.diarization.chunks).await
    }

    /// The head from a checked (or random) store; `chunks` is the schedule of the ASR tower whose states it reads
    /// (the width of which the caller has checked against the head's).
    pub(crate) async fn build(
        store: &mut impl GpuWeights,
        names: &WordTimestampNames,
        config: &WordTimestampConfig,
        chunks: ChunkConfig,
    ) -> Result<Self> {
        let weights = weights::word_timestamps(store, names, config)?;
        let gpu = store.gpu();
        let (d, f) = (config.encoder.hidden, config.upsampling_factor);
        let WordTimestampWeights { upsampler, mut encoder, classifier } = weights;
        let norm = &encoder.final_norm;
        let mut ranges = vec![(&norm.weight, 0, d), (&norm.bias, 0, d)];
        ranges.extend(upsampler.bias.as_ref().map(|bias| (bias, 0, d)));
        let mut read = gpu.read_f32_ranges(&ranges).await?.into_iter();
        let (norm_weight, norm_bias) = (read.next().unwrap_or_default(), read.next().unwrap_or_default());
        let bias = read.next().unwrap_or_else(|| vec![0.0; d]);
        let tiled: Vec<f32> = (0..f).flat_map(|_| bias.iter().copied()).collect();
        let upsampler = Linear { weight: upsampler.weight, bias: Some(gpu.upload_f32("upsampler bias", &tiled)?) };
        // `x + s·LN(h)`: the scale folds into the final norm's affine (s·(γ·n + β) = (s·γ)·n + s·β), and the
        // upsampler's GEMM accumulates x onto it, so no kernel beyond the tower's is needed.
        let s = config.residual_scale as f32;
        let scaled = |values: Vec<f32>, label: &str| -> Result<GpuBuffer> {
            Ok(gpu.upload_f32(label, &values.iter().map(|v| v * s).collect::<Vec<_>>())?)
        };
        encoder.final_norm = Norm {
            weight: scaled(norm_weight, "scaled final norm weight")?,
            bias: scaled(norm_bias, "scaled final norm bias")?,
        };
        Ok(Self {
            tower: Tower::new(gpu, config.encoder.clone(), encoder)?,
            upsampler,
            classifier,
            config: config.clone(),
            chunks,
            workspace: Mutex::new(None),
        })
    }

    /// The head's resolved config.
    pub fn config(&self) -> &WordTimestampConfig {
        &self.config
    }

    /// The transformer alone (its final norm carries the residual scale).
    pub fn tower(&self) -> &Tower {
        &self.tower
    }

    /// The pipelines a call of the head can record: the upsampler (writing, then adding), its tower over windows of
    /// the ASR schedule's chunks, the classifier, the alignment's log-softmax.
    pub(crate) fn kernels(&self) -> Vec<KernelVariant> {
        let c = &self.chunks;
        let window = self.config.upsampling_factor * (c.length + c.left_context + c.right_context);
        let mut kernels = self.tower.kernels(window);
        let gpu = self.tower.gpu();
        for accumulate in [false, true] {
            let epilogue = Epilogue { bias: self.upsampler.bias.as_ref(), accumulate, ..Epilogue::default() };
            kernels.extend(gemm_kernels(gpu, &self.upsampler.weight, &epilogue, false));
        }
        let classifier = Epilogue { bias: self.classifier.bias.as_ref(), ..Epilogue::default() };
        kernels.extend(gemm_kernels(gpu, &self.classifier.weight, &classifier, false));
        kernels.extend(audio_kernels::log_softmax_gather::variants());
        kernels
    }

    /// ASR states `[T, d]` (as the ASR tower outputs them, before `asr_norm`) with the first `valid_frames` encoder
    /// frames valid → hidden states and logits of all `f·T` head frames.
    pub async fn run(&self, asr_hidden: &[f32], valid_frames: usize) -> Result<WordTimestampOutputs> {
        let (d, vocab) = (self.config.encoder.hidden, self.config.vocab_size);
        let f = self.config.upsampling_factor;
        let frames = self.check_states(asr_hidden, valid_frames)?;
        let mut out = WordTimestampOutputs {
            hidden: gpu_core::host_vec(f * frames * d),
            logits: gpu_core::host_vec(f * frames * vocab),
        };
        // Each batch's frames are read straight into their place in the outputs (the batches are consecutive).
        for group in schedule(frames, &self.chunks).chunks(self.chunks_per_batch()) {
            let (first, last) = (f * group[0].start, f * group[group.len() - 1].end);
            self.batch(asr_hidden, valid_frames, group, async |rec, work, _| {
                rec.submit()?;
                let hidden = &mut out.hidden[first * d..last * d];
                let logits = &mut out.logits[first * vocab..last * vocab];
                let targets = [(&work.hidden, 0), (&work.logits, 0)];
                Ok(self.tower.gpu().read_f32_into(&targets, &mut [hidden, logits]).await?)
            })
            .await?;
        }
        Ok(out)
    }

    /// [`WordTimestampHead::run`] handing each batch's frames to `sink` as they are read back, so a caller that
    /// keeps only part of the logits (the alignment keeps its transcript's classes) never holds all of them.
    pub async fn for_each_block(
        &self,
        asr_hidden: &[f32],
        valid_frames: usize,
        sink: &mut dyn FnMut(HeadBlock<'_>) -> Result<()>,
    ) -> Result<()> {
        let (d, vocab, f) = (self.config.encoder.hidden, self.config.vocab_size, self.config.upsampling_factor);
        let frames = self.check_states(asr_hidden, valid_frames)?;
        for group in schedule(frames, &self.chunks).chunks(self.chunks_per_batch()) {
            let (hidden, logits) = self
                .batch(asr_hidden, valid_frames, group, async |rec, work, kept| {
                    rec.submit()?;
                    let ranges = [(&work.hidden, 0, kept * d), (&work.logits, 0, kept * vocab)];
                    let mut read = self.tower.gpu().read_f32_ranges(&ranges).await?.into_iter();
                    Ok((read.next().unwrap_or_default(), read.next().unwrap_or_default()))
                })
                .await?;
            sink(HeadBlock { first_frame: f * group[0].start, hidden: &hidden, logits: &logits })?;
        }
        Ok(())
    }

    /// The log-softmax of the head's logits kept for `classes` (each below the vocabulary), computed on the GPU, so
    /// that only `[frames, classes]` values come back (the alignment's read; the full logits are 95 KB per frame):
    /// `sink` gets each batch's first head frame and its `[frames, classes.len()]` values, in time order.
    pub async fn for_each_log_prob_block(
        &self,
        asr_hidden: &[f32],
        valid_frames: usize,
        classes: &[u32],
        sink: &mut dyn FnMut(usize, &[f32]) -> Result<()>,
    ) -> Result<()> {
        let (vocab, f) = (self.config.vocab_size, self.config.upsampling_factor);
        if let Some(&class) = classes.iter().find(|&&c| c as usize >= vocab) {
            return Err(Error::Class { class, vocab });
        }
        let frames = self.check_states(asr_hidden, valid_frames)?;
        let gpu = self.tower.gpu();
        let n = classes.len().max(1);
        let class_buffer = gpu.upload_u32("word-timestamp classes", if classes.is_empty() { &[0] } else { classes })?;
        let batches = schedule(frames, &self.chunks);
        let most = batches.chunks(self.chunks_per_batch()).map(|g| g.iter().map(|k| f * (k.end - k.start)).sum());
        let out = gpu.zeros("word-timestamp log-probabilities", most.max().unwrap_or(0) * n)?;
        for group in batches.chunks(self.chunks_per_batch()) {
            let values = self
                .batch(asr_hidden, valid_frames, group, async |mut rec, work, kept| {
                    log_softmax_gather(&mut rec, &work.logits, &class_buffer, &out, kept, vocab, classes.len())?;
                    rec.submit()?;
                    Ok(gpu.read_f32_range(&out, 0, kept * classes.len()).await?)
                })
                .await?;
            sink(f * group[0].start, &values)?;
        }
        Ok(())
    }

    /// GPU times of the head over `asr_hidden` (one profile per submission), for benchmarks.
    pub async fn timed(&self, asr_hidden: &[f32], valid_frames: usize, timing: Timing) -> Result<Vec<Profile>> {
        let frames = self.check_states(asr_hidden, valid_frames)?;
        let mut profiles = Vec::new();
        for group in schedule(frames, &self.chunks).chunks(self.chunks_per_batch()) {
            let timed =
                async |rec: Recorder<'_>, _: &HeadWorkspace, _| Ok(rec.with_timing(timing).submit_profiled().await?);
            profiles.push(self.batch(asr_hidden, valid_frames, group, timed).await?);
        }
        Ok(profiles)
    }

    /// Chunks per submission: as many as the tower's storage bindings and the logits binding hold, at most
    /// 8 (the ASR tower's cap).
    pub fn chunks_per_batch(&self) -> usize {
        let (c, f) = (&self.chunks, self.config.upsampling_factor);
        let window = f * (c.length + c.left_context + c.right_context);
        let limit = self.tower.gpu().limits().max_storage_buffer_binding_size as usize;
        let logits = limit / (4 * f * c.length * self.config.vocab_size).max(1);
        (self.tower.max_rows() / window.max(1)).min(logits).clamp(1, MAX_CHUNKS_PER_BATCH)
    }

    /// Encoder frames of `asr_hidden`, checked against the width and `valid_frames`.
    fn check_states(&self, asr_hidden: &[f32], valid_frames: usize) -> Result<usize> {
        let d = self.config.encoder.hidden;
        let frames = asr_hidden.len() / d;
        if asr_hidden.len() != frames * d {
            return Err(Error::Width { what: "word-timestamp head: ASR states", width: d, found: asr_hidden.len() });
        }
        if valid_frames > frames {
            return Err(Error::Frames { what: "word-timestamp head: valid frames", found: valid_frames, frames });
        }
        Ok(frames)
    }

    /// Records one batch of chunks (upsampler, tower, residual, classifier on the kept frames) and hands the
    /// recorder, the workspace and the number of kept frames to `finish`, which submits and reads back.
    async fn batch<T>(
        &self,
        asr_hidden: &[f32],
        valid_frames: usize,
        group: &[Chunk],
        finish: impl AsyncFnOnce(Recorder<'_>, &HeadWorkspace, usize) -> Result<T>,
    ) -> Result<T> {
        let (d, f, vocab) = (self.config.encoder.hidden, self.config.upsampling_factor, self.config.vocab_size);
        let window = group.iter().map(|k| k.context_end - k.context_start).max().unwrap_or(0);
        let (seqs, seq_len) = (group.len(), f * window);
        let kept: usize = group.iter().map(|k| f * (k.end - k.start)).sum();
        let mut states = vec![0.0f32; seqs * window * d];
        // Upstream's key mask: encoder frame t's validity repeated for its f head frames; padding rows are keys
        // of no sequence.
        let mut valid = vec![false; seqs * seq_len];
        for (i, k) in group.iter().enumerate() {
            let rows = &asr_hidden[k.context_start * d..k.context_end * d];
            states[i * window * d..][..rows.len()].copy_from_slice(rows);
            let keys = window_keys(k, valid_frames);
            for (r, flag) in valid[i * seq_len..][..f * keys.len()].iter_mut().enumerate() {
                *flag = keys[r / f];
            }
        }
        let mut guard = self.workspace.lock().await;
        let gpu = self.tower.gpu();
        let work = reuse_or_make(
            &mut guard,
            |w| w.state_rows >= seqs * window && w.kept_rows >= kept,
            || HeadWorkspace::new(gpu, &self.config, (seqs * window).next_multiple_of(64), kept.next_multiple_of(64)),
        )?;
        gpu.write_f32(&work.states, 0, &states)?;
        let up = &self.upsampler;
        let upsample = |rec: &mut Recorder<'_>, out: &GpuBuffer, accumulate: bool| -> Result<()> {
            let epilogue = Epilogue { bias: up.bias.as_ref(), accumulate, ..Epilogue::default() };
            Ok(gemm(rec, &work.states, &up.weight, out, GemmShape { n: seqs * window, m: f * d, k: d }, &epilogue)?)
        };
        self.tower
            .run_staged(
                seqs,
                seq_len,
                &valid,
                |rec, x| upsample(rec, x, false),
                async |mut rec, normed, _| {
                    // `normed` holds s·LN(h); adding the upsampled rows again gives y = x + s·LN(h).
                    upsample(&mut rec, normed, true)?;
                    let mut row = 0;
                    for (i, k) in group.iter().enumerate() {
                        let rows = f * (k.end - k.start);
                        rec.copy(normed, (i * seq_len + f * k.lookback()) * d, &work.hidden, row * d, rows * d)?;
                        row += rows;
                    }
                    let c = &self.classifier;
                    let epilogue = Epilogue { bias: c.bias.as_ref(), ..Epilogue::default() };
                    let shape = GemmShape { n: kept, m: vocab, k: d };
                    gemm(&mut rec, &work.hidden, &c.weight, &work.logits, shape, &epilogue)?;
                    finish(rec, work, kept).await
                },
            )
            .await
    }
}
