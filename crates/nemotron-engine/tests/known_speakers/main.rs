//! Known speakers held to their definition: enrolling clips A1 … An and diarizing X gives the diarization of
//! P = A1′ ++ … ++ An′ ++ X (each clip followed by zeros up to a whole 80 ms encoder frame) from X's first frame on,
//! bit for bit — offline, in batches, and live in every streaming mode; the segments and events are the segment
//! rule's on those outputs; each name goes to the slot above 0.5 on most frames of its clip's span in P as run in the
//! mode at hand, and each way naming can fail is an error.

mod batch;
#[path = "../common/mod.rs"]
mod common;
mod live;
mod offline;

use common::testdata;

use std::ops::ControlFlow;
use std::path::PathBuf;
use std::sync::OnceLock;

use nemotron_engine::{
    AudioOptions, Diarized, Engine, EngineError, EngineOptions, Input, ModelSource, SegmentSettings, SpeakerProfile,
};

/// Samples per encoder frame: 160 per 10 ms mel frame, 8 mel frames per encoder frame.
pub const ROW: usize = 1280;

/// A checkpoint whose diarizer the tests run, its recording, and two stretches of it (offset, seconds) that its
/// random weights hear in two different slots offline and in every latency mode.
pub struct Case {
    pub engine: &'static Engine,
    pub recording: PathBuf,
    pub clips: [(f64, f64); 2],
}

/// The standalone diarizer case (1.92 s chunks; 24 cache rows and 10 FIFO rows).
pub fn diar_tiny() -> Case {
    Case {
        engine: common::diar_tiny(),
        recording: testdata("reference/diar-tiny/audio.wav"),
        clips: [(0.0, 1.23), (3.0, 1.99)],
    }
}

/// A Transcribe checkpoint's diarizer (the release model's streaming sizes: 188 cache rows, 264 FIFO rows).
pub fn release_chunks() -> Case {
    static ENGINE: OnceLock<Engine> = OnceLock::new();
    let folder = testdata("reference/tiny-release-chunks");
    let engine = ENGINE.get_or_init(|| {
        let source = ModelSource::from_path(&folder).expect("tiny-release-chunks");
        Engine::load(&source, &EngineOptions::default(), &mut |_, _, _| {}).expect("tiny-release-chunks loads")
    });
    Case { engine, recording: folder.join("audio.wav"), clips: [(2.0, 1.2), (7.0, 1.5)] }
}

impl Case {
    /// `duration` seconds of the case's recording from `offset` seconds.
    pub fn audio(&self, offset: f64, duration: f64) -> Vec<f32> {
        let options = AudioOptions { offset, duration: Some(duration), ..AudioOptions::default() };
        match Input::read_path(&self.recording, &options).expect("the case's audio") {
            Input::Samples(samples) => samples,
            Input::Features(_) => unreachable!("audio decodes to samples"),
        }
    }

    /// The two clips of [`Case::clips`].
    pub fn two_clips(&self) -> [Vec<f32>; 2] {
        self.clips.map(|(offset, duration)| self.audio(offset, duration))
    }

    pub fn diarize(&self, samples: Vec<f32>) -> Diarized {
        self.engine.diarize(Input::Samples(samples), &mut |_, _, _| ControlFlow::Continue(())).expect("diarized")
    }

    pub fn with_speakers(&self, recording: &[f32], profile: &SpeakerProfile) -> Result<Diarized, EngineError> {
        self.engine.diarize_with_speakers(Input::Samples(recording.to_vec()), profile, &mut |_, _, _| {
            ControlFlow::Continue(())
        })
    }
}

pub fn engine() -> &'static Engine {
    common::diar_tiny()
}

/// `duration` seconds of diar-tiny's recording from `offset` seconds.
pub fn audio(offset: f64, duration: f64) -> Vec<f32> {
    diar_tiny().audio(offset, duration)
}

/// NeMo's post-processing with every flag away from its default.
pub fn nemo_settings() -> SegmentSettings {
    SegmentSettings {
        onset: Some(0.6),
        offset: Some(0.4),
        pad_onset: Some(0.05),
        min_duration_on: Some(0.1),
        min_duration_off: Some(0.2),
        ..SegmentSettings::default()
    }
}

pub fn profile(clips: &[(&str, &[f32])]) -> SpeakerProfile {
    SpeakerProfile::new(clips.iter().map(|(name, clip)| (name.to_string(), clip.to_vec())).collect()).expect("profile")
}

pub fn bits(values: &[f32]) -> Vec<u32> {
    values.iter().map(|v| v.to_bits()).collect()
}

pub fn diarize(samples: Vec<f32>) -> Diarized {
    diar_tiny().diarize(samples)
}

pub fn with_speakers(recording: &[f32], profile: &SpeakerProfile) -> Result<Diarized, EngineError> {
    diar_tiny().with_speakers(recording, profile)
}

/// P, and each clip's span of encoder rows in it.
pub fn concatenation(profile: &SpeakerProfile, recording: &[f32]) -> (Vec<f32>, Vec<std::ops::Range<usize>>) {
    let (mut samples, mut spans) = (Vec::new(), Vec::new());
    for (_, clip) in profile.clips() {
        let start = samples.len();
        samples.extend_from_slice(clip);
        samples.resize(samples.len().div_ceil(ROW) * ROW, 0.0);
        spans.push(start / ROW..samples.len() / ROW);
    }
    samples.extend_from_slice(recording);
    (samples, spans)
}

/// The slot names the definition gives, computed from P's probabilities here rather than by the engine.
pub fn expected_names(p: &Diarized, spans: &[std::ops::Range<usize>], names: &[&str]) -> Vec<Option<String>> {
    let slots = p.speakers();
    let mut expected = vec![None; slots];
    for (span, name) in spans.iter().zip(names) {
        let counts: Vec<usize> = (0..slots)
            .map(|slot| span.clone().filter(|row| p.probabilities()[row * slots + slot] > 0.5).count())
            .collect();
        let best = *counts.iter().max().unwrap();
        assert!(best > 0, "{name}: the case needs speech in the clip");
        let slot = counts.iter().position(|&c| c == best).unwrap();
        assert!(expected[slot].is_none(), "the case needs each clip in a slot of its own");
        expected[slot] = Some(name.to_string());
    }
    expected
}
