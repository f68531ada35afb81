//! In batches: each entry of `diarize_many` with a profile is what `diarize_with_speakers` gives it alone, names
//! included; a profile the diarizer cannot take is refused before any entry is read.

use std::ops::ControlFlow;

use nemotron_engine::{BatchLimits, Diarized, EngineError, EnrollmentError, Input};

use crate::{audio, bits, engine, profile, with_speakers};

#[test]
fn each_entry_is_its_run_alone() {
    let (first, second) = (audio(0.0, 1.5), audio(3.0, 1.99));
    let profile = profile(&[("alice", &first), ("bob", &second)]);
    let recordings = [audio(2.0, 6.0), audio(0.5, 0.7), audio(4.0, 3.1)];
    let limits = BatchLimits { max_recordings: 2, max_rows: None };
    let mut got: Vec<Option<Diarized>> = recordings.iter().map(|_| None).collect();
    let read = |samples: &Vec<f32>| Ok::<_, EngineError>((Input::Samples(samples.clone()), ()));
    engine()
        .diarize_many(&recordings, read, &limits, Some(&profile), &mut |position, result| {
            got[position] = Some(result.unwrap_or_else(|e| panic!("entry {position}: {e}")).0);
            ControlFlow::Continue(())
        })
        .expect("the profile is taken");
    for (position, recording) in recordings.iter().enumerate() {
        let got = got[position].as_ref().expect("reported");
        let alone = with_speakers(recording, &profile).expect("alone");
        assert!(!alone.logits().is_empty());
        assert_eq!(bits(got.logits()), bits(alone.logits()), "entry {position}: logits");
        assert_eq!(bits(got.probabilities()), bits(alone.probabilities()), "entry {position}: probabilities");
        assert_eq!(got.names(), alone.names(), "entry {position}: names");
        assert_eq!(got.names().iter().flatten().count(), 2, "entry {position}: both named");
    }
}

#[test]
fn a_profile_with_too_many_names_is_refused_before_any_entry() {
    let clip = audio(0.0, 1.0);
    let names: Vec<String> = (0..=engine().diarizer().config().speakers).map(|i| format!("s{i}")).collect();
    let clips: Vec<(&str, &[f32])> = names.iter().map(|n| (n.as_str(), clip.as_slice())).collect();
    let read = |_: ()| -> Result<(Input, ()), EngineError> { panic!("no entry is read") };
    let error = engine()
        .diarize_many([()], read, &BatchLimits::default(), Some(&profile(&clips)), &mut |_, _| {
            panic!("no entry is reported")
        })
        .expect_err("refused");
    assert!(matches!(error, EngineError::Enrollment(EnrollmentError::TooMany { .. })), "{error}");
}
