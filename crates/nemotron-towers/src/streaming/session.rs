//! One live stream through a shared diarizer: audio in any pieces, the logits of every frame as soon as it
//! is final, exactly as upstream's streaming sessions compute them.

use std::ops::Range;

use gpu_core::Timing;

use crate::diarizer::Diarizer;
use crate::error::{Error, Result};
use crate::frontend::{HOP_LENGTH, N_MELS, first_sample_needed};
use crate::sortformer::{CacheRows, StepInput, StepOutput, mean_sigmoid};
use crate::speaker_cache::StepLayout;
use crate::streaming::mode::{ChunkPlan, StreamingMode};

/// Most encoder frames of chunk and look-ahead together (87 minutes): far past any use, far from overflow.
const MAX_MODE_FRAMES: usize = 1 << 16;

/// A streaming diarization session on a loaded [`Diarizer`], whose handle it holds (it borrows nothing, so it can be
/// kept anywhere): any number of sessions run on one model, from any threads (their GPU steps take turns).
///
/// Feed 16 kHz mono samples with [`DiarizerSession::push`], in pieces of any size; each chunk of the mode
/// runs as soon as the stream holds the audio upstream's processor cuts for it, and its frames come back.
/// [`DiarizerSession::finish`] runs the last chunk (no look-ahead) over what is left. The logits are those of
/// Transformers' `Nemotron3DiarizationForAudioFrameClassification` driven by its processor in streaming
/// mode, whatever the pieces: each chunk is one forward over `[speaker cache ; FIFO ; chunk ; look-ahead]`
/// (one GPU submission, one readback), and the cache and FIFO carry over with the `streaming_config` sizes.
///
/// The session owns everything that carries over: the samples the next chunk still needs, the speaker
/// cache, the FIFO and the compression state. The cache and FIFO embeddings stay on the GPU, in rows the session
/// leases from its diarizer until it drops: a step uploads the chunk's features and reads back logits only.
/// [`DiarizerSession::fork`] makes a copy that continues independently.
pub struct DiarizerSession {
    diarizer: Diarizer,
    mode: StreamingMode,
    plan: ChunkPlan,
    /// The speaker cache and FIFO: their bookkeeping, their rows on the GPU.
    cache: CacheRows,
    /// The stream from sample `first_sample` on (earlier samples no chunk needs any more).
    samples: Vec<f32>,
    first_sample: usize,
    /// Samples pushed in all.
    received: usize,
    /// The chunk that runs next.
    next_chunk: usize,
    timing: Timing,
}

/// What one [`DiarizerSession::push`] or [`DiarizerSession::finish`] made final.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StreamOutput {
    /// Index of the first 10 ms frame of `speaker_logits` in the stream (frames pushed before are final).
    pub first_frame: usize,
    /// `[frames, speakers]` logits of the 10 ms frames that became final, in order.
    pub speaker_logits: Vec<f32>,
    /// `[⌈frames / 8⌉, speakers]`: per 80 ms frame (whole ones: every chunk but the last ends on one), the
    /// mean of its 10 ms sigmoids; the stream's last one may be shorter and averages the frames it has.
    pub speaker_probabilities: Vec<f32>,
    /// The chunks that ran, one forward each, in order.
    pub chunks: Vec<ChunkReport>,
}

impl StreamOutput {
    /// 10 ms frames in [`StreamOutput::speaker_logits`].
    pub fn frames(&self) -> usize {
        self.chunks.iter().map(|c| c.frames).sum()
    }

    pub(super) fn append(&mut self, mut other: StreamOutput) {
        if self.chunks.is_empty() {
            self.first_frame = other.first_frame;
        }
        self.speaker_logits.append(&mut other.speaker_logits);
        self.speaker_probabilities.append(&mut other.speaker_probabilities);
        self.chunks.append(&mut other.chunks);
    }
}

/// One chunk's forward.
#[derive(Clone, Debug, PartialEq)]
pub struct ChunkReport {
    /// Its index in the stream.
    pub index: usize,
    /// The samples upstream's processor cuts for it (what an upstream session hands the feature extractor).
    pub samples: Range<usize>,
    /// The 10 ms mel frames it reads, look-ahead included.
    pub mel_frames: Range<usize>,
    /// Look-ahead in encoder frames (0 on the last chunk).
    pub lookahead: usize,
    /// 10 ms frames it made final.
    pub frames: usize,
    /// Encoder rows of its forward: speaker cache, FIFO, chunk and look-ahead.
    pub step_rows: usize,
    /// Its log-mel features `[mel_frames.len(), 128]` (the offline front end's frames, bit for bit).
    pub features: Vec<f32>,
    /// GPU time of its submission, when the session measures it ([`DiarizerSession::with_gpu_timing`]).
    pub gpu_ms: Option<f64>,
}

impl DiarizerSession {
    /// A session of `mode` on `diarizer`, with its config's streaming sizes (`streaming_config`). Refused
    /// when the mode has no chunk, when the model does not read 128 mel bins, and when a step of the mode
    /// (cache, FIFO, chunk and look-ahead rows) cannot fit the device.
    pub fn new(diarizer: Diarizer, mode: StreamingMode) -> Result<Self> {
        let c = diarizer.config();
        let (chunk, lookahead) = mode.frames();
        if chunk == 0 || chunk.saturating_add(lookahead) > MAX_MODE_FRAMES {
            return Err(Error::StreamingMode { mode: mode.name(), chunk, lookahead, max: MAX_MODE_FRAMES });
        }
        if c.encoder.mel_bins != N_MELS {
            return Err(Error::MelBins { front_end: N_MELS, model: c.encoder.mel_bins });
        }
        let cache = c.streaming_cache;
        let rows = mode.step_rows(&cache);
        let sortformer = diarizer.sortformer();
        sortformer.tower().check_rows(rows, &format!("a streaming step of mode {}", mode.name()))?;
        let plan = ChunkPlan::new(mode, c.encoder.subsampling);
        let cache = sortformer.cache_rows(rows, cache)?;
        sortformer.join();
        Ok(Self {
            diarizer,
            mode,
            plan,
            cache,
            samples: Vec::new(),
            first_sample: 0,
            received: 0,
            next_chunk: 0,
            timing: Timing::Off,
        })
    }

    /// A copy of the session that continues independently: the same stream so far, its own rows on the GPU (copied
    /// there, in a submission of its own).
    pub fn fork(&self) -> Result<Self> {
        let cache = self.cache.fork()?;
        self.diarizer.sortformer().join();
        Ok(Self {
            diarizer: self.diarizer.clone(),
            mode: self.mode,
            plan: self.plan,
            cache,
            samples: self.samples.clone(),
            first_sample: self.first_sample,
            received: self.received,
            next_chunk: self.next_chunk,
            timing: self.timing,
        })
    }

    /// Measures each chunk's GPU time ([`ChunkReport::gpu_ms`]; needs timestamp queries, otherwise `None`).
    pub fn with_gpu_timing(mut self, on: bool) -> Self {
        self.timing = if on { Timing::Span } else { Timing::Off };
        self
    }

    /// The session's mode.
    pub fn mode(&self) -> StreamingMode {
        self.mode
    }

    /// Samples pushed so far.
    pub fn samples_received(&self) -> usize {
        self.received
    }

    /// Samples still to push before the next chunk runs (its cut is then complete).
    pub fn samples_until_next_chunk(&self) -> usize {
        self.plan.trigger(self.next_chunk).saturating_sub(self.received)
    }

    /// Appends 16 kHz mono samples (all finite) and runs every chunk they complete.
    pub async fn push(&mut self, samples: &[f32]) -> Result<StreamOutput> {
        self.check_samples(samples)?;
        let mut out = self.accept(samples);
        while self.chunk_due() {
            out.append(self.run_chunk(self.plan.chunk_frames, false).await?);
        }
        self.drop_used_samples();
        Ok(out)
    }

    /// Checks that every sample is finite (a stream with a NaN or an infinity is refused, nothing appended).
    pub(super) fn check_samples(&self, samples: &[f32]) -> Result<()> {
        Ok(nemotron_postprocess::samples::non_finite("audio stream", samples, self.received)?)
    }

    /// Appends checked samples; the output their chunks will fill.
    pub(super) fn accept(&mut self, samples: &[f32]) -> StreamOutput {
        self.samples.extend_from_slice(samples);
        self.received += samples.len();
        StreamOutput { first_frame: self.frames_emitted(), ..StreamOutput::default() }
    }

    /// Whether the stream holds all the audio of the next chunk.
    pub(super) fn chunk_due(&self) -> bool {
        self.received >= self.plan.trigger(self.next_chunk)
    }

    /// Drops the samples no chunk needs any more: once per push, since a long piece completes many chunks, and each
    /// would move the rest of it.
    pub(super) fn drop_used_samples(&mut self) {
        let keep = first_sample_needed(self.plan.first_frame(self.next_chunk)).max(self.first_sample);
        self.samples.drain(..keep - self.first_sample);
        self.first_sample = keep;
    }

    /// Ends the stream: the frames not yet final (up to `⌊samples / 160⌋` in all) run as the last chunk,
    /// without look-ahead.
    pub async fn finish(mut self) -> Result<StreamOutput> {
        let first = self.frames_emitted();
        let frames = (self.received / HOP_LENGTH).saturating_sub(first);
        if frames == 0 {
            return Ok(StreamOutput { first_frame: first, ..StreamOutput::default() });
        }
        self.run_chunk(frames, true).await
    }

    /// 10 ms frames made final so far.
    fn frames_emitted(&self) -> usize {
        self.plan.first_frame(self.next_chunk)
    }

    /// Runs the next chunk over `frames` mel frames: with the mode's look-ahead, or as the `last` one.
    async fn run_chunk(&mut self, frames: usize, last: bool) -> Result<StreamOutput> {
        let due = self.prepare_chunk(frames, last)?;
        let mut steps = self.diarizer.sortformer().steps(&[self.step(&due)], self.timing).await?;
        let step = steps.pop().ok_or_else(|| Error::Internal("a streaming step's output is missing".into()))?;
        Ok(self.complete_chunk(due, step))
    }

    /// The next chunk's step, over `frames` mel frames (with the mode's look-ahead, or as the `last` one), as the
    /// host prepares it: its features, and its rows after the speaker cache and FIFO.
    pub(super) fn prepare_chunk(&self, frames: usize, last: bool) -> Result<DueChunk> {
        let c = self.diarizer.config();
        let lookahead = if last { 0 } else { self.plan.lookahead };
        let first = self.plan.first_frame(self.next_chunk);
        let mel_frames = first..first + frames;
        let features = self.diarizer.frontend().frames(&self.samples, self.first_sample, mel_frames.clone())?;
        // Stacked `sub` frames per row; a partial last group is zero-padded and stays a valid key upstream.
        let sub_rows = frames.div_ceil(c.encoder.subsampling);
        let layout = self.cache.layout(0, sub_rows - lookahead);
        let values = features.len();
        let mut stacked = features;
        stacked.resize(sub_rows * c.encoder.stacked_features(), 0.0);
        Ok(DueChunk { last, lookahead, mel_frames, stacked, values, layout })
    }

    /// The GPU step of a prepared chunk: its features after the session's rows, every row a key.
    pub(super) fn step<'s>(&'s self, due: &'s DueChunk) -> StepInput<'s> {
        self.cache.step(&due.stacked, due.layout, due.rows(), due.last)
    }

    /// Takes the step of a prepared chunk: updates the speaker cache and FIFO, and gives what the chunk made final.
    pub(super) fn complete_chunk(&mut self, due: DueChunk, step: StepOutput) -> StreamOutput {
        let c = self.diarizer.config();
        let (sub, speakers) = (c.encoder.subsampling, c.speakers);
        let step_rows = due.rows();
        let DueChunk { last, lookahead, mel_frames, mut stacked, values, layout } = due;
        let index = self.next_chunk;
        let chunk = self.cache.complete(layout, &step.logits, step_rows, (sub, speakers));
        // The last chunk drops the padding of its partial group.
        let emitted = (layout.chunk_rows * sub).min(mel_frames.len());
        let speaker_logits = chunk[..emitted * speakers].to_vec();
        let speaker_probabilities: Vec<f32> = speaker_logits
            .chunks(sub * speakers)
            .flat_map(|group| mean_sigmoid(group, speakers))
            .map(|p| p as f32)
            .collect();
        stacked.truncate(values);
        let report = ChunkReport {
            index,
            samples: self.plan.samples(index, last.then_some(self.received)),
            mel_frames: mel_frames.clone(),
            lookahead,
            frames: emitted,
            step_rows,
            features: stacked,
            gpu_ms: step.gpu_ms,
        };
        self.next_chunk += 1;
        StreamOutput { first_frame: mel_frames.start, speaker_logits, speaker_probabilities, chunks: vec![report] }
    }

    /// The diarizer the session runs on.
    pub(super) fn diarizer(&self) -> &Diarizer {
        &self.diarizer
    }

    /// Whether GPU times are measured.
    pub(super) fn timing(&self) -> Timing {
        self.timing
    }

    /// Encoder rows of the mode's largest step: speaker cache, FIFO, chunk and look-ahead.
    pub(super) fn max_step_rows(&self) -> usize {
        self.mode.step_rows(&self.diarizer.config().streaming_cache)
    }

    /// The mode's chunk in 10 ms frames.
    pub(super) fn chunk_frames(&self) -> usize {
        self.plan.chunk_frames
    }
}

/// The session no longer steps: its diarizer frees the batch-sized workspaces once no session or batch is left (its
/// rows go back to their page when the slot drops, after this).
impl Drop for DiarizerSession {
    fn drop(&mut self) {
        self.diarizer.sortformer().leave();
    }
}

/// A chunk whose step is due, prepared on the host ([`DiarizerSession::prepare_chunk`]).
pub(super) struct DueChunk {
    last: bool,
    lookahead: usize,
    mel_frames: Range<usize>,
    /// The chunk's log-mel features, stacked `[rows, subsampling·mel]` (a partial last group zero-padded).
    stacked: Vec<f32>,
    /// Values of `stacked` before the padding: the features the chunk reads.
    values: usize,
    layout: StepLayout,
}

impl DueChunk {
    /// Rows of the step: speaker cache, FIFO, chunk and look-ahead.
    fn rows(&self) -> usize {
        self.layout.chunk_start() + self.layout.chunk_rows + self.lookahead
    }
}
