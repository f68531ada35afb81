//! Golden test data: small random checkpoints in the real layouts, with inputs and the f64 CPU
//! reference's outputs, written to `testdata/golden/` by `cargo xtask golden` and checked by the
//! tower tests. Everything is derived from a seed, so `cargo xtask golden --check` can rebuild
//! the files and compare.

use std::collections::HashMap;

use audio_kernels::random::Rng;
use nemotron_towers::checkpoint::Checkpoint;
use nemotron_towers::config::{DiarizationConfig, EncoderConfig, ModelConfig, TowerKind};
use nemotron_towers::internals::names::{HeadNames, ModelNames};
use nemotron_towers::internals::weights::{self, Expectations, HostStore};
use nemotron_towers::tensor_file::{Tensor, serialize};
use nemotron_towers::{Error, Result};

use crate::reference::{self, TowerInput};

/// Which tower a golden case exercises.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GoldenTower {
    /// The ASR tower of a Transcribe checkpoint (stacked-features input).
    Asr,
    /// The Sortformer encoder and head (features input and embedded input).
    Diarization,
    /// The word-timestamp head (upsampler, encoder, classifier) on ASR states, in the ASR chunk schedule.
    WordTimestamps,
}

/// One golden file's recipe.
#[derive(Clone, Debug)]
pub struct GoldenCase {
    /// File stem under `testdata/golden/` (`<name>.safetensors`), also the in-memory checkpoint label.
    pub name: &'static str,
    /// The tower whose weights, inputs and outputs the file holds.
    pub tower: GoldenTower,
    /// Transformers names (q/k/v separate) instead of the release's NeMo names.
    pub transformers_names: bool,
    /// The tiny model's `config.json` text, stored in the file's `golden.config` metadata.
    pub config_json: &'static str,
    /// Rows of the features run and how many of them are valid (the rest is padding).
    pub rows: usize,
    /// Leading rows of the features run marked valid; the remaining `rows − valid` are padding keys.
    pub valid: usize,
    /// Rows of the embedded run (Sortformer only).
    pub embedded_rows: usize,
    /// Seed of the random weights and inputs, so the file can be rebuilt bit for bit.
    pub seed: u64,
}

/// The committed cases: odd head counts, rotary dims below head_dim, with and without q/k norm,
/// both name styles.
pub fn cases() -> Vec<GoldenCase> {
    vec![
        GoldenCase {
            name: "asr-odd-heads",
            tower: GoldenTower::Asr,
            transformers_names: false,
            config_json: r#"{"model_type":"nemo_speechlm","audio_config":{"asr_config":{"hidden_size":48,
                "intermediate_size":80,"num_attention_heads":3,"num_hidden_layers":2,"num_mel_bins":16,
                "subsampling_factor":4,"rope_parameters":{"partial_rotary_factor":0.5,"rope_theta":10000.0}},
                "diarization_config":{"audio_config":{"hidden_size":16,"intermediate_size":16,"num_attention_heads":2,
                "num_hidden_layers":1,"num_mel_bins":16,"subsampling_factor":4}}},"text_config":{"hidden_size":24}}"#,
            rows: 37,
            valid: 31,
            embedded_rows: 0,
            seed: 0x601d_0001,
        },
        GoldenCase {
            name: "asr-rot4-hf-names",
            tower: GoldenTower::Asr,
            transformers_names: true,
            config_json: r#"{"model_type":"nemo_speechlm","audio_config":{"asr_config":{"hidden_size":36,
                "intermediate_size":50,"num_attention_heads":3,"num_hidden_layers":1,"num_mel_bins":8,
                "subsampling_factor":8,"rope_parameters":{"partial_rotary_factor":0.34,"rope_theta":500.0}},
                "diarization_config":{"audio_config":{"hidden_size":16,"intermediate_size":16,"num_attention_heads":2,
                "num_hidden_layers":1,"num_mel_bins":8,"subsampling_factor":8}}},"text_config":{"hidden_size":24}}"#,
            rows: 13,
            valid: 13,
            embedded_rows: 0,
            seed: 0x601d_0002,
        },
        GoldenCase {
            name: "diarization-five-heads",
            tower: GoldenTower::Diarization,
            transformers_names: true,
            config_json: r#"{"model_type":"nemotron3_diarization","audio_config":{"hidden_size":40,
                "intermediate_size":72,"num_attention_heads":5,"num_hidden_layers":2,"num_mel_bins":8,
                "subsampling_factor":8},"head_config":{"hidden_size":20,"num_speakers":8}}"#,
            rows: 29,
            valid: 22,
            embedded_rows: 41,
            seed: 0x601d_0003,
        },
        GoldenCase {
            name: "word-timestamps-odd",
            tower: GoldenTower::WordTimestamps,
            transformers_names: false,
            // 3 heads of 20 with 10 rotary dims, upsampling by 3, chunks of 7 frames with 2 + 3 frames of context
            // (so 23 frames make four chunks, the last one short), 37 classes.
            config_json: r#"{"model_type":"nemo_speechlm","audio_config":{"asr_config":{"hidden_size":60,
                "intermediate_size":16,"num_attention_heads":3,"num_hidden_layers":1,"num_mel_bins":8,
                "subsampling_factor":8},"diarization_config":{"audio_config":{"hidden_size":16,"intermediate_size":16,
                "num_attention_heads":2,"num_hidden_layers":1,"num_mel_bins":8,"subsampling_factor":8},
                "chunk_length":7,"chunk_left_context":2,"chunk_right_context":3}},"text_config":{"hidden_size":24},
                "word_timestamp_config":{"hidden_size":60,"intermediate_size":28,"num_attention_heads":3,
                "num_hidden_layers":2,"vocab_size":37,"blank_token_id":36,"residual_scale":0.3,"upsampling_factor":3,
                "rope_parameters":{"rope_theta":10000.0,"partial_rotary_factor":0.5}}}"#,
            rows: 23,
            valid: 19,
            embedded_rows: 0,
            seed: 0x601d_0004,
        },
    ]
}

/// A golden file opened for testing.
pub struct Golden {
    /// The file: weights, inputs and expected outputs.
    pub checkpoint: Checkpoint,
    /// The tower it exercises.
    pub tower: GoldenTower,
    /// The model config it was made from.
    pub config: ModelConfig,
}

const META_CONFIG: &str = "golden.config";
const META_TOWER: &str = "golden.tower";

impl Golden {
    /// Opens a golden file written by [`build`].
    pub fn open(checkpoint: Checkpoint) -> Result<Self> {
        let meta = checkpoint.metadata();
        let (Some(config), Some(tower)) = (meta.get(META_CONFIG), meta.get(META_TOWER)) else {
            let origin = checkpoint.dir().display().to_string();
            return Err(Error::Features { origin, problem: "not a golden file (no golden.* metadata)".into() });
        };
        let config = ModelConfig::from_json(config)?;
        let tower = match tower.as_str() {
            "asr" => GoldenTower::Asr,
            "word-timestamps" => GoldenTower::WordTimestamps,
            _ => GoldenTower::Diarization,
        };
        Ok(Self { checkpoint, tower, config })
    }

    /// The tower's config and kind.
    pub fn encoder(&self) -> Result<(&EncoderConfig, TowerKind)> {
        match (&self.config, self.tower) {
            (ModelConfig::Transcribe(t), GoldenTower::Asr) => Ok((&t.asr, TowerKind::Asr)),
            (ModelConfig::Transcribe(t), GoldenTower::WordTimestamps) => {
                Ok((&t.word_timestamps.encoder, TowerKind::WordTimestamps))
            }
            (config, GoldenTower::Diarization) => Ok((&config.diarization().encoder, TowerKind::Diarization)),
            _ => Err(Error::Internal("golden file's tower does not match its config".into())),
        }
    }

    /// The valid-row mask stored under `name`.
    pub fn mask(&self, name: &str) -> Result<Vec<bool>> {
        Ok(self.checkpoint.f32(name)?.iter().map(|&v| v != 0.0).collect())
    }
}

/// Tensor names inside golden files.
pub mod keys {
    /// Stacked-features input, f32 `[rows, subsampling·mel]`.
    pub const FEATURES: &str = "golden.input.features";
    /// Valid-row mask of the features run, f32 `[rows]` (1 valid, 0 padding).
    pub const FEATURES_VALID: &str = "golden.input.features_valid";
    /// Embedded-rows input of the Sortformer path, f32 `[embedded_rows, d]`.
    pub const EMBEDDINGS: &str = "golden.input.embeddings";
    /// Valid-row mask of the embedded run, f32 `[embedded_rows]`, all 1 (cache, FIFO and chunk rows are valid).
    pub const EMBEDDINGS_VALID: &str = "golden.input.embeddings_valid";
    /// f64 reference encoder output of the features run, `[rows, d]`.
    pub const EXPECTED_FEATURES: &str = "golden.expected.features";
    /// f64 reference encoder output of the embedded run, `[embedded_rows, d]`.
    pub const EXPECTED_EMBEDDINGS: &str = "golden.expected.embeddings";
    /// f64 reference head logits of the embedded run, `[embedded_rows·subsampling, speakers]`; for the
    /// word-timestamp head, its CTC logits `[upsampling·rows, vocab]`.
    pub const EXPECTED_LOGITS: &str = "golden.expected.logits";
    /// ASR states into the word-timestamp head, f32 `[rows, d]`.
    pub const ASR_STATES: &str = "golden.input.asr_states";
    /// Valid encoder frames of the ASR states, f32 `[rows]` (1 valid, 0 padding).
    pub const ASR_STATES_VALID: &str = "golden.input.asr_states_valid";
    /// f64 reference word-timestamp hidden states, `[upsampling·rows, d]`.
    pub const EXPECTED_HIDDEN: &str = "golden.expected.hidden";
}

fn mask_tensor(rows: usize, valid: usize) -> Tensor {
    let mask: Vec<f32> = (0..rows).map(|i| if i < valid { 1.0 } else { 0.0 }).collect();
    Tensor::f32(vec![rows], &mask)
}

fn random_weights(expected: &[(String, Vec<usize>)], rng: &mut Rng) -> Vec<(String, Tensor)> {
    expected.iter().map(|(name, shape)| (name.clone(), weights::random_tensor(name, shape, rng))).collect()
}

/// Builds the golden file of `case`: weights, inputs, and the f64 reference outputs.
pub fn build(case: &GoldenCase) -> Result<Vec<u8>> {
    let config = ModelConfig::from_json(case.config_json)?;
    if case.tower == GoldenTower::WordTimestamps {
        return word_timestamps(case, &config);
    }
    let names = match (case.tower, case.transformers_names) {
        (GoldenTower::Asr, false) => ModelNames::nemo(),
        (GoldenTower::Asr, true) => ModelNames::transformers(),
        (GoldenTower::Diarization, _) => ModelNames::standalone_diarization(),
        (GoldenTower::WordTimestamps, _) => return Err(Error::Internal("handled by word_timestamps".into())),
    };
    let (encoder_config, encoder_names) = match (&config, case.tower, &names.asr) {
        (ModelConfig::Transcribe(t), GoldenTower::Asr, Some(asr)) => (&t.asr, asr),
        (config, GoldenTower::Diarization, _) => (&config.diarization().encoder, &names.diarization),
        _ => return Err(Error::Internal(format!("golden case {}: tower and config disagree", case.name))),
    };
    let mut expected = Expectations::default();
    weights::encoder(&mut expected, encoder_names, encoder_config)?;
    if case.tower == GoldenTower::Diarization {
        weights::head(&mut expected, &names.head, config.diarization())?;
    }
    let mut rng = Rng::new(case.seed);
    let mut tensors = random_weights(&expected.0, &mut rng);
    let c = encoder_config;
    let features = rng.f32s(case.rows * c.stacked_features(), 1.7);
    let weights_only = Checkpoint::from_bytes(case.name, serialize(&tensors, HashMap::new())?)?;
    let host = weights::encoder(&mut HostStore(&weights_only), encoder_names, c)?;
    let valid: Vec<bool> = (0..case.rows).map(|i| i < case.valid).collect();
    let features64: Vec<f64> = features.iter().map(|&v| v as f64).collect();
    let out = reference::encoder(&host, c, TowerInput::Features(&features64), &valid)?;
    tensors.push((keys::FEATURES.into(), Tensor::f32(vec![case.rows, c.stacked_features()], &features)));
    tensors.push((keys::FEATURES_VALID.into(), mask_tensor(case.rows, case.valid)));
    tensors.push((keys::EXPECTED_FEATURES.into(), Tensor::f64(vec![case.rows, c.hidden], &out)));
    if case.tower == GoldenTower::Diarization {
        tensors.extend(embedded_run(case, config.diarization(), &names.head, &host, &weights_only, &mut rng)?);
    }
    let tower = if case.tower == GoldenTower::Asr { "asr" } else { "diarization" };
    let metadata = HashMap::from([
        (META_CONFIG.to_string(), case.config_json.to_string()),
        (META_TOWER.to_string(), tower.to_string()),
    ]);
    serialize(&tensors, metadata)
}

/// The word-timestamp head alone: its weights, random ASR states with a padded tail, and the f64 reference's
/// hidden states and logits over the ASR chunk schedule.
fn word_timestamps(case: &GoldenCase, config: &ModelConfig) -> Result<Vec<u8>> {
    let ModelConfig::Transcribe(t) = config else {
        return Err(Error::Internal(format!("golden case {}: the head needs a Transcribe config", case.name)));
    };
    let names = if case.transformers_names { ModelNames::transformers() } else { ModelNames::nemo() };
    let Some(head_names) = &names.word_timestamps else {
        return Err(Error::Internal("the Transcribe name sets name the word-timestamp head".into()));
    };
    let c = &t.word_timestamps;
    let mut expected = Expectations::default();
    weights::word_timestamps(&mut expected, head_names, c)?;
    let mut rng = Rng::new(case.seed);
    let mut tensors = random_weights(&expected.0, &mut rng);
    let d = c.encoder.hidden;
    let states = rng.f32s(case.rows * d, 1.7);
    let weights_only = Checkpoint::from_bytes(case.name, serialize(&tensors, HashMap::new())?)?;
    let host = weights::word_timestamps(&mut HostStore(&weights_only), head_names, c)?;
    let states64: Vec<f64> = states.iter().map(|&v| v as f64).collect();
    let hidden = reference::word_timestamp_hidden_states(&host, c, &t.diarization.chunks, &states64, case.valid)?;
    let frames = case.rows * c.upsampling_factor;
    let logits = reference::word_timestamp_logits(&host, &hidden, frames);
    tensors.push((keys::ASR_STATES.into(), Tensor::f32(vec![case.rows, d], &states)));
    tensors.push((keys::ASR_STATES_VALID.into(), mask_tensor(case.rows, case.valid)));
    tensors.push((keys::EXPECTED_HIDDEN.into(), Tensor::f64(vec![frames, d], &hidden)));
    tensors.push((keys::EXPECTED_LOGITS.into(), Tensor::f64(vec![frames, c.vocab_size], &logits)));
    let metadata = HashMap::from([
        (META_CONFIG.to_string(), case.config_json.to_string()),
        (META_TOWER.to_string(), "word-timestamps".to_string()),
    ]);
    serialize(&tensors, metadata)
}

/// The Sortformer's own path: embedded rows (all valid, as cache + FIFO + chunk are) through the
/// encoder and the head.
fn embedded_run(
    case: &GoldenCase,
    c: &DiarizationConfig,
    head_names: &HeadNames,
    host: &reference::HostEncoder,
    weights_only: &Checkpoint,
    rng: &mut Rng,
) -> Result<Vec<(String, Tensor)>> {
    let (n, d) = (case.embedded_rows, c.encoder.hidden);
    let embeddings = rng.f32s(n * d, 1.0);
    let embeddings64: Vec<f64> = embeddings.iter().map(|&v| v as f64).collect();
    let encoded = reference::encoder(host, &c.encoder, TowerInput::Embeddings(&embeddings64), &vec![true; n])?;
    let head = weights::head(&mut HostStore(weights_only), head_names, c)?;
    let logits = reference::head(&head, c, &encoded, n);
    Ok(vec![
        (keys::EMBEDDINGS.into(), Tensor::f32(vec![n, d], &embeddings)),
        (keys::EMBEDDINGS_VALID.into(), mask_tensor(n, n)),
        (keys::EXPECTED_EMBEDDINGS.into(), Tensor::f64(vec![n, d], &encoded)),
        (keys::EXPECTED_LOGITS.into(), Tensor::f64(vec![n * c.encoder.subsampling, c.speakers], &logits)),
    ])
}
