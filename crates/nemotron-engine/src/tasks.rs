//! The offline tasks of an [`Engine`] — encode, diarize, align — each a future ([`Engine::diarize_async`], …) with
//! the blocking form native callers wait on ([`Engine::diarize`], …); their results are in `results.rs`. Continuous
//! batching of diarizations: [`DiarizeBatch`] takes inputs while it runs (the server's requests), and
//! [`Engine::diarize_many`] (native targets: its readers are threads) feeds it a list of entries (the CLI's manifests
//! and folders, Python's `diarize_many`).

#[cfg(not(target_arch = "wasm32"))]
use nemotron_towers::blocking::Block;
#[cfg(not(target_arch = "wasm32"))]
use std::collections::HashMap;
use std::ops::ControlFlow;
use std::path::Path;

use nemotron_postprocess::alignment::{
    self, AlignOptions, Alignment, AlignmentTokenizer, FrameLogProbs, Frames, SpeakerLogits, Stream,
};
use nemotron_towers::{AudioModel, AudioOutputs, BatchLimits, Diarizer, DiarizerBatch, Model, Progress};

use crate::engine::Engine;
use crate::error::EngineError;
use crate::input::Input;
use crate::io::speakers::SpeakerProfile;
#[cfg(not(target_arch = "wasm32"))]
use crate::read_ahead::ReadAhead;
use crate::results::{Aligned, Diarized, Encoding};

/// Entries [`Engine::diarize_many`] reads ahead of its batch: read and not yet added, each holding its samples and
/// features.
#[cfg(not(target_arch = "wasm32"))]
const READ_AHEAD: usize = 4;

/// What `align` aligns: a transcript (`<spk:N>` tags open speaker turns) and its language (`zh` and `ja` align
/// character by character; detected from the script when absent).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AlignRequest {
    /// The transcript.
    pub transcript: String,
    /// A language code.
    pub language: Option<String>,
}

impl Engine {
    /// The Transcribe model, or the error saying `task` (`encode`, `align`) needs one.
    pub fn transcribe(&self, task: &'static str) -> Result<&AudioModel, EngineError> {
        match &self.model {
            Model::Transcribe(model) => Ok(model),
            Model::Diarization(_) => Err(EngineError::needs_transcribe(task)),
        }
    }

    /// The diarizer (of either kind of checkpoint).
    pub fn diarizer(&self) -> &Diarizer {
        self.model.diarizer()
    }

    /// Reads a features file of the shape this model takes (its mel bins, frames a multiple of its subsampling).
    pub fn read_features(&self, path: &Path) -> Result<Input, EngineError> {
        let (mel_bins, subsampling) = match &self.model {
            Model::Transcribe(model) => (model.config().asr.mel_bins, model.config().asr.subsampling),
            Model::Diarization(diarizer) => (diarizer.config().encoder.mel_bins, diarizer.config().encoder.subsampling),
        };
        Input::read_features(path, mel_bins, subsampling)
    }

    /// Fails at once, before any input is read, when `encode --word-timestamps` or `align` cannot run: a diarizer
    /// alone, or a checkpoint without the word-timestamp head.
    pub fn check_word_timestamps(&self, task: &'static str) -> Result<(), EngineError> {
        self.transcribe(task)?.word_timestamp_head()?;
        Ok(())
    }

    /// The whole audio module on `input` (a Transcribe checkpoint); with `word_timestamps`, the word-timestamp head
    /// runs on the ASR states too. `progress` hears of each stage.
    #[cfg(not(target_arch = "wasm32"))]
    pub fn encode(&self, input: Input, word_timestamps: bool, progress: Progress<'_>) -> Result<Encoding, EngineError> {
        self.encode_async(input, word_timestamps, progress).block()
    }

    /// [`Engine::encode`] as a future.
    pub async fn encode_async(
        &self,
        input: Input,
        word_timestamps: bool,
        progress: Progress<'_>,
    ) -> Result<Encoding, EngineError> {
        let model = self.transcribe("encode")?;
        if word_timestamps {
            // Before the towers run: a checkpoint without the head fails at once.
            model.word_timestamp_head()?;
        }
        let outputs = encode_input(model, input, progress).await?;
        let logits = match word_timestamps {
            true => Some(model.word_timestamp_logits(&outputs).await?.logits),
            false => None,
        };
        Ok(Encoding::new(outputs, model.config(), logits))
    }

    /// Who spoke when: the diarizer on `input` (either kind of checkpoint).
    #[cfg(not(target_arch = "wasm32"))]
    pub fn diarize(&self, input: Input, progress: Progress<'_>) -> Result<Diarized, EngineError> {
        self.diarize_async(input, progress).block()
    }

    /// [`Engine::diarize`] as a future (what a browser awaits).
    pub async fn diarize_async(&self, input: Input, progress: Progress<'_>) -> Result<Diarized, EngineError> {
        let diarizer = self.diarizer();
        let result = match input {
            Input::Samples(samples) => diarizer.diarize_audio(&samples, progress).await,
            Input::Features(features) => diarizer.diarize_features(features, progress).await,
        }?;
        Ok(Diarized::offline(result, diarizer))
    }

    /// [`Engine::diarize`] of many entries through one [`DiarizeBatch`] (the continuous batch the server's requests
    /// share): the steps of up to `limits` recordings share each GPU submission, and a recording that ends gives its
    /// place to the next entry at once, so that a long one holds no short one back. `read` turns an entry into its
    /// input (decoding a file, say) and what the caller keeps with it; it and the front end run on a few threads, a
    /// few entries ahead of the batch, while the GPU works.
    ///
    /// `done(position, result)` hears of each entry (its position among `entries`) as it is done, in the order they
    /// finish: its diarization and what `read` kept, or why it failed (`read`'s error, or the engine's). A refused or
    /// failed entry does not stop the others; [`ControlFlow::Break`] from `done` stops the run (entries still running
    /// are dropped). Recordings join the batch in the entries' order, as places free, so the recordings a step holds
    /// depend on the entries alone, not on how fast they are read: a run gives the same bits every time, each
    /// recording's those of [`Engine::diarize`] alone (bit for bit where no kernel splits its work by the batch's
    /// size, within float rounding where one does: see `nemotron_towers`' `DiarizerBatch`).
    ///
    /// With `speakers`, each entry is diarized as [`Engine::diarize_with_speakers`] diarizes it, the profile's clips
    /// in front of it; a profile the diarizer cannot take is refused before any entry is read.
    #[cfg(not(target_arch = "wasm32"))]
    pub fn diarize_many<T, K, E>(
        &self,
        entries: impl IntoIterator<Item = T, IntoIter: Send>,
        read: impl Fn(T) -> Result<(Input, K), E> + Sync,
        limits: &BatchLimits,
        speakers: Option<&SpeakerProfile>,
        done: &mut dyn FnMut(usize, Result<(Diarized, K), E>) -> ControlFlow<()>,
    ) -> Result<(), EngineError>
    where
        T: Send,
        K: Send,
        E: From<EngineError> + Send,
    {
        let primer = speakers.map(|profile| self.primer(profile)).transpose()?;
        let prepare = |entry: T| -> Result<(Input, K), E> {
            let (input, kept) = read(entry)?;
            let input = match &primer {
                Some(primer) => primer.before(input).map_err(EngineError::from)?,
                None => input,
            };
            Ok((self.diarizer_features(input)?, kept))
        };
        let named = |diarized: Diarized| match &primer {
            Some(primer) => primer.restrict(diarized).map_err(EngineError::from),
            None => Ok(diarized),
        };
        let readers = std::thread::available_parallelism().map_or(1, |n| n.get()).min(READ_AHEAD);
        std::thread::scope(|scope| {
            let mut ready = ReadAhead::start(scope, entries.into_iter(), &prepare, readers, READ_AHEAD).enumerate();
            let mut batch = self.diarize_batch(limits);
            // Each recording in the batch, by its number there: its entry's position and what `read` kept.
            let mut running: HashMap<usize, (usize, K)> = HashMap::new();
            let mut more = true;
            loop {
                while more && batch.len() < batch.capacity() {
                    match ready.next() {
                        Some((position, Ok((input, kept)))) => {
                            running.insert(batch.add(input), (position, kept));
                        }
                        Some((position, Err(error))) => {
                            if done(position, Err(error)).is_break() {
                                return;
                            }
                        }
                        None => more = false,
                    }
                }
                if batch.is_empty() {
                    return;
                }
                for (number, result) in batch.step(&mut |_, _, _| {}) {
                    // Every number a step reports is one `add` gave, reported once.
                    let Some((position, kept)) = running.remove(&number) else { continue };
                    let result = result.and_then(named).map(|diarized| (diarized, kept)).map_err(E::from);
                    if done(position, result).is_break() {
                        return;
                    }
                }
            }
        });
        Ok(())
    }

    /// `input` as the diarizer reads it: samples through its front end (features stay as they are), so that the
    /// front end can run elsewhere than a [`DiarizeBatch`]'s steps.
    pub fn diarizer_features(&self, input: Input) -> Result<Input, EngineError> {
        match input {
            Input::Samples(samples) => Ok(Input::Features(self.diarizer().features(&samples)?)),
            features => Ok(features),
        }
    }

    /// An empty [`DiarizeBatch`]: inputs diarized side by side as they come, the steps of up to `limits` of them in
    /// one GPU submission.
    pub fn diarize_batch(&self, limits: &BatchLimits) -> DiarizeBatch<'_> {
        let diarizer = self.diarizer();
        DiarizeBatch { diarizer, batch: diarizer.batch(limits) }
    }

    /// Speaker-attributed word timestamps of a transcript on `input` (a Transcribe checkpoint with the
    /// word-timestamp head and an alignment tokenizer): the towers run once, the alignment on the host.
    #[cfg(not(target_arch = "wasm32"))]
    pub fn align(&self, input: Input, request: &AlignRequest, progress: Progress<'_>) -> Result<Aligned, EngineError> {
        self.align_async(input, request, progress).block()
    }

    /// [`Engine::align`] as a future.
    pub async fn align_async(
        &self,
        input: Input,
        request: &AlignRequest,
        progress: Progress<'_>,
    ) -> Result<Aligned, EngineError> {
        self.align_speakers(input, request, None, progress).await
    }

    /// [`Engine::align`] with the speakers of `diarization` in place of the model's own diarizer's: the speaker
    /// logits of the same recording from another diarizer (a standalone Nemotron 3 Diarization model, say), which
    /// place the speaker tags and make the result's diarization. It must cover the recording's frames with as many
    /// speakers as the model has (a [`crate::ErrorKind::Usage`] error naming `diarization` otherwise).
    #[cfg(not(target_arch = "wasm32"))]
    pub fn align_with_diarization(
        &self,
        input: Input,
        request: &AlignRequest,
        diarization: &Diarized,
        progress: Progress<'_>,
    ) -> Result<Aligned, EngineError> {
        self.align_with_diarization_async(input, request, diarization, progress).block()
    }

    /// [`Engine::align_with_diarization`] as a future.
    pub async fn align_with_diarization_async(
        &self,
        input: Input,
        request: &AlignRequest,
        diarization: &Diarized,
        progress: Progress<'_>,
    ) -> Result<Aligned, EngineError> {
        self.align_speakers(input, request, Some(diarization), progress).await
    }

    /// [`Engine::align`] with the speakers of `profile` named: the speakers come from
    /// [`Engine::diarize_with_speakers`] on the model's diarizer ([`Engine::align_with_diarization`] with it), and
    /// the result's [`Aligned::names`] label the tags matched to enrolled slots.
    #[cfg(not(target_arch = "wasm32"))]
    pub fn align_with_speakers(
        &self,
        input: Input,
        request: &AlignRequest,
        profile: &SpeakerProfile,
        progress: Progress<'_>,
    ) -> Result<Aligned, EngineError> {
        self.align_with_speakers_async(input, request, profile, progress).block()
    }

    /// [`Engine::align_with_speakers`] as a future.
    pub async fn align_with_speakers_async(
        &self,
        input: Input,
        request: &AlignRequest,
        profile: &SpeakerProfile,
        progress: Progress<'_>,
    ) -> Result<Aligned, EngineError> {
        self.transcribe("align")?;
        let named =
            self.diarize_with_speakers_async(input.clone(), profile, &mut |_, _, _| ControlFlow::Continue(())).await?;
        self.align_speakers(input, request, Some(&named), progress).await
    }

    async fn align_speakers(
        &self,
        input: Input,
        request: &AlignRequest,
        diarization: Option<&Diarized>,
        progress: Progress<'_>,
    ) -> Result<Aligned, EngineError> {
        let model = self.transcribe("align")?;
        model.word_timestamp_head()?;
        let tokenizer = self.alignment_tokenizer()?;
        let mut outputs = encode_input(model, input, progress).await?;
        if let Some(diarization) = diarization {
            outputs.speaker_logits = replacement_logits(&outputs, model.config().diarization.speakers, diarization)?;
        }
        let options = AlignOptions { language: request.language.clone(), ..AlignOptions::default() };
        let alignment = align(model, &outputs, tokenizer, &request.transcript, &options).await?;
        Ok(Aligned { alignment, names: diarization.map(|d| d.names().to_vec()).unwrap_or_default() })
    }
}

/// Speaker-attributed word timestamps of `transcript` on a recording `model` encoded (Transformers'
/// `align_word_timestamps` with the speaker logits): the word-timestamp head's log-probabilities, kept for the
/// transcript's classes only, and the alignment that matches the transcript's `<spk:N>` tags to the diarizer's
/// speakers.
async fn align(
    model: &AudioModel,
    outputs: &AudioOutputs,
    tokenizer: &AlignmentTokenizer,
    transcript: &str,
    options: &AlignOptions,
) -> Result<Alignment, EngineError> {
    let c = model.config();
    let vocab = c.word_timestamps.vocab_size;
    let frames = Frames {
        padded_mel: outputs.features.frames,
        valid_mel: outputs.features.valid,
        head: outputs.asr_hidden.len() / c.asr.hidden * c.word_timestamps.upsampling_factor,
        subsampling: c.asr.subsampling,
    };
    let streams = alignment::tokenize(tokenizer, transcript, vocab, options)?;
    let needed = alignment::num_frames(frames)?;
    let mut log_probs = FrameLogProbs::new(vocab, streams.iter().flat_map(Stream::target));
    let classes = log_probs.classes().to_vec();
    model
        .word_timestamp_log_probs(outputs, &classes, &mut |first_frame, values| {
            let rows = needed.saturating_sub(first_frame).min(values.len() / classes.len());
            log_probs.push_log_probs(&values[..rows * classes.len()]);
            Ok(())
        })
        .await?;
    let speakers = SpeakerLogits { logits: &outputs.speaker_logits, speakers: c.diarization.speakers };
    Ok(alignment::align_streams(&streams, &log_probs, frames, Some(speakers), options)?)
}

/// The rows of `diarization`'s logits that stand for the model's own (padded frames included: the alignment reads
/// them), after checking that it is a diarization of this recording.
fn replacement_logits(
    outputs: &AudioOutputs,
    speakers: usize,
    diarization: &Diarized,
) -> Result<Vec<f32>, EngineError> {
    let (valid, rows) = (outputs.features.valid, outputs.speaker_logits.len() / speakers.max(1));
    let covers = diarization.logits().len() / diarization.speakers().max(1);
    if diarization.speakers() != speakers || diarization.frames() != valid || covers < rows {
        return Err(EngineError::Setting {
            field: "diarization",
            problem: format!(
                "{} frames ({covers} with padding) of {} speakers, but the recording has {valid} frames ({rows} with \
                 padding) of {speakers} speakers: give a diarization of the same recording",
                diarization.frames(),
                diarization.speakers()
            ),
        });
    }
    Ok(diarization.logits()[..rows * speakers].to_vec())
}

async fn encode_input(model: &AudioModel, input: Input, progress: Progress<'_>) -> Result<AudioOutputs, EngineError> {
    Ok(match input {
        Input::Samples(samples) => model.encode_audio(&samples, progress).await,
        Input::Features(features) => model.encode_features(features, progress).await,
    }?)
}

/// Up to `recordings` inputs diarized side by side, the other limits their defaults: the CLI's `--batch-size`, the
/// server's `--offline-batch` and Python's `batch_size` (each defaults to [`BatchLimits::default`]'s). Refused
/// below 1.
pub fn batch_limits(recordings: i64) -> Result<BatchLimits, EngineError> {
    match usize::try_from(recordings) {
        Ok(max_recordings) if max_recordings >= 1 => Ok(BatchLimits { max_recordings, ..BatchLimits::default() }),
        _ => Err(EngineError::BatchSize { recordings }),
    }
}

/// Inputs diarized side by side, added at any time ([`Engine::diarize_batch`]; continuous batching, as the server's
/// concurrent requests need, and [`Engine::diarize_many`]'s lists): each [`DiarizeBatch::step`] runs the next step of
/// every running input as one GPU submission, and an input that ends leaves its place to the next one added. Each
/// result is what [`Engine::diarize`] gives the input alone (within what [`Engine::diarize_many`] says).
pub struct DiarizeBatch<'e> {
    diarizer: &'e Diarizer,
    batch: DiarizerBatch<'e>,
}

impl DiarizeBatch<'_> {
    /// Adds an input (its front end runs now, unless it is features already: [`Engine::diarizer_features`]); returns
    /// its number, in the order added from 0. An input the diarizer cannot take is refused by the next
    /// [`DiarizeBatch::step`].
    pub fn add(&mut self, input: Input) -> usize {
        let features = match input {
            Input::Samples(samples) => self.diarizer.features(&samples),
            Input::Features(features) => Ok(features),
        };
        match features {
            Ok(features) => self.batch.add(features),
            Err(error) => self.batch.refuse(error),
        }
    }

    /// Inputs added and not yet reported by a step.
    pub fn len(&self) -> usize {
        self.batch.len()
    }

    /// Whether every input added has been reported by a step.
    pub fn is_empty(&self) -> bool {
        self.batch.is_empty()
    }

    /// Inputs whose steps share one submission: more added wait for a place.
    pub fn capacity(&self) -> usize {
        self.batch.capacity()
    }

    /// One GPU submission for the next step of every running input (blocking until its results are read): the
    /// inputs done with it, by number, in no particular order. `progress(input, chunks done, chunks)` follows each
    /// input's step.
    #[cfg(not(target_arch = "wasm32"))]
    pub fn step(
        &mut self,
        progress: &mut dyn FnMut(usize, usize, usize),
    ) -> Vec<(usize, Result<Diarized, EngineError>)> {
        self.step_async(progress).block()
    }

    /// [`DiarizeBatch::step`] as a future.
    pub async fn step_async(
        &mut self,
        progress: &mut dyn FnMut(usize, usize, usize),
    ) -> Vec<(usize, Result<Diarized, EngineError>)> {
        let finished = self.batch.step(progress).await;
        let diarizer = self.diarizer;
        finished
            .into_iter()
            .map(|(i, result)| (i, result.map(|d| Diarized::offline(d, diarizer)).map_err(EngineError::from)))
            .collect()
    }
}
