//! `bench --stream`: streaming sessions on a release-sized standalone diarizer with random weights. Per mode,
//! the time of each chunk once the speaker cache and FIFO are full (the largest steps a session makes), and
//! how many sessions one GPU keeps in real time: each session pushing on its own (one submission per step, the
//! sessions taking turns), then all of them batched (one submission per round for all their steps, as the
//! server's scheduler runs them); and how long a session takes to start, plain and with a 30 s speaker profile.

use nemotron_towers::blocking::Block;
use std::time::Instant;

use audio_kernels::random::Rng;
use gpu_core::Gpu;

use crate::{BenchEvent, synthetic_audio};
use nemotron_towers::config::{ConfigError, ModelConfig};
use nemotron_towers::streaming::{DiarizerSession, StreamingMode, push_many};
use nemotron_towers::{Diarizer, Error, Result};
use nemotron_towers::{Model, ModelOptions};

/// What to run.
#[derive(Clone, Debug)]
pub struct StreamBenchOptions {
    /// The modes to measure.
    pub modes: Vec<StreamingMode>,
    /// Seconds of audio whose chunks are timed, after the warm-up, in each mode.
    pub seconds: f64,
    /// Seconds of audio each session of a load trial runs.
    pub load_seconds: f64,
    /// Most sessions a load trial runs at once.
    pub max_sessions: usize,
    /// Shapes to bench (`None`: the standalone release model, `{"model_type":"nemotron3_diarization"}`).
    pub config: Option<ModelConfig>,
    /// How the random model is set up.
    pub model: ModelOptions,
}

impl Default for StreamBenchOptions {
    fn default() -> Self {
        Self {
            modes: StreamingMode::NAMED.to_vec(),
            seconds: 60.0,
            load_seconds: 6.0,
            max_sessions: 1024,
            config: None,
            model: ModelOptions::default(),
        }
    }
}

/// Median, 99th percentile and maximum of some times, in ms.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Spread {
    /// The middle value.
    pub median: f64,
    /// The value 99 % of them do not exceed.
    pub p99: f64,
    /// The largest.
    pub max: f64,
}

impl Spread {
    /// The spread of `values` (`None` when there are none).
    pub fn of(mut values: Vec<f64>) -> Option<Self> {
        values.sort_by(f64::total_cmp);
        let at = |q: f64| values[((q * values.len() as f64).ceil() as usize).clamp(1, values.len()) - 1];
        (!values.is_empty()).then(|| Spread { median: values[values.len() / 2], p99: at(0.99), max: at(1.0) })
    }
}

/// One session's chunks, timed one push per chunk, in the steady state.
#[derive(Clone, Debug)]
pub struct StreamLatency {
    /// The mode.
    pub mode: StreamingMode,
    /// Chunks timed.
    pub chunks: usize,
    /// Encoder rows of each timed step (cache, FIFO, chunk, look-ahead), the largest.
    pub rows: usize,
    /// Seconds of audio one chunk makes final (the mode's chunk).
    pub chunk_seconds: f64,
    /// GPU time of each chunk's submission (timestamps), when the adapter has them.
    pub gpu_ms: Option<Spread>,
    /// Host time of each chunk's push: front end, upload, GPU, readback, cache update.
    pub wall_ms: Spread,
}

/// How long a live session takes to start, without known speakers and with a profile of
/// [`StreamStart::profile_seconds`] of clips: primed (the clips pushed through the session's steps, what the first
/// stream of a profile costs) and forked from a primed session (what each further stream of it costs).
#[derive(Clone, Debug)]
pub struct StreamStart {
    /// The mode.
    pub mode: StreamingMode,
    /// Seconds of enrolled audio.
    pub profile_seconds: f64,
    /// A plain session made, ms.
    pub plain_ms: Spread,
    /// A session made and pushed the clips, ms.
    pub primed_ms: Spread,
    /// A primed session forked, ms.
    pub fork_ms: Spread,
}

/// Trials of each start in [`stream_start`].
const START_TRIALS: usize = 5;

/// A 30 s profile: the clips a server keeps primed per profile and mode.
pub const PROFILE_SECONDS: f64 = 30.0;

/// Times [`START_TRIALS`] starts of each kind in `mode` (the clips are `clips`).
fn stream_start(diarizer: &Diarizer, mode: StreamingMode, clips: &[f32]) -> Result<StreamStart> {
    let (mut plain, mut primed, mut fork) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..START_TRIALS {
        let start = Instant::now();
        drop(diarizer.session(mode)?);
        plain.push(start.elapsed().as_secs_f64() * 1e3);
        let start = Instant::now();
        let mut session = diarizer.session(mode)?;
        session.push(clips).block()?;
        primed.push(start.elapsed().as_secs_f64() * 1e3);
        let start = Instant::now();
        drop(session.fork()?);
        fork.push(start.elapsed().as_secs_f64() * 1e3);
    }
    let spread = |values| Spread::of(values).ok_or_else(|| no_chunk(mode));
    Ok(StreamStart {
        mode,
        profile_seconds: clips.len() as f64 / 16_000.0,
        plain_ms: spread(plain)?,
        primed_ms: spread(primed)?,
        fork_ms: spread(fork)?,
    })
}

/// `sessions` sessions at once on one model, fed as fast as they go: each on its own thread, or all pushed together
/// (`batched`).
#[derive(Clone, Debug)]
pub struct LoadTrial {
    /// The mode.
    pub mode: StreamingMode,
    /// Sessions run at once.
    pub sessions: usize,
    /// Whether their steps ran batched (one push for all per chunk) rather than each session on its own thread.
    pub batched: bool,
    /// Seconds of audio per wall-clock second of the slowest session.
    pub slowest_realtime: f64,
    /// Host time of each chunk's push, over all sessions (batched: of each round, which every session waits).
    pub wall_ms: Spread,
    /// Batched, with timestamps: GPU time of each round's (first) submission.
    pub gpu_ms: Option<Spread>,
}

impl LoadTrial {
    /// Whether every session kept up with real time.
    pub fn keeps_up(&self) -> bool {
        self.slowest_realtime >= 1.0
    }
}

/// Runs each mode: its per-chunk times, then load trials (1, 2, 4, … sessions, then a bisection) up to the
/// largest number of sessions that all keep up with real time; each result goes to `report` as it comes.
pub fn run(gpu: &Gpu, options: &StreamBenchOptions, report: &mut dyn FnMut(BenchEvent<'_>)) -> Result<()> {
    let config = match &options.config {
        Some(config) => config.clone(),
        None => ModelConfig::from_json(r#"{"model_type":"nemotron3_diarization"}"#)?,
    };
    let started = Instant::now();
    let model = Model::random(gpu, &config, 0x5eed, &options.model).block()?;
    let diarizer = model.diarizer();
    report(BenchEvent::WeightsReady { seconds: started.elapsed().as_secs_f64(), gpu_bytes: gpu.memory_in_use() });
    let c = &diarizer.config().streaming_cache;
    // Until the cache has compressed and the FIFO has cycled: steps have their largest size from then on.
    let warmup = (c.cache_length + c.fifo_length + c.update_period) as f64 * 0.08 + 1.0;
    let mut rng = Rng::new(7);
    let audio = synthetic_audio(warmup + options.seconds.max(options.load_seconds).max(PROFILE_SECONDS), &mut rng);
    let split = (warmup * 16_000.0) as usize;
    let (warm_audio, timed_audio) = audio.split_at(split);
    for &mode in &options.modes {
        let mut warm = diarizer.session(mode)?;
        warm.push(warm_audio).block()?;
        let timed = &timed_audio[..(options.seconds * 16_000.0) as usize];
        report(BenchEvent::StreamLatency(&latency(&warm, timed)?));
        let clips = &timed_audio[..(PROFILE_SECONDS * 16_000.0) as usize];
        report(BenchEvent::StreamStart(&stream_start(diarizer, mode, clips)?));
        let load = &timed_audio[..(options.load_seconds * 16_000.0) as usize];
        for batched in [false, true] {
            let best = capacity(options.max_sessions, |sessions| {
                let trial =
                    if batched { batched_trial(&warm, load, sessions)? } else { load_trial(&warm, load, sessions)? };
                report(BenchEvent::StreamLoad(&trial));
                Ok(trial)
            })?;
            report(BenchEvent::StreamCapacity { mode, batched, best: best.as_ref() });
        }
    }
    report(BenchEvent::PeakMemory { bytes: gpu.peak_memory() });
    Ok(())
}

/// The trial of the most sessions (up to `max`) that all keep up: 1, 2, 4, … until one does not, then a
/// bisection between the last that did and the first that did not.
fn capacity(max: usize, mut trial: impl FnMut(usize) -> Result<LoadTrial>) -> Result<Option<LoadTrial>> {
    let (mut best, mut failed): (Option<LoadTrial>, usize) = (None, max + 1);
    let mut sessions = 1;
    while sessions <= max {
        let result = trial(sessions)?;
        if !result.keeps_up() {
            failed = sessions;
            break;
        }
        best = Some(result);
        sessions *= 2;
    }
    while let Some(kept_up) = best.as_ref().map(|b| b.sessions).filter(|&b| failed - b > 1) {
        let result = trial(kept_up + (failed - kept_up) / 2)?;
        if result.keeps_up() {
            best = Some(result);
        } else {
            failed = result.sessions;
        }
    }
    Ok(best)
}

/// Times each chunk of `audio` pushed to copies of the warmed-up session: one pass for the host time, one
/// with GPU timestamps (which wait for the GPU before the readback).
fn latency(warm: &DiarizerSession, audio: &[f32]) -> Result<StreamLatency> {
    let (walls, rows, _) = chunk_times(warm.fork()?, audio)?;
    let (_, _, gpus) = chunk_times(warm.fork()?.with_gpu_timing(true), audio)?;
    let (chunk, _) = warm.mode().frames();
    let wall_ms = Spread::of(walls).ok_or_else(|| no_chunk(warm.mode()))?;
    Ok(StreamLatency {
        mode: warm.mode(),
        chunks: rows.len(),
        rows: rows.iter().copied().max().unwrap_or(0),
        chunk_seconds: chunk as f64 * 0.08,
        gpu_ms: Spread::of(gpus),
        wall_ms,
    })
}

fn no_chunk(mode: StreamingMode) -> Error {
    Error::from(ConfigError::Invalid(format!("bench --stream: no whole chunk of {} in the audio timed", mode.name())))
}

/// Pushes `audio` one chunk's samples at a time: per chunk, its push's host time, step rows and GPU time.
fn chunk_times(mut session: DiarizerSession, audio: &[f32]) -> Result<(Vec<f64>, Vec<usize>, Vec<f64>)> {
    let (mut walls, mut rows, mut gpus) = (Vec::new(), Vec::new(), Vec::new());
    let mut fed = 0;
    while fed + session.samples_until_next_chunk() <= audio.len() {
        let end = fed + session.samples_until_next_chunk();
        let start = Instant::now();
        let output = session.push(&audio[fed..end]).block()?;
        walls.push(start.elapsed().as_secs_f64() * 1e3);
        fed = end;
        for chunk in output.chunks {
            rows.push(chunk.step_rows);
            gpus.extend(chunk.gpu_ms);
        }
    }
    Ok((walls, rows, gpus))
}

/// `sessions` copies of the warmed-up session, each on its own thread, push `audio` a chunk at a time.
fn load_trial(warm: &DiarizerSession, audio: &[f32], sessions: usize) -> Result<LoadTrial> {
    let seconds = audio.len() as f64 / 16_000.0;
    let barrier = std::sync::Barrier::new(sessions);
    let copies = (0..sessions).map(|_| warm.fork()).collect::<Result<Vec<_>>>()?;
    let runs: Vec<Result<(f64, Vec<f64>)>> = std::thread::scope(|scope| {
        let handles: Vec<_> = copies
            .into_iter()
            .map(|session| {
                let barrier = &barrier;
                scope.spawn(move || {
                    barrier.wait();
                    let start = Instant::now();
                    let (walls, _, _) = chunk_times(session, audio)?;
                    Ok((start.elapsed().as_secs_f64(), walls))
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|_| Err(Error::Internal("a load-trial thread panicked".into()))))
            .collect()
    });
    let (mut slowest, mut walls) = (0.0f64, Vec::new());
    for run in runs {
        let (elapsed, chunk_walls) = run?;
        slowest = slowest.max(elapsed);
        walls.extend(chunk_walls);
    }
    let mode = warm.mode();
    Ok(LoadTrial {
        mode,
        sessions,
        batched: false,
        slowest_realtime: seconds / slowest.max(f64::MIN_POSITIVE),
        wall_ms: Spread::of(walls).ok_or_else(|| no_chunk(mode))?,
        gpu_ms: None,
    })
}

/// `sessions` copies of the warmed-up session pushed together, one chunk's samples each per round: every round one
/// [`push_many`], whose wall time each session's chunk waits.
fn batched_trial(warm: &DiarizerSession, audio: &[f32], sessions: usize) -> Result<LoadTrial> {
    let mut all: Vec<DiarizerSession> =
        (0..sessions).map(|_| Ok(warm.fork()?.with_gpu_timing(true))).collect::<Result<_>>()?;
    let (mut walls, mut gpus, mut fed) = (Vec::new(), Vec::new(), 0);
    let start = Instant::now();
    while fed + all[0].samples_until_next_chunk() <= audio.len() {
        let piece = &audio[fed..fed + all[0].samples_until_next_chunk()];
        let round = Instant::now();
        let mut pushes: Vec<(&mut DiarizerSession, &[f32])> = all.iter_mut().map(|s| (s, piece)).collect();
        let outputs = push_many(&mut pushes).block();
        walls.push(round.elapsed().as_secs_f64() * 1e3);
        for (i, output) in outputs.into_iter().enumerate() {
            let output = output?;
            if i == 0 {
                gpus.extend(output.chunks.iter().filter_map(|c| c.gpu_ms));
            }
        }
        fed += piece.len();
    }
    let elapsed = start.elapsed().as_secs_f64();
    let mode = warm.mode();
    Ok(LoadTrial {
        mode,
        sessions,
        batched: true,
        slowest_realtime: fed as f64 / 16_000.0 / elapsed.max(f64::MIN_POSITIVE),
        wall_ms: Spread::of(walls).ok_or_else(|| no_chunk(mode))?,
        gpu_ms: Spread::of(gpus),
    })
}
