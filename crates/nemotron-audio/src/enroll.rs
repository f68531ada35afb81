//! `enroll`: named voices into a speaker profile (`diarize --speakers` takes it; docs/diarization.md, "Known
//! speakers"). The profile holds the clips' audio, not model state, so it works with any diarizer and mode; the slots
//! printed are those an offline run names.

use std::path::PathBuf;

use clap::Args;
use nemotron_engine::{AudioOptions, Input, output};

use crate::Settings;
use crate::failure::Failure;
use crate::model;

#[derive(Args)]
pub struct EnrollArgs {
    /// A checkpoint folder or a Hugging Face Hub id `owner/name[@revision]` (a folder that exists wins).
    #[arg(long, conflicts_with = "demo")]
    model: Option<PathBuf>,
    /// Use the built-in demo model (random weights: meaningless names).
    #[arg(long)]
    demo: bool,
    /// A speaker and a clip of their voice alone, `NAME=AUDIO` (any file `--audio` takes, at least 1 s, channels
    /// mixed); once per speaker, in the order the profile keeps them. A name is 1–64 characters without whitespace.
    #[arg(long = "speaker", value_name = "NAME=AUDIO", required = true, value_parser = speaker)]
    speakers: Vec<(String, PathBuf)>,
    /// The profile to write (safetensors).
    #[arg(long, value_name = "FILE")]
    out: PathBuf,
}

/// `NAME=AUDIO`, split at the first `=`.
fn speaker(text: &str) -> Result<(String, PathBuf), String> {
    match text.split_once('=') {
        Some((name, path)) if !path.is_empty() => Ok((name.to_owned(), PathBuf::from(path))),
        _ => Err(format!("`{text}` is not NAME=AUDIO")),
    }
}

/// Reads the clips, checks that each names a slot of its own (an offline run of the clips, then a second of silence),
/// writes the profile and prints each name with its slot.
pub fn enroll(settings: &Settings, args: &EnrollArgs) -> Result<(), Failure> {
    output::check_files(&[args.out.as_path()])?;
    let mut clips = Vec::with_capacity(args.speakers.len());
    for (name, path) in &args.speakers {
        let Input::Samples(samples) = Input::read_path(path, &AudioOptions::default())? else {
            return Err(Failure::Usage(format!("{}: a clip is audio", path.display())));
        };
        clips.push((name.clone(), samples));
    }
    let engine =
        model::load_source(&model::source(args.model.as_deref(), args.demo)?, &settings.engine, settings.quiet)?;
    let (profile, slots) = engine.enroll(clips)?;
    profile.write(&args.out).map_err(nemotron_engine::EngineError::from)?;
    let lines: String = profile.names().zip(slots).map(|(name, slot)| format!("{name}\tspk{slot}\n")).collect();
    crate::output::write_stdout(&lines, "the speakers' slots")
}
