//! Tensor names of the three checkpoint layouts (docs/model.md §11): the release's NeMo names, the
//! Transformers names of a Transcribe checkpoint, and a standalone diarization checkpoint
//! (Transformers names without the `model.audio_tower.diarization_model.` prefix).

use crate::checkpoint::{Checkpoint, CheckpointError};
use crate::config::TowerKind;

/// How an encoder's tensors are named.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NameStyle {
    /// `layers.L.attn.w_qkv.weight` (fused q/k/v), `norm1`, `ffn.net.0`, …
    Nemo,
    /// `layers.L.self_attn.{q,k,v}_proj.weight` (fused at load), `layer_norm1`, `mlp.fc1`, …
    Transformers,
}

/// Names of one encoder tower: a prefix and a style.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EncoderNames {
    pub prefix: String,
    pub style: NameStyle,
    /// Whether the tower projects stacked features itself (the word-timestamp encoder reads upsampled states).
    pub projected: bool,
}

impl EncoderNames {
    pub fn new(prefix: impl Into<String>, style: NameStyle) -> Self {
        Self { prefix: prefix.into(), style, projected: true }
    }

    /// A tower without an input projection.
    pub fn unprojected(prefix: impl Into<String>, style: NameStyle) -> Self {
        Self { projected: false, ..Self::new(prefix, style) }
    }

    fn pick(&self, nemo: &str, transformers: &str) -> String {
        let name = match self.style {
            NameStyle::Nemo => nemo,
            NameStyle::Transformers => transformers,
        };
        format!("{}{name}", self.prefix)
    }

    /// The stacked-features projection, for a tower that has one.
    pub fn input_projection(&self) -> Option<String> {
        self.projected.then(|| self.pick("pre_encode.proj.weight", "embedder.projection.weight"))
    }
    /// Norm module prefixes take `.weight` / `.bias`.
    pub fn embed_norm(&self) -> String {
        self.pick("embed_norm", "input_layer_norm")
    }
    pub fn final_norm(&self) -> String {
        self.pick("final_norm", "layer_norm")
    }
    pub fn norm1(&self, l: usize) -> String {
        self.pick(&format!("layers.{l}.norm1"), &format!("layers.{l}.layer_norm1"))
    }
    pub fn norm2(&self, l: usize) -> String {
        self.pick(&format!("layers.{l}.norm2"), &format!("layers.{l}.layer_norm2"))
    }
    /// The fused q/k/v weight, or its three row blocks (q, k, v) to concatenate.
    pub fn qkv(&self, l: usize) -> Vec<String> {
        match self.style {
            NameStyle::Nemo => vec![format!("{}layers.{l}.attn.w_qkv.weight", self.prefix)],
            NameStyle::Transformers => {
                ["q", "k", "v"].iter().map(|p| format!("{}layers.{l}.self_attn.{p}_proj.weight", self.prefix)).collect()
            }
        }
    }
    pub fn q_norm(&self, l: usize) -> String {
        self.pick(&format!("layers.{l}.attn.q_norm"), &format!("layers.{l}.self_attn.q_norm"))
    }
    pub fn k_norm(&self, l: usize) -> String {
        self.pick(&format!("layers.{l}.attn.k_norm"), &format!("layers.{l}.self_attn.k_norm"))
    }
    /// Linear module prefixes take `.weight` / `.bias`.
    pub fn out_proj(&self, l: usize) -> String {
        self.pick(&format!("layers.{l}.attn.out_proj"), &format!("layers.{l}.self_attn.o_proj"))
    }
    pub fn fc1(&self, l: usize) -> String {
        self.pick(&format!("layers.{l}.ffn.net.0"), &format!("layers.{l}.mlp.fc1"))
    }
    pub fn fc2(&self, l: usize) -> String {
        self.pick(&format!("layers.{l}.ffn.net.3"), &format!("layers.{l}.mlp.fc2"))
    }
}

/// Names of the Sortformer head (module prefixes; `silence` is a full tensor name).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HeadNames {
    pub proj: String,
    pub upsample: String,
    pub dense: String,
    pub out: String,
    pub silence: String,
}

/// Names of the fusion and projector modules of a Transcribe checkpoint.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FusionNames {
    pub asr_norm: String,
    pub speaker_norm: String,
    pub projector: String,
}

/// Names of the word-timestamp head: its transformer, the upsampler before it and the classifier after it
/// (module prefixes; NeMo keeps the upsampler outside the transformer, Transformers the classifier outside `model.`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WordTimestampNames {
    pub encoder: EncoderNames,
    pub upsampler: String,
    pub classifier: String,
}

/// Every name the audio module needs, for the layout a checkpoint uses.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ModelNames {
    /// The ASR tower (Transcribe checkpoints only).
    pub asr: Option<EncoderNames>,
    pub diarization: EncoderNames,
    pub head: HeadNames,
    pub fusion: Option<FusionNames>,
    /// The word-timestamp head (Transcribe layouts; a checkpoint may still lack its tensors).
    pub word_timestamps: Option<WordTimestampNames>,
    /// Front-end window and filter bank (release NeMo checkpoints only).
    pub window: Option<String>,
    pub filterbank: Option<String>,
}

const NEMO_PROBE: &str = "perception.encoder.asr_encoder.embed_norm.weight";
const TRANSFORMERS_PROBE: &str = "model.audio_tower.asr_encoder.input_layer_norm.weight";
const STANDALONE_PROBE: &str = "model.audio_tower.input_layer_norm.weight";
/// A file holding only the word-timestamp head (a golden test file) is told apart by the head's own tensors.
const NEMO_HEAD_PROBE: &str = "ctc_timestamp.decoder.upsample.weight";
const TRANSFORMERS_HEAD_PROBE: &str = "model.word_timestamp_encoder.upsampler.weight";

impl ModelNames {
    /// Detects the layout from which audio tensors the checkpoint holds.
    pub fn detect(checkpoint: &Checkpoint) -> Result<Self, CheckpointError> {
        if checkpoint.contains(NEMO_PROBE) || checkpoint.contains(NEMO_HEAD_PROBE) {
            Ok(Self::nemo())
        } else if checkpoint.contains(TRANSFORMERS_PROBE) || checkpoint.contains(TRANSFORMERS_HEAD_PROBE) {
            Ok(Self::transformers())
        } else if checkpoint.contains(STANDALONE_PROBE) {
            Ok(Self::standalone_diarization())
        } else {
            Err(CheckpointError::UnknownNames {
                dir: checkpoint.dir().display().to_string(),
                looked_for: [NEMO_PROBE, TRANSFORMERS_PROBE, STANDALONE_PROBE].map(|p| format!("`{p}`")).join(", "),
            })
        }
    }

    /// The names of the encoder of `kind`; a checkpoint without an ASR tower is refused for [`TowerKind::Asr`].
    pub fn encoder(&self, kind: TowerKind, checkpoint: &Checkpoint) -> Result<&EncoderNames, CheckpointError> {
        match kind {
            TowerKind::Asr => self
                .asr
                .as_ref()
                .ok_or_else(|| CheckpointError::DiarizerOnly { dir: checkpoint.dir().display().to_string() }),
            TowerKind::Diarization => Ok(&self.diarization),
            TowerKind::WordTimestamps => Ok(&self.word_timestamp_names(checkpoint)?.encoder),
        }
    }

    /// The word-timestamp head's names, when the checkpoint holds the head (its upsampler is the probe).
    pub fn word_timestamp_names(&self, checkpoint: &Checkpoint) -> Result<&WordTimestampNames, CheckpointError> {
        self.word_timestamps
            .as_ref()
            .filter(|names| checkpoint.contains(&format!("{}.weight", names.upsampler)))
            .ok_or_else(|| CheckpointError::NoWordTimestampHead { dir: checkpoint.dir().display().to_string() })
    }

    /// The release checkpoint's own names.
    pub fn nemo() -> Self {
        let diar = "perception.encoder.diarization_model.";
        let modules = format!("{diar}sortformer_modules.");
        Self {
            asr: Some(EncoderNames::new("perception.encoder.asr_encoder.", NameStyle::Nemo)),
            diarization: EncoderNames::new(format!("{diar}encoder."), NameStyle::Nemo),
            head: HeadNames {
                proj: format!("{modules}encoder_proj"),
                upsample: format!("{modules}subpixel_upsample"),
                dense: format!("{modules}first_hidden_to_hidden"),
                out: format!("{modules}single_hidden_to_spks"),
                silence: format!("{modules}learnable_sil_emb"),
            },
            fusion: Some(FusionNames {
                asr_norm: "perception.encoder.asr_norm".into(),
                speaker_norm: "perception.encoder.diar_norm".into(),
                projector: "perception.proj".into(),
            }),
            word_timestamps: Some(WordTimestampNames {
                encoder: EncoderNames::unprojected("ctc_timestamp.decoder.transformer.", NameStyle::Nemo),
                upsampler: "ctc_timestamp.decoder.upsample".into(),
                classifier: "ctc_timestamp.decoder.decoder_layers.0".into(),
            }),
            window: Some("perception.preprocessor.featurizer.window".into()),
            filterbank: Some("perception.preprocessor.featurizer.fb".into()),
        }
    }

    /// Transformers names of a Transcribe checkpoint.
    pub fn transformers() -> Self {
        let mut names = Self::diarization_under("model.audio_tower.diarization_model.");
        names.asr = Some(EncoderNames::new("model.audio_tower.asr_encoder.", NameStyle::Transformers));
        names.fusion = Some(FusionNames {
            asr_norm: "model.audio_tower.asr_norm".into(),
            speaker_norm: "model.audio_tower.speaker_norm".into(),
            projector: "model.multi_modal_projector".into(),
        });
        names.word_timestamps = Some(WordTimestampNames {
            encoder: EncoderNames::unprojected("model.word_timestamp_encoder.", NameStyle::Transformers),
            upsampler: "model.word_timestamp_encoder.upsampler".into(),
            classifier: "word_timestamp_head".into(),
        });
        names
    }

    /// A standalone Nemotron 3 Diarization checkpoint.
    pub fn standalone_diarization() -> Self {
        Self::diarization_under("")
    }

    fn diarization_under(prefix: &str) -> Self {
        Self {
            asr: None,
            diarization: EncoderNames::new(format!("{prefix}model.audio_tower."), NameStyle::Transformers),
            head: HeadNames {
                proj: format!("{prefix}model.proj"),
                upsample: format!("{prefix}model.upsampler.conv"),
                dense: format!("{prefix}classifier.dense"),
                out: format!("{prefix}classifier.out_proj"),
                silence: format!("{prefix}silence_embeds"),
            },
            fusion: None,
            word_timestamps: None,
            window: None,
            filterbank: None,
        }
    }
}
