//! A device lost in a step that several recordings share (`ModelOptions::lose_device_at_step_of`, through wgpu's
//! own loss) is each recording's GPU failure, the kind a device lost under one recording alone is: the kind the CLI's
//! exit status, the server's status and Python's exception follow.

use std::ops::ControlFlow;
use std::path::PathBuf;

use nemotron_engine::{
    AudioOptions, BatchLimits, Diarized, Engine, EngineError, EngineOptions, ErrorKind, Input, ModelOptions,
    ModelSource, TowersError,
};

#[test]
fn a_device_lost_in_a_shared_step_is_a_gpu_failure_of_every_recording_in_it() {
    let model = ModelOptions { lose_device_at_step_of: Some(2), ..ModelOptions::default() };
    let options = EngineOptions { model, ..EngineOptions::default() };
    let engine = Engine::load(&ModelSource::Demo, &options, &mut |_, _, _| {}).expect("the demo model loads");
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../testdata/reference/tiny-release-chunks/audio.wav");
    let piece = |offset| AudioOptions { offset, duration: Some(5.0), ..AudioOptions::default() };
    let inputs: Vec<Input> = [0.0, 3.0].map(|offset| Input::read_path(&path, &piece(offset)).unwrap()).into();
    let mut results: Vec<Option<Result<Diarized, EngineError>>> = inputs.iter().map(|_| None).collect();
    let read = |input| Ok::<_, EngineError>((input, ()));
    engine
        .diarize_many(inputs.clone(), read, &BatchLimits::default(), None, &mut |i, result| {
            results[i] = Some(result.map(|(diarized, ())| diarized));
            ControlFlow::Continue(())
        })
        .expect("without a profile, nothing is refused");
    for (i, result) in results.iter().enumerate() {
        let Some(result) = result else { panic!("recording {i} was not reported") };
        let Err(error) = result else { panic!("recording {i} was diarized on a lost device") };
        assert!(matches!(error, EngineError::Towers(TowersError::BatchedStep(_))), "recording {i}: {error:?}");
        assert_eq!(error.kind(), ErrorKind::Gpu, "recording {i}: {error}");
    }
    // The device stays lost: a recording alone fails with the loss itself, of the same kind.
    let alone = engine
        .diarize(inputs[0].clone(), &mut |_, _, _| ControlFlow::Continue(()))
        .err()
        .expect("nothing runs on a lost device");
    assert!(matches!(alone, EngineError::Towers(TowersError::Gpu(_))), "{alone:?}");
    assert_eq!(alone.kind(), ErrorKind::Gpu, "{alone}");
}
