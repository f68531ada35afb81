//! A diarization cancelled through its progress callback (`ControlFlow::Break`): it stops at the step it was
//! cancelled at, with an error of kind `Cancelled` naming that step, frees what its steps held on the GPU, and the
//! engine diarizes the same recording again afterwards into the same bits.

mod common;

use std::ops::ControlFlow;

use common::testdata;
use nemotron_engine::{AudioOptions, Diarized, Engine, ErrorKind, Input};

fn recording() -> Input {
    Input::read_path(&testdata("reference/diar-tiny/audio.wav"), &AudioOptions::default()).expect("the recording")
}

fn bits(values: &[f32]) -> Vec<u32> {
    values.iter().map(|v| v.to_bits()).collect()
}

/// The whole recording diarized, and the (chunks done, chunks) its progress heard.
fn diarized(engine: &Engine) -> (Diarized, Vec<(usize, usize)>) {
    let mut reports = Vec::new();
    let diarized = engine
        .diarize(recording(), &mut |stage, done, all| {
            assert_eq!(stage, "diarization");
            reports.push((done, all));
            ControlFlow::Continue(())
        })
        .expect("diarized");
    (diarized, reports)
}

#[test]
fn a_cancelled_diarization_stops_at_its_step_and_the_engine_diarizes_again() {
    let engine = common::diar_tiny();
    let (first, reports) = diarized(engine);
    let chunks = reports.last().expect("a report").1;
    assert!(chunks > 2, "diar-tiny's recording takes {chunks} steps: too few to cancel in the middle");
    let every: Vec<(usize, usize)> = (0..=chunks).map(|done| (done, chunks)).collect();
    assert_eq!(reports, every, "one report before the first step, then one after each");
    // What the engine holds between tasks: a task's workspaces are freed when it ends.
    let idle = engine.gpu().memory_in_use();

    // Before the first step, and in the middle.
    for cancel_at in [0, 2] {
        let mut heard = Vec::new();
        let result = engine.diarize(recording(), &mut |_, done, all| {
            heard.push((done, all));
            if done == cancel_at { ControlFlow::Break(()) } else { ControlFlow::Continue(()) }
        });
        let Err(error) = result else { panic!("cancelled at {cancel_at}, the diarization ran to its end") };
        assert_eq!(error.kind(), ErrorKind::Cancelled, "{error}");
        assert_eq!(error.to_string(), format!("cancelled: diarization stopped after step {cancel_at} of {chunks}"));
        assert_eq!(heard, every[..=cancel_at], "no step after the one the run was cancelled at");
        assert_eq!(engine.gpu().memory_in_use(), idle, "cancelled at {cancel_at}: the run's workspaces are freed");
    }

    let (again, _) = diarized(engine);
    assert_eq!(bits(again.logits()), bits(first.logits()), "logits after a cancelled run");
    assert_eq!(bits(again.probabilities()), bits(first.probabilities()), "probabilities after a cancelled run");
}
