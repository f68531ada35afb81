//! The serde mirror of `config.json`: every field optional, the upstream defaults applied and every value checked in
//! `resolve`, which builds the public configs of the parent module.

use serde::Deserialize;

use super::*;

#[derive(Deserialize)]
pub(super) struct RawTop {
    #[serde(default)]
    pub(super) model_type: String,
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
pub(super) struct RawDiarization {
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
pub(super) struct RawTranscribe {
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
pub(super) struct ScheduleDefaults {
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
pub(super) const STANDALONE_SCHEDULE: ScheduleDefaults = ScheduleDefaults {
    chunks: ChunkConfig { length: 340, left_context: 0, right_context: 40 },
    fifo_length: 40,
    update_period: 300,
    cache_length: 264,
};

impl RawDiarization {
    pub(super) fn resolve(&self, d: &ScheduleDefaults) -> Result<DiarizationConfig, ConfigError> {
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
    pub(super) fn resolve(&self) -> Result<TranscribeConfig, ConfigError> {
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
