//! `bench`: runs the library's benchmark and prints its results as they come.

use std::path::Path;

use clap::Args;
use nemotron_bench::stream::{LoadTrial, Spread, StreamBenchOptions, StreamLatency};
use nemotron_bench::{self as bench, BenchEvent, BenchOptions, Corpus, Measurement};
use nemotron_engine::ModelConfig;

use crate::Settings;
use crate::failure::Failure;

/// The flags of `bench`'s corpus case.
#[derive(Args)]
pub struct CorpusBenchArgs {
    /// Recordings of the corpus case (diarization side by side, and the whole module over each; 0: no corpus case).
    #[arg(long, default_value_t = 32)]
    pub corpus: u32,
    /// Seconds of each recording of the corpus case.
    #[arg(long, default_value_t = 600, value_parser = clap::value_parser!(u32).range(1..))]
    pub corpus_seconds: u32,
    /// Recordings of the corpus case whose diarization steps share one submission.
    #[arg(long, default_value_t = 32, value_parser = clap::value_parser!(u32).range(1..))]
    pub corpus_batch: u32,
}

pub fn bench(
    settings: &Settings,
    seconds: &[u32],
    repeats: usize,
    profile: bool,
    corpus: &CorpusBenchArgs,
    config: Option<&Path>,
) -> Result<(), Failure> {
    let config = config.map(ModelConfig::from_file).transpose()?;
    let gpu = settings.gpu()?;
    let info = gpu.adapter_info();
    println!("nemotron-audio bench on {} ({:?}, driver {} {})", info.name, info.backend, info.driver, info.driver_info);
    let corpus = (corpus.corpus > 0).then_some(Corpus {
        files: corpus.corpus as usize,
        seconds: corpus.corpus_seconds,
        batch: corpus.corpus_batch as usize,
    });
    let options =
        BenchOptions { seconds: seconds.to_vec(), repeats, profile, config, model: settings.engine.model, corpus };
    bench::run(&gpu, &options, &mut |event| println!("{}", line(&event)))?;
    Ok(())
}

/// The flags of `bench --stream`.
#[derive(Args)]
pub struct StreamBenchArgs {
    /// Time streaming diarization sessions instead (the standalone diarization release model): per mode, the
    /// GPU and wall time of each chunk once the speaker cache is full, and how many sessions one GPU keeps
    /// in real time.
    #[arg(long, conflicts_with = "profile")]
    pub stream: bool,
    /// With --stream: the most sessions a load trial runs at once (each on its own thread, then batched).
    #[arg(long, requires = "stream", default_value_t = 1024, value_parser = clap::value_parser!(u32).range(1..))]
    pub max_sessions: u32,
}

pub fn bench_stream(
    settings: &Settings,
    seconds: Option<&[u32]>,
    args: &StreamBenchArgs,
    config: Option<&Path>,
) -> Result<(), Failure> {
    let config = config.map(ModelConfig::from_file).transpose()?;
    let gpu = settings.gpu()?;
    let info = gpu.adapter_info();
    println!(
        "nemotron-audio bench --stream on {} ({:?}, driver {} {})",
        info.name, info.backend, info.driver, info.driver_info
    );
    let seconds = match seconds {
        Some([seconds]) => f64::from(*seconds),
        Some(_) => return Err(Failure::Usage("bench --stream takes one --seconds value".into())),
        None => 60.0,
    };
    let defaults = StreamBenchOptions::default();
    let options = StreamBenchOptions {
        seconds,
        load_seconds: defaults.load_seconds.min(seconds),
        max_sessions: args.max_sessions as usize,
        config,
        model: settings.engine.model,
        ..defaults
    };
    bench::stream::run(&gpu, &options, &mut |event| println!("{}", line(&event)))?;
    Ok(())
}

const GIB: f64 = (1u64 << 30) as f64;

fn line(event: &BenchEvent<'_>) -> String {
    match event {
        BenchEvent::WeightsReady { seconds, gpu_bytes } => {
            format!("random weights in {seconds:.1} s; {:.2} GiB on the GPU", *gpu_bytes as f64 / GIB)
        }
        BenchEvent::Measured(m) => measurement(m),
        BenchEvent::Profile { case, profile } => {
            format!("per-kernel GPU time of {case} (one dispatch per pass):\n{}", profile.report())
        }
        BenchEvent::StreamLatency(latency) => stream_latency(latency),
        BenchEvent::StreamStart(start) => format!(
            "{}: a session starts in {}; with a {:.0} s speaker profile: primed in {}, forked from a primed one in {}",
            start.mode.name(),
            spread(&start.plain_ms),
            start.profile_seconds,
            spread(&start.primed_ms),
            spread(&start.fork_ms)
        ),
        BenchEvent::StreamLoad(trial) => format!("  {}", load_trial(trial)),
        BenchEvent::StreamCapacity { mode, batched, best: Some(trial) } => format!(
            "{}{}: {} sessions keep up with real time on one GPU (per-chunk wall under that load: {})",
            mode.name(),
            batching(*batched),
            trial.sessions,
            spread(&trial.wall_ms)
        ),
        BenchEvent::StreamCapacity { mode, batched, best: None } => {
            format!("{}{}: not even one session keeps up with real time", mode.name(), batching(*batched))
        }
        BenchEvent::PeakMemory { bytes } => {
            format!("peak GPU memory (buffers of this process): {:.2} GiB", *bytes as f64 / GIB)
        }
        BenchEvent::BatchedAgainstAlone { recordings, relative, identical } => format!(
            "corpus: a recording side by side with {} other(s) against alone: speaker logits {}",
            recordings - 1,
            match identical {
                true => "bit-identical".to_string(),
                false => format!("differ by {relative:.2e} (relative Frobenius)"),
            }
        ),
    }
}

fn spread(s: &Spread) -> String {
    format!("median {:.2} ms, p99 {:.2} ms, max {:.2} ms", s.median, s.p99, s.max)
}

fn stream_latency(l: &StreamLatency) -> String {
    let gpu = l.gpu_ms.as_ref().map_or_else(|| "no timestamps".to_string(), spread);
    format!(
        "{}: {} chunks of {:.2} s ({:.2} s latency), steps of up to {} rows; per chunk: gpu {gpu}; wall {} \
         (p99 {:.1} % of the chunk)",
        l.mode.name(),
        l.chunks,
        l.chunk_seconds,
        l.mode.latency_seconds(),
        l.rows,
        spread(&l.wall_ms),
        l.wall_ms.p99 / (l.chunk_seconds * 10.0)
    )
}

/// How a trial's sessions ran.
fn batching(batched: bool) -> &'static str {
    if batched { ", batched" } else { ", each on its own" }
}

fn load_trial(t: &LoadTrial) -> String {
    let gpu = t.gpu_ms.as_ref().map_or_else(String::new, |g| format!("; GPU per round {}", spread(g)));
    format!(
        "{}{} × {} sessions: the slowest at {:.2}× real time; per-chunk wall {}{gpu}{}",
        t.mode.name(),
        batching(t.batched),
        t.sessions,
        t.slowest_realtime,
        spread(&t.wall_ms),
        if t.keeps_up() { "" } else { " (falls behind)" }
    )
}

fn measurement(m: &Measurement) -> String {
    let mut text = format!("{:<36}", m.name);
    match m.gpu_ms {
        Some(gpu) => text += &format!(" gpu {gpu:9.2} ms"),
        None => text += &format!(" {:16}", ""),
    }
    text += &format!("   wall {:9.2} ms", m.wall_ms);
    if let Some(tflops) = m.tflops() {
        text += &format!("   {tflops:7.2} TFLOP/s");
    }
    if let Some(realtime) = m.realtime() {
        text += &format!("   {realtime:8.0}x realtime");
    }
    if let (Some(ms), Some(seconds)) = (m.from_waveform_ms, m.audio_seconds) {
        text += &format!(
            "   (features → outputs; from the waveform, front end included: {ms:.2} ms, {:.0}x realtime)",
            seconds * 1000.0 / ms
        );
    }
    text
}
