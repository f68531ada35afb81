//! What the JS API does, in plain async Rust on the engine (the `bindings` module only converts values; native tests
//! run these same functions): a model loaded from named files or the demo, known speakers enrolled, offline
//! diarization with its segments and their `diarize --format` text, and live sessions whose events are
//! `diarize --stream`'s lines; with a speaker profile, `diarize --speakers`'s. Every step is the engine's: the
//! checkpoint's rule, the model, the enrollment, the segment rules and writers are the CLI's.

use std::sync::Arc;

use nemotron_engine::{
    CheckpointFiles, Diarized, Engine, EngineError, EngineOptions, GpuOptions, Input, LiveSession, ModelOptions,
    ModelParts, ModelSource, NamedFiles, Progress, Segment, SegmentEvent, SpeakerProfile, write_named_segments,
};

use crate::error::WebError;
use crate::options::{DiarizeOptions, StreamOptions, TextOptions};

/// The engine's options in a browser: the defaults, the GPU context labelled for this package (on the adapter's own
/// limits, not WebGPU's defaults: `Gpu::with_options` asks for them), and only the diarizer of a checkpoint loaded,
/// since this package only diarizes: a Transcribe checkpoint's ASR tower, fusion and word-timestamp head are neither
/// uploaded nor compiled.
fn engine_options() -> EngineOptions {
    EngineOptions {
        gpu: GpuOptions { label: "nemotron-web".into(), ..GpuOptions::default() },
        model: ModelOptions { parts: ModelParts::Diarizer, ..ModelOptions::default() },
        ..Default::default()
    }
}

/// A file handed over: its name (without a folder, as the index names a shard) and its bytes, held once.
pub type NamedFile = (String, Arc<[u8]>);

/// The model of a checkpoint folder's files handed over by name: `config.json` with `model.safetensors`, or with
/// `model.safetensors.index.json` and its shards (read by the rule of a checkpoint folder; a name given twice is
/// refused). The files' bytes are dropped once the model is on the GPU.
/// `progress` hears of the stages of the load after the files are read: the kernels' compilation (stage
/// [`nemotron_engine::COMPILING_KERNELS`], pipelines done and in all).
pub async fn load(files: Vec<NamedFile>, progress: LoadProgress<'_>) -> Result<Engine, WebError> {
    let source = ModelSource::Files(NamedFiles::new(files).map_err(EngineError::from)?);
    Ok(Engine::load_async(&source, &engine_options(), progress).await?)
}

/// The weight files [`load`] reads of the checkpoint whose `config.json` and index (where it has one) are `files`,
/// known before they are fetched: the shards holding its diarizer's tensors (a Transcribe checkpoint's ASR tower and
/// language model are never downloaded), else `model.safetensors`. A config or an index the load would refuse is
/// refused alike.
pub fn weight_files(files: Vec<NamedFile>) -> Result<Vec<String>, WebError> {
    let files = CheckpointFiles::Named(NamedFiles::new(files).map_err(EngineError::from)?);
    Ok(nemotron_engine::weight_files(&files, engine_options().model.parts).map_err(EngineError::from)?)
}

/// The built-in demo model (random weights: its outputs are meaningless); `progress` as [`load`]'s.
pub async fn demo(progress: LoadProgress<'_>) -> Result<Engine, WebError> {
    Ok(Engine::load_async(&ModelSource::Demo, &engine_options(), progress).await?)
}

/// What a load reports: (stage, steps done, steps in all).
pub type LoadProgress<'a> = &'a mut dyn FnMut(&str, u64, u64);

/// Enrolls named clips (name, 16 kHz mono samples) as `nemotron-audio enroll` does: the profile, once each clip is
/// found to speak in a slot of its own.
pub async fn enroll(engine: &Engine, clips: Vec<(String, Vec<f32>)>) -> Result<SpeakerProfile, WebError> {
    Ok(engine.enroll_async(clips).await?.0)
}

/// The diarizer on 16 kHz mono samples: speaker logits at 10 ms and probabilities at the encoder rate; with
/// `speakers`, the enrolled slots named (`diarize --speakers`). `progress` hears of its steps (chunks done, chunks)
/// and may cancel the rest (the error's kind is then [`nemotron_engine::ErrorKind::Cancelled`]).
pub async fn speaker_activity(
    engine: &Engine,
    samples: Vec<f32>,
    speakers: Option<&SpeakerProfile>,
    progress: Progress<'_>,
) -> Result<Diarized, WebError> {
    let input = Input::Samples(samples);
    Ok(match speakers {
        Some(profile) => engine.diarize_with_speakers_async(input, profile, progress).await?,
        None => engine.diarize_async(input, progress).await?,
    })
}

/// Segments, and their text in the format asked for.
#[derive(Debug, PartialEq)]
pub struct Segments {
    /// Ordered by start, then speaker.
    pub segments: Vec<Segment>,
    /// Each slot's enrolled name (`None` for the others); empty without known speakers.
    pub names: Vec<Option<String>>,
    /// As `diarize --segments - --format` writes them (with the names).
    pub text: String,
}

impl Segments {
    fn new(segments: Vec<Segment>, names: &[Option<String>], options: &TextOptions) -> Self {
        let text = write_named_segments(&segments, options.format, &options.uri, names);
        Self { segments, names: names.to_vec(), text }
    }
}

/// Who spoke when in 16 kHz mono samples, by the rule `options` ask for; with `speakers`, named; `progress` as
/// [`speaker_activity`]'s.
pub async fn segments(
    engine: &Engine,
    samples: Vec<f32>,
    options: &DiarizeOptions,
    speakers: Option<&SpeakerProfile>,
    progress: Progress<'_>,
) -> Result<Segments, WebError> {
    let diarized = speaker_activity(engine, samples, speakers, progress).await?;
    Ok(Segments::new(diarized.segments_by(&options.rule), diarized.names(), &options.text))
}

/// A live session of the mode and settings `options` ask for.
pub fn stream(engine: &Engine, options: &StreamOptions) -> Result<LiveSession, WebError> {
    Ok(engine.stream(options.mode, &options.settings)?)
}

/// [`stream`] with the speakers of `profile` named: the session is first pushed the enrolled clips, on the GPU.
pub async fn stream_with_speakers(
    engine: &Engine,
    options: &StreamOptions,
    profile: &SpeakerProfile,
) -> Result<LiveSession, WebError> {
    Ok(engine.stream_with_speakers_async(options.mode, &options.settings, profile).await?)
}

/// Feeds 16 kHz mono samples to a live session; the event lines they made final (with the enrolled names).
pub async fn push(live: &mut LiveSession, samples: &[f32]) -> Result<Vec<String>, WebError> {
    let events = live.push_async(samples).await?;
    Ok(lines(&events, live.names()))
}

/// The end of a live session.
#[derive(Debug, PartialEq)]
pub struct Ended {
    /// The event lines of its last chunk, then those its end made final.
    pub events: Vec<String>,
    /// Every segment of the stream, and their text (what `diarize --stream --segments` writes).
    pub segments: Segments,
}

/// Ends a live session.
pub async fn end(live: LiveSession, options: &TextOptions) -> Result<Ended, WebError> {
    let recording = live.finish_recording_async().await?;
    let names = recording.diarized.names();
    Ok(Ended { events: lines(&recording.events, names), segments: Segments::new(recording.segments, names, options) })
}

fn lines(events: &[SegmentEvent], names: &[Option<String>]) -> Vec<String> {
    events.iter().map(|event| event.json_line_named(names)).collect()
}
