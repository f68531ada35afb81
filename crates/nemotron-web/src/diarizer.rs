//! What the JS API does, in plain async Rust (the `bindings` module only converts values): a model loaded on a new
//! GPU context from named files or the demo, offline diarization with its segments as `diarize --format` text, and
//! live sessions whose events are `diarize --stream`'s lines. Native tests run these same functions.

use nemotron_postprocess::diarization::{LiveSegments, SegmentEvent};
use nemotron_towers::{Diarization, DiarizerSession, Gpu, GpuOptions, Model, ModelOptions};

use crate::error::WebError;
use crate::files::{NamedFile, model_files};
use crate::options::{DiarizeOptions, StreamOptions};

/// A model on its GPU context.
pub struct Loaded {
    // Declared before the GPU context: dropped first.
    model: Model,
    gpu: Gpu,
    description: String,
}

/// A GPU context on the adapter's own limits (`Gpu::with_options` asks for them, not WebGPU's defaults).
async fn open_gpu() -> Result<Gpu, WebError> {
    let options = GpuOptions { label: "nemotron-web".into(), ..GpuOptions::default() };
    Ok(Gpu::with_options(&options).await.map_err(nemotron_towers::Error::from)?)
}

impl Loaded {
    /// The checkpoint of `files` (see [`crate::files`]), its tensors uploaded one by one; the files' bytes are
    /// dropped once the model is on the GPU.
    pub async fn load(files: Vec<NamedFile>) -> Result<Self, WebError> {
        let (config, checkpoint) = model_files(files)?;
        let description = match &config {
            nemotron_towers::ModelConfig::Transcribe(_) => "Nemotron 3.5 Transcribe checkpoint (its diarizer)",
            nemotron_towers::ModelConfig::Diarization(_) => "Nemotron 3 Diarization checkpoint",
        };
        let gpu = open_gpu().await?;
        let model = Model::from_checkpoint(&gpu, config, &checkpoint, &ModelOptions::default()).await?;
        Ok(Self { model, gpu, description: description.into() })
    }

    /// The built-in demo model (random weights: its outputs are meaningless).
    pub async fn demo() -> Result<Self, WebError> {
        let (config, checkpoint) = nemotron_towers::demo::model()?;
        let gpu = open_gpu().await?;
        let model = Model::from_checkpoint(&gpu, config, &checkpoint, &ModelOptions::default()).await?;
        Ok(Self { model, gpu, description: nemotron_towers::demo::LABEL.into() })
    }

    /// What was loaded.
    pub fn description(&self) -> &str {
        &self.description
    }

    /// The GPU context.
    pub fn gpu(&self) -> &Gpu {
        &self.gpu
    }

    /// Speaker slots of the diarizer.
    pub fn speakers(&self) -> usize {
        self.model.diarizer().config().speakers
    }

    /// The diarizer on 16 kHz mono samples: speaker logits at 10 ms and probabilities at the encoder rate.
    pub async fn diarize(&self, samples: &[f32]) -> Result<Diarization, WebError> {
        Ok(self.model.diarizer().diarize_audio(samples, &mut |_, _, _| {}).await?)
    }

    /// The segments of `diarization` as `diarize --segments - --format` writes them, by the rule `options` ask for.
    pub fn segments(&self, diarization: &Diarization, options: &DiarizeOptions) -> String {
        let c = self.model.diarizer().config();
        let (logits, probabilities) = (&diarization.speaker_logits, &diarization.speaker_probabilities);
        let valid = diarization.features.valid;
        let segments = options.rule.segments(logits, probabilities, c.speakers, valid, c.encoder.subsampling);
        options.format.write(&options.uri, &segments)
    }

    /// A live session of the mode and rule `options` ask for.
    pub fn stream(&self, options: StreamOptions) -> Result<Live, WebError> {
        let diarizer = self.model.diarizer();
        let c = diarizer.config();
        let events = LiveSegments::new(options.rule, c.speakers, c.encoder.subsampling)?;
        Ok(Live { session: diarizer.session(options.mode)?, events })
    }
}

/// A live session: audio in pieces of any size, `diarize --stream`'s event lines as soon as they are final.
pub struct Live {
    session: DiarizerSession,
    events: LiveSegments,
}

impl Live {
    /// Feeds 16 kHz mono samples; the events they made final.
    pub async fn push(&mut self, samples: &[f32]) -> Result<Vec<String>, WebError> {
        let output = self.session.push(samples).await?;
        Ok(lines(self.events.push(&output.speaker_logits, &output.speaker_probabilities)))
    }

    /// Ends the stream: the events of its last chunk, then those its end made final.
    pub async fn end(self) -> Result<Vec<String>, WebError> {
        let Live { session, mut events } = self;
        let output = session.finish().await?;
        let mut last = events.push(&output.speaker_logits, &output.speaker_probabilities);
        last.extend(events.finish());
        Ok(lines(last))
    }
}

fn lines(events: Vec<SegmentEvent>) -> Vec<String> {
    events.iter().map(SegmentEvent::json_line).collect()
}
