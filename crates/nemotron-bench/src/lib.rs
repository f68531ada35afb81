//! `nemotron-bench`: release-sized timings of `nemotron-towers` that need no checkpoint (random bf16 weights of the release config), the same work as the
//! PyTorch peer: one ASR chunk of 600 rows, one Sortformer step of 828 embedded rows, the word-timestamp head on the
//! ASR states of 60 s of audio, and the whole module on N seconds of audio; and ([`stream`]) streaming sessions.
//! Results are data ([`Measurement`], [`BenchEvent`]); `nemotron-audio bench` prints them (through
//! `nemotron-engine`'s `bench` feature).

#![warn(missing_docs)]

pub mod stream;

use nemotron_towers::blocking::Block;
use std::ops::ControlFlow;
use std::time::Instant;

use audio_kernels::random::Rng;
use gpu_core::{Gpu, Profile, Timing};

use nemotron_towers::chunks::schedule;
use nemotron_towers::config::{ChunkConfig, ConfigError, EncoderConfig, ModelConfig, WordTimestampConfig};
use nemotron_towers::frontend::HOP_LENGTH;
use nemotron_towers::streaming::StreamingMode;
use nemotron_towers::tower::{InputKind, Sequence, Tower};
use nemotron_towers::{AudioModel, BatchLimits, Model, ModelOptions};
use nemotron_towers::{Error, Result};
use stream::{LoadTrial, StreamLatency};

/// What the cases run on: speech-like audio (also the towers' tests' long recordings).
pub use nemotron_towers::synthetic::{seeded_audio, synthetic_audio};

/// What to run.
#[derive(Clone, Debug)]
pub struct BenchOptions {
    /// Lengths of synthetic audio for the whole-module runs.
    pub seconds: Vec<u32>,
    /// Timed repeats of each case (after warm-up runs); the median is reported.
    pub repeats: usize,
    /// Also print per-kernel GPU times of the tower cases.
    pub profile: bool,
    /// Shapes to bench (`None`: the release config's defaults).
    pub config: Option<ModelConfig>,
    /// How the random model is set up.
    pub model: ModelOptions,
    /// The corpus case: many files at once (`None`: not run).
    pub corpus: Option<Corpus>,
}

/// The corpus case: `files` recordings of `seconds` each, diarized side by side (`batch` recordings per submission,
/// [`nemotron_towers::Diarizer::batch`]), and the whole module over each of them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Corpus {
    /// Recordings.
    pub files: usize,
    /// Seconds of each.
    pub seconds: u32,
    /// Recordings whose steps share one submission.
    pub batch: usize,
}

/// What the bench reports as it goes.
#[derive(Debug)]
pub enum BenchEvent<'a> {
    /// The random model is on the GPU.
    WeightsReady {
        /// Host time to make and upload the weights.
        seconds: f64,
        /// Bytes of GPU buffers in use.
        gpu_bytes: u64,
    },
    /// One case measured.
    Measured(&'a Measurement),
    /// Per-kernel GPU times of a tower case (with [`BenchOptions::profile`]).
    Profile {
        /// The case.
        case: &'a str,
        /// Its kernels' times.
        profile: &'a Profile,
    },
    /// A streaming mode's per-chunk times ([`stream::run`]).
    StreamLatency(&'a StreamLatency),
    /// A streaming mode's session start times, plain and with a speaker profile.
    StreamStart(&'a stream::StreamStart),
    /// A load trial of a streaming mode.
    StreamLoad(&'a LoadTrial),
    /// The largest load trial of a mode whose sessions all kept up with real time (`None`: not one session).
    StreamCapacity {
        /// The mode.
        mode: StreamingMode,
        /// Whether the trials ran the sessions' steps batched.
        batched: bool,
        /// That trial.
        best: Option<&'a LoadTrial>,
    },
    /// All cases done.
    PeakMemory {
        /// Largest number of bytes of GPU buffers this process held.
        bytes: u64,
    },
    /// A recording of the corpus diarized side by side with others against alone: where the split of the narrow
    /// products along k and the attention's key split follow the batch's rows, its sums run in another order.
    BatchedAgainstAlone {
        /// Recordings side by side.
        recordings: usize,
        /// Relative Frobenius difference of the speaker logits, batched against alone.
        relative: f64,
        /// Whether the logits are the same bits.
        identical: bool,
    },
}

/// One measured case.
#[derive(Clone, Debug)]
pub struct Measurement {
    /// The case, e.g. `asr-chunk600`.
    pub name: String,
    /// Median GPU time of the submission (timestamps), when measured.
    pub gpu_ms: Option<f64>,
    /// Median host time from upload to readback (whole module: features to outputs).
    pub wall_ms: f64,
    /// FLOPs of one run (towers), for TFLOP/s.
    pub flops: Option<f64>,
    /// Seconds of audio (whole module), for × realtime.
    pub audio_seconds: Option<f64>,
    /// Host time from the waveform, front end included (whole module).
    pub from_waveform_ms: Option<f64>,
}

impl Measurement {
    /// TFLOP/s over the GPU time (or the wall time when there is none), for tower cases.
    pub fn tflops(&self) -> Option<f64> {
        self.flops.map(|flops| flops / self.gpu_ms.unwrap_or(self.wall_ms) / 1e9)
    }

    /// Seconds of audio per second of wall time, for whole-module cases.
    pub fn realtime(&self) -> Option<f64> {
        self.audio_seconds.map(|seconds| seconds * 1000.0 / self.wall_ms)
    }
}

/// FLOPs of one tower run over `n` rows (the peer's count): per layer
/// `2n(3d² + d² + 2·d·inter) + 4n²d`, plus the input projection.
pub fn tower_flops(c: &EncoderConfig, n: usize, projected: bool) -> f64 {
    let (n, d, inter) = (n as f64, c.hidden as f64, c.intermediate as f64);
    let layer = 2.0 * n * (4.0 * d * d + 2.0 * d * inter) + 4.0 * n * n * d;
    let projection = if projected { 2.0 * n * c.stacked_features() as f64 * d } else { 0.0 };
    c.layers as f64 * layer + projection
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

/// The median of `repeats` values of `f` (at least one) after `warmups` whose values are dropped.
fn median_of(warmups: usize, repeats: usize, f: &mut dyn FnMut() -> Result<f64>) -> Result<f64> {
    let mut values = Vec::with_capacity(repeats);
    for i in 0..warmups + repeats.max(1) {
        let value = f()?;
        if i >= warmups {
            values.push(value);
        }
    }
    Ok(median(values))
}

/// Milliseconds of wall time `f` takes.
fn wall_ms(f: &mut dyn FnMut() -> Result<()>) -> Result<f64> {
    let start = Instant::now();
    f()?;
    Ok(start.elapsed().as_secs_f64() * 1e3)
}

/// Runs every case, handing each result to `report` as it completes.
pub fn run(gpu: &Gpu, options: &BenchOptions, report: &mut dyn FnMut(BenchEvent<'_>)) -> Result<Vec<Measurement>> {
    let config = match &options.config {
        Some(config) => config.clone(),
        None => ModelConfig::from_json(r#"{"model_type":"nemo_speechlm"}"#)?,
    };
    let needs_both = || Error::from(ConfigError::Invalid("bench needs a Transcribe config (both towers)".into()));
    // Refused before gigabytes of random weights are made.
    if !matches!(config, ModelConfig::Transcribe(_)) {
        return Err(needs_both());
    }
    let started = Instant::now();
    let Model::Transcribe(model) = Model::random(gpu, &config, 0x5eed, &options.model).block()? else {
        return Err(needs_both());
    };
    report(BenchEvent::WeightsReady { seconds: started.elapsed().as_secs_f64(), gpu_bytes: gpu.memory_in_use() });
    let mut results = Vec::new();
    let mut rng = Rng::new(7);
    let asr = model.asr_tower();
    let rows = rng.f32s(600 * asr.config().stacked_features(), 1.7);
    results.push(tower_case(asr, "asr-chunk600", InputKind::Features, (&rows, 1), options, report)?);
    let diar = model.diarizer().sortformer().tower();
    let rows = rng.f32s(828 * diar.config().hidden, 1.0);
    results.push(tower_case(diar, "diar-step828", InputKind::Embeddings, (&rows, 1), options, report)?);
    // The server's workload: the steps of 128 low-latency sessions (465 rows each: see `STREAM_STEP_ROWS`)
    // batched in one submission (fewer where one binding holds fewer rows).
    let rows = &rows[..STREAM_STEP_ROWS * diar.config().hidden];
    let sessions = (diar.max_rows() / STREAM_STEP_ROWS).clamp(1, STREAM_BATCH);
    let name = format!("diar-batch{sessions}x{STREAM_STEP_ROWS}");
    results.push(tower_case(diar, &name, InputKind::Embeddings, (rows, sessions), options, report)?);
    results.extend(head_case(&model, HEAD_SECONDS, &mut rng, options, report)?);
    results.extend(transfer_case(gpu, options, report)?);
    for &seconds in &options.seconds {
        results.push(module_case(&model, seconds, &mut rng, options, report)?);
    }
    if let Some(corpus) = options.corpus {
        results.extend(corpus_case(&model, corpus, &mut rng, options, report)?);
    }
    report(BenchEvent::PeakMemory { bytes: gpu.peak_memory() });
    Ok(results)
}

/// Times `tower` over `sequences` copies of `rows` (one sequence's), all rows valid keys.
fn tower_case(
    tower: &Tower,
    name: &str,
    kind: InputKind<'_>,
    (rows, sequences): (&[f32], usize),
    options: &BenchOptions,
    report: &mut dyn FnMut(BenchEvent<'_>),
) -> Result<Measurement> {
    let c = tower.config();
    let n = rows.len() / if kind == InputKind::Features { c.stacked_features() } else { c.hidden };
    let valid = vec![true; n];
    let batch = vec![Sequence { rows, valid: &valid }; sequences];
    let (mut gpu_ms, mut wall_ms) = (Vec::new(), Vec::new());
    for i in 0..options.repeats + 2 {
        let start = Instant::now();
        let profile = tower.timed(kind, &batch, Timing::Span).block()?;
        if i >= 2 {
            wall_ms.push(start.elapsed().as_secs_f64() * 1e3);
            gpu_ms.push(profile.total_ns() / 1e6);
        }
    }
    let measurement = Measurement {
        name: name.to_string(),
        gpu_ms: Some(median(gpu_ms)),
        wall_ms: median(wall_ms),
        flops: Some(sequences as f64 * tower_flops(c, n, kind == InputKind::Features)),
        audio_seconds: None,
        from_waveform_ms: None,
    };
    report(BenchEvent::Measured(&measurement));
    if options.profile {
        let profile: Profile = tower.timed(kind, &batch, Timing::PerDispatch).block()?;
        report(BenchEvent::Profile { case: name, profile: &profile });
    }
    Ok(measurement)
}

/// Sessions in the batched streaming case (`diar-batch…`).
const STREAM_BATCH: usize = 128;
/// Rows of a low-latency streaming step with the speaker cache full (264), the FIFO at 188 of 264 rows, the chunk (9)
/// and its look-ahead (4).
const STREAM_STEP_ROWS: usize = 465;

/// Seconds of audio whose ASR states the word-timestamp head case classifies (the peer's
/// `scripts/bench/word_timestamps_peer.py` runs the same).
pub const HEAD_SECONDS: usize = 60;

/// FLOPs of the word-timestamp head over `frames` encoder frames, as upstream does the work: per chunk the
/// upsampler and the encoder over the chunk's window, then the classifier over every head frame.
pub fn head_flops(c: &WordTimestampConfig, chunks: &ChunkConfig, frames: usize) -> f64 {
    let (d, f) = (c.encoder.hidden as f64, c.upsampling_factor);
    let classifier = 2.0 * (frames * f) as f64 * d * c.vocab_size as f64;
    let windows: f64 = schedule(frames, chunks)
        .iter()
        .map(|k| {
            let n = k.context_end - k.context_start;
            2.0 * n as f64 * d * f as f64 * d + tower_flops(&c.encoder, f * n, false)
        })
        .sum();
    classifier + windows
}

/// Classes the head case keeps per frame, as the alignment of a minute's transcript does (its distinct tokens and
/// the blank: a minute of speech has about 150 words).
const HEAD_CLASSES: usize = 256;

/// The word-timestamp head on random ASR states of `seconds` of audio (all frames valid): the GPU time of its
/// submissions run back to back (as the peer times its runs), and the wall time of what the alignment runs, from
/// upload to the log-probabilities of [`HEAD_CLASSES`] classes read back. A second case, `…-logits`, is the wall
/// time of reading back every logit (what `encode --word-timestamps` writes: 95 KB per head frame).
fn head_case(
    model: &AudioModel,
    seconds: usize,
    rng: &mut Rng,
    options: &BenchOptions,
    report: &mut dyn FnMut(BenchEvent<'_>),
) -> Result<Vec<Measurement>> {
    let head = model.word_timestamp_head()?;
    let c = model.config();
    let vocab = c.word_timestamps.vocab_size;
    let frames = (seconds * 16_000 / HOP_LENGTH).div_ceil(c.asr.subsampling);
    let states = rng.f32s(frames * c.asr.hidden, 1.0);
    let mut classes: Vec<u32> = (0..HEAD_CLASSES.min(vocab)).map(|i| (i * vocab / HEAD_CLASSES) as u32).collect();
    classes.dedup();
    let gpu_ms = median_of(2, options.repeats, &mut || {
        Ok(head.timed(&states, frames, Timing::Span).block()?.iter().map(Profile::total_ns).sum::<f64>() / 1e6)
    })?;
    let wall_ms = |f: &mut dyn FnMut() -> Result<()>| median_of(2, options.repeats, &mut || wall_ms(f));
    let name = format!("wts-head-{seconds}s");
    // Profiled while the GPU is busy from the runs above (after the wall-time runs, which leave it idle while the
    // host reads, its clocks would be down).
    let profiles = if options.profile { head.timed(&states, frames, Timing::PerDispatch).block()? } else { Vec::new() };
    let aligned_ms =
        wall_ms(&mut || head.for_each_log_prob_block(&states, frames, &classes, &mut |_, _| Ok(())).block())?;
    let logits_ms = wall_ms(&mut || head.run(&states, frames).block().map(drop))?;
    let flops = Some(head_flops(&c.word_timestamps, &c.diarization.chunks, frames));
    let measured = Measurement {
        name: name.clone(),
        gpu_ms: Some(gpu_ms),
        wall_ms: aligned_ms,
        flops,
        audio_seconds: None,
        from_waveform_ms: None,
    };
    report(BenchEvent::Measured(&measured));
    let logits = Measurement {
        name: format!("{name}-logits"),
        gpu_ms: None,
        wall_ms: logits_ms,
        flops: None,
        ..measured.clone()
    };
    report(BenchEvent::Measured(&logits));
    for profile in &profiles {
        report(BenchEvent::Profile { case: &name, profile });
    }
    Ok(vec![measured, logits])
}

/// Bytes of the host ↔ device transfer case: about what the module moves per minute of audio at the release widths.
const TRANSFER_BYTES: usize = 64 << 20;

/// Host time of an upload and of a readback of [`TRANSFER_BYTES`] (the module's outputs and the head's log-probabilities
/// come back this way), each measured from the call to its end with the GPU idle before.
fn transfer_case(
    gpu: &Gpu,
    options: &BenchOptions,
    report: &mut dyn FnMut(BenchEvent<'_>),
) -> Result<Vec<Measurement>> {
    let words = TRANSFER_BYTES / 4;
    let values: Vec<f32> = (0..words).map(|i| i as f32).collect();
    let buffer = gpu.zeros("transfer bench", words)?;
    let (mut upload, mut readback) = (Vec::new(), Vec::new());
    // One untimed round first: the staging memory is made then and reused after.
    for round in 0..=options.repeats.max(1) {
        gpu.wait().block()?;
        let start = Instant::now();
        gpu.write_f32(&buffer, 0, &values)?;
        gpu.wait().block()?;
        let uploaded = start.elapsed().as_secs_f64() * 1e3;
        let start = Instant::now();
        let back = gpu.read_f32(&buffer).block()?;
        let read = start.elapsed().as_secs_f64() * 1e3;
        if back != values {
            let message = "other values came back than were written".to_string();
            return Err(gpu_core::GpuError::Readback { what: "transfer bench".into(), message }.into());
        }
        if round > 0 {
            upload.push(uploaded);
            readback.push(read);
        }
    }
    let mut measured = Vec::new();
    for (direction, times) in [("upload", upload), ("readback", readback)] {
        let measurement = Measurement {
            name: format!("transfer-{}MiB-{direction}", TRANSFER_BYTES >> 20),
            gpu_ms: None,
            wall_ms: median(times),
            flops: None,
            audio_seconds: None,
            from_waveform_ms: None,
        };
        report(BenchEvent::Measured(&measurement));
        measured.push(measurement);
    }
    Ok(measured)
}

fn module_case(
    model: &AudioModel,
    seconds: u32,
    rng: &mut Rng,
    options: &BenchOptions,
    report: &mut dyn FnMut(BenchEvent<'_>),
) -> Result<Measurement> {
    let audio = synthetic_audio(seconds.into(), rng);
    let features = model.diarizer().frontend().compute(&audio)?;
    // Medians of `repeats` runs after a warm-up on this length (pipelines exist already; workspaces grow to the
    // chunk batch there), as the peer takes its medians.
    let warm = model.encode_features(features.clone(), &mut |_, _, _| ControlFlow::Continue(())).block()?;
    let (mut from_features, mut from_audio) = (Vec::new(), Vec::new());
    for _ in 0..options.repeats.max(1) {
        let input = features.clone();
        let start = Instant::now();
        model.encode_features(input, &mut |_, _, _| ControlFlow::Continue(())).block()?;
        from_features.push(start.elapsed().as_secs_f64() * 1e3);
        let start = Instant::now();
        model.encode_audio(&audio, &mut |_, _, _| ControlFlow::Continue(())).block()?;
        from_audio.push(start.elapsed().as_secs_f64() * 1e3);
    }
    let (features_ms, audio_ms) = (median(from_features), median(from_audio));
    let measurement = Measurement {
        name: format!("audio-module-{seconds}s"),
        gpu_ms: None,
        wall_ms: features_ms,
        flops: None,
        audio_seconds: Some(seconds as f64),
        from_waveform_ms: Some(audio_ms),
    };
    report(BenchEvent::Measured(&measurement));
    // Where the module's time goes: each tower alone on the same features (the module runs them side by side, so
    // the slower one is its floor), then the fusion and projector that follow them.
    let (mut asr_ms, mut diarization_ms, mut fusion_ms) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..options.repeats.max(1) {
        let start = Instant::now();
        model.asr_hidden(&features).block()?;
        asr_ms.push(start.elapsed().as_secs_f64() * 1e3);
        let start = Instant::now();
        model.diarizer().diarize_features(features.clone(), &mut |_, _, _| ControlFlow::Continue(())).block()?;
        diarization_ms.push(start.elapsed().as_secs_f64() * 1e3);
        let start = Instant::now();
        model.run_fusion(&warm.asr_hidden, &warm.speaker_probabilities, warm.features.tokens()).block()?;
        fusion_ms.push(start.elapsed().as_secs_f64() * 1e3);
    }
    for (part, times) in [("asr", asr_ms), ("diarization", diarization_ms), ("fusion", fusion_ms)] {
        let alone = Measurement {
            name: format!("audio-module-{seconds}s-{part}-alone"),
            from_waveform_ms: None,
            wall_ms: median(times),
            ..measurement.clone()
        };
        report(BenchEvent::Measured(&alone));
    }
    Ok(measurement)
}

/// Timed runs of the corpus case: the whole corpus is minutes of work at the module's speed, so fewer than the
/// tower cases' repeats.
const CORPUS_REPEATS: usize = 3;

/// The corpus case: the features of `corpus.files` recordings (one synthetic recording's, copied: the GPU's work does
/// not depend on the values), diarized with `corpus.batch` recordings side by side, then the whole module over each
/// recording in turn (no batching across recordings there yet). Wall time from features to outputs, median of
/// [`CORPUS_REPEATS`] runs after one warm-up; then the first recording's logits side by side against alone.
fn corpus_case(
    model: &AudioModel,
    corpus: Corpus,
    rng: &mut Rng,
    options: &BenchOptions,
    report: &mut dyn FnMut(BenchEvent<'_>),
) -> Result<Vec<Measurement>> {
    let audio = synthetic_audio(corpus.seconds.into(), rng);
    let features = model.diarizer().frontend().compute(&audio)?;
    drop(audio);
    let limits = BatchLimits { max_recordings: corpus.batch.max(1), max_rows: None };
    let name = format!("corpus-{}x{}s", corpus.files, corpus.seconds);
    let repeats = options.repeats.clamp(1, CORPUS_REPEATS);
    let timed = |f: &mut dyn FnMut() -> Result<()>| median_of(1, repeats, &mut || wall_ms(f));
    let diarizer = model.diarizer();
    let diarization_ms = timed(&mut || {
        let mut batch = diarizer.batch(&limits);
        for _ in 0..corpus.files {
            batch.add(features.clone());
        }
        while !batch.is_empty() {
            for (_, output) in batch.step(&mut |_, _, _| {}).block() {
                output?;
            }
        }
        Ok(())
    })?;
    let module_ms = timed(&mut || {
        for _ in 0..corpus.files {
            model.encode_features(features.clone(), &mut |_, _, _| ControlFlow::Continue(())).block()?;
        }
        Ok(())
    })?;
    let first_logits = |recordings: usize| -> Result<Vec<f32>> {
        let mut batch = diarizer.batch(&BatchLimits { max_recordings: recordings, max_rows: None });
        for _ in 0..recordings {
            batch.add(features.clone());
        }
        let mut first = Vec::new();
        while !batch.is_empty() {
            for (number, output) in batch.step(&mut |_, _, _| {}).block() {
                let output = output?;
                if number == 0 {
                    first = output.speaker_logits;
                }
            }
        }
        Ok(first)
    };
    let recordings = limits.max_recordings.min(corpus.files);
    let (batched, alone) = (first_logits(recordings)?, first_logits(1)?);
    let squares = |values: &mut dyn Iterator<Item = f64>| values.map(|v| v * v).sum::<f64>().sqrt();
    let difference = squares(&mut batched.iter().zip(&alone).map(|(&a, &b)| f64::from(a) - f64::from(b)));
    report(BenchEvent::BatchedAgainstAlone {
        recordings,
        relative: difference / squares(&mut alone.iter().map(|&v| f64::from(v))).max(f64::MIN_POSITIVE),
        identical: batched.iter().map(|v| v.to_bits()).eq(alone.iter().map(|v| v.to_bits())),
    });
    let audio_seconds = Some(corpus.files as f64 * f64::from(corpus.seconds));
    let measured = |case: String, wall_ms: f64| Measurement {
        name: case,
        gpu_ms: None,
        wall_ms,
        flops: None,
        audio_seconds,
        from_waveform_ms: None,
    };
    let results = vec![
        measured(format!("{name}-diarization-batch{}", limits.max_recordings), diarization_ms),
        measured(format!("{name}-module"), module_ms),
    ];
    for measurement in &results {
        report(BenchEvent::Measured(measurement));
    }
    Ok(results)
}
