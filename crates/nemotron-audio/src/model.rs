//! The model named by `--model` (a checkpoint folder or a Hugging Face Hub id) or `--demo`, and `download`.
//!
//! `--model TEXT` is a folder when a file or folder `TEXT` exists, else a Hub id `owner/name[@revision]`: a local
//! folder always wins, so `./owner/name` forces a folder.

use std::path::{Path, PathBuf};

use nemotron_postprocess::alignment::AlignmentTokenizer;
use nemotron_towers::hub::{self, HubError, RepoId};
use nemotron_towers::{AudioModel, Checkpoint, Error, Gpu, Model};

use crate::failure::Failure;
use crate::progress::DownloadBar;
use crate::{Input, Settings, demo};

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

/// The model named by `--model` or `--demo`, on a new GPU context.
pub fn load(settings: &Settings, input: &Input) -> Result<(Gpu, Model), Failure> {
    require(input)?;
    let folder = match &input.model {
        Some(model) => Some(folder(settings, model)?),
        None => None,
    };
    load_folder(settings, folder)
}

/// The model of `folder`, or the demo's without one, on a new GPU context.
fn load_folder(settings: &Settings, folder: Option<PathBuf>) -> Result<(Gpu, Model), Failure> {
    let gpu = settings.gpu()?;
    let model = match folder {
        Some(dir) => Model::load(&gpu, &dir, &settings.model)?,
        None => {
            log::warn!("using the {}: its outputs are meaningless", demo::LABEL);
            let (config, checkpoint) = demo::model()?;
            Model::from_checkpoint(&gpu, config, &checkpoint, &settings.model)?
        }
    };
    Ok((gpu, model))
}

/// The model for `align`: the Transcribe model (`None` for a diarizer alone) and the alignment tokenizer of its folder
/// (`alignment_tokenizer/tokenizer.json`), or the demo's.
pub fn load_for_alignment(
    settings: &Settings,
    input: &Input,
) -> Result<(Gpu, Option<Box<AudioModel>>, AlignmentTokenizer), Failure> {
    require(input)?;
    let folder = match &input.model {
        Some(model) => Some(folder(settings, model)?),
        None => None,
    };
    let tokenizer = match &folder {
        Some(dir) => AlignmentTokenizer::for_checkpoint(dir, |tensor| {
            Checkpoint::open(dir).is_ok_and(|checkpoint| checkpoint.contains(tensor))
        })?,
        None => demo::tokenizer()?,
    };
    let (gpu, model) = load_folder(settings, folder)?;
    let model = match model {
        Model::Transcribe(model) => Some(model),
        Model::Diarization(_) => None,
    };
    Ok((gpu, model, tokenizer))
}

/// The checkpoint folder `model` names: itself when it exists, else the cached snapshot of the Hub id.
fn folder(settings: &Settings, model: &Path) -> Result<PathBuf, Failure> {
    if model.exists() {
        return Ok(model.to_path_buf());
    }
    let text = model.to_string_lossy();
    let id: RepoId = text
        .parse()
        .map_err(|e: HubError| Failure::Message(format!("{}: no such file or folder, and {e}", model.display())))?;
    fetch(settings, &id).map_err(|error| match error {
        Error::Hub(e @ HubError::RepoNotFound { .. }) => {
            Failure::Message(format!("{e}; nor is there a folder {}", model.display()))
        }
        other => other.into(),
    })
}

/// Fetches (or finds in the cache) the audio part of `id`, with a download bar.
fn fetch(settings: &Settings, id: &RepoId) -> Result<PathBuf, Error> {
    let mut bar = DownloadBar::new(settings.quiet);
    let snapshot = hub::fetch_audio_model(id, &settings.hub, &mut |file, done, total| bar.update(file, done, total));
    bar.finish();
    snapshot
}

/// `nemotron-audio download ID`: fetch ahead of time and print the snapshot folder.
pub fn download(settings: &Settings, id: &str) -> Result<(), Failure> {
    let id: RepoId = id.parse().map_err(|e: HubError| Failure::Usage(e.to_string()))?;
    println!("{}", fetch(settings, &id)?.display());
    Ok(())
}
