//! The README's library example: load a checkpoint, read a recording, run the whole audio module.
//!
//! `cargo run --release -p nemotron-towers --example encode -- CHECKPOINT_DIR AUDIO_FILE`

use std::ops::ControlFlow;

use nemotron_io::read_audio;
use nemotron_towers::blocking::Block;
use nemotron_towers::{Gpu, Model, ModelOptions};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let (Some(checkpoint), Some(audio)) = (args.next(), args.next()) else {
        return Err("usage: encode CHECKPOINT_DIR AUDIO_FILE".into());
    };
    let gpu = Gpu::new().block()?;
    let model = Model::load(&gpu, checkpoint.as_ref(), &ModelOptions::default()).block()?;
    let Model::Transcribe(model) = model else { return Err("not a Transcribe checkpoint".into()) };
    let samples = read_audio(audio.as_ref())?;
    let out = model.encode_audio(&samples, &mut |_stage, _done, _total| ControlFlow::Continue(())).block()?;
    // out.audio_embeds: [tokens, 2688] f32; out.speaker_probabilities: [T, 8]
    let text = model.config().text_hidden;
    println!("{} audio embeddings of width {text}", out.audio_embeds.len() / text);
    Ok(())
}
