//! The results of the offline tasks — [`Encoding`], [`Diarized`], [`Aligned`] — each able to give the bytes of every
//! output format the CLI writes.

use std::path::Path;

use nemotron_postprocess::alignment::{Alignment, WordChunk, subtitles};
use nemotron_postprocess::diarization::{Segment, SegmentFormat, SegmentRule, SegmentSettings};
use nemotron_towers::{AudioOutputs, Diarization, Diarizer, TranscribeConfig, tensor_file};

use crate::error::EngineError;
use crate::output;

/// Every output of the audio module for one recording, and the word-timestamp logits when asked for.
pub struct Encoding {
    outputs: AudioOutputs,
    /// `input_features_mask` as f32: 1 for the valid frames, then 0.
    mask: Vec<f32>,
    hidden: usize,
    speakers: usize,
    text_hidden: usize,
    vocab: usize,
    word_timestamp_logits: Option<Vec<f32>>,
}

impl Encoding {
    pub(crate) fn new(outputs: AudioOutputs, c: &TranscribeConfig, word_timestamp_logits: Option<Vec<f32>>) -> Self {
        let f = &outputs.features;
        let mask = (0..f.frames).map(|i| if i < f.valid { 1.0 } else { 0.0 }).collect();
        Self {
            mask,
            hidden: c.asr.hidden,
            speakers: c.diarization.speakers,
            text_hidden: c.text_hidden,
            vocab: c.word_timestamps.vocab_size.max(1),
            word_timestamp_logits,
            outputs,
        }
    }

    /// The outputs, as the library returns them.
    pub fn outputs(&self) -> &AudioOutputs {
        &self.outputs
    }

    /// `[2·T, vocab]` word-timestamp logits, when asked for.
    pub fn word_timestamp_logits(&self) -> Option<&[f32]> {
        self.word_timestamp_logits.as_deref()
    }

    /// Audio tokens: rows of `audio_embeds`.
    pub fn tokens(&self) -> usize {
        self.outputs.audio_embeds.len() / self.text_hidden.max(1)
    }

    /// `(name, shape, values)` of every tensor `encode` writes, in its order: `input_features`,
    /// `input_features_mask`, `asr_last_hidden_state`, `speaker_logits`, `speaker_probabilities`,
    /// `last_hidden_state`, `audio_embeds`, then `word_timestamp_logits` when asked for.
    pub fn tensors(&self) -> Vec<(&str, Vec<usize>, &[f32])> {
        let (o, hidden, speakers, text) = (&self.outputs, self.hidden, self.speakers, self.text_hidden);
        let f = &o.features;
        let mel = f.data.len() / f.frames.max(1);
        let frames = o.asr_hidden.len() / hidden;
        let tensors: [(&str, Vec<usize>, &[f32]); 7] = [
            ("input_features", vec![f.frames, mel], &f.data),
            ("input_features_mask", vec![f.frames], &self.mask),
            ("asr_last_hidden_state", vec![frames, hidden], &o.asr_hidden),
            ("speaker_logits", vec![f.frames, speakers], &o.speaker_logits),
            ("speaker_probabilities", vec![frames, speakers], &o.speaker_probabilities),
            ("last_hidden_state", vec![frames, hidden], &o.fused),
            ("audio_embeds", vec![o.audio_embeds.len() / text, text], &o.audio_embeds),
        ];
        let vocab = self.vocab;
        let head = self.word_timestamp_logits().map(|l| ("word_timestamp_logits", vec![l.len() / vocab, vocab], l));
        tensors.into_iter().chain(head).collect()
    }

    /// The `encode` output file's bytes (safetensors, f32).
    pub fn to_safetensors(&self) -> Result<Vec<u8>, EngineError> {
        safetensors_bytes(&self.tensors())
    }

    /// Writes the `encode` output file to `path`, atomically, straight from the values (a long recording's outputs
    /// are gigabytes: no copy is made in memory).
    pub fn write(&self, path: &Path) -> Result<(), EngineError> {
        write_tensors(path, &self.tensors())
    }
}

/// Who spoke when in one recording: the diarizer's outputs.
pub struct Diarized {
    logits: Vec<f32>,
    probabilities: Vec<f32>,
    frames: usize,
    speakers: usize,
    subsampling: usize,
    /// Each slot's enrolled name (empty without known speakers).
    names: Vec<Option<String>>,
}

impl Diarized {
    pub(crate) fn offline(result: Diarization, diarizer: &Diarizer) -> Self {
        let c = diarizer.config();
        let Diarization { features, speaker_logits, speaker_probabilities } = result;
        Self::new(speaker_logits, speaker_probabilities, features.valid, c.speakers, c.encoder.subsampling)
    }

    /// Outputs of a diarizer with `speakers` slots at encoder `subsampling`, over `frames` valid 10 ms frames.
    pub(crate) fn new(
        logits: Vec<f32>,
        probabilities: Vec<f32>,
        frames: usize,
        speakers: usize,
        subsampling: usize,
    ) -> Self {
        Self { logits, probabilities, frames, speakers, subsampling, names: Vec::new() }
    }

    /// The same outputs, each slot named (`None` for a slot without a name).
    pub(crate) fn with_names(self, names: Vec<Option<String>>) -> Self {
        Self { names, ..self }
    }

    /// The part from 10 ms frame `frame` on (a multiple of the subsampling), with each slot's name: the recording
    /// after the enrolled clips.
    pub(crate) fn after(self, frame: usize, names: Vec<Option<String>>) -> Self {
        let (speakers, row) = (self.speakers, frame / self.subsampling.max(1));
        Self {
            logits: self.logits[(frame * speakers).min(self.logits.len())..].to_vec(),
            probabilities: self.probabilities[(row * speakers).min(self.probabilities.len())..].to_vec(),
            frames: self.frames.saturating_sub(frame),
            names,
            ..self
        }
    }

    /// Each slot's enrolled name ([`crate::Engine::diarize_with_speakers`]), `None` for the others; empty when no
    /// speakers were enrolled.
    pub fn names(&self) -> &[Option<String>] {
        &self.names
    }

    /// `[F, speakers]` speaker logits at 10 ms (padded frames included).
    pub fn logits(&self) -> &[f32] {
        &self.logits
    }

    /// `[T, speakers]` speaker probabilities at the encoder rate.
    pub fn probabilities(&self) -> &[f32] {
        &self.probabilities
    }

    /// Valid 10 ms frames: the recording's length.
    pub fn frames(&self) -> usize {
        self.frames
    }

    /// Speaker slots (columns of the logits and probabilities).
    pub fn speakers(&self) -> usize {
        self.speakers
    }

    /// 10 ms frames per encoder row.
    pub fn subsampling(&self) -> usize {
        self.subsampling
    }

    /// The segments `settings` ask for, ordered by start then speaker.
    pub fn segments(&self, settings: &SegmentSettings) -> Result<Vec<Segment>, EngineError> {
        Ok(self.segments_by(&settings.segmenter()?))
    }

    /// The segments `rule` gives, ordered by start then speaker.
    pub fn segments_by(&self, rule: &SegmentRule) -> Vec<Segment> {
        rule.segments(&self.logits, &self.probabilities, self.speakers, self.frames(), self.subsampling)
    }

    /// `speaker_logits` `[frames, speakers]` and `speaker_probabilities` `[rows, speakers]`: what `diarize --out`
    /// writes.
    pub fn speaker_tensors(&self) -> [(&str, Vec<usize>, &[f32]); 2] {
        let rows = |values: &[f32]| values.len() / self.speakers.max(1);
        [
            ("speaker_logits", vec![rows(&self.logits), self.speakers], &self.logits),
            ("speaker_probabilities", vec![rows(&self.probabilities), self.speakers], &self.probabilities),
        ]
    }

    /// The `diarize --out` file's bytes (safetensors, f32).
    pub fn speaker_tensors_safetensors(&self) -> Result<Vec<u8>, EngineError> {
        safetensors_bytes(&self.speaker_tensors())
    }

    /// Writes the `diarize --out` file to `path`, atomically.
    pub fn write_speaker_tensors(&self, path: &Path) -> Result<(), EngineError> {
        write_tensors(path, &self.speaker_tensors())
    }
}

/// The segments as text in `format`, exactly as `diarize --segments` writes them; `uri` is the RTTM file id
/// (whitespace becomes `_`; the other formats carry none).
pub fn write_segments(segments: &[Segment], format: SegmentFormat, uri: &str) -> String {
    format.write(uri, segments)
}

/// [`write_segments`] with the enrolled speakers' names ([`Diarized::names`]): RTTM's speaker field is the name, JSON
/// objects gain `"Name"`, CSV a `name` column; with no names, [`write_segments`]'s text.
pub fn write_named_segments(
    segments: &[Segment],
    format: SegmentFormat,
    uri: &str,
    names: &[Option<String>],
) -> String {
    format.write_named(uri, segments, names)
}

/// Speaker-attributed word timestamps of a transcript.
pub struct Aligned {
    pub(crate) alignment: Alignment,
    /// Each diarizer slot's enrolled name (empty without known speakers).
    pub(crate) names: Vec<Option<String>>,
}

impl Aligned {
    /// The alignment: words, the diarization, the tag-to-speaker map and the tags whose words could not be placed.
    pub fn alignment(&self) -> &Alignment {
        &self.alignment
    }

    /// Each word's text, start, end and speaker tag.
    pub fn words(&self) -> &[WordChunk] {
        &self.alignment.chunks
    }

    /// Each diarizer slot's enrolled name ([`crate::Engine::align_with_speakers`]), `None` for the others; empty
    /// without known speakers.
    pub fn names(&self) -> &[Option<String>] {
        &self.names
    }

    /// The words, the diarization and the tag-to-speaker map as `align --out` writes them (pretty JSON in
    /// upstream's `align_word_timestamps` shape, ending in a newline). With known speakers, a last key
    /// `speaker_names` maps each tag matched to an enrolled slot to that slot's name.
    pub fn to_json(&self) -> Result<String, EngineError> {
        let json = match self.names.is_empty() {
            true => serde_json::to_string_pretty(&self.alignment),
            false => serde_json::to_string_pretty(&NamedAlignment::new(&self.alignment, &self.names)),
        };
        Ok(json.map_err(EngineError::Serialise)? + "\n")
    }

    /// SubRip subtitles, as `align --srt` writes them (an enrolled speaker's cues labelled by the name).
    pub fn to_srt(&self) -> String {
        subtitles::to_srt(&subtitles::cues(&self.alignment, &self.names))
    }

    /// WebVTT subtitles, as `align --vtt` writes them (an enrolled speaker's voice spans named).
    pub fn to_vtt(&self) -> String {
        subtitles::to_vtt(&subtitles::cues(&self.alignment, &self.names))
    }
}

/// An alignment with a last key `speaker_names`: each tag matched to an enrolled slot, in the tags' order, to its
/// name (keys written as `speaker_tag_to_diarization_speaker` writes them).
#[derive(serde::Serialize)]
struct NamedAlignment<'a> {
    #[serde(flatten)]
    alignment: &'a Alignment,
    #[serde(serialize_with = "as_map")]
    speaker_names: Vec<(String, String)>,
}

impl<'a> NamedAlignment<'a> {
    fn new(alignment: &'a Alignment, names: &[Option<String>]) -> Self {
        let speaker_names = alignment
            .speaker_tag_to_diarization_speaker
            .iter()
            .filter_map(|(tag, slot)| {
                let name = names.get((*slot)?)?.clone()?;
                Some((tag.map_or_else(|| "null".to_string(), |t| t.to_string()), name))
            })
            .collect();
        Self { alignment, speaker_names }
    }
}

fn as_map<S: serde::Serializer>(pairs: &[(String, String)], serializer: S) -> Result<S::Ok, S::Error> {
    serializer.collect_map(pairs.iter().map(|(key, value)| (key, value)))
}

/// A safetensors buffer of f32 tensors.
fn safetensors_bytes(tensors: &[(&str, Vec<usize>, &[f32])]) -> Result<Vec<u8>, EngineError> {
    let owned: Vec<(String, tensor_file::Tensor)> = tensors
        .iter()
        .map(|(name, shape, values)| (name.to_string(), tensor_file::Tensor::f32(shape.clone(), values)))
        .collect();
    Ok(tensor_file::serialize(&owned, Default::default())?)
}

/// Writes f32 tensors to `path` atomically, streamed from their values.
fn write_tensors(path: &Path, tensors: &[(&str, Vec<usize>, &[f32])]) -> Result<(), EngineError> {
    output::write_atomic(path, |temporary| tensor_file::write_f32(temporary, tensors).map_err(reason))
}

/// The I/O error of a failed tensor write, without the temporary path: safetensors writes through a temporary file
/// of its own, whose errors end in `at path "…/.tmpXXXX"` (the error of [`write_tensors`] names the final path).
fn reason(error: nemotron_towers::Error) -> std::io::Error {
    match error {
        nemotron_towers::Error::Output { source, .. } => {
            let text = source.to_string();
            match text.find(" at path \"") {
                Some(at) => std::io::Error::new(source.kind(), &text[..at]),
                None => source,
            }
        }
        other => std::io::Error::other(other),
    }
}
