//! `Engine::diarize_many`, the continuous batch every front end's list of recordings runs through: a finished
//! recording's place is taken at once by the next entry, so a long recording holds no short one back (each is
//! reported as it ends); each result is its input's alone; an entry that cannot be read is reported and the others go
//! on; `done` can stop the run.

mod common;

use common::testdata;

use std::ops::ControlFlow;
use std::path::PathBuf;

use nemotron_engine::{AudioOptions, BatchLimits, Diarized, Engine, EngineError, ErrorKind, Input};

/// A diarizer of 1.92 s chunks, on which the case's 9.1 s recording takes five steps.
fn engine() -> &'static Engine {
    common::diar_tiny()
}

/// The whole recording (`None`), or half a second of it from `offset` seconds (one step).
fn read(offset: Option<f64>) -> Result<Input, EngineError> {
    let options = match offset {
        None => AudioOptions::default(),
        Some(offset) => AudioOptions { offset, duration: Some(0.5), ..AudioOptions::default() },
    };
    Input::read_path(&testdata("reference/diar-tiny/audio.wav"), &options)
}

fn bits(values: &[f32]) -> Vec<u32> {
    values.iter().map(|v| v.to_bits()).collect()
}

fn assert_alone(got: &Diarized, offset: Option<f64>) {
    let alone =
        engine().diarize(read(offset).unwrap(), &mut |_, _, _| ControlFlow::Continue(())).expect("diarized alone");
    assert!(!alone.logits().is_empty(), "{offset:?}: no logits");
    assert_eq!(bits(got.logits()), bits(alone.logits()), "{offset:?}: logits");
    assert_eq!(bits(got.probabilities()), bits(alone.probabilities()), "{offset:?}: probabilities");
}

/// Two places, a long recording first and three short ones after it: each short one takes the place the one before
/// it left and is reported as it ends, while the long one runs on.
#[test]
fn a_long_recording_holds_no_short_one_back() {
    let entries = [None, Some(0.5), Some(2.5), Some(5.0)];
    let limits = BatchLimits { max_recordings: 2, max_rows: None };
    let mut reported = Vec::new();
    let reading = |offset| read(offset).map(|input| (input, offset));
    engine()
        .diarize_many(entries, reading, &limits, None, &mut |position, result| {
            let (diarized, offset) = result.unwrap_or_else(|e| panic!("entry {position}: {e}"));
            assert_eq!(offset, entries[position], "what `read` kept comes back with its entry");
            reported.push((position, diarized));
            ControlFlow::Continue(())
        })
        .expect("without a profile, nothing is refused");
    let order: Vec<usize> = reported.iter().map(|(position, _)| *position).collect();
    assert_eq!(order, [1, 2, 3, 0], "the short recordings as they end, the long one last");
    for (position, diarized) in &reported {
        assert_alone(diarized, entries[*position]);
    }
}

#[test]
fn an_entry_that_cannot_be_read_is_reported_and_the_others_run() {
    let entries = [testdata("reference/diar-tiny/audio.wav"), testdata("missing.wav"), testdata("audio/signal.mp3")];
    let reading = |path: &PathBuf| Input::read_path(path, &AudioOptions::default()).map(|input| (input, ()));
    let mut results: Vec<Option<Result<Diarized, EngineError>>> = entries.iter().map(|_| None).collect();
    engine()
        .diarize_many(&entries, reading, &BatchLimits::default(), None, &mut |position, result| {
            assert!(results[position].is_none(), "entry {position} reported twice");
            results[position] = Some(result.map(|(diarized, ())| diarized));
            ControlFlow::Continue(())
        })
        .expect("without a profile, nothing is refused");
    let error = results[1].as_ref().expect("reported").as_ref().err().expect("a missing file fails");
    assert_eq!(error.kind(), ErrorKind::NotFound, "{error}");
    assert_alone(results[0].as_ref().unwrap().as_ref().unwrap(), None);
    let short = results[2].as_ref().unwrap().as_ref().unwrap();
    let alone = engine().diarize(reading(&entries[2]).unwrap().0, &mut |_, _, _| ControlFlow::Continue(())).unwrap();
    assert_eq!(bits(short.logits()), bits(alone.logits()), "the MP3 beside a failed entry");
}

#[test]
fn done_stops_the_run() {
    let mut calls = 0;
    let reading = |offset| read(offset).map(|input| (input, ()));
    let entries = [None, Some(0.5), Some(2.5), Some(5.0)];
    engine()
        .diarize_many(entries, reading, &BatchLimits::default(), None, &mut |_, result| {
            assert!(result.is_ok());
            calls += 1;
            ControlFlow::Break(())
        })
        .expect("without a profile, nothing is refused");
    assert_eq!(calls, 1, "nothing is reported after a break");
}
