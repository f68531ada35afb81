//! The Sortformer diarizer in offline mode (docs/model.md §6): the input projection a block of frames at a
//! time, then per chunk `[speaker cache ; FIFO ; chunk with context]` through the encoder and
//! the head on the GPU (one submission per step), and the cache update on the host.

use std::sync::Mutex;

use audio_kernels::MatmulOptions;
use audio_kernels::{Activation, Epilogue, Weight, conv_im2col, gemm};
use gpu_core::{Gpu, GpuBuffer, Recorder, Timing};
use nemotron_postprocess::math::sigmoid;

use crate::checkpoint::Checkpoint;
use crate::chunks::{MAX_CHUNKS_PER_BATCH, schedule};
use crate::config::DiarizationConfig;
use crate::error::{Error, Result};
use crate::names::ModelNames;
use crate::speaker_cache::{SpeakerCache, StepLayout};
use crate::tower::{InputKind, Sequence, Tower};
use crate::weights::{self, Expectations, GpuStore, GpuWeights, HeadWeights, Linear};
use crate::workspace::reuse_or_make;

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
        })
    }
}

/// The diarization encoder, its head and its speaker-cache schedule.
pub struct Sortformer {
    tower: Tower,
    head: HeadWeights<Weight, GpuBuffer>,
    silence: Vec<f32>,
    config: DiarizationConfig,
    workspace: Mutex<Option<HeadWorkspace>>,
}

impl Sortformer {
    /// Checks every tensor of the encoder and the head of any checkpoint that has them (all problems at once), then
    /// builds the diarizer as a model's load does: for a checkpoint of the diarizer alone, such as a golden file.
    pub fn load(
        gpu: &Gpu,
        checkpoint: &Checkpoint,
        config: &DiarizationConfig,
        matmul: &MatmulOptions,
    ) -> Result<Self> {
        let names = ModelNames::detect(checkpoint)?;
        let mut expected = Expectations::default();
        weights::encoder(&mut expected, &names.diarization, &config.encoder)?;
        weights::head(&mut expected, &names.head, config)?;
        Self::build(&mut GpuStore::checked(gpu, checkpoint, matmul, &expected.0)?, &names, config)
    }

    /// The encoder and the head from a checked (or random) store.
    pub(crate) fn build(store: &mut impl GpuWeights, names: &ModelNames, config: &DiarizationConfig) -> Result<Self> {
        let tower = Tower::build(store, &names.diarization, &config.encoder)?;
        let head = weights::head(store, &names.head, config)?;
        // The cache update runs on the host, so the silence embedding lives there too.
        let silence = tower.gpu().read_f32_range(&head.silence, 0, config.encoder.hidden)?;
        Ok(Self { tower, head, silence, config: config.clone(), workspace: Mutex::new(None) })
    }

    /// The diarizer's resolved config (encoder, head, chunk schedule, speaker cache).
    pub fn config(&self) -> &DiarizationConfig {
        &self.config
    }

    /// The Sortformer encoder on the GPU, without the head.
    pub fn tower(&self) -> &Tower {
        &self.tower
    }

    /// The silence embedding the cache compression inserts (`[d]`).
    pub(crate) fn silence(&self) -> &[f32] {
        &self.silence
    }

    /// One step: embedded rows `[n, d]` (with their key mask) through the encoder and the head;
    /// returns logits `[n·subsampling, speakers]`.
    pub fn logits(&self, rows: &[f32], valid: &[bool]) -> Result<Vec<f32>> {
        Ok(self.step(InputKind::Embeddings, rows, valid, 0..0, Timing::Off)?.logits)
    }

    /// One streaming step (one submission, one readback): `prefix` rows `[p, d]` (speaker cache and FIFO)
    /// and a chunk's stacked features `[n, subsampling·mel]`, which the submission projects; every row is a
    /// valid key. Returns the logits `[(p + n)·subsampling, speakers]` and the projected rows of the chunk
    /// proper (its first `chunk_rows`), which the speaker cache keeps.
    pub(crate) fn stream_step(
        &self,
        prefix: &[f32],
        stacked: &[f32],
        chunk_rows: usize,
        timing: Timing,
    ) -> Result<StepOutput> {
        let c = &self.config.encoder;
        let embedded = prefix.len() / c.hidden;
        let rows = embedded + stacked.len() / c.stacked_features();
        let input = [prefix, stacked].concat();
        let kind = InputKind::EmbeddedThenFeatures { embedded };
        self.step(kind, &input, &vec![true; rows], embedded..embedded + chunk_rows, timing)
    }

    /// The encoder and head over one sequence; reads back the logits and the projected rows `embedded`
    /// in one round trip, with the GPU time when `timing` asks for it.
    fn step(
        &self,
        kind: InputKind,
        rows: &[f32],
        valid: &[bool],
        embedded: std::ops::Range<usize>,
        timing: Timing,
    ) -> Result<StepOutput> {
        let c = &self.config;
        let (d, sub_rows) = (c.encoder.hidden, valid.len() * c.encoder.subsampling);
        self.tower.run(kind, &[Sequence { rows, valid }], |mut rec, encoded, projected, n| {
            let mut guard = self.workspace.lock().unwrap_or_else(|p| p.into_inner());
            let work = reuse_or_make(
                &mut guard,
                |w| w.capacity >= n,
                || HeadWorkspace::new(self.tower.gpu(), c, n.next_multiple_of(64)),
            )?;
            self.record_head(&mut rec, encoded, work, n)?;
            let gpu_ms = match timing {
                Timing::Off => {
                    rec.submit()?;
                    None
                }
                // Empty when the adapter has no timestamp queries.
                timing => Some(rec.with_timing(timing).submit_profiled()?)
                    .filter(|profile| !profile.entries.is_empty())
                    .map(|profile| profile.total_ns() / 1e6),
            };
            let ranges =
                [(&work.logits, 0, sub_rows * c.speakers), (projected, embedded.start * d, embedded.len() * d)];
            let mut read = self.tower.gpu().read_f32_ranges(&ranges)?.into_iter();
            let mut next = || read.next().ok_or_else(|| Error::Internal("a readback range is missing".into()));
            Ok(StepOutput { logits: next()?, embedded: next()?, gpu_ms })
        })
    }

    fn record_head(&self, rec: &mut Recorder<'_>, encoded: &GpuBuffer, work: &HeadWorkspace, n: usize) -> Result<()> {
        let c = &self.config;
        let (d, h, sub) = (c.encoder.hidden, c.head_hidden, c.encoder.subsampling);
        let w = &self.head;
        gemm(rec, encoded, &w.proj.weight, &work.projected, n, h, d, &epilogue(&w.proj, Activation::None))?;
        conv_im2col(rec, &work.projected, &work.columns, n, h)?;
        // The classifier applies ReLU to the upsampled frames first: fused into the conv GEMM.
        gemm(
            rec,
            &work.columns,
            &w.upsample.weight,
            &work.upsampled,
            n,
            sub * h,
            3 * h,
            &epilogue(&w.upsample, Activation::Relu),
        )?;
        // Each frame's `sub·h` channels are `sub` consecutive sub-frames of `h`: no copy needed.
        gemm(
            rec,
            &work.upsampled,
            &w.dense.weight,
            &work.hidden,
            n * sub,
            h,
            h,
            &epilogue(&w.dense, Activation::Relu),
        )?;
        gemm(
            rec,
            &work.hidden,
            &w.out.weight,
            &work.logits,
            n * sub,
            c.speakers,
            h,
            &epilogue(&w.out, Activation::None),
        )?;
        Ok(())
    }

    /// The whole recording: raw (un-normalised) log-mel `[frames, mel]` with `valid_frames` real
    /// frames (`frames` a multiple of the subsampling factor) → logits `[frames, speakers]`.
    pub fn diarize(
        &self,
        features: &[f32],
        valid_frames: usize,
        progress: &mut dyn FnMut(usize, usize),
    ) -> Result<Vec<f32>> {
        let c = &self.config;
        let (d, sub, speakers) = (c.encoder.hidden, c.encoder.subsampling, c.speakers);
        let width = c.encoder.stacked_features();
        if !features.len().is_multiple_of(width) {
            return Err(Error::features(format!(
                "diarization features: {} values are not whole groups of {sub} frames × {} mel bins",
                features.len(),
                c.encoder.mel_bins
            )));
        }
        let frames = features.len() / width;
        let mut cache = SpeakerCache::new(c.cache, speakers, d);
        let mut logits = Vec::with_capacity(frames * sub * speakers);
        let chunks = schedule(frames, &c.chunks);
        // The input projection runs over blocks of a fixed number of frames, kept in a window
        // that slides along the chunks: the embeddings of the whole recording would be as large
        // as its features, and blocks of chunks (with their overlapping contexts) would vary in
        // size and grow the tower's workspace with the length of the recording.
        let block = MAX_CHUNKS_PER_BATCH * c.chunks.length;
        let (mut embedded, mut first) = (Vec::new(), 0);
        for (i, chunk) in chunks.iter().enumerate() {
            if first + embedded.len() / d < chunk.context_end {
                // No later chunk looks back past this one's context.
                embedded.drain(..(chunk.context_start - first) * d);
                first = chunk.context_start;
                let from = first + embedded.len() / d;
                let to = (from + block).max(chunk.context_end).min(frames);
                embedded.extend(self.tower.embed(&features[from * width..to * width])?);
            }
            let valid: Vec<bool> = (chunk.context_start..chunk.context_end).map(|t| t * sub < valid_frames).collect();
            let context = &embedded[(chunk.context_start - first) * d..(chunk.context_end - first) * d];
            let (rows, step_valid) = cache.step_input(context, &valid);
            let layout = StepLayout {
                cache_rows: cache.cache_rows(),
                fifo_rows: cache.fifo_rows(),
                lookback: chunk.lookback(),
                chunk_rows: chunk.end - chunk.start,
            };
            let step = self.logits(&rows, &step_valid)?;
            let first_logit = layout.chunk_start() * sub * speakers;
            logits.extend_from_slice(&step[first_logit..first_logit + layout.chunk_rows * sub * speakers]);
            let probs = encoder_rate_probabilities(&step, &step_valid, sub, speakers);
            let chunk_rows = &rows[layout.chunk_start() * d..(layout.chunk_start() + layout.chunk_rows) * d];
            cache.update(layout, chunk_rows, &probs, &self.silence);
            progress(i + 1, chunks.len());
        }
        Ok(logits)
    }
}

/// What one step gives back.
pub(crate) struct StepOutput {
    /// `[rows·subsampling, speakers]`.
    pub logits: Vec<f32>,
    /// The projected rows asked for, `[rows, d]`.
    pub embedded: Vec<f32>,
    /// GPU time of the submission, when timed.
    pub gpu_ms: Option<f64>,
}

/// `P[r, s] = mean_j sigmoid(logits[r·sub + j, s])`, 0 on rows that are not valid (docs/model.md §6.3).
pub fn encoder_rate_probabilities(logits: &[f32], valid: &[bool], sub: usize, speakers: usize) -> Vec<f64> {
    let mut probs = vec![0.0; valid.len() * speakers];
    for (r, _) in valid.iter().enumerate().filter(|(_, v)| **v) {
        let rows = &logits[r * sub * speakers..(r + 1) * sub * speakers];
        probs[r * speakers..(r + 1) * speakers].copy_from_slice(&mean_sigmoid(rows, speakers));
    }
    probs
}

/// Per speaker, the mean of `sigmoid(logit)` over the rows of `logits` (`[rows, speakers]`).
pub(crate) fn mean_sigmoid(logits: &[f32], speakers: usize) -> Vec<f64> {
    let rows = logits.len() / speakers;
    (0..speakers)
        .map(|s| (0..rows).map(|j| sigmoid(logits[j * speakers + s] as f64)).sum::<f64>() / rows as f64)
        .collect()
}
