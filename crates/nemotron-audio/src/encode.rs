//! `encode` and `diarize`: load the model, read the input, run, write the outputs.

use std::path::Path;

use nemotron_towers::rttm::{self, FRAME_SECONDS};
use nemotron_towers::tensor_file;
use nemotron_towers::{AudioModel, AudioOutputs, Diarization, Features, Gpu, Model};

use crate::failure::Failure;
use crate::progress::Bar;
use crate::{Input, Settings, demo, timeline};

/// The model named by `--model` or `--demo` (a usage error without either).
pub(crate) fn load(settings: &Settings, input: &Input) -> Result<(Gpu, Model), Failure> {
    if input.model.is_none() && !input.demo {
        return Err(Failure::Usage(
            "no model given: pass --model DIR (a checkpoint folder with config.json and model.safetensors, e.g. a \
             download of nvidia's Nemotron 3.5 Transcribe), or --demo to try the built-in tiny model with random \
             weights"
                .into(),
        ));
    }
    let gpu = settings.gpu()?;
    let model = match &input.model {
        Some(dir) => Model::load(&gpu, dir, &settings.model)?,
        None => {
            log::warn!("using the {}: its outputs are meaningless", demo::LABEL);
            let (config, checkpoint) = demo::model()?;
            Model::from_checkpoint(&gpu, config, &checkpoint, &settings.model)?
        }
    };
    Ok((gpu, model))
}

/// The model's input: samples from an audio file, or features from a features file.
enum Source {
    Samples(Vec<f32>),
    Features(Features),
}

fn source(input: &Input, mel_bins: usize, subsampling: usize) -> Result<Source, Failure> {
    match (&input.audio, &input.features) {
        (Some(path), _) => Ok(Source::Samples(nemotron_towers::read_audio(path)?)),
        (None, Some(path)) => Ok(Source::Features(tensor_file::read_features(path, mel_bins, subsampling)?)),
        (None, None) => Err(Failure::Usage("give --audio FILE or --features FILE".into())),
    }
}

/// The whole audio module on the input, with a progress bar.
pub(crate) fn encode_input(settings: &Settings, input: &Input, model: &AudioModel) -> Result<AudioOutputs, Failure> {
    let c = model.config();
    let mut bar = Bar::new(settings.quiet);
    let mut progress = |stage: &str, done, total| bar.update(stage, done, total);
    let outputs = match source(input, c.asr.mel_bins, c.asr.subsampling)? {
        Source::Samples(samples) => model.encode_audio(&samples, &mut progress),
        Source::Features(features) => model.encode_features(features, &mut progress),
    }?;
    bar.finish();
    Ok(outputs)
}

pub fn encode(settings: &Settings, input: &Input, out: &Path, word_timestamps: bool) -> Result<(), Failure> {
    let (_gpu, model) = load(settings, input)?;
    let Model::Transcribe(model) = model else {
        return Err(Failure::Message(
            "this checkpoint is a diarizer alone; `encode` needs a Transcribe checkpoint (try `diarize`)".into(),
        ));
    };
    let c = model.config();
    let outputs = encode_input(settings, input, &model)?;
    let logits = word_timestamps.then(|| model.word_timestamp_logits(&outputs)).transpose()?.map(|head| head.logits);
    let vocab = c.word_timestamps.vocab_size;
    let extra = logits.as_deref().map(|l| ("word_timestamp_logits", vec![l.len() / vocab, vocab], l));
    write_encoding(out, &outputs, c.asr.hidden, c.diarization.speakers, c.text_hidden, extra)
}

fn write_encoding(
    out: &Path,
    o: &AudioOutputs,
    hidden: usize,
    speakers: usize,
    text: usize,
    extra: Option<(&str, Vec<usize>, &[f32])>,
) -> Result<(), Failure> {
    let f = &o.features;
    let mel = f.data.len() / f.frames.max(1);
    let frames = o.asr_hidden.len() / hidden;
    let mask: Vec<f32> = (0..f.frames).map(|i| if i < f.valid { 1.0 } else { 0.0 }).collect();
    let base: [(&str, Vec<usize>, &[f32]); 7] = [
        ("input_features", vec![f.frames, mel], &f.data),
        ("input_features_mask", vec![f.frames], &mask),
        ("asr_last_hidden_state", vec![frames, hidden], &o.asr_hidden),
        ("speaker_logits", vec![f.frames, speakers], &o.speaker_logits),
        ("speaker_probabilities", vec![frames, speakers], &o.speaker_probabilities),
        ("last_hidden_state", vec![frames, hidden], &o.fused),
        ("audio_embeds", vec![o.audio_embeds.len() / text, text], &o.audio_embeds),
    ];
    let tensors: Vec<(&str, Vec<usize>, &[f32])> = base.into_iter().chain(extra).collect();
    Ok(tensor_file::write_f32(out, &tensors)?)
}

/// Where `diarize` writes.
pub struct DiarizeOutputs<'a> {
    pub out: Option<&'a Path>,
    pub rttm: Option<&'a Path>,
    pub plot: Option<&'a Path>,
}

pub fn diarize(
    settings: &Settings,
    input: &Input,
    outputs: &DiarizeOutputs<'_>,
    threshold: f64,
) -> Result<(), Failure> {
    let (_gpu, model) = load(settings, input)?;
    let diarizer = model.diarizer();
    let c = diarizer.config().clone();
    let mut bar = Bar::new(settings.quiet);
    let mut progress = |stage: &str, done, total| bar.update(stage, done, total);
    let result: Diarization = match source(input, c.encoder.mel_bins, c.encoder.subsampling)? {
        Source::Samples(samples) => diarizer.diarize_audio(&samples, &mut progress),
        Source::Features(features) => diarizer.diarize_features(features, &mut progress),
    }?;
    bar.finish();
    let speakers = c.speakers;
    let segments = rttm::segments(&result.speaker_logits, speakers, result.features.valid, threshold);
    if let Some(path) = outputs.out {
        let frames = result.features.frames;
        let tensors: [(&str, Vec<usize>, &[f32]); 2] = [
            ("speaker_logits", vec![frames, speakers], &result.speaker_logits),
            ("speaker_probabilities", vec![frames / c.encoder.subsampling, speakers], &result.speaker_probabilities),
        ];
        tensor_file::write_f32(path, &tensors)?;
    }
    if let Some(path) = outputs.rttm {
        let id = input
            .audio
            .as_ref()
            .or(input.features.as_ref())
            .and_then(|p| p.file_stem())
            .map_or_else(|| "audio".to_string(), |s| s.to_string_lossy().into_owned());
        std::fs::write(path, rttm::to_rttm(&id, &segments))
            .map_err(|e| Failure::Message(format!("cannot write {}: {e}", path.display())))?;
    }
    if let Some(path) = outputs.plot {
        let frame_seconds = FRAME_SECONDS * c.encoder.subsampling as f64;
        let seconds = result.features.valid as f64 * FRAME_SECONDS;
        timeline::render(path, &segments, &result.speaker_probabilities, speakers, frame_seconds, seconds)
            .map_err(Failure::Message)?;
    }
    if outputs.out.is_none() && outputs.rttm.is_none() && outputs.plot.is_none() {
        print!("{}", rttm::to_rttm("audio", &segments));
    }
    Ok(())
}
