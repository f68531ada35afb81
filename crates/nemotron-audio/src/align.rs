//! `align`: speaker-attributed word timestamps of a transcript on a recording. The towers run once (ASR and
//! diarizer, then the word-timestamp head on the ASR states), the alignment on the host; the words go to a JSON
//! file in upstream's `align_word_timestamps` shape, and to SRT / WebVTT subtitles.

use std::path::Path;

use nemotron_postprocess::alignment::{AlignOptions, subtitles};

use crate::encode::{check_single, encode_source, single_source};
use crate::failure::Failure;
use crate::output::{self, Done};
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
    let files: Vec<&Path> = [request.out, request.srt, request.vtt].into_iter().flatten().collect();
    output::check_files(&files)?;
    let (_gpu, model, tokenizer) = model::load_for_alignment(settings, input)?;
    let Some(model) = model else {
        return Err(Failure::Message(
            "this checkpoint is a diarizer alone; `align` needs a Transcribe checkpoint with the word-timestamp head"
                .into(),
        ));
    };
    // Before the towers run: a checkpoint without the head fails at once.
    model.word_timestamp_head()?;
    let c = model.config();
    let source = single_source(input, c.asr.mel_bins, c.asr.subsampling)?;
    let seconds = source.seconds();
    let outputs = encode_source(&model, source, &mut Bar::new(settings.quiet, seconds))?;
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
            output::write_bytes(path, text.as_bytes())?;
        }
    }
    let written: Vec<&Path> = writes.iter().filter_map(|(path, _)| *path).collect();
    if written.is_empty() {
        println!("{json}");
    } else {
        done.report(settings.quiet, &written, seconds, &[format!("{} words", alignment.chunks.len())]);
    }
    Ok(())
}
