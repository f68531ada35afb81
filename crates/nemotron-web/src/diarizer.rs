//! What the JS API does, in plain async Rust on the engine (the `bindings` module only converts values; native tests
//! run these same functions): a model loaded from named files or the demo, offline diarization with its segments and
//! their `diarize --format` text, and live sessions whose events are `diarize --stream`'s lines. Every step is the
//! engine's: the checkpoint's rule, the model, the segment rules and writers are the CLI's.

use std::sync::Arc;

use nemotron_engine::{
    Diarized, Engine, EngineError, EngineOptions, GpuOptions, Input, LiveSession, ModelSource, NamedFiles, Segment,
    SegmentEvent, write_segments,
};

use crate::error::WebError;
use crate::options::{DiarizeOptions, StreamOptions, TextOptions};

/// The engine's options in a browser: the defaults, the GPU context labelled for this package (on the adapter's own
/// limits, not WebGPU's defaults: `Gpu::with_options` asks for them).
fn engine_options() -> EngineOptions {
    EngineOptions { gpu: GpuOptions { label: "nemotron-web".into(), ..GpuOptions::default() }, ..Default::default() }
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

/// The built-in demo model (random weights: its outputs are meaningless); `progress` as [`load`]'s.
pub async fn demo(progress: LoadProgress<'_>) -> Result<Engine, WebError> {
    Ok(Engine::load_async(&ModelSource::Demo, &engine_options(), progress).await?)
}

/// What a load reports: (stage, steps done, steps in all).
pub type LoadProgress<'a> = &'a mut dyn FnMut(&str, u64, u64);

/// The diarizer on 16 kHz mono samples: speaker logits at 10 ms and probabilities at the encoder rate.
pub async fn speaker_activity(engine: &Engine, samples: Vec<f32>) -> Result<Diarized, WebError> {
    Ok(engine.diarize_async(Input::Samples(samples), &mut |_, _, _| {}).await?)
}

/// Segments, and their text in the format asked for.
#[derive(Debug, PartialEq)]
pub struct Segments {
    /// Ordered by start, then speaker.
    pub segments: Vec<Segment>,
    /// As `diarize --segments - --format` writes them.
    pub text: String,
}

impl Segments {
    fn new(segments: Vec<Segment>, options: &TextOptions) -> Self {
        let text = write_segments(&segments, options.format, &options.uri);
        Self { segments, text }
    }
}

/// Who spoke when in 16 kHz mono samples, by the rule `options` ask for.
pub async fn segments(engine: &Engine, samples: Vec<f32>, options: &DiarizeOptions) -> Result<Segments, WebError> {
    let diarized = speaker_activity(engine, samples).await?;
    Ok(Segments::new(diarized.segments_by(&options.rule), &options.text))
}

/// A live session of the mode and rule `options` ask for.
pub fn stream(engine: &Engine, options: StreamOptions) -> Result<LiveSession, WebError> {
    Ok(engine.stream_by(options.mode, options.rule)?)
}

/// Feeds 16 kHz mono samples to a live session; the event lines they made final.
pub async fn push(live: &mut LiveSession, samples: &[f32]) -> Result<Vec<String>, WebError> {
    Ok(lines(live.push_async(samples).await?))
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
    Ok(Ended { events: lines(recording.events), segments: Segments::new(recording.segments, options) })
}

fn lines(events: Vec<SegmentEvent>) -> Vec<String> {
    events.iter().map(SegmentEvent::json_line).collect()
}
