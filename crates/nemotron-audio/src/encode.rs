//! `encode` and `diarize` of one input: check the outputs, load the model, read the input, run, write the outputs.
//! The reading of a single run's input and the timeline are shared with `diarize --stream` (`stream.rs`).

use std::ops::ControlFlow;
use std::path::{Path, PathBuf};

use nemotron_engine::{
    AudioOptions, Diarized, Engine, EngineError, FRAME_SECONDS, Segment, SegmentRule, SpeakerProfile, output,
};

use crate::failure::Failure;
use crate::output::Done;
use crate::progress::Bar;
use crate::segment_options::SegmentOptions;
use crate::timeline::Timeline;
use crate::{Input, Settings, model};

/// The one input of a single run: `--audio FILE` (`-`: standard input) or `--features FILE`.
pub(crate) fn single_source(engine: &Engine, input: &Input) -> Result<nemotron_engine::Input, Failure> {
    let options = AudioOptions { channel: input.channel, ..AudioOptions::default() };
    match (input.audio.as_slice(), &input.features) {
        ([path], _) if path.as_os_str() == "-" => {
            Ok(nemotron_engine::Input::read_from(std::io::stdin().lock(), "standard input", &options)?)
        }
        ([path], _) => Ok(nemotron_engine::Input::read_path(path, &options)?),
        ([], Some(path)) => Ok(engine.read_features(path)?),
        _ => Err(Failure::Usage("several inputs need --out-dir (one output set per input)".into())),
    }
}

/// What to say when neither audio nor features are given.
const NO_INPUT: &str = "give --audio FILE (or --features FILE)";

/// Refuses, before any work, what a single run cannot do.
pub(crate) fn check_single(input: &Input) -> Result<(), Failure> {
    model::require(input)?;
    match input.audio.as_slice() {
        [] if input.features.is_none() => Err(Failure::Usage(NO_INPUT.into())),
        [] | [_] => Ok(()),
        _ => Err(Failure::Usage("several inputs need --out-dir (one output set per input)".into())),
    }
}

/// `encode`; with `word_timestamps`, the word-timestamp head runs on the ASR states too and its logits join the
/// output file.
pub fn encode(settings: &Settings, input: &Input, out: &Path, word_timestamps: bool) -> Result<(), Failure> {
    let done = Done::start();
    check_single(input)?;
    output::check_files(&[out])?;
    let engine = model::load(settings, input)?;
    // Before the input is read: a diarizer alone, or a checkpoint without the head, fails at once.
    match word_timestamps {
        true => engine.check_word_timestamps("encode")?,
        false => {
            engine.transcribe("encode")?;
        }
    }
    let source = single_source(&engine, input)?;
    let seconds = source.seconds();
    let mut bar = Bar::new(settings.quiet, seconds);
    let mut progress = |stage: &str, done, total| {
        bar.update(stage, done, total);
        ControlFlow::Continue(())
    };
    let encoding = engine.encode(source, word_timestamps, &mut progress)?;
    encoding.write(out)?;
    done.report(settings.quiet, &[out], seconds, &[format!("{} tokens", encoding.tokens())]);
    Ok(())
}

/// Where `diarize` writes, besides the segments.
pub struct DiarizeOutputs<'a> {
    pub out: Option<&'a Path>,
    pub plot: Option<&'a Path>,
}

/// `diarize` of one input: segments by the rule `options` ask for, written where they say (standard output when no
/// output is named); the tensors and the timeline when asked.
pub fn diarize(
    settings: &Settings,
    input: &Input,
    outputs: &DiarizeOutputs<'_>,
    options: &SegmentOptions,
    speakers: Option<&Path>,
) -> Result<(), Failure> {
    let done = Done::start();
    check_single(input)?;
    let profile = speakers.map(SpeakerProfile::read).transpose().map_err(EngineError::from)?;
    let segmenter = options.settings().segmenter()?;
    let written: Vec<&Path> = [outputs.out, options.file(), outputs.plot].into_iter().flatten().collect();
    output::check_files(&written)?;
    let engine = model::load(settings, input)?;
    let source = single_source(&engine, input)?;
    let seconds = source.seconds();
    let mut bar = Bar::new(settings.quiet, seconds);
    let mut progress = |stage: &str, done, total| {
        bar.update(stage, done, total);
        ControlFlow::Continue(())
    };
    let result = match &profile {
        Some(profile) => engine.diarize_with_speakers(source, profile, &mut progress)?,
        None => engine.diarize(source, &mut progress)?,
    };
    let segments = result.segments_by(&segmenter);
    if let Some(path) = outputs.out {
        result.write_speaker_tensors(path)?;
    }
    let to_stdout = outputs.out.is_none() && outputs.plot.is_none();
    options.write(&segments, result.names(), &file_id(input), to_stdout)?;
    if let Some(path) = outputs.plot {
        write_plot(path, input, &result, &segments, &segmenter)?;
    }
    if !written.is_empty() {
        done.report(settings.quiet, &written, seconds, &[speakers_found(&segments)]);
    }
    Ok(())
}

/// `3 speakers`.
pub fn speakers_found(segments: &[Segment]) -> String {
    let mut speakers: Vec<usize> = segments.iter().map(|s| s.speaker).collect();
    speakers.sort_unstable();
    speakers.dedup();
    format!("{} speakers", speakers.len())
}

/// The input file, unless it is standard input.
fn input_file(input: &Input) -> Option<&PathBuf> {
    input.audio.first().or(input.features.as_ref()).filter(|p| p.as_os_str() != "-")
}

/// The RTTM file id of a single run's input: the input file's name without its extension (`audio` for standard
/// input).
pub fn file_id(input: &Input) -> String {
    let stem = input_file(input).and_then(|p| p.file_stem());
    stem.map_or_else(|| "audio".to_string(), |s| s.to_string_lossy().into_owned())
}

/// The timeline of a recording (titled with the input file's name) as a PNG.
pub fn write_plot(
    path: &Path,
    input: &Input,
    recording: &Diarized,
    segments: &[Segment],
    segmenter: &SegmentRule,
) -> Result<(), Failure> {
    let name = input_file(input).and_then(|p| p.file_name());
    let name = name.map_or_else(|| "standard input".to_string(), |n| n.to_string_lossy().into_owned());
    let timeline = Timeline {
        file_name: &name,
        segments,
        probabilities: recording.probabilities(),
        speakers: recording.speakers(),
        frame_seconds: FRAME_SECONDS * recording.subsampling() as f64,
        seconds: recording.frames() as f64 * FRAME_SECONDS,
        thresholds: &segmenter.thresholds(),
    };
    Ok(output::write_bytes(path, &timeline.png().map_err(Failure::Message)?)?)
}
