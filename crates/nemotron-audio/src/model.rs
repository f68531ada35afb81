//! The model named by `--model` (a checkpoint folder or a Hugging Face Hub id) or `--demo`, and `download`.
//!
//! `--model TEXT` is a folder when a file or folder `TEXT` exists, else a Hub id `owner/name[@revision]`: a local
//! folder always wins, so `./owner/name` forces a folder.

use std::path::Path;

use nemotron_engine::{Engine, EngineError, EngineOptions, HubError, ModelSource, RepoId};

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
    Ok(load_source(&source(input.model.as_deref(), input.demo)?, &settings.engine, settings.quiet)?)
}

/// What `--model PATH|ID` or `--demo` names (`serve` has the two flags without the rest of `Input`).
pub fn source(model: Option<&Path>, demo: bool) -> Result<ModelSource, Failure> {
    match model {
        Some(model) => Ok(ModelSource::from_path(model)?),
        None if demo => Ok(ModelSource::Demo),
        None => Err(Failure::Usage(NO_MODEL.into())),
    }
}

/// Loads `source` on a new GPU context, with a download bar for a Hub model unless `quiet`.
pub fn load_source(source: &ModelSource, options: &EngineOptions, quiet: bool) -> Result<Engine, EngineError> {
    let mut bar = DownloadBar::new(quiet);
    let engine = Engine::load(source, options, &mut |file, done, total| bar.update(file, done, total));
    bar.finish();
    engine
}

/// `nemotron-audio download ID`: fetch ahead of time and print the snapshot folder.
pub fn download(settings: &Settings, id: &str) -> Result<(), Failure> {
    let id: RepoId = id.parse().map_err(|e: HubError| Failure::Usage(e.to_string()))?;
    let mut bar = DownloadBar::new(settings.quiet);
    let (hub, parts) = (&settings.engine.hub, settings.engine.model.parts);
    let snapshot = nemotron_engine::fetch(&id, hub, parts, &mut |file, done, total| bar.update(file, done, total));
    bar.finish();
    println!("{}", snapshot?.display());
    Ok(())
}
