//! The README's library example: load a checkpoint, read a recording, run the whole audio module.
//!
//! `cargo run --release -p nemotron-towers --example encode -- CHECKPOINT_DIR AUDIO.wav`
//!
//! The model takes 16 kHz mono samples, so the recording is a 16 kHz mono WAV (16-bit or 32-bit float); the engine
//! (`nemotron-engine`'s `Input`) reads any common audio file and resamples and mixes it.

use std::ops::ControlFlow;

use hound::{SampleFormat, WavReader};
use nemotron_towers::blocking::Block;
use nemotron_towers::{Gpu, Model, ModelOptions};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let (Some(checkpoint), Some(audio)) = (args.next(), args.next()) else {
        return Err("usage: encode CHECKPOINT_DIR AUDIO.wav".into());
    };
    let gpu = Gpu::new().block()?;
    let model = Model::load(&gpu, checkpoint.as_ref(), &ModelOptions::default()).block()?;
    let Model::Transcribe(model) = model else { return Err("not a Transcribe checkpoint".into()) };
    let samples = read_wav(&audio)?;
    let out = model.encode_audio(&samples, &mut |_stage, _done, _total| ControlFlow::Continue(())).block()?;
    // out.audio_embeds: [tokens, 2688] f32; out.speaker_probabilities: [T, 8]
    let text = model.config().text_hidden;
    println!("{} audio embeddings of width {text}", out.audio_embeds.len() / text);
    Ok(())
}

/// A 16 kHz mono WAV's samples in [-1, 1].
fn read_wav(path: &str) -> Result<Vec<f32>, Box<dyn std::error::Error>> {
    let mut reader = WavReader::open(path)?;
    let spec = reader.spec();
    if spec.sample_rate != 16_000 || spec.channels != 1 {
        let (rate, channels) = (spec.sample_rate, spec.channels);
        return Err(format!("{path}: {rate} Hz, {channels} channel(s); the model takes 16 kHz mono").into());
    }
    Ok(match (spec.sample_format, spec.bits_per_sample) {
        (SampleFormat::Float, 32) => reader.samples::<f32>().collect::<Result<_, _>>()?,
        (SampleFormat::Int, 16) => {
            reader.samples::<i16>().map(|s| s.map(|s| f32::from(s) / 32_768.0)).collect::<Result<_, _>>()?
        }
        (format, bits) => {
            return Err(format!("{path}: {bits}-bit {format:?} samples; 16-bit or 32-bit float expected").into());
        }
    })
}
