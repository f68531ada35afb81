//! The model named by `--model` (a checkpoint folder or a Hugging Face Hub id) or `--demo`, and `download`.
//!
//! `--model TEXT` is a folder when a file or folder `TEXT` exists, else a Hub id `owner/name[@revision]`: a local
//! folder always wins, so `./owner/name` forces a folder.

use nemotron_engine::{Engine, ModelSource};
use nemotron_towers::hub::{HubError, RepoId};

use crate::failure::Failure;
use crate::progress::DownloadBar;
use crate::{Input, Settings};

/// What to say when no model is named.
const NO_MODEL: &str = "no model given: pass --model with a Hugging Face Hub id (e.g. \
    nvidia/NVIDIA-Nemotron-3.5-Transcribe-30B-A4B, or nvidia/Nemotron-3-Diarization for `diarize`; only the audio \
    tensors are downloaded) or a checkpoint folder (config.json with model.safetensors or a sharded index), or \
    --demo to try the built-in tiny model with random weights";

/// Refuses, before any work, a command that names no model.
pub fn require(input: &Input) -> Result<(), Failure> {
    match input.model.is_none() && !input.demo {
        true => Err(Failure::Usage(NO_MODEL.into())),
        false => Ok(()),
    }
}

/// The model named by `--model` or `--demo`, on a new GPU context, with a download bar for a Hub model.
pub fn load(settings: &Settings, input: &Input) -> Result<Engine, Failure> {
    require(input)?;
    let source = match &input.model {
        Some(model) => ModelSource::from_path(model)?,
        None => ModelSource::Demo,
    };
    let mut bar = DownloadBar::new(settings.quiet);
    let engine = Engine::load(&source, &settings.engine, &mut |file, done, total| bar.update(file, done, total));
    bar.finish();
    Ok(engine?)
}

/// `nemotron-audio download ID`: fetch ahead of time and print the snapshot folder.
pub fn download(settings: &Settings, id: &str) -> Result<(), Failure> {
    let id: RepoId = id.parse().map_err(|e: HubError| Failure::Usage(e.to_string()))?;
    let mut bar = DownloadBar::new(settings.quiet);
    let snapshot =
        nemotron_engine::fetch(&id, &settings.engine.hub, &mut |file, done, total| bar.update(file, done, total));
    bar.finish();
    println!("{}", snapshot?.display());
    Ok(())
}
