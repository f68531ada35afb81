//! `align`: speaker-attributed word timestamps of a transcript on a recording. The towers run once (ASR and
//! diarizer, then the word-timestamp head on the ASR states), the alignment on the host; the words go to a JSON
//! file in upstream's `align_word_timestamps` shape, and to SRT / WebVTT subtitles.

use std::io::Write;
use std::path::{Path, PathBuf};

use nemotron_towers::alignment::subtitles;
use nemotron_towers::{AlignOptions, AlignmentTokenizer, Model};

use crate::encode::{encode_input, load};
use crate::failure::Failure;
use crate::{Input, Settings, demo};

/// What `align` reads besides the model and the audio, and where it writes.
pub struct AlignRequest<'a> {
    pub transcript: Option<&'a str>,
    pub transcript_file: Option<&'a Path>,
    pub language: Option<&'a str>,
    pub out: Option<&'a Path>,
    pub srt: Option<&'a Path>,
    pub vtt: Option<&'a Path>,
}

pub fn align(settings: &Settings, input: &Input, request: &AlignRequest<'_>) -> Result<(), Failure> {
    let transcript = match (request.transcript, request.transcript_file) {
        (Some(text), _) => text.to_string(),
        (None, Some(path)) => std::fs::read_to_string(path)
            .map_err(|e| Failure::Message(format!("cannot read the transcript {}: {e}", path.display())))?,
        (None, None) => return Err(Failure::Usage("give --transcript TEXT or --transcript-file FILE".into())),
    };
    let tokenizer = match &input.model {
        Some(dir) => AlignmentTokenizer::for_checkpoint(dir)?,
        None => demo::tokenizer()?,
    };
    let (_gpu, model) = load(settings, input)?;
    let Model::Transcribe(model) = model else {
        return Err(Failure::Message(
            "this checkpoint is a diarizer alone; `align` needs a Transcribe checkpoint with the word-timestamp head"
                .into(),
        ));
    };
    // Before the towers run: a checkpoint without the head fails at once.
    model.word_timestamp_head()?;
    let outputs = encode_input(settings, input, &model)?;
    let options = AlignOptions { language: request.language.map(str::to_string), ..AlignOptions::default() };
    let alignment = model.align(&outputs, &tokenizer, &transcript, &options)?;
    if !alignment.failed_speakers.is_empty() {
        log::warn!("speaker tags whose words could not be placed: {:?}", alignment.failed_speakers);
    }
    let json = serde_json::to_string_pretty(&alignment)
        .map_err(|e| Failure::Message(format!("cannot serialise the alignment: {e}")))?;
    let cues = subtitles::cues(&alignment);
    let writes = [
        (request.out, json.clone() + "\n"),
        (request.srt, subtitles::to_srt(&cues)),
        (request.vtt, subtitles::to_vtt(&cues)),
    ];
    for (path, text) in &writes {
        if let Some(path) = path {
            write_atomically(path, text)?;
        }
    }
    if writes.iter().all(|(path, _)| path.is_none()) {
        println!("{json}");
    }
    Ok(())
}

/// Writes `text` to a temporary file next to `path` and renames it over `path`, so a failed write leaves no
/// half-written file.
fn write_atomically(path: &Path, text: &str) -> Result<(), Failure> {
    let fail = |e: std::io::Error| Failure::Message(format!("cannot write {}: {e}", path.display()));
    let name = path.file_name().ok_or_else(|| Failure::Message(format!("{} is not a file name", path.display())))?;
    let temporary: PathBuf = path.with_file_name(format!(".{}.partial", name.to_string_lossy()));
    let written = std::fs::File::create(&temporary)
        .and_then(|mut file| file.write_all(text.as_bytes()).and_then(|()| file.sync_all()))
        .and_then(|()| std::fs::rename(&temporary, path));
    written.map_err(|e| {
        let _ = std::fs::remove_file(&temporary);
        fail(e)
    })
}
