//! Offline: one recording after the clips.

use std::ops::ControlFlow;

use nemotron_engine::{
    EngineError, EnrollmentError, ErrorKind, Input, SegmentFormat, SegmentSettings, write_named_segments,
};

use crate::{
    Case, ROW, audio, bits, concatenation, diar_tiny, diarize, engine, expected_names, nemo_settings, profile,
    release_chunks, with_speakers,
};

/// The whole contract on one profile and recording.
fn check(case: &Case, clips: &[(&str, &[f32])], recording: &[f32]) {
    let profile = profile(clips);
    let got = case.with_speakers(recording, &profile).expect("diarized with speakers");
    let (samples, spans) = concatenation(&profile, recording);
    let offset = samples.len() - recording.len();
    let p = case.diarize(samples);
    let s = p.speakers();
    let (frame, row) = (offset / 160, offset / ROW);
    assert!(!got.logits().is_empty());
    assert_eq!(bits(got.logits()), bits(&p.logits()[frame * s..]), "logits");
    assert_eq!(bits(got.probabilities()), bits(&p.probabilities()[row * s..]), "probabilities");
    let alone = case.diarize(recording.to_vec());
    assert_eq!(got.frames(), alone.frames(), "valid frames are the recording's");
    assert_eq!((got.speakers(), got.subsampling()), (alone.speakers(), alone.subsampling()));
    let nemo = nemo_settings();
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
    check(&diar_tiny(), &[("alice", &clip)], &audio(3.0, 4.0));
}

#[test]
fn two_speakers_are_the_concatenation_restricted_to_the_recording() {
    for case in [diar_tiny(), release_chunks()] {
        let [first, second] = case.two_clips();
        assert_ne!(second.len() % ROW, 0);
        check(&case, &[("alice", &first), ("bob", &second)], &case.audio(2.0, 6.0));
    }
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
    let error = engine()
        .diarize_with_speakers(features, &profile(&[("alice", &clip)]), &mut |_, _, _| ControlFlow::Continue(()))
        .err();
    assert_eq!(error.expect("refused").kind(), ErrorKind::Usage);
}

#[test]
fn enroll_gives_the_profile_and_each_names_slot_in_a_run_of_the_clips_then_silence() {
    let (first, second) = (audio(0.0, 1.23), audio(3.0, 1.99));
    let clips = vec![("alice".to_string(), first.clone()), ("bob".to_string(), second.clone())];
    let (enrolled, slots) = engine().enroll(clips).expect("enrolled");
    assert_eq!(enrolled, profile(&[("alice", &first), ("bob", &second)]));
    let silence = with_speakers(&vec![0.0; 16_000], &enrolled).expect("named");
    for (name, slot) in enrolled.names().zip(&slots) {
        assert_eq!(silence.names()[*slot].as_deref(), Some(name));
    }
    let error = engine().enroll(vec![("a b".to_string(), first)]).expect_err("a name with whitespace");
    assert_eq!(error.kind(), ErrorKind::Usage, "{error}");
}
