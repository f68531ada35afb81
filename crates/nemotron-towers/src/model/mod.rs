//! The audio module end to end (docs/model.md §1): PCM → log-mel → ASR tower and Sortformer → fusion →
//! projector, for a Transcribe checkpoint; PCM → log-mel → Sortformer for a diarizer alone.

use std::ops::ControlFlow;
use std::path::Path;

use gpu_core::Gpu;

use crate::asr::AsrEncoder;
use crate::beside::beside;
use crate::checkpoint::{Checkpoint, CheckpointError, CheckpointFiles};
use crate::config::{ModelConfig, TranscribeConfig, check_word_timestamp_width};
use crate::diarizer::Diarizer;
use crate::error::{Error, Result};
use crate::frontend::{Features, LogMel};
use crate::fusion::Fusion;
use crate::names::{ModelNames, WordTimestampNames};
use crate::sortformer::Sortformer;
use crate::tower::Tower;
use crate::weights::{self, Expectations, GpuStore, GpuWeights, RandomStore};
use crate::word_timestamps::{WordTimestampHead, WordTimestampOutputs};
use audio_kernels::MatmulOptions;
use audio_kernels::random::Rng;

mod kernels;
pub use kernels::COMPILING_KERNELS;

/// Reports progress: (stage, steps done, steps in all), from (0, all) before the first step to (all, all) after the
/// last. [`ControlFlow::Break`] cancels the task at that report: it runs no further step and ends with
/// [`Error::Cancelled`], having freed what its steps held, as a finished task does.
pub type Progress<'a> = &'a mut dyn FnMut(&str, usize, usize) -> ControlFlow<()>;

/// Tells `progress` that `stage` is at step `done` of `steps`; its [`ControlFlow::Break`] is [`Error::Cancelled`].
pub(crate) fn report(progress: Progress<'_>, stage: &str, done: usize, steps: usize) -> Result<()> {
    match progress(stage, done, steps) {
        ControlFlow::Continue(()) => Ok(()),
        ControlFlow::Break(()) => Err(Error::Cancelled { stage: stage.into(), done, steps }),
    }
}

/// Everything the audio module computes for one recording (docs/model.md §12's parity checkpoints).
#[derive(Clone, Debug)]
pub struct AudioOutputs {
    /// The raw log-mel frames both towers started from (`[F8, mel]`, before the ASR normalisation).
    pub features: Features,
    /// `[T, d]` ASR tower output (before `asr_norm`).
    pub asr_hidden: Vec<f32>,
    /// `[F, speakers]` at 10 ms.
    pub speaker_logits: Vec<f32>,
    /// `[T, speakers]`: mean of the sub-frame sigmoids per encoder frame.
    pub speaker_probabilities: Vec<f32>,
    /// `[T, d]` fused states (before the projector).
    pub fused: Vec<f32>,
    /// `[tokens, text_hidden]` rows for the `<|audio|>` positions (f32; round to bf16 at the LM).
    pub audio_embeds: Vec<f32>,
}

/// The whole Transcribe audio module.
///
/// `AudioModel` is `Send + Sync`: load it once and share it between threads (by reference or in
/// an `Arc`). Concurrent calls are safe and give the same bits as the calls made one after
/// another: each tower (ASR encoder, Sortformer, fusion) locks its workspace for the whole of one
/// call's use of it, so the GPU work of concurrent calls serialises per tower, while the front
/// end and the host-side steps of different calls run in parallel.
pub struct AudioModel {
    config: TranscribeConfig,
    diarizer: Diarizer,
    asr: AsrEncoder,
    fusion: Fusion,
    /// The word-timestamp head, when the checkpoint holds it.
    word_timestamps: Option<WordTimestampHead>,
    /// Where the weights came from, for the error of a checkpoint without the head.
    source: String,
}

impl AudioModel {
    /// The resolved Transcribe config of the loaded checkpoint.
    pub fn config(&self) -> &TranscribeConfig {
        &self.config
    }

    /// The Sortformer with the front end, which this model shares for its ASR input too.
    pub fn diarizer(&self) -> &Diarizer {
        &self.diarizer
    }

    /// The ASR tower alone on `features`: its hidden states `[tokens, d]` (what [`AudioModel::encode_features`]
    /// runs beside the diarizer; the module's benchmark times it alone).
    pub async fn asr_hidden(&self, features: &Features) -> Result<Vec<f32>> {
        self.asr.encode(features).await
    }

    /// The speaker fusion and projector alone on the ASR states and speaker probabilities of `tokens` encoder
    /// frames, their outputs dropped (the module's benchmark times it alone).
    pub async fn run_fusion(&self, asr_hidden: &[f32], speaker_probabilities: &[f32], tokens: usize) -> Result<()> {
        self.fusion.run(asr_hidden, speaker_probabilities, tokens).await.map(drop)
    }

    /// The GPU ASR encoder tower (weights and workspace), e.g. for benchmarks of the tower alone.
    pub fn asr_tower(&self) -> &Tower {
        self.asr.tower()
    }

    /// The word-timestamp head, or [`CheckpointError::NoWordTimestampHead`] when the checkpoint lacks it.
    pub fn word_timestamp_head(&self) -> Result<&WordTimestampHead> {
        self.word_timestamps
            .as_ref()
            .ok_or_else(|| CheckpointError::NoWordTimestampHead { dir: self.source.clone() }.into())
    }

    /// The word-timestamp head on a recording's ASR states (`get_word_timestamp_hidden_states` and
    /// `get_word_timestamp_logits`): `[f·T, d]` hidden states and `[f·T, vocab]` logits. At the release vocabulary
    /// the logits take about 140 MB per minute of audio.
    pub async fn word_timestamp_logits(&self, outputs: &AudioOutputs) -> Result<WordTimestampOutputs> {
        self.word_timestamp_head()?.run(&outputs.asr_hidden, self.valid_encoder_frames(&outputs.features)).await
    }

    /// The word-timestamp head's log-probabilities of `classes` on a recording this model encoded (what the
    /// speaker-attributed alignment of a transcript reads, `nemotron-engine` running it): the head runs on `outputs`'
    /// ASR states and the log-softmax is kept for `classes` only, on the GPU (in f32, within a few f32 ulps of an f64
    /// log-softmax), so a long recording's full logits are never held. `sink` gets each block's first head frame and
    /// its `[frames, classes.len()]` values, in time order.
    pub async fn word_timestamp_log_probs(
        &self,
        outputs: &AudioOutputs,
        classes: &[u32],
        sink: &mut dyn FnMut(usize, &[f32]) -> Result<()>,
    ) -> Result<()> {
        let valid = self.valid_encoder_frames(&outputs.features);
        self.word_timestamp_head()?.for_each_log_prob_block(&outputs.asr_hidden, valid, classes, sink).await
    }

    /// Encoder frames whose first mel frame is valid (upstream's frame mask).
    pub fn valid_encoder_frames(&self, features: &Features) -> usize {
        features.valid.div_ceil(self.config.asr.subsampling)
    }

    /// 16 kHz mono samples (at least [`MIN_SAMPLES`](nemotron_postprocess::time::MIN_SAMPLES), all finite) → all outputs.
    pub async fn encode_audio(&self, samples: &[f32], progress: Progress<'_>) -> Result<AudioOutputs> {
        check_samples(samples)?;
        let features = self.diarizer.frontend().compute(samples)?;
        self.encode_features(features, progress).await
    }

    /// Log-mel features → all outputs. The two towers are independent until the fusion: the ASR encoder runs beside
    /// the Sortformer's steps (`beside.rs`), so the GPU has the ASR's work queued while each step makes its round trip
    /// to the host (each tower keeps its own workspace: the bits do not change).
    pub async fn encode_features(&self, features: Features, progress: Progress<'_>) -> Result<AudioOutputs> {
        let c = &self.config;
        check_features(&features, c.asr.mel_bins, c.asr.subsampling)?;
        report(progress, "asr", 0, 1)?;
        let (asr_hidden, activity) =
            beside(async || self.asr.encode(&features).await, self.diarizer.speaker_activity(&features, progress))
                .await;
        let (asr_hidden, (speaker_logits, speaker_probabilities)) = (asr_hidden?, activity?);
        report(progress, "asr", 1, 1)?;
        let fused = self.fusion.run(&asr_hidden, &speaker_probabilities, features.tokens()).await?;
        Ok(AudioOutputs {
            features,
            asr_hidden,
            speaker_logits,
            speaker_probabilities,
            fused: fused.fused,
            audio_embeds: fused.embeds,
        })
    }
}

/// How a model is set up on the GPU. Passed to [`Model::load`]; nothing is read from the environment.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ModelOptions {
    /// How the matrix products run (tensor cores or f32 kernels, and which tensor-core kernel).
    pub matmul: MatmulOptions,
    /// Which parts of the checkpoint are loaded: the whole audio module, or only its diarizer.
    pub parts: ModelParts,
    /// For tests of what programs answer to a lost device (a server's status, Python's exception): the device is
    /// destroyed, the loss a driver reset causes, as the diarizer's first step of at least this many recordings or
    /// sessions begins. `None` in use.
    #[doc(hidden)]
    pub lose_device_at_step_of: Option<usize>,
}

/// Which parts of a checkpoint a load reads, checks, uploads and compiles kernels for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ModelParts {
    /// Everything the checkpoint's kind has: for a Transcribe checkpoint both towers, the fusion and projector, and
    /// the word-timestamp head where the checkpoint holds it.
    #[default]
    Whole,
    /// Only the diarizer (front end, Sortformer and its head), for a program that only diarizes (the browser
    /// package): a Transcribe checkpoint loads as [`Model::Diarization`], its other tensors neither checked nor read
    /// (nor their shards opened), so its ASR tower, fusion and word-timestamp head cost no memory and no kernels.
    Diarizer,
}

impl ModelParts {
    /// The config of the parts loaded from a checkpoint of `config`.
    fn select(self, config: ModelConfig) -> ModelConfig {
        match (self, config) {
            (ModelParts::Diarizer, ModelConfig::Transcribe(t)) => ModelConfig::Diarization(t.diarization),
            (_, config) => config,
        }
    }
}

/// A loaded checkpoint of either kind. `Send + Sync`: see [`AudioModel`] for concurrent use.
pub enum Model {
    /// Nemotron 3.5 Transcribe: both towers, fusion and projector.
    Transcribe(Box<AudioModel>),
    /// A standalone Nemotron 3 Diarization checkpoint, or the diarizer alone of any checkpoint
    /// ([`ModelParts::Diarizer`]).
    Diarization(Diarizer),
}

impl Model {
    /// Reads `config.json` and the weights of `dir` (`model.safetensors` or a sharded index; only the shards that
    /// hold the tensors of [`ModelOptions::parts`] are opened), checks each of those tensors (all problems reported at
    /// once), and uploads them.
    pub async fn load(gpu: &Gpu, dir: &Path, options: &ModelOptions) -> Result<Self> {
        Self::from_files(gpu, &CheckpointFiles::Folder(dir.to_path_buf()), options).await
    }

    /// [`Model::load`] of a checkpoint's files, in a folder or handed over by name, by the one rule of
    /// [`CheckpointFiles`]: the config first (a checkpoint with two problems is refused for the same one either way),
    /// then the weights.
    pub async fn from_files(gpu: &Gpu, files: &CheckpointFiles, options: &ModelOptions) -> Result<Self> {
        let config = files.config()?;
        let checkpoint = files.checkpoint()?;
        Self::from_checkpoint(gpu, config, &checkpoint, options).await
    }

    /// A model from a parsed config and an open checkpoint (e.g. one held in memory): every tensor of
    /// [`ModelOptions::parts`] is checked once (all problems reported at once), then the layers are built from the
    /// checked checkpoint.
    pub async fn from_checkpoint(
        gpu: &Gpu,
        config: ModelConfig,
        checkpoint: &Checkpoint,
        options: &ModelOptions,
    ) -> Result<Self> {
        let config = options.parts.select(config);
        let names = ModelNames::detect(checkpoint)?;
        // The word-timestamp head is optional: checked (and fetched) only where the checkpoint has it.
        let head = names.word_timestamp_names(checkpoint).ok();
        let expected = expected_tensors(&config, &names, head)?;
        let mut store = GpuStore::checked(gpu, checkpoint, &options.matmul, &expected)?;
        let parts = Parts {
            names: &names,
            head,
            frontend: frontend(checkpoint, &names)?,
            source: checkpoint.dir(),
            lose_device_at_step_of: options.lose_device_at_step_of,
        };
        Self::build(&mut store, config, parts).await
    }

    /// A model of `config`'s shapes with random weights (for benchmarks: no checkpoint needed), built as
    /// [`Model::from_checkpoint`] builds one, in the release's names.
    pub async fn random(gpu: &Gpu, config: &ModelConfig, seed: u64, options: &ModelOptions) -> Result<Self> {
        let config = &options.parts.select(config.clone());
        if let ModelConfig::Transcribe(t) = config {
            check_word_timestamp_width(&t.word_timestamps, &t.asr)?;
        }
        let names = ModelNames::nemo();
        let mut store = RandomStore { gpu, rng: Rng::new(seed), matmul: &options.matmul };
        let parts = Parts {
            names: &names,
            head: names.word_timestamps.as_ref(),
            frontend: LogMel::new(None, None)?,
            source: Path::new("random weights"),
            lose_device_at_step_of: options.lose_device_at_step_of,
        };
        Self::build(&mut store, config.clone(), parts).await
    }

    /// The one way a model is put together: each layer from `store` (checked already), in the order of
    /// [`expected_tensors`].
    async fn build(store: &mut impl GpuWeights, config: ModelConfig, parts: Parts<'_>) -> Result<Self> {
        let Parts { names, head, frontend, source, lose_device_at_step_of } = parts;
        let sortformer = Sortformer::build(store, names, config.diarization())
            .await?
            .losing_device_at_step_of(lose_device_at_step_of);
        let diarizer = Diarizer::new(frontend, sortformer);
        let t = match config {
            ModelConfig::Transcribe(t) => t,
            ModelConfig::Diarization(_) => return Ok(Model::Diarization(diarizer)),
        };
        let source = source.display().to_string();
        let (Some(asr), Some(fusion)) = (&names.asr, &names.fusion) else {
            return Err(CheckpointError::DiarizerOnly { dir: source }.into());
        };
        let asr = AsrEncoder::new(Tower::build(store, asr, &t.asr)?, t.diarization.chunks);
        let fusion = Fusion::build(store, fusion, &t).await?;
        let word_timestamps = match head {
            Some(names) => {
                Some(WordTimestampHead::build(store, names, &t.word_timestamps, t.diarization.chunks).await?)
            }
            None => None,
        };
        Ok(Model::Transcribe(Box::new(AudioModel { config: t, diarizer, asr, fusion, word_timestamps, source })))
    }

    /// The diarizer of either kind of checkpoint.
    pub fn diarizer(&self) -> &Diarizer {
        match self {
            Model::Transcribe(m) => m.diarizer(),
            Model::Diarization(d) => d,
        }
    }
}

/// What a model is built from besides its store and config.
struct Parts<'a> {
    /// The names of the store's tensors.
    names: &'a ModelNames,
    /// The word-timestamp head's names, when the store holds the head.
    head: Option<&'a WordTimestampNames>,
    frontend: LogMel,
    /// Where the weights come from, for errors.
    source: &'a Path,
    /// [`ModelOptions::lose_device_at_step_of`].
    lose_device_at_step_of: Option<usize>,
}

/// Every `(name, shape)` the audio module of `config` reads from a checkpoint named as `names` says, the
/// word-timestamp head's when `head` names it; the width of the head is checked against the ASR tower's first.
fn expected_tensors(
    config: &ModelConfig,
    names: &ModelNames,
    head: Option<&WordTimestampNames>,
) -> Result<Vec<(String, Vec<usize>)>> {
    let mut expected = Expectations::default();
    weights::encoder(&mut expected, &names.diarization, &config.diarization().encoder)?;
    weights::head(&mut expected, &names.head, config.diarization())?;
    if let (ModelConfig::Transcribe(t), Some(asr), Some(fusion)) = (config, &names.asr, &names.fusion) {
        weights::encoder(&mut expected, asr, &t.asr)?;
        weights::fusion(&mut expected, fusion, t.asr.hidden, t.diarization.speakers, t.text_hidden)?;
        if let Some(head) = head {
            check_word_timestamp_width(&t.word_timestamps, &t.asr)?;
            weights::word_timestamps(&mut expected, head, &t.word_timestamps)?;
        }
    }
    Ok(expected.0)
}

/// The weight files a load of `parts` reads from the checkpoint `files`, known from `config.json` and the index alone
/// (no shard is read, so `files` may hold only those two): the shards holding the tensors those parts read (sorted,
/// each once; the front end's window and filter bank and the word-timestamp head's included where the index names
/// them), else [`SINGLE_FILE`](crate::checkpoint::SINGLE_FILE) where there is no index. What a loader that fetches
/// the files one by one after `config.json` fetches: the browser package, the Hub client (a Transcribe checkpoint's
/// language-model shards, and with [`ModelParts::Diarizer`] its ASR tower's, are never fetched). A config or an index
/// the load would refuse is refused alike, naming the same file.
pub fn weight_files(files: &CheckpointFiles, parts: ModelParts) -> Result<Vec<String>> {
    let config = parts.select(files.config()?);
    let Some(index) = files.index()? else { return Ok(vec![crate::checkpoint::SINGLE_FILE.to_owned()]) };
    let names = ModelNames::detect(&index)?;
    let head = names.word_timestamp_names(&index).ok();
    let expected = expected_tensors(&config, &names, head)?.into_iter().map(|(name, _)| name);
    let front_end = [&names.window, &names.filterbank].into_iter().flatten().cloned();
    Ok(index.files_holding(&expected.chain(front_end).collect::<Vec<_>>()))
}

/// The checkpoint's bf16 window and filter bank when it has them, else computed ones.
fn frontend(checkpoint: &Checkpoint, names: &ModelNames) -> Result<LogMel> {
    let read = |name: &Option<String>| -> Result<Option<Vec<f32>>> {
        match name {
            Some(n) if checkpoint.contains(n) => Ok(Some(checkpoint.f32(n)?)),
            _ => Ok(None),
        }
    };
    let (window, filterbank) = (read(&names.window)?, read(&names.filterbank)?);
    Ok(LogMel::new(window.as_deref(), filterbank.as_deref())?)
}

/// What the engine's audio readers guarantee, for samples that did not come through them.
pub(crate) fn check_samples(samples: &[f32]) -> Result<()> {
    Ok(nemotron_postprocess::samples::check_samples("in-memory audio", samples)?)
}

/// Refuses features the diarizer (of `mel_bins` and `subsampling`) cannot read, naming what is wrong.
pub(crate) fn check_features(features: &Features, mel_bins: usize, subsampling: usize) -> Result<()> {
    if !features.frames.is_multiple_of(subsampling) || features.data.len() != features.frames * mel_bins {
        return Err(Error::features(format!(
            "features hold {} values for {} frames; expected frames × {mel_bins} mel bins with frames a multiple of {subsampling}",
            features.data.len(),
            features.frames
        )));
    }
    if features.valid > features.frames {
        return Err(Error::features(format!("{} valid frames of only {}", features.valid, features.frames)));
    }
    if features.valid == 0 {
        return Err(Error::features("the features have no valid frame (the mask is all zeros)"));
    }
    if let Some(bad) = features.data.iter().position(|v| !v.is_finite()) {
        return Err(Error::features(format!("feature value {bad} is not finite")));
    }
    Ok(())
}

#[cfg(test)]
mod load_tests;
