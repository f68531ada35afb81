//! A live session borrows nothing: it holds a handle of its engine's diarizer, so it can be kept anywhere (a Python
//! object, a server's scheduler, a browser's JS object) and goes on after the engine that started it is dropped,
//! giving what a session beside its engine gives.

use nemotron_engine::{Engine, EngineOptions, LiveSession, ModelSource, SegmentSettings, StreamingMode};

fn demo() -> Engine {
    Engine::load(&ModelSource::Demo, &EngineOptions::default(), &mut |_, _, _| {}).unwrap()
}

fn tone() -> Vec<f32> {
    (0..24_000).map(|i| 0.2 * (i as f32 * 0.01).sin() * (i as f32 * 0.0007).sin().signum()).collect()
}

/// Every event line and the segments' JSON of a stream of `samples` in pieces of 0.1 s.
fn run(mut session: LiveSession, samples: &[f32]) -> (Vec<String>, String) {
    let mut events = Vec::new();
    for piece in samples.chunks(1_600) {
        events.extend(session.push(piece).unwrap());
    }
    let recording = session.finish_recording().unwrap();
    events.extend(recording.events);
    let json = nemotron_engine::write_segments(&recording.segments, nemotron_engine::SegmentFormat::Json, "tone");
    (events.iter().map(nemotron_engine::event_json_line).collect(), json)
}

#[test]
fn a_session_outlives_the_engine_that_started_it() {
    let settings = SegmentSettings { threshold: Some(0.3), ..SegmentSettings::default() };
    let kept = demo();
    let beside = kept.stream(StreamingMode::UltraLowLatency, &settings).unwrap();
    let dropped = demo();
    let alone: LiveSession = dropped.stream(StreamingMode::UltraLowLatency, &settings).unwrap();
    drop(dropped);
    let samples = tone();
    let (expected, alone_run) = (run(beside, &samples), run(alone, &samples));
    assert!(!expected.0.is_empty(), "the stream made no event: the comparison would be empty");
    assert_eq!(alone_run, expected);
}
