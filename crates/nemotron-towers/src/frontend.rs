//! The log-mel front end (docs/model.md §2): 16 kHz mono PCM → `[F8, 128]` log-mel frames shared by both towers,
//! plus the per-feature normalisation the ASR tower applies on top.
//!
//! Recipe: pre-emphasis 0.97 → centred 512-point STFT (hop 160, 256 zeros each end) with the 400-tap
//! bf16 Hann window centred in 512 → power `(√(re²+im²))²` → bf16 Slaney mel bank → `ln(mel + 2⁻²⁴)`.
//! Only the `V = ⌊L/160⌋` valid frames are computed; frame `V` (which the STFT would produce) and the
//! padding up to a multiple of 8 are zero.

use std::sync::Arc;
use std::thread;

use realfft::{FftError, RealFftPlanner, RealToComplex};

pub use crate::mel::{N_BINS, N_MELS, WIN_LENGTH, hann_window_bf16, slaney_filterbank_bf16};
use crate::mel::{N_FFT, nonzero_spans};

pub use nemotron_postprocess::time::HOP_LENGTH;
/// Mel frames stacked into one encoder frame (one audio token).
pub const FRAMES_PER_TOKEN: usize = 8;

const PREEMPHASIS: f32 = 0.97;
/// 2⁻²⁴: keeps `ln` finite on silent frames.
const LOG_GUARD: f32 = 5.960_464_5e-8;
/// Added to the standard deviation (not the variance) in the per-feature normalisation.
const NORMALIZE_EPS: f64 = 1e-5;
/// `center=True`: the signal is zero-padded by half an FFT on both ends.
const CENTER_PAD: usize = N_FFT / 2;
/// Where the 400-tap window sits inside the 512-sample frame.
const WINDOW_OFFSET: usize = (N_FFT - WIN_LENGTH) / 2;
/// Below this many frames per worker a thread costs more than it saves.
const MIN_FRAMES_PER_WORKER: usize = 512;

/// Errors of the front end.
#[derive(Debug, thiserror::Error)]
pub enum FrontendError {
    /// A window or filter bank passed in has the wrong number of values.
    #[error("{what}: expected {expected} values, got {got}")]
    Shape {
        /// Which input: "analysis window" or "mel filter bank".
        what: &'static str,
        /// Values required (400 for the window, 128 · 257 for the bank).
        expected: usize,
        /// Values passed.
        got: usize,
    },

    /// A window or filter bank passed in holds NaN or ±Inf.
    #[error("{what}: value {index} is not finite")]
    NonFinite {
        /// Which input: "analysis window" or "mel filter bank".
        what: &'static str,
        /// Position of the first non-finite value in the flattened input.
        index: usize,
    },

    /// Frames of a piece of the recording were asked for that need samples before the piece.
    #[error("frame {frame} needs samples from {needed} on, but the samples given start at {first_sample}")]
    SamplesBefore {
        /// The first frame asked for.
        frame: usize,
        /// The first sample it needs (its window, and the sample before it for the pre-emphasis).
        needed: usize,
        /// Where the samples given start in the recording.
        first_sample: usize,
    },

    /// realfft refused a buffer (only possible through a bug in this module).
    #[error("STFT failed: {0}")]
    Fft(#[from] FftError),
}

/// The log-mel extractor: the window and filter bank in f32 plus a planned 512-point real FFT.
pub struct LogMel {
    window: Vec<f32>,
    filterbank: Vec<f32>,
    /// Non-zero bin span `[first, end)` of each filter row.
    spans: Vec<(usize, usize)>,
    fft: Arc<dyn RealToComplex<f64>>,
}

/// Log-mel features of one utterance, row-major `[frames, N_MELS]`.
#[derive(Debug, Clone, PartialEq)]
pub struct Features {
    /// `frames × N_MELS` values; rows at and past `valid` are zero.
    pub data: Vec<f32>,
    /// `F8 = ⌈(V + 1) / 8⌉ · 8`.
    pub frames: usize,
    /// `V = ⌊samples / 160⌋`.
    pub valid: usize,
}

impl LogMel {
    /// Uses the checkpoint's `perception.preprocessor.featurizer.window` (`[400]`) and `.fb` (`[1, 128, 257]`,
    /// flattened) when given, widened to f32; otherwise computes both and rounds them to bf16 as the
    /// release's feature extractor does.
    pub fn new(window: Option<&[f32]>, filterbank: Option<&[f32]>) -> Result<Self, FrontendError> {
        let window = match window {
            Some(values) => checked("analysis window", values, WIN_LENGTH)?,
            None => hann_window_bf16(),
        };
        let filterbank = match filterbank {
            Some(values) => checked("mel filter bank", values, N_MELS * N_BINS)?,
            None => slaney_filterbank_bf16(),
        };
        let spans = nonzero_spans(&filterbank);
        let fft = RealFftPlanner::<f64>::new().plan_fft_forward(N_FFT);
        Ok(Self { window, filterbank, spans, fft })
    }

    /// Log-mel features of 16 kHz mono samples. Frames are split over the available cores.
    pub fn compute(&self, samples: &[f32]) -> Result<Features, FrontendError> {
        let valid = samples.len() / HOP_LENGTH;
        let frames = (valid + 1).div_ceil(FRAMES_PER_TOKEN) * FRAMES_PER_TOKEN;
        let mut data = vec![0.0f32; frames * N_MELS];

        let workers = cores().min(valid.div_ceil(MIN_FRAMES_PER_WORKER)).max(1);
        let frames_per_worker = valid.div_ceil(workers).max(1);
        let signal = samples;
        if workers == 1 {
            self.frames_into(signal, 0, 0, &mut data[..valid * N_MELS])?;
            return Ok(Features { data, frames, valid });
        }
        thread::scope(|scope| {
            let handles: Vec<_> = data[..valid * N_MELS]
                .chunks_mut(frames_per_worker * N_MELS)
                .enumerate()
                .map(|(worker, rows)| {
                    scope.spawn(move || self.frames_into(signal, 0, worker * frames_per_worker, rows))
                })
                .collect();
            handles.into_iter().try_for_each(|handle| handle.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
        })?;
        Ok(Features { data, frames, valid })
    }

    /// Log-mel frames `frames` (`[frames.len(), N_MELS]`) of a recording of which `samples` holds the piece
    /// that starts at sample `first_sample`, bit for bit the rows [`LogMel::compute`] gives for the whole
    /// recording — what a streaming session computes as its audio arrives.
    ///
    /// Frame `t` reads samples `[160t − 201, 160t + 200)` (its window, and one more for the pre-emphasis),
    /// so the piece must start at 0 or by `160·frames.start − 201` ([`FrontendError::SamplesBefore`]
    /// otherwise). Samples past the piece are taken as the end of the recording (zeros, as `compute` pads):
    /// frames that reach past it are final only once the recording has ended there.
    pub fn frames(
        &self,
        samples: &[f32],
        first_sample: usize,
        frames: std::ops::Range<usize>,
    ) -> Result<Vec<f32>, FrontendError> {
        let needed = first_sample_needed(frames.start);
        if first_sample > needed && !frames.is_empty() {
            return Err(FrontendError::SamplesBefore { frame: frames.start, needed, first_sample });
        }
        let mut rows = vec![0.0f32; frames.len() * N_MELS];
        self.frames_into(samples, first_sample, frames.start, &mut rows)?;
        Ok(rows)
    }

    /// Log-mel rows for frames `first_frame..` into `rows` (`N_MELS` values per frame), from the piece of
    /// the recording that starts at sample `first_sample`.
    ///
    /// Precision: the FFT runs in f64, everything else in f32 like the torch extractor. Against the
    /// reference cases this lands closest (max |Δ| 5.2–5.6e-5); an f32 FFT gives 5.4–6.6e-5 and an
    /// all-f64 pipeline 5.3–6.4e-5, the reference itself being torch's f32 arithmetic.
    fn frames_into(
        &self,
        signal: &[f32],
        first_sample: usize,
        first_frame: usize,
        rows: &mut [f32],
    ) -> Result<(), FftError> {
        let mut frame = self.fft.make_input_vec();
        let mut spectrum = self.fft.make_output_vec();
        let mut scratch = self.fft.make_scratch_vec();
        let mut power = [0.0f32; N_BINS];
        for (t, row) in (first_frame..).zip(rows.chunks_exact_mut(N_MELS)) {
            self.windowed_frame(signal, first_sample, t, &mut frame);
            self.fft.process_with_scratch(&mut frame, &mut spectrum, &mut scratch)?;
            for (p, bin) in power.iter_mut().zip(&spectrum) {
                // torch squares the f32 magnitude of a complex64 spectrum; do the same to match it.
                let (re, im) = (bin.re as f32, bin.im as f32);
                let magnitude = (re * re + im * im).sqrt();
                *p = magnitude * magnitude;
            }
            for ((value, weights), &(first, end)) in
                row.iter_mut().zip(self.filterbank.chunks_exact(N_BINS)).zip(&self.spans)
            {
                let mel: f32 = weights[first..end].iter().zip(&power[first..end]).map(|(w, p)| w * p).sum();
                *value = (mel + LOG_GUARD).ln();
            }
        }
        Ok(())
    }

    /// Frame `t` of the centred STFT of the pre-emphasised signal: padded samples `[160t, 160t + 512)`
    /// times the zero-padded window. Padded sample `p` is signal sample `p − 256`; the window covers
    /// frame positions `[56, 456)`. Pre-emphasis is applied here, sample by sample, rather than to a
    /// copy of the whole recording, which would cost as much memory as the recording itself. `signal`
    /// holds the recording from sample `first_sample` on.
    fn windowed_frame(&self, signal: &[f32], first_sample: usize, t: usize, frame: &mut [f64]) {
        frame.fill(0.0);
        let first = t * HOP_LENGTH + WINDOW_OFFSET;
        for (k, (slot, &w)) in frame[WINDOW_OFFSET..].iter_mut().zip(&self.window).enumerate() {
            let sample = (first + k).checked_sub(CENTER_PAD);
            if let Some(x) = sample.and_then(|n| pre_emphasized(signal, first_sample, n)) {
                *slot = f64::from(x * w);
            }
        }
    }
}

/// The values, as the offline loop reads them (a [`crate::DiarizerBatch`] holds the features it diarizes).
impl AsRef<[f32]> for Features {
    fn as_ref(&self) -> &[f32] {
        &self.data
    }
}

impl Features {
    /// `true` on the `valid` frames, `false` on frame `V` and the padding.
    pub fn mask(&self) -> Vec<bool> {
        (0..self.frames).map(|t| t < self.valid).collect()
    }

    /// Audio tokens (encoder frames kept after the towers): `⌈V / 8⌉`.
    pub fn tokens(&self) -> usize {
        self.valid.div_ceil(FRAMES_PER_TOKEN)
    }

    /// Mel bins per frame (the front end makes [`N_MELS`]; a features file may hold another count).
    pub fn bins(&self) -> usize {
        self.data.len() / self.frames.max(1)
    }

    /// Per-feature normalisation for the ASR tower (docs/model.md §2): each mel bin shifted by its mean and divided
    /// by `√(Σ(x − mean)² / max(V − 1, 1)) + 1e-5`, statistics over the whole utterance's valid frames
    /// (in f64); padding rows stay zero.
    pub fn normalized(&self) -> Vec<f32> {
        self.normalization().apply(self, 0..self.frames)
    }

    /// The statistics of [`Features::normalized`], to normalise a few rows at a time.
    pub fn normalization(&self) -> Normalization {
        let bins = self.bins();
        let (mut mean, mut std) = (vec![0.0f64; bins], vec![0.0f64; bins]);
        if self.valid == 0 || bins == 0 {
            return Normalization { mean, std };
        }
        let valid_rows = || self.data[..self.valid * bins].chunks_exact(bins);
        for row in valid_rows() {
            mean.iter_mut().zip(row).for_each(|(sum, &x)| *sum += f64::from(x));
        }
        mean.iter_mut().for_each(|sum| *sum /= self.valid as f64);
        for row in valid_rows() {
            for ((sum, &x), &mu) in std.iter_mut().zip(row).zip(&mean) {
                *sum += (f64::from(x) - mu).powi(2);
            }
        }
        let degrees = (self.valid - 1).max(1) as f64;
        std.iter_mut().for_each(|sum| *sum = (*sum / degrees).sqrt() + NORMALIZE_EPS);
        Normalization { mean, std }
    }
}

/// Per-bin mean and standard deviation (+ eps) of one utterance's valid frames.
#[derive(Clone, Debug)]
pub struct Normalization {
    mean: Vec<f64>,
    std: Vec<f64>,
}

impl Normalization {
    /// Normalised rows `frames` of `features` (`frames.len() × bins` values): valid frames
    /// normalised, frames from `features.valid` on zero. Large ranges are split among threads (the ASR encoder
    /// normalises a batch of eight chunks, 4.9 M values, between its GPU batches); every value is computed as
    /// alone, so the bits do not depend on the split.
    pub fn apply(&self, features: &Features, frames: std::ops::Range<usize>) -> Vec<f32> {
        let bins = self.mean.len();
        let mut out = gpu_core::host_vec(frames.len() * bins);
        if bins == 0 {
            return out;
        }
        let last = features.valid.min(features.data.len() / bins);
        let valid = frames.start.min(last)..frames.end.min(last);
        let input = &features.data[valid.start * bins..valid.end * bins];
        let normalize = |out: &mut [f32], input: &[f32]| {
            for (out_row, row) in out.chunks_exact_mut(bins).zip(input.chunks_exact(bins)) {
                for (((y, &x), &mu), &sigma) in out_row.iter_mut().zip(row).zip(&self.mean).zip(&self.std) {
                    *y = ((f64::from(x) - mu) / sigma) as f32;
                }
            }
        };
        let threads = cores().min(MAX_NORMALIZE_THREADS);
        let rows_per_thread = (input.len() / bins).div_ceil(threads).max(MIN_ROWS_PER_THREAD);
        let (valid_out, _) = out.split_at_mut(input.len());
        if input.len() <= rows_per_thread * bins {
            normalize(valid_out, input);
        } else {
            std::thread::scope(|scope| {
                let shares = valid_out.chunks_mut(rows_per_thread * bins).zip(input.chunks(rows_per_thread * bins));
                for (out, input) in shares {
                    scope.spawn(move || normalize(out, input));
                }
            });
        }
        out
    }
}

/// The threads host work may spread over: the cores, or 1 without the `parallel` feature (the calling thread only:
/// wasm32 has no threads).
fn cores() -> usize {
    match cfg!(feature = "parallel") {
        true => thread::available_parallelism().map_or(1, |n| n.get()),
        false => 1,
    }
}

/// Threads [`Normalization::apply`] splits a large range among, and the fewest rows worth a thread.
const MAX_NORMALIZE_THREADS: usize = 8;
const MIN_ROWS_PER_THREAD: usize = 2048;

/// The first sample frame `frame` reads: the first of its window, less one for the pre-emphasis (0 near the
/// start). A piece of a recording from there on is enough for [`LogMel::frames`] from `frame` on.
pub fn first_sample_needed(frame: usize) -> usize {
    (frame * HOP_LENGTH + WINDOW_OFFSET).saturating_sub(CENTER_PAD + 1)
}

/// `y[0] = x[0]`, `y[n] = x[n] − 0.97·x[n−1]`, in f32 like the reference, for sample `n` of a recording of
/// which `samples` holds the piece from `first_sample` on; `None` past the end and before the piece.
fn pre_emphasized(samples: &[f32], first_sample: usize, n: usize) -> Option<f32> {
    let i = n.checked_sub(first_sample)?;
    let x = *samples.get(i)?;
    Some(match (n.checked_sub(1), i.checked_sub(1)) {
        (Some(_), Some(previous)) => x - PREEMPHASIS * samples[previous],
        // Sample 0 of the recording; or the first of a piece, which `LogMel::frames` never lets a window reach.
        _ => x,
    })
}

fn checked(what: &'static str, values: &[f32], expected: usize) -> Result<Vec<f32>, FrontendError> {
    if values.len() != expected {
        return Err(FrontendError::Shape { what, expected, got: values.len() });
    }
    if let Some(index) = values.iter().position(|v| !v.is_finite()) {
        return Err(FrontendError::NonFinite { what, index });
    }
    Ok(values.to_vec())
}
