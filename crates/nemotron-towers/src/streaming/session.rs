//! One live stream through a shared diarizer: audio in any pieces, the logits of every frame as soon as it
//! is final, exactly as upstream's streaming sessions compute them.

use std::ops::Range;

use gpu_core::Timing;

use crate::audio::AudioError;
use crate::error::{Error, Result};
use crate::frontend::{HOP_LENGTH, N_MELS, first_sample_needed};
use crate::pipeline::Diarizer;
use crate::sortformer::{encoder_rate_probabilities, mean_sigmoid};
use crate::speaker_cache::{SpeakerCache, StepLayout};
use crate::streaming::mode::{ChunkPlan, StreamingMode};

/// Most encoder frames of chunk and look-ahead together (87 minutes): far past any use, far from overflow.
const MAX_MODE_FRAMES: usize = 1 << 16;

/// A streaming diarization session on a loaded [`Diarizer`], which it only borrows: any number of sessions
/// run on one model, from any threads (their GPU steps take turns).
///
/// Feed 16 kHz mono samples with [`DiarizerSession::push`], in pieces of any size; each chunk of the mode
/// runs as soon as the stream holds the audio upstream's processor cuts for it, and its frames come back.
/// [`DiarizerSession::finish`] runs the last chunk (no look-ahead) over what is left. The logits are those of
/// Transformers' `Nemotron3DiarizationForAudioFrameClassification` driven by its processor in streaming
/// mode, whatever the pieces: each chunk is one forward over `[speaker cache ; FIFO ; chunk ; look-ahead]`
/// (one GPU submission, one readback), and the cache and FIFO carry over with the `streaming_config` sizes.
///
/// The session owns everything that carries over: the samples the next chunk still needs, the speaker
/// cache, the FIFO and the compression state. It is `Clone` (a copy continues independently).
#[derive(Clone)]
pub struct DiarizerSession<'m> {
    diarizer: &'m Diarizer,
    mode: StreamingMode,
    plan: ChunkPlan,
    cache: SpeakerCache,
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

    fn append(&mut self, mut other: StreamOutput) {
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

impl Diarizer {
    /// A streaming session on this diarizer (see [`DiarizerSession`]).
    pub fn session(&self, mode: StreamingMode) -> Result<DiarizerSession<'_>> {
        DiarizerSession::new(self, mode)
    }
}

impl<'m> DiarizerSession<'m> {
    /// A session of `mode` on `diarizer`, with its config's streaming sizes (`streaming_config`). Refused
    /// when the mode has no chunk, when the model does not read 128 mel bins, and when a step of the mode
    /// (cache, FIFO, chunk and look-ahead rows) cannot fit the device.
    pub fn new(diarizer: &'m Diarizer, mode: StreamingMode) -> Result<Self> {
        let c = diarizer.config();
        let (chunk, lookahead) = mode.frames();
        if chunk == 0 || chunk.saturating_add(lookahead) > MAX_MODE_FRAMES {
            return Err(Error::StreamingMode { mode: mode.name(), chunk, lookahead, max: MAX_MODE_FRAMES });
        }
        if c.encoder.mel_bins != N_MELS {
            return Err(Error::MelBins { front_end: N_MELS, model: c.encoder.mel_bins });
        }
        let cache = c.streaming_cache;
        let rows = cache.cache_length + cache.fifo_length + chunk + lookahead;
        diarizer.sortformer().tower().check_rows(rows, &format!("a streaming step of mode {}", mode.name()))?;
        Ok(Self {
            diarizer,
            mode,
            plan: ChunkPlan::new(mode, c.encoder.subsampling),
            cache: SpeakerCache::new(cache, c.speakers, c.encoder.hidden),
            samples: Vec::new(),
            first_sample: 0,
            received: 0,
            next_chunk: 0,
            timing: Timing::Off,
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
    pub fn push(&mut self, samples: &[f32]) -> Result<StreamOutput> {
        if let Some((i, &value)) = samples.iter().enumerate().find(|(_, v)| !v.is_finite()) {
            let input = "audio stream".to_string();
            return Err(AudioError::NonFinite { input, index: self.received + i, value }.into());
        }
        self.samples.extend_from_slice(samples);
        self.received += samples.len();
        let mut out = StreamOutput { first_frame: self.frames_emitted(), ..StreamOutput::default() };
        while self.received >= self.plan.trigger(self.next_chunk) {
            out.append(self.run_chunk(self.plan.chunk_frames, false)?);
        }
        // Once per push: a long piece completes many chunks, and each would move the rest of it.
        let keep = first_sample_needed(self.plan.first_frame(self.next_chunk)).max(self.first_sample);
        self.samples.drain(..keep - self.first_sample);
        self.first_sample = keep;
        Ok(out)
    }

    /// Ends the stream: the frames not yet final (up to `⌊samples / 160⌋` in all) run as the last chunk,
    /// without look-ahead.
    pub fn finish(mut self) -> Result<StreamOutput> {
        let first = self.frames_emitted();
        let frames = (self.received / HOP_LENGTH).saturating_sub(first);
        if frames == 0 {
            return Ok(StreamOutput { first_frame: first, ..StreamOutput::default() });
        }
        self.run_chunk(frames, true)
    }

    /// 10 ms frames made final so far.
    fn frames_emitted(&self) -> usize {
        self.plan.first_frame(self.next_chunk)
    }

    /// Runs the next chunk over `frames` mel frames: with the mode's look-ahead, or as the `last` one.
    fn run_chunk(&mut self, frames: usize, last: bool) -> Result<StreamOutput> {
        let c = self.diarizer.config();
        let lookahead = if last { 0 } else { self.plan.lookahead };
        let (d, sub, speakers) = (c.encoder.hidden, c.encoder.subsampling, c.speakers);
        let index = self.next_chunk;
        let first = self.plan.first_frame(index);
        let mel_frames = first..first + frames;
        let features = self.diarizer.frontend().frames(&self.samples, self.first_sample, mel_frames.clone())?;
        // Stacked `sub` frames per row; a partial last group is zero-padded and stays a valid key upstream.
        let rows = frames.div_ceil(sub);
        let mut stacked = features.clone();
        stacked.resize(rows * c.encoder.stacked_features(), 0.0);
        let chunk_rows = rows - lookahead;
        let (prefix, _) = self.cache.step_input(&[], &[]);
        let layout = StepLayout {
            cache_rows: self.cache.cache_rows(),
            fifo_rows: self.cache.fifo_rows(),
            lookback: 0,
            chunk_rows,
        };
        let sortformer = self.diarizer.sortformer();
        let step = sortformer.stream_step(&prefix, &stacked, chunk_rows, self.timing)?;
        // The last chunk drops the padding of its partial group.
        let emitted = (chunk_rows * sub).min(frames);
        let start = layout.chunk_start() * sub * speakers;
        let speaker_logits = step.logits[start..start + emitted * speakers].to_vec();
        let probs = encoder_rate_probabilities(&step.logits, &vec![true; prefix.len() / d + rows], sub, speakers);
        self.cache.update(layout, &step.embedded, &probs, sortformer.silence());
        let speaker_probabilities: Vec<f32> = speaker_logits
            .chunks(sub * speakers)
            .flat_map(|group| mean_sigmoid(group, speakers))
            .map(|p| p as f32)
            .collect();
        let report = ChunkReport {
            index,
            samples: self.plan.samples(index, last.then_some(self.received)),
            mel_frames,
            lookahead,
            frames: emitted,
            step_rows: layout.chunk_start() + rows,
            features,
            gpu_ms: step.gpu_ms,
        };
        self.next_chunk += 1;
        Ok(StreamOutput { first_frame: first, speaker_logits, speaker_probabilities, chunks: vec![report] })
    }
}
