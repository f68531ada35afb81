//! `nemotron-audio bench`: release-sized timings that need no checkpoint (random bf16 weights of
//! the release config), the same work as the PyTorch peer in `../shared/bench`: one ASR chunk of
//! 600 rows, one Sortformer step of 828 embedded rows, and the whole module on N seconds of audio.

use std::time::Instant;

use audio_kernels::testing::Rng;
use gpu_core::{Gpu, Profile, Timing};

use crate::config::{EncoderConfig, ModelConfig};
use crate::error::{Error, Result};
use crate::pipeline::{AudioModel, Model};
use crate::tower::{InputKind, Sequence, Tower};

/// What to run.
#[derive(Clone, Debug)]
pub struct BenchOptions {
    /// Lengths of synthetic audio for the whole-module runs.
    pub seconds: Vec<u32>,
    /// Timed repeats of each tower case (after two warm-up runs); the median is reported.
    pub repeats: usize,
    /// Also print per-kernel GPU times of the tower cases.
    pub profile: bool,
    /// Shapes to bench (`None`: the release config's defaults).
    pub config: Option<ModelConfig>,
}

/// One measured case.
#[derive(Clone, Debug)]
pub struct Measurement {
    pub name: String,
    /// Median GPU time of the submission (timestamps), when measured.
    pub gpu_ms: Option<f64>,
    /// Median host time from upload to readback.
    pub wall_ms: f64,
    /// FLOPs of one run (towers), for TFLOP/s.
    pub flops: Option<f64>,
    /// Seconds of audio (whole module), for × realtime.
    pub audio_seconds: Option<f64>,
}

impl std::fmt::Display for Measurement {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:<26}", self.name)?;
        match self.gpu_ms {
            Some(gpu) => write!(f, " gpu {gpu:9.2} ms")?,
            None => write!(f, " {:16}", "")?,
        }
        write!(f, "   wall {:9.2} ms", self.wall_ms)?;
        if let Some(flops) = self.flops {
            let ms = self.gpu_ms.unwrap_or(self.wall_ms);
            write!(f, "   {:7.2} TFLOP/s", flops / ms / 1e9)?;
        }
        if let Some(seconds) = self.audio_seconds {
            write!(f, "   {:8.0}x realtime", seconds * 1000.0 / self.wall_ms)?;
        }
        Ok(())
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

/// Runs every case, printing each line through `report` as it completes.
pub fn run(gpu: &Gpu, options: &BenchOptions, report: &mut dyn FnMut(&str)) -> Result<Vec<Measurement>> {
    let config = match &options.config {
        Some(config) => config.clone(),
        None => ModelConfig::from_json(r#"{"model_type":"nemo_speechlm"}"#)?,
    };
    let needs_both = || Error::Input("bench needs a Transcribe config (both towers)".into());
    // Refused before gigabytes of random weights are made.
    if !matches!(config, ModelConfig::Transcribe(_)) {
        return Err(needs_both());
    }
    let started = Instant::now();
    let Model::Transcribe(model) = Model::random(gpu, &config, 0x5eed)? else { return Err(needs_both()) };
    report(&format!(
        "random weights in {:.1} s; {:.2} GiB on the GPU",
        started.elapsed().as_secs_f64(),
        gpu.memory_in_use() as f64 / (1u64 << 30) as f64
    ));
    let mut results = Vec::new();
    let mut rng = Rng::new(7);
    let asr = model.asr_tower();
    let rows = rng.f32s(600 * asr.config().stacked_features(), 1.7);
    results.push(tower_case(asr, "asr-chunk600", InputKind::Features, &rows, 600, options, report)?);
    let diar = model.diarizer().sortformer().tower();
    let rows = rng.f32s(828 * diar.config().hidden, 1.0);
    results.push(tower_case(diar, "diar-step828", InputKind::Embeddings, &rows, 828, options, report)?);
    for &seconds in &options.seconds {
        results.push(module_case(&model, seconds, &mut rng, report)?);
    }
    report(&format!(
        "peak GPU memory (buffers of this process): {:.2} GiB",
        gpu.peak_memory() as f64 / (1u64 << 30) as f64
    ));
    Ok(results)
}

fn tower_case(
    tower: &Tower,
    name: &str,
    kind: InputKind,
    rows: &[f32],
    n: usize,
    options: &BenchOptions,
    report: &mut dyn FnMut(&str),
) -> Result<Measurement> {
    let valid = vec![true; n];
    let batch = [Sequence { rows, valid: &valid }];
    let (mut gpu_ms, mut wall_ms) = (Vec::new(), Vec::new());
    for i in 0..options.repeats + 2 {
        let start = Instant::now();
        let profile = tower.timed(kind, &batch, Timing::Span)?;
        if i >= 2 {
            wall_ms.push(start.elapsed().as_secs_f64() * 1e3);
            gpu_ms.push(profile.total_ns() / 1e6);
        }
    }
    let measurement = Measurement {
        name: name.to_string(),
        gpu_ms: Some(median(gpu_ms)),
        wall_ms: median(wall_ms),
        flops: Some(tower_flops(tower.config(), n, kind == InputKind::Features)),
        audio_seconds: None,
    };
    report(&measurement.to_string());
    if options.profile {
        let profile: Profile = tower.timed(kind, &batch, Timing::PerDispatch)?;
        report(&format!("per-kernel GPU time of {name} (one dispatch per pass):\n{}", profile.report()));
    }
    Ok(measurement)
}

/// Synthetic speech-like audio: a few drifting harmonics and noise, 16 kHz.
pub fn synthetic_audio(seconds: f64, rng: &mut Rng) -> Vec<f32> {
    (0..(seconds * 16_000.0) as usize)
        .map(|i| {
            let t = i as f64 / 16_000.0;
            let f0 = 140.0 + 40.0 * (0.3 * t).sin();
            let voiced: f64 = (1..6).map(|h| (2.0 * std::f64::consts::PI * f0 * h as f64 * t).sin() / h as f64).sum();
            (0.2 * voiced * (0.5 + 0.5 * (1.7 * t).sin()) + 0.02 * rng.uniform()) as f32
        })
        .collect()
}

fn module_case(model: &AudioModel, seconds: u32, rng: &mut Rng, report: &mut dyn FnMut(&str)) -> Result<Measurement> {
    let audio = synthetic_audio(seconds.into(), rng);
    let features = model.diarizer().frontend().compute(&audio)?;
    // Warm-up on this length (pipelines exist already; workspaces grow to the chunk batch here).
    model.encode_features(features.clone(), &mut |_, _, _| {})?;
    let start = Instant::now();
    model.encode_features(features, &mut |_, _, _| {})?;
    let features_ms = start.elapsed().as_secs_f64() * 1e3;
    let start = Instant::now();
    model.encode_audio(&audio, &mut |_, _, _| {})?;
    let audio_ms = start.elapsed().as_secs_f64() * 1e3;
    let measurement = Measurement {
        name: format!("audio-module-{seconds}s"),
        gpu_ms: None,
        wall_ms: features_ms,
        flops: None,
        audio_seconds: Some(seconds as f64),
    };
    report(&format!(
        "{measurement}   (features → outputs; from the waveform, front end included: {audio_ms:.2} ms, {:.0}x realtime)",
        seconds as f64 * 1000.0 / audio_ms
    ));
    Ok(measurement)
}
