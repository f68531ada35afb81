//! Speaker-attributed forced alignment of a transcript: each word's start, end and speaker from the word-timestamp
//! head's CTC logits and the diarizer's speaker logits. A port of Transformers 5.23
//! `Nemotron3_5TranscribeProcessor.align_word_timestamps` (itself a port of NeMo's
//! `MultiSpeakerSOTWordTimestampAligner`), including its f32 arithmetic, tie rules and edge cases, so the same
//! inputs give the same words, speakers and times.
//!
//! [`align`] takes a transcript and the head's logits; `nemotron_towers::AudioModel::align` runs the towers and then this.

mod ctc;
mod logprobs;
mod speakers;
pub mod subtitles;
mod tokenizer;
mod transcript;
#[rustfmt::skip]
mod unicode_tables;
mod words;

use serde::ser::{SerializeMap, Serializer};

pub use ctc::{Span, forced_align, merge_tokens};
pub use logprobs::FrameLogProbs;
pub use tokenizer::{AlignmentTokenizer, PROTO_TENSOR, TOKENIZER_DIR, TokenizerError};
pub use transcript::{Stream, Tag, Unit, tokenize_transcript};

use crate::time::{HOP_LENGTH, SAMPLE_RATE};
use speakers::{diarization_segments, head_rate_probabilities, match_tags_to_speakers};
use words::{align_words, refine_word_timestamps};

/// Input the alignment cannot use.
#[derive(Debug, thiserror::Error)]
pub enum AlignmentError {
    /// The transcript has no word, or one the tokenizer or the head cannot represent, or a language not supported.
    #[error("transcript: {0}")]
    Transcript(String),
    /// The alignment tokenizer failed.
    #[error(transparent)]
    Tokenizer(#[from] TokenizerError),
    /// Logits, mask or speaker logits whose sizes disagree.
    #[error("alignment inputs: {0}")]
    Inputs(String),
}

/// The alignment's settings (upstream's keyword arguments and their defaults).
#[derive(Clone, Debug, PartialEq)]
pub struct AlignOptions {
    /// `Some("zh" | "ja")` aligns character by character, `Some("th")` is refused, another code word by word; `None`
    /// detects Chinese, Japanese, Korean and Thai from the script.
    pub language: Option<String>,
    /// A speaker counts as active at a head frame when its probability is at least this, and at a 10 ms frame when
    /// above it (0.5).
    pub speaker_activity_threshold: f64,
    /// Longest word from the CTC path, seconds (1.0).
    pub max_word_duration: f64,
    /// Longest word and largest start shift after the snapping to diarization segments, in encoder frames (12).
    pub max_word_frames: usize,
    /// Strings replaced by a space before tokenizing: the language model's special tokens, except `<spk:N>`,
    /// `<ev:…>` and `<sty:…>` (upstream takes them from the LM tokenizer; empty by default).
    pub dropped_tokens: Vec<String>,
}

impl Default for AlignOptions {
    fn default() -> Self {
        Self {
            language: None,
            speaker_activity_threshold: 0.5,
            max_word_duration: 1.0,
            max_word_frames: 12,
            dropped_tokens: Vec::new(),
        }
    }
}

/// The frame counts of one recording.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Frames {
    /// Mel frames of the (padded) features (`input_features_mask.shape[-1]`).
    pub padded_mel: usize,
    /// Valid mel frames (`input_features_mask.sum()`).
    pub valid_mel: usize,
    /// Rows of the head's logits (its padded frames).
    pub head: usize,
    /// Mel frames per encoder frame.
    pub subsampling: usize,
}

impl Frames {
    /// Head frames per encoder frame, from the logits' shape as upstream derives it.
    fn upsampling_factor(&self) -> Result<usize, AlignmentError> {
        let padded = self.padded_mel.div_ceil(self.subsampling.max(1));
        match (padded > 0).then(|| (self.head / padded, self.head % padded)) {
            Some((factor, 0)) if factor > 0 => Ok(factor),
            _ => Err(AlignmentError::Inputs(format!(
                "{} logit frames are not a multiple of the {padded} encoder frames of {} mel frames",
                self.head, self.padded_mel
            ))),
        }
    }
}

/// One aligned word (or character).
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct WordChunk {
    /// The word as written in the transcript.
    pub text: String,
    /// (start, end), seconds.
    pub timestamp: (f64, f64),
    /// Its speaker tag.
    pub speaker: Tag,
}

/// One diarization segment at 10 ms resolution.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct DiarizationSegment {
    /// The diarizer's speaker slot.
    pub speaker: usize,
    /// (start, end), seconds.
    pub timestamp: (f64, f64),
}

/// Upstream's result: words sorted by (start, end), the diarization, each tag's speaker, the tags that could not be
/// aligned. Serialises to the JSON of upstream's dict (`json.dumps`: tags as string keys, `None` as `null`).
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Alignment {
    /// The words, sorted by (start, end); ties keep tag order, then word order.
    pub chunks: Vec<WordChunk>,
    /// Every speaker's segments, sorted by (start, end, speaker); empty without speaker logits.
    pub diarization: Vec<DiarizationSegment>,
    /// Each tag's diarizer speaker in order of the tags' first appearance (`None`: unmatched, or no speaker logits).
    #[serde(serialize_with = "tag_map")]
    pub speaker_tag_to_diarization_speaker: Vec<(Tag, Option<usize>)>,
    /// Tags whose words could not be placed (in tag order).
    pub failed_speakers: Vec<Tag>,
}

fn tag_map<S: Serializer>(pairs: &[(Tag, Option<usize>)], serializer: S) -> Result<S::Ok, S::Error> {
    let mut map = serializer.serialize_map(Some(pairs.len()))?;
    for (tag, speaker) in pairs {
        map.serialize_entry(&tag.map_or_else(|| "null".to_string(), |t| t.to_string()), speaker)?;
    }
    map.end()
}

/// Speaker logits at 10 ms, `[frames ≥ padded mel frames, speakers]` row-major.
#[derive(Clone, Copy, Debug)]
pub struct SpeakerLogits<'a> {
    /// The values.
    pub logits: &'a [f32],
    /// Speaker slots.
    pub speakers: usize,
}

/// Aligns `transcript` with the head's full logits (`[frames.head, vocab]`, the blank last) and, when given, the
/// diarizer's speaker logits.
pub fn align(
    tokenizer: &AlignmentTokenizer,
    transcript: &str,
    logits: &[f32],
    vocab: usize,
    frames: Frames,
    speaker_logits: Option<SpeakerLogits<'_>>,
    options: &AlignOptions,
) -> Result<Alignment, AlignmentError> {
    if vocab < 2 || logits.len() != frames.head * vocab {
        return Err(AlignmentError::Inputs(format!(
            "{} logits are not {} frames of {vocab} classes",
            logits.len(),
            frames.head
        )));
    }
    let streams = tokenize(tokenizer, transcript, vocab, options)?;
    let mut log_probs = FrameLogProbs::new(vocab, streams.iter().flat_map(Stream::target));
    let needed = num_frames(frames)?;
    log_probs.push_logits(&logits[..needed * vocab]);
    align_streams(&streams, &log_probs, frames, speaker_logits, options)
}

/// The transcript's streams for a head of `vocab` classes (the blank, `vocab − 1`, excluded from the targets).
pub fn tokenize(
    tokenizer: &AlignmentTokenizer,
    transcript: &str,
    vocab: usize,
    options: &AlignOptions,
) -> Result<Vec<Stream>, AlignmentError> {
    let blank = vocab.saturating_sub(1) as u32;
    let streams =
        tokenize_transcript(tokenizer, transcript, options.language.as_deref(), blank, &options.dropped_tokens)?;
    if streams.is_empty() {
        return Err(AlignmentError::Transcript("no word to align once its special tokens are removed".into()));
    }
    Ok(streams)
}

/// Head frames the alignment reads: those of the valid encoder frames.
pub fn num_frames(frames: Frames) -> Result<usize, AlignmentError> {
    Ok(frames.valid_mel.div_ceil(frames.subsampling.max(1)) * frames.upsampling_factor()?)
}

/// Aligns tokenized streams with log-probabilities holding at least [`num_frames`] frames and every class of the
/// streams.
pub fn align_streams(
    streams: &[Stream],
    log_probs: &FrameLogProbs,
    frames: Frames,
    speaker_logits: Option<SpeakerLogits<'_>>,
    options: &AlignOptions,
) -> Result<Alignment, AlignmentError> {
    let factor = frames.upsampling_factor()?;
    let encoder_frames = frames.valid_mel.div_ceil(frames.subsampling.max(1));
    let head_frames = encoder_frames * factor;
    if log_probs.frames() < head_frames || streams.iter().flat_map(Stream::target).any(|c| !log_probs.has(c)) {
        return Err(AlignmentError::Inputs(format!(
            "the log-probabilities hold {} frames (need {head_frames}) or lack a class of the transcript",
            log_probs.frames()
        )));
    }
    let seconds_per_mel = HOP_LENGTH as f64 / SAMPLE_RATE as f64;
    // As upstream: the duration of the valid mel frames, one rounding (NeMo takes the samples instead).
    let duration = (frames.valid_mel * HOP_LENGTH) as f64 / SAMPLE_RATE as f64;
    let frame_duration = duration / head_frames as f64;
    let threshold = options.speaker_activity_threshold as f32;

    let mut tag_to_speaker: Vec<Option<usize>> = vec![None; streams.len()];
    let mut probabilities = None;
    let mut diarization = Vec::new();
    if let Some(SpeakerLogits { logits, speakers }) = speaker_logits {
        if speakers == 0 || logits.len() < encoder_frames * frames.subsampling * speakers {
            return Err(AlignmentError::Inputs(format!(
                "{} speaker logits do not cover {encoder_frames} encoder frames of {} mel frames × {speakers} speakers",
                logits.len(),
                frames.subsampling
            )));
        }
        let p = head_rate_probabilities(logits, speakers, encoder_frames, frames.subsampling, head_frames);
        tag_to_speaker = match_tags_to_speakers(log_probs, streams, &p, speakers, threshold);
        diarization = diarization_segments(logits, speakers, frames.valid_mel, threshold, seconds_per_mel, duration);
        probabilities = Some((p, speakers));
    }

    let mut words: Vec<WordChunk> = Vec::new();
    let mut failed = Vec::new();
    for (stream, &speaker) in streams.iter().zip(&tag_to_speaker) {
        let column: Vec<f32> = match (&probabilities, speaker) {
            (None, _) => vec![1.0; head_frames],
            (Some(_), None) => vec![0.0; head_frames],
            (Some((p, n)), Some(s)) => (0..head_frames).map(|t| p[t * n + s]).collect(),
        };
        let Some(mut timed) = align_words(log_probs, stream, &column, frame_duration, options.max_word_duration) else {
            failed.push(stream.tag);
            continue;
        };
        let segments: Vec<(f64, f64)> =
            diarization.iter().filter(|s| Some(s.speaker) == speaker).map(|s| (s.start, s.end)).collect();
        refine_word_timestamps(&mut timed, &segments, frame_duration, options.max_word_frames * factor);
        words.extend(timed.into_iter().map(|w| WordChunk {
            text: w.text,
            timestamp: (w.start, w.end),
            speaker: stream.tag,
        }));
    }
    // A stable sort, as Python's.
    words.sort_by(|a, b| a.timestamp.partial_cmp(&b.timestamp).unwrap_or(std::cmp::Ordering::Equal));
    Ok(Alignment {
        chunks: words,
        diarization: diarization
            .iter()
            .map(|s| DiarizationSegment { speaker: s.speaker, timestamp: (s.start, s.end) })
            .collect(),
        speaker_tag_to_diarization_speaker: streams.iter().map(|s| s.tag).zip(tag_to_speaker).collect(),
        failed_speakers: failed,
    })
}
