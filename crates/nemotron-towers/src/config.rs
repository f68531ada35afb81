//! `config.json` of a Transcribe checkpoint (`model_type` `nemo_speechlm`) or of a standalone
//! diarization checkpoint (`nemotron3_diarization`). Missing fields take the upstream defaults
//! (docs/model.md §3.2, §6.6); everything the towers need is derived here and validated once.

use std::path::Path;

use serde::Deserialize;

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
        Self::from_json(&text).map_err(|e| match e {
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

// ---- raw serde structures: optional fields, upstream defaults applied in `resolve` ----

#[derive(Deserialize)]
struct RawTop {
    #[serde(default)]
    model_type: String,
}

#[derive(Deserialize, Default, Clone)]
struct RawRope {
    partial_rotary_factor: Option<f64>,
    rope_theta: Option<f64>,
}

#[derive(Deserialize, Default, Clone)]
struct RawEncoder {
    hidden_size: Option<usize>,
    intermediate_size: Option<usize>,
    num_attention_heads: Option<usize>,
    num_key_value_heads: Option<usize>,
    num_hidden_layers: Option<usize>,
    num_mel_bins: Option<usize>,
    subsampling_factor: Option<usize>,
    hidden_act: Option<String>,
    rope_parameters: Option<RawRope>,
}

#[derive(Deserialize, Default)]
struct RawHead {
    hidden_size: Option<usize>,
    num_speakers: Option<usize>,
}

#[derive(Deserialize, Default)]
struct RawStreaming {
    fifo_length: Option<usize>,
    speaker_cache_update_period: Option<usize>,
    speaker_cache_length: Option<usize>,
    speaker_cache_silence_frames_per_speaker: Option<usize>,
    prediction_score_threshold: Option<f64>,
    latest_frames_score_boost: Option<f64>,
    strong_boost_rate: Option<f64>,
    weak_boost_rate: Option<f64>,
    min_positive_scores_rate: Option<f64>,
}

#[derive(Deserialize, Default)]
struct RawDiarization {
    #[serde(default)]
    audio_config: RawEncoder,
    #[serde(default)]
    head_config: RawHead,
    #[serde(default)]
    streaming_config: RawStreaming,
    chunk_length: Option<usize>,
    chunk_left_context: Option<usize>,
    chunk_right_context: Option<usize>,
    fifo_length: Option<usize>,
    speaker_cache_update_period: Option<usize>,
}

#[derive(Deserialize, Default)]
struct RawAudio {
    #[serde(default)]
    asr_config: RawEncoder,
    #[serde(default)]
    diarization_config: RawDiarization,
    speaker_activity_threshold: Option<f64>,
}

#[derive(Deserialize, Default)]
struct RawText {
    hidden_size: Option<usize>,
}

#[derive(Deserialize, Default)]
struct RawWordTimestamps {
    #[serde(flatten)]
    encoder: RawEncoder,
    vocab_size: Option<usize>,
    blank_token_id: Option<usize>,
    residual_scale: Option<f64>,
    upsampling_factor: Option<usize>,
}

#[derive(Deserialize)]
struct RawTranscribe {
    #[serde(default)]
    audio_config: RawAudio,
    #[serde(default)]
    text_config: RawText,
    word_timestamp_config: Option<RawWordTimestamps>,
}

/// Upstream defaults of one tower (docs/model.md §3.2).
struct EncoderDefaults {
    name: &'static str,
    hidden: usize,
    intermediate: usize,
    heads: usize,
    layers: usize,
    partial_rotary: f64,
    qk_norm: bool,
}

const ASR_DEFAULTS: EncoderDefaults = EncoderDefaults {
    name: "asr_config",
    hidden: 1280,
    intermediate: 5120,
    heads: 10,
    layers: 32,
    partial_rotary: 0.5,
    qk_norm: true,
};

const WORD_TIMESTAMP_DEFAULTS: EncoderDefaults = EncoderDefaults {
    name: "word_timestamp_config",
    hidden: 1280,
    intermediate: 640,
    heads: 16,
    layers: 2,
    partial_rotary: 0.5,
    qk_norm: true,
};

/// Largest classifier vocabulary accepted (the release has 23,863 classes).
const MAX_VOCABULARY: usize = 1 << 20;

const DIARIZATION_DEFAULTS: EncoderDefaults = EncoderDefaults {
    name: "diarization audio_config",
    hidden: 512,
    intermediate: 2048,
    heads: 8,
    layers: 31,
    partial_rotary: 1.0,
    qk_norm: false,
};

fn invalid(message: String) -> ConfigError {
    ConfigError::Invalid(message)
}

fn in_range(name: &str, value: usize, max: usize) -> Result<usize, ConfigError> {
    if value == 0 || value > max {
        return Err(invalid(format!("{name} = {value} (must be 1..={max})")));
    }
    Ok(value)
}

impl RawEncoder {
    fn resolve(&self, d: &EncoderDefaults) -> Result<EncoderConfig, ConfigError> {
        let name = d.name;
        let hidden = in_range(&format!("{name}.hidden_size"), self.hidden_size.unwrap_or(d.hidden), MAX_WIDTH)?;
        let intermediate = in_range(
            &format!("{name}.intermediate_size"),
            self.intermediate_size.unwrap_or(d.intermediate),
            4 * MAX_WIDTH,
        )?;
        let heads =
            in_range(&format!("{name}.num_attention_heads"), self.num_attention_heads.unwrap_or(d.heads), 1024)?;
        let layers =
            in_range(&format!("{name}.num_hidden_layers"), self.num_hidden_layers.unwrap_or(d.layers), MAX_LAYERS)?;
        let mel_bins = in_range(&format!("{name}.num_mel_bins"), self.num_mel_bins.unwrap_or(128), 1024)?;
        let subsampling = in_range(&format!("{name}.subsampling_factor"), self.subsampling_factor.unwrap_or(8), 64)?;
        if hidden % heads != 0 {
            return Err(invalid(format!("{name}: {heads} heads do not divide hidden_size {hidden}")));
        }
        if let Some(kv) = self.num_key_value_heads.filter(|&kv| kv != heads) {
            return Err(invalid(format!(
                "{name}: num_key_value_heads {kv} != num_attention_heads {heads} (only MHA exists)"
            )));
        }
        if let Some(act) = self.hidden_act.as_deref().filter(|&a| a != "gelu") {
            return Err(invalid(format!("{name}: hidden_act `{act}` (only exact `gelu` is implemented)")));
        }
        let head_dim = hidden / heads;
        if head_dim > 128 {
            return Err(invalid(format!("{name}: head_dim {head_dim} exceeds the attention kernel's 128")));
        }
        let rope = self.rope_parameters.as_ref();
        let partial = rope.and_then(|r| r.partial_rotary_factor).unwrap_or(d.partial_rotary);
        let rope_theta = rope.and_then(|r| r.rope_theta).unwrap_or(10_000.0);
        let rope_ok = (0.0..=1.0).contains(&partial) && rope_theta.is_finite() && rope_theta > 1.0;
        if !rope_ok {
            return Err(invalid(format!(
                "{name}: rope parameters partial_rotary_factor {partial}, rope_theta {rope_theta}"
            )));
        }
        // HF: `int(head_dim * partial_rotary_factor)`.
        let rotary_dims = (head_dim as f64 * partial) as usize;
        if rotary_dims == 0 || !rotary_dims.is_multiple_of(2) {
            return Err(invalid(format!("{name}: rotary dimensions {rotary_dims} must be even and positive")));
        }
        Ok(EncoderConfig {
            hidden,
            intermediate,
            heads,
            head_dim,
            layers,
            rotary_dims,
            rope_theta,
            qk_norm: d.qk_norm,
            mel_bins,
            subsampling,
        })
    }
}

/// The diarizer's schedule defaults, which upstream sets per kind of checkpoint.
struct ScheduleDefaults {
    chunks: ChunkConfig,
    fifo_length: usize,
    update_period: usize,
    cache_length: usize,
}

/// A Transcribe checkpoint's `diarization_config` (docs/model.md §6.6).
const TRANSCRIBE_SCHEDULE: ScheduleDefaults = ScheduleDefaults {
    chunks: ChunkConfig { length: 500, left_context: 50, right_context: 50 },
    fifo_length: 40,
    update_period: 300,
    cache_length: 188,
};

/// A standalone checkpoint (`Nemotron3DiarizationConfig` and its streaming config, Transformers 5.23).
const STANDALONE_SCHEDULE: ScheduleDefaults = ScheduleDefaults {
    chunks: ChunkConfig { length: 340, left_context: 0, right_context: 40 },
    fifo_length: 40,
    update_period: 300,
    cache_length: 264,
};

impl RawDiarization {
    fn resolve(&self, d: &ScheduleDefaults) -> Result<DiarizationConfig, ConfigError> {
        let encoder = self.audio_config.resolve(&DIARIZATION_DEFAULTS)?;
        let head_hidden = in_range("head_config.hidden_size", self.head_config.hidden_size.unwrap_or(192), MAX_WIDTH)?;
        let speakers = in_range("head_config.num_speakers", self.head_config.num_speakers.unwrap_or(8), 64)?;
        let chunks = ChunkConfig {
            length: in_range("chunk_length", self.chunk_length.unwrap_or(d.chunks.length), MAX_FRAMES)?,
            left_context: self.chunk_left_context.unwrap_or(d.chunks.left_context),
            right_context: self.chunk_right_context.unwrap_or(d.chunks.right_context),
        };
        let s = &self.streaming_config;
        let cache = SpeakerCacheConfig {
            fifo_length: self.fifo_length.unwrap_or(d.fifo_length),
            update_period: self.speaker_cache_update_period.unwrap_or(d.update_period),
            cache_length: s.speaker_cache_length.unwrap_or(d.cache_length),
            silence_frames_per_speaker: s.speaker_cache_silence_frames_per_speaker.unwrap_or(1),
            score_threshold: s.prediction_score_threshold.unwrap_or(0.25),
            latest_frames_boost: s.latest_frames_score_boost.unwrap_or(0.05),
            strong_boost_rate: s.strong_boost_rate.unwrap_or(0.75),
            weak_boost_rate: s.weak_boost_rate.unwrap_or(1.5),
            min_positive_scores_rate: s.min_positive_scores_rate.unwrap_or(0.5),
        };
        let budget = cache.cache_length / speakers;
        if budget <= cache.silence_frames_per_speaker {
            return Err(invalid(format!(
                "speaker_cache_length {} leaves no frames per speaker for {speakers} speakers",
                cache.cache_length
            )));
        }
        // Upstream's streaming sessions keep their own FIFO sizes (`Nemotron3DiarizationStreamingConfig`).
        let streaming_cache = SpeakerCacheConfig {
            fifo_length: s.fifo_length.unwrap_or(264),
            update_period: s.speaker_cache_update_period.unwrap_or(222),
            ..cache
        };
        // Each bounded on its own: the schedule adds them, which must not overflow.
        for (name, frames) in [
            ("chunk_left_context", chunks.left_context),
            ("chunk_right_context", chunks.right_context),
            ("fifo_length", cache.fifo_length),
            ("speaker_cache_update_period", cache.update_period),
            ("streaming_config.speaker_cache_length", cache.cache_length),
            ("streaming_config.fifo_length", streaming_cache.fifo_length),
            ("streaming_config.speaker_cache_update_period", streaming_cache.update_period),
        ] {
            if frames > MAX_FRAMES {
                return Err(invalid(format!("{name} = {frames} (at most {MAX_FRAMES} frames)")));
            }
        }
        Ok(DiarizationConfig { encoder, head_hidden, speakers, chunks, cache, streaming_cache })
    }
}

impl RawTranscribe {
    fn resolve(&self) -> Result<TranscribeConfig, ConfigError> {
        let asr = self.audio_config.asr_config.resolve(&ASR_DEFAULTS)?;
        let diarization = self.audio_config.diarization_config.resolve(&TRANSCRIBE_SCHEDULE)?;
        if (asr.mel_bins, asr.subsampling) != (diarization.encoder.mel_bins, diarization.encoder.subsampling) {
            return Err(invalid("the ASR and diarization towers disagree on mel bins or subsampling".into()));
        }
        let threshold = self.audio_config.speaker_activity_threshold.unwrap_or(0.5);
        if !(0.0..=1.0).contains(&threshold) {
            return Err(invalid(format!("speaker_activity_threshold {threshold} outside [0, 1]")));
        }
        let text_hidden =
            in_range("text_config.hidden_size", self.text_config.hidden_size.unwrap_or(2688), 4 * MAX_WIDTH)?;
        let word_timestamps = match &self.word_timestamp_config {
            Some(raw) => raw.resolve(&asr)?,
            None => RawWordTimestamps::default().resolve_unchecked(&asr)?,
        };
        Ok(TranscribeConfig { asr, diarization, speaker_activity_threshold: threshold, text_hidden, word_timestamps })
    }
}

impl RawWordTimestamps {
    /// The head of a config that has `word_timestamp_config`: it must read the ASR tower's states as they are.
    fn resolve(&self, asr: &EncoderConfig) -> Result<WordTimestampConfig, ConfigError> {
        let config = self.resolve_unchecked(asr)?;
        check_word_timestamp_width(&config, asr)?;
        Ok(config)
    }

    /// Without the width check: a config without `word_timestamp_config` takes upstream's defaults, which only
    /// matter (and are checked) when the checkpoint holds the head.
    fn resolve_unchecked(&self, asr: &EncoderConfig) -> Result<WordTimestampConfig, ConfigError> {
        let name = WORD_TIMESTAMP_DEFAULTS.name;
        let mut raw = self.encoder.clone();
        // Upstream: without `rope_parameters` the factor is 0.5; a given `rope_parameters` without
        // `partial_rotary_factor` rotates every dim (`rope_parameters.get("partial_rotary_factor", 1.0)`).
        if let Some(rope) = raw.rope_parameters.as_mut() {
            rope.partial_rotary_factor.get_or_insert(1.0);
        }
        // The head reads ASR frames: mel bins and subsampling are the ASR tower's, not keys of this config.
        raw.num_mel_bins = Some(asr.mel_bins);
        raw.subsampling_factor = Some(asr.subsampling);
        let encoder = raw.resolve(&WORD_TIMESTAMP_DEFAULTS)?;
        let vocab_size = in_range(&format!("{name}.vocab_size"), self.vocab_size.unwrap_or(23863), MAX_VOCABULARY)?;
        let blank_token_id = self.blank_token_id.unwrap_or(23862);
        if blank_token_id >= vocab_size {
            return Err(invalid(format!(
                "{name}.blank_token_id {blank_token_id} must be below vocab_size {vocab_size}"
            )));
        }
        let residual_scale = self.residual_scale.unwrap_or(0.1);
        if !(residual_scale.is_finite() && residual_scale >= 0.0) {
            return Err(invalid(format!("{name}.residual_scale {residual_scale} must be finite and >= 0")));
        }
        let upsampling_factor =
            in_range(&format!("{name}.upsampling_factor"), self.upsampling_factor.unwrap_or(2), 64)?;
        Ok(WordTimestampConfig { encoder, upsampling_factor, residual_scale, vocab_size, blank_token_id })
    }
}

/// The head adds its transformer's output to the upsampled ASR states, so both must have one width.
pub(crate) fn check_word_timestamp_width(c: &WordTimestampConfig, asr: &EncoderConfig) -> Result<(), ConfigError> {
    if c.encoder.hidden != asr.hidden {
        return Err(invalid(format!(
            "word_timestamp_config.hidden_size {} differs from the ASR tower's width {} (the head reads its states)",
            c.encoder.hidden, asr.hidden
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_transcribe_config_takes_release_defaults() {
        let ModelConfig::Transcribe(c) = ModelConfig::from_json(r#"{"model_type":"nemo_speechlm"}"#).unwrap() else {
            panic!("not a transcribe config")
        };
        assert_eq!((c.asr.hidden, c.asr.heads, c.asr.head_dim, c.asr.layers), (1280, 10, 128, 32));
        assert_eq!((c.asr.rotary_dims, c.asr.intermediate, c.asr.qk_norm), (64, 5120, true));
        let d = &c.diarization;
        assert_eq!((d.encoder.hidden, d.encoder.heads, d.encoder.layers, d.encoder.rotary_dims), (512, 8, 31, 64));
        assert_eq!((d.head_hidden, d.speakers, d.encoder.qk_norm), (192, 8, false));
        assert_eq!(d.chunks, ChunkConfig { length: 500, left_context: 50, right_context: 50 });
        assert_eq!((d.cache.fifo_length, d.cache.update_period, d.cache.cache_length), (40, 300, 188));
        let streaming = &d.streaming_cache;
        assert_eq!((streaming.fifo_length, streaming.update_period, streaming.cache_length), (264, 222, 188));
        assert_eq!(c.text_hidden, 2688);
        let w = &c.word_timestamps;
        assert_eq!((w.encoder.hidden, w.encoder.heads, w.encoder.head_dim, w.encoder.layers), (1280, 16, 80, 2));
        assert_eq!((w.encoder.rotary_dims, w.encoder.intermediate, w.encoder.qk_norm), (40, 640, true));
        assert_eq!((w.upsampling_factor, w.residual_scale, w.vocab_size, w.blank_token_id), (2, 0.1, 23863, 23862));
    }

    #[test]
    fn word_timestamp_config_values_come_from_the_config() {
        let json = r#"{"model_type":"nemo_speechlm","audio_config":{"asr_config":{"hidden_size":64,
            "num_attention_heads":2}},"word_timestamp_config":{"hidden_size":64,"intermediate_size":32,
            "num_attention_heads":4,"num_hidden_layers":3,"vocab_size":64,"blank_token_id":63,"residual_scale":0.25,
            "upsampling_factor":3,"rope_parameters":{"rope_theta":500.0}}}"#;
        let ModelConfig::Transcribe(c) = ModelConfig::from_json(json).unwrap() else { panic!("transcribe") };
        let w = &c.word_timestamps;
        assert_eq!((w.encoder.hidden, w.encoder.heads, w.encoder.head_dim, w.encoder.layers), (64, 4, 16, 3));
        // A given `rope_parameters` without `partial_rotary_factor` rotates every dim, as upstream.
        assert_eq!((w.encoder.rotary_dims, w.encoder.rope_theta), (16, 500.0));
        assert_eq!((w.upsampling_factor, w.residual_scale, w.vocab_size, w.blank_token_id), (3, 0.25, 64, 63));
        for (fields, needle) in [
            (r#""hidden_size":64,"blank_token_id":64,"vocab_size":64"#, "below vocab_size"),
            (r#""hidden_size":32"#, "differs from the ASR tower"),
            (r#""hidden_size":64,"residual_scale":-1"#, "residual_scale"),
            (r#""hidden_size":64,"upsampling_factor":0"#, "upsampling_factor"),
        ] {
            let json = format!(
                r#"{{"model_type":"nemo_speechlm","audio_config":{{"asr_config":{{"hidden_size":64,
                "num_attention_heads":2}}}},"word_timestamp_config":{{"num_attention_heads":2,{fields}}}}}"#
            );
            let err = ModelConfig::from_json(&json).unwrap_err().to_string();
            assert!(err.contains(needle), "{err} should mention {needle}");
        }
    }

    #[test]
    fn empty_standalone_config_takes_its_own_defaults() {
        let ModelConfig::Diarization(d) = ModelConfig::from_json(r#"{"model_type":"nemotron3_diarization"}"#).unwrap()
        else {
            panic!("not a diarization config")
        };
        assert_eq!((d.encoder.hidden, d.encoder.heads, d.encoder.layers, d.head_hidden), (512, 8, 31, 192));
        assert_eq!(d.chunks, ChunkConfig { length: 340, left_context: 0, right_context: 40 });
        assert_eq!((d.cache.fifo_length, d.cache.update_period, d.cache.cache_length), (40, 300, 264));
        let streaming = &d.streaming_cache;
        assert_eq!((streaming.fifo_length, streaming.update_period, streaming.cache_length), (264, 222, 264));
    }

    #[test]
    fn python_non_finite_numbers_are_read_as_null() {
        let text = r#"{"model_type":"nemo_speechlm","x":[0.0,Infinity,-Infinity,NaN],"s":"Infinity \"NaN\""}"#;
        assert_eq!(
            python_json_to_json(text),
            r#"{"model_type":"nemo_speechlm","x":[0.0,null,null,null],"s":"Infinity \"NaN\""}"#
        );
        assert!(ModelConfig::from_json(text).is_ok());
    }

    #[test]
    fn rejects_bad_sizes_with_the_field_named() {
        for (json, needle) in [
            (
                r#"{"model_type":"nemo_speechlm","audio_config":{"asr_config":{"num_attention_heads":3}}}"#,
                "do not divide",
            ),
            (r#"{"model_type":"nemo_speechlm","audio_config":{"asr_config":{"hidden_size":0}}}"#, "hidden_size = 0"),
            (
                r#"{"model_type":"nemotron3_diarization","audio_config":{"hidden_size":60,"num_attention_heads":2,
                   "rope_parameters":{"partial_rotary_factor":0.5}}}"#,
                "must be even",
            ),
            (r#"{"model_type":"whisper"}"#, "unknown model_type"),
            (r#"{"model_type":"nemo_speechlm","audio_config":{"asr_config":{"hidden_size":"big"}}}"#, "parsing"),
        ] {
            let err = ModelConfig::from_json(json).unwrap_err().to_string();
            assert!(err.contains(needle), "{err} should mention {needle}");
        }
    }
}
