//! `config.json` of a Transcribe checkpoint (`model_type` `nemo_speechlm`) or of a standalone
//! diarization checkpoint (`nemotron3_diarization`). Missing fields take the upstream defaults
//! (docs/model.md §3.2, §6.6); everything the towers need is derived here and validated once.

use std::path::Path;

mod raw;

pub(crate) use raw::check_word_timestamp_width;
use raw::{RawDiarization, RawTop, RawTranscribe, STANDALONE_SCHEDULE};

/// A config that cannot describe a runnable model.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The config file could not be read.
    #[error("reading {path}: {source}")]
    Io {
        /// Path of the config file.
        path: String,
        /// The failed read.
        source: std::io::Error,
    },
    /// The text is not JSON (after Python's `NaN`/`Infinity` are mapped to `null`) or a field has the wrong type.
    #[error("parsing {path}: {source}")]
    Json {
        /// Path of the config file (`config.json` when parsed from text).
        path: String,
        /// The serde error, with line and column.
        source: serde_json::Error,
    },
    /// `model_type` names neither a Transcribe nor a standalone diarization checkpoint.
    #[error("{path}: unknown model_type `{found}` (expected `nemo_speechlm` or `nemotron3_diarization`)")]
    UnknownModelType {
        /// Path of the config file (`config.json` when parsed from text).
        path: String,
        /// The `model_type` value found (empty when the key is missing).
        found: String,
    },
    /// A value out of range or an unsupported variant; the message names the config key and the limit.
    #[error("invalid config: {0}")]
    Invalid(String),
}

/// Largest widths and counts accepted; far above the release model, far below anything that
/// would overflow the index arithmetic of the kernels.
const MAX_WIDTH: usize = 1 << 15;
const MAX_LAYERS: usize = 512;
/// Largest chunk, context, FIFO or cache length in encoder frames (2^20 frames of 80 ms: 23 hours).
const MAX_FRAMES: usize = 1 << 20;

/// Which encoder of a checkpoint.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TowerKind {
    /// The ASR tower of a Transcribe checkpoint.
    Asr,
    /// The Sortformer encoder (of a Transcribe or a standalone diarization checkpoint).
    Diarization,
    /// The word-timestamp encoder of a Transcribe checkpoint (no input projection: it reads upsampled ASR states).
    WordTimestamps,
}

/// One transformer encoder tower (ASR or Sortformer), derived from its sub-config.
#[derive(Clone, Debug, PartialEq)]
pub struct EncoderConfig {
    /// Model width d.
    pub hidden: usize,
    /// MLP width.
    pub intermediate: usize,
    /// Attention heads (`num_attention_heads`); key/value heads must equal it (MHA only).
    pub heads: usize,
    /// Per-head width, `hidden_size / num_attention_heads`; at most 128 (the attention kernel's limit).
    pub head_dim: usize,
    /// Transformer layers (`num_hidden_layers`).
    pub layers: usize,
    /// Rotary dimensions per head (`head_dim · partial_rotary_factor`, even).
    pub rotary_dims: usize,
    /// RoPE base θ (`rope_parameters.rope_theta`, default 10000).
    pub rope_theta: f64,
    /// Per-head q/k LayerNorm (ASR tower: yes; Sortformer: no).
    pub qk_norm: bool,
    /// Log-mel bins per 10 ms mel frame (`num_mel_bins`, default 128).
    pub mel_bins: usize,
    /// Mel frames stacked per encoder frame.
    pub subsampling: usize,
}

impl EncoderConfig {
    /// Width of one stacked input row (`subsampling · mel_bins`).
    pub fn stacked_features(&self) -> usize {
        self.subsampling * self.mel_bins
    }
}

/// Chunked inference schedule (docs/model.md §4), in encoder frames.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChunkConfig {
    /// Frames each chunk contributes to the output (`chunk_length`, default 500 in Transcribe, 340 standalone).
    pub length: usize,
    /// Look-back frames run with a chunk but not kept (`chunk_left_context`, default 50 / 0).
    pub left_context: usize,
    /// Look-ahead frames run with a chunk but not kept (`chunk_right_context`, default 50 / 40).
    pub right_context: usize,
}

/// Arrival-order speaker cache + FIFO (docs/model.md §6.3, §6.6).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SpeakerCacheConfig {
    /// FIFO capacity in encoder frames; beyond it frames pop into the cache (`fifo_length`, default 40).
    pub fifo_length: usize,
    /// Fewest frames popped from an overflowing FIFO, in encoder frames (`speaker_cache_update_period`, 300).
    pub update_period: usize,
    /// Cache rows in encoder frames; more are compressed to this (`streaming_config.speaker_cache_length`,
    /// 188 in Transcribe, 264 standalone).
    pub cache_length: usize,
    /// Silence rows kept per speaker in a compressed cache (`speaker_cache_silence_frames_per_speaker`, 1).
    pub silence_frames_per_speaker: usize,
    /// Floor τ on p and 1 − p in the compression frame scores (`prediction_score_threshold`, 0.25).
    pub score_threshold: f64,
    /// Score added to the newly popped frames when compressing (`latest_frames_score_boost`, 0.05).
    pub latest_frames_boost: f64,
    /// Share of the per-speaker budget whose top frames get +2·ln 2 (`strong_boost_rate`, 0.75).
    pub strong_boost_rate: f64,
    /// Share of the per-speaker budget whose top frames get +ln 2 (`weak_boost_rate`, 1.5).
    pub weak_boost_rate: f64,
    /// Share of the budget of positive-score frames above which a speaker drops its overlapped frames
    /// (`min_positive_scores_rate`, 0.5).
    pub min_positive_scores_rate: f64,
}

/// The Sortformer diarizer: encoder, head, chunking and cache.
#[derive(Clone, Debug, PartialEq)]
pub struct DiarizationConfig {
    /// The Sortformer encoder (`audio_config`; defaults 512 wide, 31 layers, full RoPE, no q/k norm).
    pub encoder: EncoderConfig,
    /// Width of the head (`proj` output, upsampler channels per sub-frame).
    pub head_hidden: usize,
    /// Speaker slots in arrival order (`head_config.num_speakers`, default 8).
    pub speakers: usize,
    /// Chunk schedule shared by both towers (`chunk_length`, `chunk_left_context`, `chunk_right_context`).
    pub chunks: ChunkConfig,
    /// Speaker cache and FIFO of the offline diarizer loop.
    pub cache: SpeakerCacheConfig,
    /// Speaker cache and FIFO of a streaming session: `streaming_config.fifo_length` and
    /// `.speaker_cache_update_period` (defaults 264 and 222), the rest as in [`DiarizationConfig::cache`].
    pub streaming_cache: SpeakerCacheConfig,
}

impl DiarizationConfig {
    /// Encoder rows of the offline loop's largest step: speaker cache, FIFO, and a chunk with its left and right
    /// context.
    pub(crate) fn offline_step_rows(&self) -> usize {
        let (cache, chunks) = (&self.cache, &self.chunks);
        cache.cache_length + cache.fifo_length + chunks.left_context + chunks.length + chunks.right_context
    }
}

/// The word-timestamp encoder and its CTC classifier (`word_timestamp_config`; Transformers 5.23
/// `Nemotron3_5TranscribeWordTimestampConfig`, NeMo `ctc_timestamp`). It runs on the ASR tower's output in the ASR
/// chunk schedule, each encoder frame upsampled to `upsampling_factor` head frames.
#[derive(Clone, Debug, PartialEq)]
pub struct WordTimestampConfig {
    /// The transformer (defaults 1280 wide, 16 heads of 80, 2 layers, MLP 640, half RoPE, q/k norm). Its
    /// `mel_bins` and `subsampling` are the ASR tower's (the frame mask comes from them); it has no input projection.
    pub encoder: EncoderConfig,
    /// Head frames per encoder frame: the transposed convolution's kernel and stride (`upsampling_factor`, 2).
    pub upsampling_factor: usize,
    /// Scale of the normalised transformer output added to the upsampled states (`residual_scale`, 0.1).
    pub residual_scale: f64,
    /// Classifier outputs: the alignment tokenizer's pieces, then the CTC blank (`vocab_size`, 23863).
    pub vocab_size: usize,
    /// The blank class (`blank_token_id`, 23862; checked below `vocab_size`). Upstream's alignment uses the last
    /// logit column instead, and so does the alignment (`nemotron_postprocess::alignment`).
    pub blank_token_id: usize,
}

/// The whole Transcribe audio module.
#[derive(Clone, Debug, PartialEq)]
pub struct TranscribeConfig {
    /// The ASR encoder (`audio_config.asr_config`; defaults 1280 wide, 32 layers, half RoPE, q/k norm).
    pub asr: EncoderConfig,
    /// The diarizer (`audio_config.diarization_config`).
    pub diarization: DiarizationConfig,
    /// Speaker probability a frame must exceed (strictly) to count as active in the fusion, in [0, 1]
    /// (`audio_config.speaker_activity_threshold`, default 0.5).
    pub speaker_activity_threshold: f64,
    /// Projector output width (the language model's hidden size).
    pub text_hidden: usize,
    /// The word-timestamp head (upstream defaults when the config has no `word_timestamp_config`; whether the
    /// checkpoint holds its weights is decided at load).
    pub word_timestamps: WordTimestampConfig,
}

/// What a checkpoint directory holds.
// One config per loaded model, read once: the Transcribe variant's size costs nothing worth a box.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug, PartialEq)]
pub enum ModelConfig {
    /// `model_type` `nemo_speechlm`: both towers, fusion and projector.
    Transcribe(TranscribeConfig),
    /// `model_type` `nemotron3_diarization`: a standalone Sortformer diarizer.
    Diarization(DiarizationConfig),
}

impl ModelConfig {
    /// Reads and validates `config.json`.
    pub fn from_file(path: &Path) -> Result<Self, ConfigError> {
        let text = std::fs::read_to_string(path)
            .map_err(|source| ConfigError::Io { path: path.display().to_string(), source })?;
        Self::from_json_at(&text, path)
    }

    /// Parses and validates the JSON text of the config file at `path`, which its errors name.
    pub(crate) fn from_json_at(text: &str, path: &Path) -> Result<Self, ConfigError> {
        Self::from_json(text).map_err(|e| match e {
            ConfigError::Json { source, .. } => ConfigError::Json { path: path.display().to_string(), source },
            ConfigError::UnknownModelType { found, .. } => {
                ConfigError::UnknownModelType { path: path.display().to_string(), found }
            }
            other => other,
        })
    }

    /// Parses and validates a config from its JSON text.
    pub fn from_json(text: &str) -> Result<Self, ConfigError> {
        let text = &python_json_to_json(text);
        let json = |source| ConfigError::Json { path: "config.json".into(), source };
        let top: RawTop = serde_json::from_str(text).map_err(json)?;
        let config = match top.model_type.as_str() {
            "nemo_speechlm" => {
                let raw: RawTranscribe = serde_json::from_str(text).map_err(json)?;
                ModelConfig::Transcribe(raw.resolve()?)
            }
            "nemotron3_diarization" => {
                let raw: RawDiarization = serde_json::from_str(text).map_err(json)?;
                ModelConfig::Diarization(raw.resolve(&STANDALONE_SCHEDULE)?)
            }
            other => return Err(ConfigError::UnknownModelType { path: "config.json".into(), found: other.into() }),
        };
        Ok(config)
    }

    /// The diarizer of either kind of checkpoint.
    pub fn diarization(&self) -> &DiarizationConfig {
        match self {
            ModelConfig::Transcribe(t) => &t.diarization,
            ModelConfig::Diarization(d) => d,
        }
    }
}

/// Python's `json` writes `NaN`, `Infinity` and `-Infinity` (Transformers configs do, e.g. the
/// language model's `time_step_limit`); JSON has no such tokens. They become `null` here: no field
/// the audio module reads can hold one.
fn python_json_to_json(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let (mut in_string, mut escaped) = (false, false);
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        if in_string {
            in_string = escaped || c != '"';
            escaped = !escaped && c == '\\';
        } else if c == '"' {
            in_string = true;
        } else if let Some(token) = ["-Infinity", "Infinity", "NaN"].into_iter().find(|t| rest.starts_with(t)) {
            out.push_str("null");
            rest = &rest[token.len()..];
            continue;
        }
        out.push(c);
        rest = &rest[c.len_utf8()..];
    }
    out
}

#[cfg(test)]
mod tests;
