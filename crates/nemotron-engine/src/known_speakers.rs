//! Known speakers, offline: the enrolled clips are diarized in front of the recording, each padded to a whole
//! encoder frame, so that the recording starts on one; each name goes to the slot its clip speaks in, and the
//! result is the recording's part of that one run. docs/diarization.md ("Known speakers") gives the definition.

use std::ops::ControlFlow;
use std::ops::Range;

use nemotron_postprocess::time::HOP_LENGTH;
use nemotron_towers::{DiarizationConfig, Progress};

use crate::engine::Engine;
use crate::error::EngineError;
use crate::input::Input;
use crate::io::speakers::SpeakerProfile;
use crate::results::Diarized;

/// A probability above this counts as the slot speaking in a frame.
const SPEAKING: f32 = 0.5;

/// Why the enrolled speakers cannot be named.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EnrollmentError {
    /// More names than the diarizer has slots.
    #[error("{names} speakers enrolled, but the diarizer has {slots} speaker slots")]
    TooMany {
        /// Names in the profile.
        names: usize,
        /// The diarizer's slots.
        slots: usize,
    },
    /// No slot's probability exceeds 0.5 on any frame of the clip.
    #[error("no speech found in {name}'s clip")]
    NoSpeech {
        /// The speaker.
        name: String,
    },
    /// Two clips speak most in one slot.
    #[error(
        "{second}'s clip speaks in slot {slot}, which {first}'s clip already took: enroll clips of different voices"
    )]
    SlotTaken {
        /// The slot.
        slot: usize,
        /// The speaker named first.
        first: String,
        /// The speaker whose clip landed in the taken slot.
        second: String,
    },
    /// A features file: the clips go in front of samples.
    #[error("known speakers need audio, not a features file")]
    Features,
}

impl Engine {
    /// Who spoke when in `input`, the speakers of `profile` named: the diarization of the enrolled clips (each
    /// followed by zeros up to a whole encoder frame) then `input`, restricted to `input`, and the name of each
    /// enrolled slot ([`Diarized::names`]).
    #[cfg(not(target_arch = "wasm32"))]
    pub fn diarize_with_speakers(
        &self,
        input: Input,
        profile: &SpeakerProfile,
        progress: Progress<'_>,
    ) -> Result<Diarized, EngineError> {
        use nemotron_towers::blocking::Block;
        self.diarize_with_speakers_async(input, profile, progress).block()
    }

    /// [`Engine::diarize_with_speakers`] as a future.
    pub async fn diarize_with_speakers_async(
        &self,
        input: Input,
        profile: &SpeakerProfile,
        progress: Progress<'_>,
    ) -> Result<Diarized, EngineError> {
        let primer = self.primer(profile)?;
        let whole = self.diarize_async(primer.before(input)?, progress).await?;
        Ok(primer.restrict(whole)?)
    }

    /// Enrolls named clips (name, 16 kHz mono samples; in the order the profile keeps them): the profile, once the
    /// clips are checked ([`SpeakerProfile::new`]'s rules) and each is found to speak in a slot of its own in an
    /// offline run of the clips then one second of silence; with each name's slot there, in enrollment order.
    #[cfg(not(target_arch = "wasm32"))]
    pub fn enroll(&self, clips: Vec<(String, Vec<f32>)>) -> Result<(SpeakerProfile, Vec<usize>), EngineError> {
        use nemotron_towers::blocking::Block;
        self.enroll_async(clips).block()
    }

    /// [`Engine::enroll`] as a future.
    pub async fn enroll_async(
        &self,
        clips: Vec<(String, Vec<f32>)>,
    ) -> Result<(SpeakerProfile, Vec<usize>), EngineError> {
        let profile = SpeakerProfile::new(clips)?;
        let silence = Input::Samples(vec![0.0; nemotron_postprocess::time::SAMPLE_RATE as usize]);
        let named =
            self.diarize_with_speakers_async(silence, &profile, &mut |_, _, _| ControlFlow::Continue(())).await?;
        let slots = profile
            .names()
            .map(|name| named.names().iter().position(|n| n.as_deref() == Some(name)).unwrap_or_default())
            .collect();
        Ok((profile, slots))
    }

    /// The clips of `profile` as they go in front of a recording on this engine's diarizer.
    pub(crate) fn primer(&self, profile: &SpeakerProfile) -> Result<Primer, EnrollmentError> {
        Primer::new(profile, self.diarizer().config())
    }
}

/// The enrolled clips, each followed by zeros up to a whole encoder frame, as they go in front of a recording, and
/// the encoder rows each clip spans.
pub(crate) struct Primer {
    samples: Vec<f32>,
    spans: Vec<(String, Range<usize>)>,
    slots: usize,
    subsampling: usize,
}

impl Primer {
    fn new(profile: &SpeakerProfile, c: &DiarizationConfig) -> Result<Self, EnrollmentError> {
        let (slots, subsampling) = (c.speakers, c.encoder.subsampling);
        if profile.len() > slots {
            return Err(EnrollmentError::TooMany { names: profile.len(), slots });
        }
        let row = HOP_LENGTH * subsampling;
        let mut samples = Vec::new();
        let mut spans = Vec::with_capacity(profile.len());
        for (name, clip) in profile.clips() {
            let start = samples.len();
            samples.extend_from_slice(clip);
            samples.resize(samples.len().next_multiple_of(row), 0.0);
            spans.push((name.clone(), start / row..samples.len() / row));
        }
        Ok(Self { samples, spans, slots, subsampling })
    }

    /// The samples that go in front of the recording.
    pub(crate) fn samples(&self) -> &[f32] {
        &self.samples
    }

    /// 10 ms frames of [`Primer::samples`]: the recording's first frame in the whole run.
    pub(crate) fn frames(&self) -> usize {
        self.samples.len() / HOP_LENGTH
    }

    /// The diarizer's speaker slots.
    pub(crate) fn slots(&self) -> usize {
        self.slots
    }

    /// 10 ms frames per encoder row.
    pub(crate) fn subsampling(&self) -> usize {
        self.subsampling
    }

    /// `input` after the clips.
    pub(crate) fn before(&self, input: Input) -> Result<Input, EnrollmentError> {
        let Input::Samples(recording) = input else {
            return Err(EnrollmentError::Features);
        };
        Ok(Input::Samples([self.samples.as_slice(), &recording].concat()))
    }

    /// Each slot's name, from the probabilities of the whole run's rows over the clips (at least).
    pub(crate) fn names(&self, probabilities: &[f32]) -> Result<Vec<Option<String>>, EnrollmentError> {
        slot_names(probabilities, self.slots, &self.spans)
    }

    /// The recording's part of the whole run, its enrolled slots named.
    pub(crate) fn restrict(&self, whole: Diarized) -> Result<Diarized, EnrollmentError> {
        let names = self.names(whole.probabilities())?;
        Ok(whole.after(self.frames(), names))
    }
}

/// Each slot's name: a clip's name goes to the slot above [`SPEAKING`] on most rows of its span (ties: the lower
/// slot).
fn slot_names(
    probabilities: &[f32],
    slots: usize,
    spans: &[(String, Range<usize>)],
) -> Result<Vec<Option<String>>, EnrollmentError> {
    let mut names: Vec<Option<String>> = vec![None; slots];
    for (name, rows) in spans {
        let mut counts = vec![0usize; slots];
        for row in probabilities[rows.start * slots..rows.end * slots].chunks_exact(slots) {
            for (count, p) in counts.iter_mut().zip(row) {
                *count += usize::from(*p > SPEAKING);
            }
        }
        // The first of the highest counts: `max_by_key` keeps the last, so the slots are searched from the top.
        let (slot, &count) = counts.iter().enumerate().rev().max_by_key(|(_, count)| **count).unwrap_or((0, &0));
        if count == 0 {
            return Err(EnrollmentError::NoSpeech { name: name.to_string() });
        }
        if let Some(first) = &names[slot] {
            return Err(EnrollmentError::SlotTaken { slot, first: first.clone(), second: name.to_string() });
        }
        names[slot] = Some(name.to_string());
    }
    Ok(names)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Three slots; rows of probabilities.
    fn names(rows: &[[f32; 3]], spans: &[(&str, Range<usize>)]) -> Result<Vec<Option<String>>, EnrollmentError> {
        let spans: Vec<(String, Range<usize>)> = spans.iter().map(|(n, r)| (n.to_string(), r.clone())).collect();
        slot_names(&rows.concat(), 3, &spans)
    }

    #[test]
    fn each_name_goes_to_the_slot_speaking_most_in_its_span() {
        let rows = [[0.9, 0.6, 0.0], [0.1, 0.6, 0.0], [0.0, 0.2, 0.7], [0.0, 0.0, 0.51], [0.6, 0.0, 0.5]];
        let got = names(&rows, &[("a", 0..2), ("b", 2..5)]).unwrap();
        assert_eq!(got, [None, Some("a".to_string()), Some("b".to_string())]);
    }

    #[test]
    fn a_tie_goes_to_the_lower_slot() {
        let rows = [[0.0, 0.9, 0.9], [0.0, 0.9, 0.9]];
        assert_eq!(names(&rows, &[("a", 0..2)]).unwrap(), [None, Some("a".to_string()), None]);
    }

    #[test]
    fn a_clip_without_a_frame_above_one_half_has_no_speech() {
        let rows = [[0.9, 0.0, 0.0], [0.5, 0.5, 0.5]];
        let error = names(&rows, &[("a", 0..1), ("quiet", 1..2)]).unwrap_err();
        assert_eq!(error.to_string(), "no speech found in quiet's clip");
    }

    #[test]
    fn two_clips_in_one_slot_are_refused_naming_both() {
        let rows = [[0.9, 0.0, 0.0], [0.9, 0.8, 0.0], [0.9, 0.0, 0.0]];
        let error = names(&rows, &[("a", 0..1), ("b", 1..3)]).unwrap_err();
        assert!(
            matches!(&error, EnrollmentError::SlotTaken { slot: 0, first, second } if first == "a" && second == "b")
        );
        assert!(error.to_string().contains("slot 0") && error.to_string().contains("a's"), "{error}");
    }
}
