//! `encode` and `diarize` of one input: check the outputs, load the model, read the input, run, write the outputs.
//! The per-recording steps are shared with the batch runner (`batch.rs`).

use std::path::{Path, PathBuf};

use nemotron_postprocess::diarization::Segment;
use nemotron_postprocess::time::FRAME_SECONDS;
use nemotron_towers::tensor_file;
use nemotron_towers::{
    AudioError, AudioModel, AudioOptions, AudioOutputs, Diarization, DiarizationConfig, Diarizer, Features, Model,
};

use crate::failure::Failure;
use crate::output::{self, Done};
use crate::progress::Bar;
use crate::segment_options::{Rule, SegmentOptions};
use crate::timeline::Timeline;
use crate::{Input, Settings, model};

/// The model's input: samples from an audio file, or features from a features file.
pub enum Source {
    Samples(Vec<f32>),
    Features(Features),
}

impl Source {
    /// Seconds of audio it covers.
    pub fn seconds(&self) -> f64 {
        match self {
            Source::Samples(samples) => samples.len() as f64 / f64::from(nemotron_towers::audio::SAMPLE_RATE),
            Source::Features(features) => features.valid as f64 * FRAME_SECONDS,
        }
    }
}

/// The one input of a single run: `--audio FILE` (`-`: standard input) or `--features FILE`.
pub(crate) fn single_source(input: &Input, mel_bins: usize, subsampling: usize) -> Result<Source, Failure> {
    let options = AudioOptions { channel: input.channel, ..AudioOptions::default() };
    // A channel the recording lacks is a usage error (exit status 2), naming how many it has.
    let usage = |e: AudioError| match e {
        AudioError::NoSuchChannel { .. } => Failure::Usage(e.to_string()),
        other => other.into(),
    };
    match (input.audio.as_slice(), &input.features) {
        ([path], _) if path.as_os_str() == "-" => {
            let stdin = std::io::stdin().lock();
            let samples = nemotron_towers::audio::read_audio_from(stdin, "standard input", &options);
            Ok(Source::Samples(samples.map_err(usage)?))
        }
        ([path], _) => Ok(Source::Samples(nemotron_towers::audio::read_audio_with(path, &options).map_err(usage)?)),
        ([], Some(path)) => Ok(Source::Features(tensor_file::read_features(path, mel_bins, subsampling)?)),
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

/// The Transcribe model, or the error saying `encode` needs one.
pub fn transcribe(model: Model) -> Result<Box<AudioModel>, Failure> {
    match model {
        Model::Transcribe(model) => Ok(model),
        Model::Diarization(_) => Err(needs_transcribe()),
    }
}

/// `encode` was given a diarizer alone.
pub fn needs_transcribe() -> Failure {
    Failure::Message(
        "this checkpoint is a diarizer alone; `encode` needs a Transcribe checkpoint (try `diarize`)".into(),
    )
}

/// `encode`; with `word_timestamps`, the word-timestamp head runs on the ASR states too and its logits join the
/// output file.
pub fn encode(settings: &Settings, input: &Input, out: &Path, word_timestamps: bool) -> Result<(), Failure> {
    let done = Done::start();
    check_single(input)?;
    output::check_files(&[out])?;
    let (_gpu, model) = model::load(settings, input)?;
    let model = transcribe(model)?;
    if word_timestamps {
        // Before the towers run: a checkpoint without the head fails at once.
        model.word_timestamp_head()?;
    }
    let c = model.config();
    let source = single_source(input, c.asr.mel_bins, c.asr.subsampling)?;
    let seconds = source.seconds();
    let outputs = encode_source(&model, source, &mut Bar::new(settings.quiet, seconds))?;
    let logits = word_timestamps.then(|| model.word_timestamp_logits(&outputs)).transpose()?.map(|head| head.logits);
    write_encoding(out, &outputs, &model, logits.as_deref())?;
    done.report(settings.quiet, &[out], seconds, &[tokens(&outputs, &model)]);
    Ok(())
}

/// Runs the whole audio module on `source`.
pub fn encode_source(model: &AudioModel, source: Source, bar: &mut Bar) -> Result<AudioOutputs, Failure> {
    let mut progress = |stage: &str, done, total| bar.update(stage, done, total);
    let outputs = match source {
        Source::Samples(samples) => model.encode_audio(&samples, &mut progress),
        Source::Features(features) => model.encode_features(features, &mut progress),
    }?;
    Ok(outputs)
}

/// `562 tokens`.
pub fn tokens(outputs: &AudioOutputs, model: &AudioModel) -> String {
    format!("{} tokens", outputs.audio_embeds.len() / model.config().text_hidden.max(1))
}

/// The reason of a failed tensor write, without the temporary paths (the message names the final one):
/// safetensors writes through a temporary file of its own, whose errors end in `at path "…/.tmpXXXX"`.
fn reason(error: nemotron_towers::Error) -> String {
    let text = match error {
        nemotron_towers::Error::Output { reason, .. } => reason,
        other => other.to_string(),
    };
    match text.find(" at path \"") {
        Some(at) => text[..at].to_owned(),
        None => text,
    }
}

/// Writes every output tensor of `encode` to `out`, and the word-timestamp logits when given.
pub fn write_encoding(
    out: &Path,
    o: &AudioOutputs,
    model: &AudioModel,
    word_timestamp_logits: Option<&[f32]>,
) -> Result<(), Failure> {
    let c = model.config();
    let (hidden, speakers, text) = (c.asr.hidden, c.diarization.speakers, c.text_hidden);
    let f = &o.features;
    let mel = f.data.len() / f.frames.max(1);
    let frames = o.asr_hidden.len() / hidden;
    let mask: Vec<f32> = (0..f.frames).map(|i| if i < f.valid { 1.0 } else { 0.0 }).collect();
    let tensors: [(&str, Vec<usize>, &[f32]); 7] = [
        ("input_features", vec![f.frames, mel], &f.data),
        ("input_features_mask", vec![f.frames], &mask),
        ("asr_last_hidden_state", vec![frames, hidden], &o.asr_hidden),
        ("speaker_logits", vec![f.frames, speakers], &o.speaker_logits),
        ("speaker_probabilities", vec![frames, speakers], &o.speaker_probabilities),
        ("last_hidden_state", vec![frames, hidden], &o.fused),
        ("audio_embeds", vec![o.audio_embeds.len() / text, text], &o.audio_embeds),
    ];
    let vocab = c.word_timestamps.vocab_size.max(1);
    let head = word_timestamp_logits.map(|l| ("word_timestamp_logits", vec![l.len() / vocab, vocab], l));
    let tensors: Vec<(&str, Vec<usize>, &[f32])> = tensors.into_iter().chain(head).collect();
    output::write_atomic(out, |path| tensor_file::write_f32(path, &tensors).map_err(reason))
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
) -> Result<(), Failure> {
    let done = Done::start();
    check_single(input)?;
    let rule = options.rule()?;
    let written: Vec<&Path> = [outputs.out, options.file(), outputs.plot].into_iter().flatten().collect();
    output::check_files(&written)?;
    let (_gpu, model) = model::load(settings, input)?;
    let diarizer = model.diarizer();
    let c = diarizer.config();
    let source = single_source(input, c.encoder.mel_bins, c.encoder.subsampling)?;
    let seconds = source.seconds();
    let result = diarize_source(diarizer, source, &mut Bar::new(settings.quiet, seconds))?;
    let segments = rule.segments(&result, c);
    if let Some(path) = outputs.out {
        write_speaker_tensors(path, &result.speaker_logits, &result.speaker_probabilities, c.speakers)?;
    }
    options.write(&segments, &file_id(input), outputs.out.is_none() && outputs.plot.is_none())?;
    if let Some(path) = outputs.plot {
        let recording = Recording { probabilities: &result.speaker_probabilities, frames: result.features.valid };
        write_plot(path, input, &recording, &segments, &rule, c)?;
    }
    if !written.is_empty() {
        done.report(settings.quiet, &written, seconds, &[speakers_found(&segments)]);
    }
    Ok(())
}

/// Runs the diarizer on `source`.
pub fn diarize_source(diarizer: &Diarizer, source: Source, bar: &mut Bar) -> Result<Diarization, Failure> {
    let mut progress = |stage: &str, done, total| bar.update(stage, done, total);
    let result = match source {
        Source::Samples(samples) => diarizer.diarize_audio(&samples, &mut progress),
        Source::Features(features) => diarizer.diarize_features(features, &mut progress),
    }?;
    Ok(result)
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

/// `speaker_logits` `[frames, speakers]` and `speaker_probabilities` `[rows, speakers]` (safetensors, f32).
pub fn write_speaker_tensors(
    path: &Path,
    logits: &[f32],
    probabilities: &[f32],
    speakers: usize,
) -> Result<(), Failure> {
    let rows = |values: &[f32]| values.len() / speakers.max(1);
    let tensors: [(&str, Vec<usize>, &[f32]); 2] = [
        ("speaker_logits", vec![rows(logits), speakers], logits),
        ("speaker_probabilities", vec![rows(probabilities), speakers], probabilities),
    ];
    output::write_atomic(path, |temporary| tensor_file::write_f32(temporary, &tensors).map_err(reason))
}

/// What a timeline draws of a recording: its encoder-rate probabilities and its length in 10 ms frames.
pub struct Recording<'a> {
    pub probabilities: &'a [f32],
    pub frames: usize,
}

/// The timeline of a recording (titled with the input file's name) as a PNG.
pub fn write_plot(
    path: &Path,
    input: &Input,
    recording: &Recording<'_>,
    segments: &[Segment],
    rule: &Rule,
    c: &DiarizationConfig,
) -> Result<(), Failure> {
    let name = input_file(input).and_then(|p| p.file_name());
    let name = name.map_or_else(|| "standard input".to_string(), |n| n.to_string_lossy().into_owned());
    let timeline = Timeline {
        file_name: &name,
        segments,
        probabilities: recording.probabilities,
        speakers: c.speakers,
        frame_seconds: FRAME_SECONDS * c.encoder.subsampling as f64,
        seconds: recording.frames as f64 * FRAME_SECONDS,
        thresholds: &rule.thresholds(),
    };
    output::write_bytes(path, &timeline.png().map_err(Failure::Message)?)
}
