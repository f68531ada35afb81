//! `bench`: runs the library's benchmark and prints its results as they come.

use std::path::Path;

use nemotron_towers::ModelConfig;
use nemotron_towers::bench::{self, BenchEvent, BenchOptions, Measurement};

use crate::Settings;
use crate::failure::Failure;

pub fn bench(
    settings: &Settings,
    seconds: &[u32],
    repeats: usize,
    profile: bool,
    config: Option<&Path>,
) -> Result<(), Failure> {
    let config = config.map(ModelConfig::from_file).transpose()?;
    let gpu = settings.gpu()?;
    let info = gpu.adapter_info();
    println!("nemotron-audio bench on {} ({:?}, driver {} {})", info.name, info.backend, info.driver, info.driver_info);
    let options = BenchOptions { seconds: seconds.to_vec(), repeats, profile, config, model: settings.model };
    bench::run(&gpu, &options, &mut |event| println!("{}", line(&event)))?;
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
        BenchEvent::PeakMemory { bytes } => {
            format!("peak GPU memory (buffers of this process): {:.2} GiB", *bytes as f64 / GIB)
        }
    }
}

fn measurement(m: &Measurement) -> String {
    let mut text = format!("{:<26}", m.name);
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
