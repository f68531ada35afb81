//! `align`: speaker-attributed word timestamps of a transcript on a recording. The towers run once (ASR and
//! diarizer, then the word-timestamp head on the ASR states), the alignment on the host; the words go to a JSON
//! file in upstream's `align_word_timestamps` shape, and to SRT / WebVTT subtitles.

use std::ops::ControlFlow;
use std::path::Path;

use nemotron_engine::{EngineError, SpeakerProfile, output};

use crate::encode::{check_single, single_source};
use crate::failure::Failure;
use crate::output::{Done, write_stdout};
use crate::progress::Bar;
use crate::{Input, Settings, model};

/// What `align` reads besides the model and the audio, and where it writes.
pub struct AlignRequest<'a> {
    pub transcript: Option<&'a str>,
    pub transcript_file: Option<&'a Path>,
    pub language: Option<&'a str>,
    pub out: Option<&'a Path>,
    pub srt: Option<&'a Path>,
    pub vtt: Option<&'a Path>,
    pub speakers: Option<&'a Path>,
}

pub fn align(settings: &Settings, input: &Input, request: &AlignRequest<'_>) -> Result<(), Failure> {
    let transcript = match (request.transcript, request.transcript_file) {
        (Some(text), _) => text.to_string(),
        (None, Some(path)) => std::fs::read_to_string(path)
            .map_err(|e| Failure::Message(format!("cannot read the transcript {}: {e}", path.display())))?,
        (None, None) => return Err(Failure::Usage("give --transcript TEXT or --transcript-file FILE".into())),
    };
    let done = Done::start();
    check_single(input)?;
    let profile = request.speakers.map(SpeakerProfile::read).transpose().map_err(EngineError::from)?;
    let (out, srt, vtt) = (request.out, request.srt, request.vtt);
    let files: Vec<&Path> = [out, srt, vtt].into_iter().flatten().collect();
    output::check_files(&files)?;
    let engine = model::load(settings, input)?;
    // Before the towers run: a diarizer alone, a checkpoint without the head or without a tokenizer fails at once.
    engine.check_word_timestamps("align")?;
    engine.alignment_tokenizer()?;
    let source = single_source(&engine, input)?;
    let seconds = source.seconds();
    let mut bar = Bar::new(settings.quiet, seconds);
    let request = nemotron_engine::AlignRequest { transcript, language: request.language.map(str::to_string) };
    let mut progress = |stage: &str, done, total| {
        bar.update(stage, done, total);
        ControlFlow::Continue(())
    };
    let aligned = match &profile {
        Some(profile) => engine.align_with_speakers(source, &request, profile, &mut progress)?,
        None => engine.align(source, &request, &mut progress)?,
    };
    let failed = &aligned.alignment().failed_speakers;
    if !failed.is_empty() {
        log::warn!("speaker tags whose words could not be placed: {failed:?}");
    }
    let json = aligned.to_json()?;
    let writes = [(out, json.clone()), (srt, aligned.to_srt()), (vtt, aligned.to_vtt())];
    for (path, text) in &writes {
        if let Some(path) = path {
            output::write_bytes(path, text.as_bytes())?;
        }
    }
    let written: Vec<&Path> = writes.iter().filter_map(|(path, _)| *path).collect();
    if written.is_empty() {
        write_stdout(&json, "the alignment")?;
    } else {
        done.report(settings.quiet, &written, seconds, &[format!("{} words", aligned.words().len())]);
    }
    Ok(())
}
