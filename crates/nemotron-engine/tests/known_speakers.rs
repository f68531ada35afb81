//! Known speakers, offline, held to their definition: enrolling clips A1 … An and diarizing X gives the diarization
//! of P = A1′ ++ … ++ An′ ++ X (each clip followed by zeros up to a whole 80 ms encoder frame) from X's first frame
//! on, bit for bit; the segments are the segment rule on those outputs; each name goes to the slot above 0.5 on most
//! frames of its clip's span in P, and each way naming can fail is an error.

mod common;

use common::testdata;

use nemotron_engine::{
    AudioOptions, Diarized, Engine, EngineError, EnrollmentError, ErrorKind, Input, SegmentFormat, SegmentSettings,
    SpeakerProfile, write_named_segments,
};

/// Samples per encoder frame: 160 per 10 ms mel frame, 8 mel frames per encoder frame.
const ROW: usize = 1280;

fn engine() -> &'static Engine {
    common::diar_tiny()
}

/// `duration` seconds of the case's recording from `offset` seconds.
fn audio(offset: f64, duration: f64) -> Vec<f32> {
    let options = AudioOptions { offset, duration: Some(duration), ..AudioOptions::default() };
    match Input::read_path(&testdata("reference/diar-tiny/audio.wav"), &options).expect("audio.wav") {
        Input::Samples(samples) => samples,
        Input::Features(_) => unreachable!("audio decodes to samples"),
    }
}

fn profile(clips: &[(&str, &[f32])]) -> SpeakerProfile {
    SpeakerProfile::new(clips.iter().map(|(name, clip)| (name.to_string(), clip.to_vec())).collect()).expect("profile")
}

fn bits(values: &[f32]) -> Vec<u32> {
    values.iter().map(|v| v.to_bits()).collect()
}

fn diarize(samples: Vec<f32>) -> Diarized {
    engine().diarize(Input::Samples(samples), &mut |_, _, _| {}).expect("diarized")
}

fn with_speakers(recording: &[f32], profile: &SpeakerProfile) -> Result<Diarized, EngineError> {
    engine().diarize_with_speakers(Input::Samples(recording.to_vec()), profile, &mut |_, _, _| {})
}

/// P, and each clip's span of encoder rows in it.
fn concatenation(profile: &SpeakerProfile, recording: &[f32]) -> (Vec<f32>, Vec<std::ops::Range<usize>>) {
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
fn expected_names(p: &Diarized, spans: &[std::ops::Range<usize>], names: &[&str]) -> Vec<Option<String>> {
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

/// The whole contract on one profile and recording.
fn check(clips: &[(&str, &[f32])], recording: &[f32]) {
    let profile = profile(clips);
    let got = with_speakers(recording, &profile).expect("diarized with speakers");
    let (samples, spans) = concatenation(&profile, recording);
    let offset = samples.len() - recording.len();
    let p = diarize(samples);
    let s = p.speakers();
    let (frame, row) = (offset / 160, offset / ROW);
    assert!(!got.logits().is_empty());
    assert_eq!(bits(got.logits()), bits(&p.logits()[frame * s..]), "logits");
    assert_eq!(bits(got.probabilities()), bits(&p.probabilities()[row * s..]), "probabilities");
    let alone = diarize(recording.to_vec());
    assert_eq!(got.frames(), alone.frames(), "valid frames are the recording's");
    assert_eq!((got.speakers(), got.subsampling()), (alone.speakers(), alone.subsampling()));
    let nemo = SegmentSettings {
        onset: Some(0.6),
        offset: Some(0.4),
        pad_onset: Some(0.05),
        min_duration_on: Some(0.1),
        min_duration_off: Some(0.2),
        ..SegmentSettings::default()
    };
    for settings in [SegmentSettings::default(), nemo] {
        let rule = settings.segmenter().expect("settings");
        let expected = rule.segments(&p.logits()[frame * s..], &p.probabilities()[row * s..], s, got.frames(), 8);
        assert_eq!(got.segments(&settings).expect("segments"), expected, "{settings:?}");
    }
    let names: Vec<&str> = clips.iter().map(|(name, _)| *name).collect();
    assert_eq!(got.names(), expected_names(&p, &spans, &names), "slot names");
    assert_eq!(got.names().iter().flatten().count(), clips.len());
    let rttm = write_named_segments(
        &got.segments(&SegmentSettings::default()).unwrap(),
        SegmentFormat::Rttm,
        "x",
        got.names(),
    );
    for (slot, name) in got.names().iter().enumerate() {
        let field = name.clone().unwrap_or_else(|| format!("spk{slot}"));
        let spoken = got.probabilities().chunks_exact(got.speakers()).any(|row| row[slot] > 0.5);
        assert_eq!(rttm.contains(&format!(" {field} ")), spoken, "{field} in\n{rttm}");
    }
}

#[test]
fn one_speaker_is_the_concatenation_restricted_to_the_recording() {
    // 1.23 s: 19,680 samples, not a multiple of 1,280 (zeros follow it up to 20,480).
    let clip = audio(0.0, 1.23);
    assert_ne!(clip.len() % ROW, 0);
    check(&[("alice", &clip)], &audio(3.0, 4.0));
}

#[test]
fn two_speakers_are_the_concatenation_restricted_to_the_recording() {
    // On this random-weight model, the second clip speaks most in a slot other than the first's (slot 0).
    let (first, second) = (audio(0.0, 1.5), audio(3.0, 1.99));
    assert_ne!(second.len() % ROW, 0);
    check(&[("alice", &first), ("bob", &second)], &audio(2.0, 6.0));
}

#[test]
fn a_recording_without_enrolled_speakers_has_no_names() {
    let plain = diarize(audio(3.0, 2.0));
    assert!(plain.names().is_empty());
}

#[test]
fn more_names_than_slots_is_a_usage_error() {
    let clip = audio(0.0, 1.0);
    let names: Vec<String> = (0..=engine().diarizer().config().speakers).map(|i| format!("s{i}")).collect();
    let clips: Vec<(&str, &[f32])> = names.iter().map(|n| (n.as_str(), clip.as_slice())).collect();
    let error = with_speakers(&audio(3.0, 1.0), &profile(&clips)).err().expect("refused");
    assert!(matches!(error, EngineError::Enrollment(EnrollmentError::TooMany { names: 9, slots: 8 })), "{error}");
    assert_eq!(error.kind(), ErrorKind::Usage);
}

#[test]
fn one_voice_enrolled_twice_takes_one_slot() {
    let clip = audio(0.0, 1.5);
    let error = with_speakers(&audio(3.0, 1.0), &profile(&[("alice", &clip), ("alicia", &clip)])).err();
    let error = error.expect("refused");
    let EngineError::Enrollment(EnrollmentError::SlotTaken { slot, first, second }) = &error else {
        panic!("{error}");
    };
    assert_eq!((first.as_str(), second.as_str()), ("alice", "alicia"));
    assert!(error.to_string().contains(&format!("slot {slot}")), "{error}");
    assert_eq!(error.kind(), ErrorKind::BadInput);
}

#[test]
fn features_are_refused() {
    let features = engine().diarizer_features(Input::Samples(audio(3.0, 1.0))).expect("features");
    let clip = audio(0.0, 1.0);
    let error = engine().diarize_with_speakers(features, &profile(&[("alice", &clip)]), &mut |_, _, _| {}).err();
    assert_eq!(error.expect("refused").kind(), ErrorKind::Usage);
}
