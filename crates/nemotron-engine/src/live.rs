//! Streaming diarization: a [`LiveSession`] takes audio in pieces of any size and gives segment events as soon as
//! the frames that decide them are final; at its end, the segments and the speaker tensors of the whole stream.

use nemotron_postprocess::diarization::Segment;
use nemotron_postprocess::diarization::segments::sort_segments;
use nemotron_postprocess::diarization::{LiveSegments, SegmentEvent, SegmentRule, SegmentSettings};
#[cfg(not(target_arch = "wasm32"))]
use nemotron_towers::blocking::Block;
use nemotron_towers::{DiarizerSession, StreamOutput, StreamingMode};

use crate::engine::Engine;
use crate::error::EngineError;
use crate::io::speakers::SpeakerProfile;
use crate::known_speakers::{EnrollmentError, Primer};
use crate::results::Diarized;

impl Engine {
    /// A live session in `mode`, its events made by the rule `settings` ask for (refused when they keep the most
    /// active speakers, which are known only at the end).
    pub fn stream(&self, mode: StreamingMode, settings: &SegmentSettings) -> Result<LiveSession, EngineError> {
        self.stream_by(mode, settings.live_rule()?)
    }

    /// A live session in `mode` whose events `rule` makes (a rule of [`SegmentSettings::live_rule`]: one that keeps
    /// the most active speakers is refused).
    pub fn stream_by(&self, mode: StreamingMode, rule: SegmentRule) -> Result<LiveSession, EngineError> {
        let diarizer = self.diarizer();
        let config = diarizer.config();
        let events = LiveSegments::new(rule, config.speakers, config.encoder.subsampling)?;
        Ok(LiveSession {
            session: diarizer.session(mode)?,
            kept: Kept {
                events,
                primer: None,
                names: Vec::new(),
                logits: Vec::new(),
                probabilities: Vec::new(),
                segments: Vec::new(),
            },
            speakers: config.speakers,
            subsampling: config.encoder.subsampling,
            primed_samples: 0,
        })
    }

    /// [`Engine::stream`] with the speakers of `profile` named: the session is pushed the enrolled clips (each
    /// followed by zeros up to a whole encoder frame) before the recording, and gives the recording's part of that
    /// one stream — its events, times from the recording's start, with each enrolled slot's name
    /// ([`LiveSession::names`], known once the clips' last frames are final: before the recording's first event).
    /// To start many sessions with one profile, prime one and [`LiveSession::fork`] it.
    #[cfg(not(target_arch = "wasm32"))]
    pub fn stream_with_speakers(
        &self,
        mode: StreamingMode,
        settings: &SegmentSettings,
        profile: &SpeakerProfile,
    ) -> Result<LiveSession, EngineError> {
        self.stream_with_speakers_async(mode, settings, profile).block()
    }

    /// [`Engine::stream_with_speakers`] as a future.
    pub async fn stream_with_speakers_async(
        &self,
        mode: StreamingMode,
        settings: &SegmentSettings,
        profile: &SpeakerProfile,
    ) -> Result<LiveSession, EngineError> {
        let mut live = self.stream(mode, settings)?;
        let primer = self.primer(profile)?;
        live.primed_samples = primer.samples().len();
        let output = live.session.push(primer.samples()).await?;
        let (frames_left, primer) = (primer.frames(), std::sync::Arc::new(primer));
        live.kept.primer = Some(LivePrimer { primer, frames_left, probabilities: Vec::new() });
        live.kept.take(output)?;
        Ok(live)
    }
}

/// The enrolled clips' part of a primed session's outputs, until their last frame is final.
#[derive(Clone)]
struct LivePrimer {
    primer: std::sync::Arc<Primer>,
    /// The clips' 10 ms frames not given yet.
    frames_left: usize,
    /// The clips' probabilities so far.
    probabilities: Vec<f32>,
}

/// A streaming diarization session and the segment events of its outputs. It holds a handle of the engine's
/// diarizer and borrows nothing: it can outlive the [`Engine`] that started it, and be kept anywhere.
pub struct LiveSession {
    session: DiarizerSession,
    kept: Kept,
    speakers: usize,
    subsampling: usize,
    /// Samples of the enrolled clips pushed before the recording (0 without known speakers).
    primed_samples: usize,
}

/// What the session's outputs gave so far: the recording's, the enrolled clips' kept apart.
#[derive(Clone)]
struct Kept {
    events: LiveSegments,
    primer: Option<LivePrimer>,
    /// Each slot's enrolled name, once the clips' frames are final (empty before, and without known speakers).
    names: Vec<Option<String>>,
    logits: Vec<f32>,
    probabilities: Vec<f32>,
    /// The segments the end events closed.
    segments: Vec<Segment>,
}

impl Kept {
    /// The events of one output of the session; its tensors and closed segments kept. The enrolled clips' frames
    /// come first: they name the slots and make no event. A naming that fails fails every later output too.
    fn take(&mut self, output: StreamOutput) -> Result<Vec<SegmentEvent>, EnrollmentError> {
        let StreamOutput { speaker_logits: mut logits, speaker_probabilities: mut probabilities, .. } = output;
        if let Some(primed) = &mut self.primer {
            let speakers = primed.primer.slots().max(1);
            let frames = logits.len() / speakers;
            let taken = primed.frames_left.min(frames);
            // The clips end on a whole encoder row, so their rows split off whole unless the stream ends in them.
            let rows = match taken == frames {
                true => probabilities.len() / speakers,
                false => taken / primed.primer.subsampling(),
            };
            logits.drain(..taken * speakers);
            primed.probabilities.extend(probabilities.drain(..rows * speakers));
            primed.frames_left -= taken;
            if primed.frames_left == 0 {
                self.names = primed.primer.names(&primed.probabilities)?;
                self.primer = None;
            }
        }
        let events = self.events.push(&logits, &probabilities);
        self.logits.extend(logits);
        self.probabilities.extend(probabilities);
        self.segments.extend(events.iter().filter_map(SegmentEvent::segment));
        Ok(events)
    }
}

/// The end of a stream: the last events, and what the whole stream gave.
pub struct LiveRecording {
    /// The events the end of the stream made final.
    pub events: Vec<SegmentEvent>,
    /// Every segment of the stream, ordered by start then speaker.
    pub segments: Vec<Segment>,
    /// The speaker logits and probabilities of the whole stream.
    pub diarized: Diarized,
}

impl LiveSession {
    /// Feeds 16 kHz mono samples (any number); the events they made final.
    #[cfg(not(target_arch = "wasm32"))]
    pub fn push(&mut self, samples: &[f32]) -> Result<Vec<SegmentEvent>, EngineError> {
        self.push_async(samples).block()
    }

    /// [`LiveSession::push`] as a future (what a browser awaits).
    pub async fn push_async(&mut self, samples: &[f32]) -> Result<Vec<SegmentEvent>, EngineError> {
        let output = self.session.push(samples).await?;
        Ok(self.kept.take(output)?)
    }

    /// Feeds several sessions at once, as [`LiveSession::push`] feeds one: the chunks due in more than one of them
    /// run as one batched GPU step (see [`nemotron_towers::streaming::push_many`]: each session's frames equal its
    /// solo run's within float rounding, ≤ 1e-6 relative). One result per entry, in order.
    #[cfg(not(target_arch = "wasm32"))]
    pub fn push_many(pushes: &mut [(&mut LiveSession, &[f32])]) -> Vec<Result<Vec<SegmentEvent>, EngineError>> {
        Self::push_many_async(pushes).block()
    }

    /// [`LiveSession::push_many`] as a future.
    pub async fn push_many_async(
        pushes: &mut [(&mut LiveSession, &[f32])],
    ) -> Vec<Result<Vec<SegmentEvent>, EngineError>> {
        let outputs = {
            let mut sessions: Vec<(&mut DiarizerSession, &[f32])> =
                pushes.iter_mut().map(|(live, samples)| (&mut live.session, *samples)).collect();
            nemotron_towers::streaming::push_many(&mut sessions).await
        };
        pushes.iter_mut().zip(outputs).map(|((live, _), output)| Ok(live.kept.take(output?)?)).collect()
    }

    /// Ends the stream: the last events, and every segment of the stream ordered by start then speaker.
    #[cfg(not(target_arch = "wasm32"))]
    pub fn finish(self) -> Result<(Vec<SegmentEvent>, Vec<Segment>), EngineError> {
        let LiveRecording { events, segments, .. } = self.finish_recording()?;
        Ok((events, segments))
    }

    /// Ends the stream, keeping its speaker tensors too (what `diarize --stream --out` writes).
    #[cfg(not(target_arch = "wasm32"))]
    pub fn finish_recording(self) -> Result<LiveRecording, EngineError> {
        self.finish_recording_async().block()
    }

    /// [`LiveSession::finish_recording`] as a future (what a browser awaits).
    pub async fn finish_recording_async(self) -> Result<LiveRecording, EngineError> {
        let LiveSession { session, mut kept, speakers, subsampling, .. } = self;
        let mut events = kept.take(session.finish().await?)?;
        let last = kept.events.finish();
        kept.segments.extend(last.iter().filter_map(SegmentEvent::segment));
        events.extend(last);
        sort_segments(&mut kept.segments);
        let frames = kept.logits.len() / speakers.max(1);
        let diarized =
            Diarized::new(kept.logits, kept.probabilities, frames, speakers, subsampling).with_names(kept.names);
        Ok(LiveRecording { events, segments: kept.segments, diarized })
    }

    /// A copy of the session that continues independently from here (its own rows on the GPU, copied there): one
    /// session primed with a profile, forked for each stream, starts each without running the clips again.
    pub fn fork(&self) -> Result<LiveSession, EngineError> {
        Ok(LiveSession { session: self.session.fork()?, kept: self.kept.clone(), ..*self })
    }

    /// Each slot's enrolled name (`None` for the others): empty without known speakers, and until the enrolled
    /// clips' last frames are final (before the recording's first event). Events print with them through
    /// [`SegmentEvent::json_line_named`].
    pub fn names(&self) -> &[Option<String>] {
        &self.kept.names
    }

    /// Seconds of the recording received (the enrolled clips not counted).
    pub fn processed_seconds(&self) -> f64 {
        let received = self.session.samples_received() - self.primed_samples;
        received as f64 / f64::from(nemotron_postprocess::time::SAMPLE_RATE)
    }

    /// The session's streaming mode.
    pub fn mode(&self) -> StreamingMode {
        self.session.mode()
    }

    /// Speaker slots: the columns of [`LiveSession::logits`] and [`LiveSession::probabilities`].
    pub fn speakers(&self) -> usize {
        self.speakers
    }

    /// `[frames, speakers]` speaker logits at 10 ms so far.
    pub fn logits(&self) -> &[f32] {
        &self.kept.logits
    }

    /// `[rows, speakers]` speaker probabilities at the encoder rate so far.
    pub fn probabilities(&self) -> &[f32] {
        &self.kept.probabilities
    }
}

/// One event as `diarize --stream` prints it ([`SegmentEvent::json_line`]).
pub fn event_json_line(event: &SegmentEvent) -> String {
    event.json_line()
}
