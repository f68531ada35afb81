//! Live: a session with a profile behaves as one session pushed the clips before the recording's first sample; its
//! outputs, segments and events are that stream's from the recording's first frame on, in every streaming mode, and
//! a fork of a primed session gives the same.

use nemotron_engine::{
    EngineError, EnrollmentError, LiveRecording, LiveSession, SegmentEvent, SegmentSettings, SpeakerProfile,
    StreamingMode,
};
use nemotron_postprocess::diarization::LiveSegments;

use crate::{
    Case, ROW, audio, bits, concatenation, diar_tiny, engine, expected_names, nemo_settings, profile, release_chunks,
};

/// Pushes `samples` in pieces of `piece` samples and ends the stream: every event, and what the stream gave.
fn run(mut session: LiveSession, samples: &[f32], piece: usize) -> (Vec<SegmentEvent>, LiveRecording) {
    let mut events = Vec::new();
    for piece in samples.chunks(piece) {
        events.extend(session.push(piece).expect("pushed"));
    }
    let recording = session.finish_recording().expect("finished");
    events.extend(recording.events.iter().copied());
    (events, recording)
}

/// Events in a canonical order: several become final in one push, and the definition fixes which, not their order
/// within it.
fn sorted(mut events: Vec<SegmentEvent>) -> Vec<SegmentEvent> {
    events.sort_by_key(|e| (e.seconds().to_bits(), e.speaker(), e.segment().is_some()));
    events
}

/// The contract in `mode`: the primed session and a fork of it against a plain session over P.
fn check(case: &Case, mode: StreamingMode, settings: &SegmentSettings, clips: &[(&str, &[f32])], recording: &[f32]) {
    let profile: SpeakerProfile = profile(clips);
    let (samples, spans) = concatenation(&profile, recording);
    let offset = samples.len() - recording.len();
    let (_, p) = run(case.engine.stream(mode, settings).expect("session"), &samples, 4_000);
    let p = p.diarized;
    let s = p.speakers();
    let (frame, row) = (offset / 160, offset / ROW);
    let names: Vec<&str> = clips.iter().map(|(name, _)| *name).collect();
    let expected_names = expected_names(&p, &spans, &names);
    let (logits, probabilities) = (&p.logits()[frame * s..], &p.probabilities()[row * s..]);
    let mut live = LiveSegments::new(settings.live_rule().expect("live rule"), s, 8).expect("events");
    let mut expected_events = live.push(logits, probabilities);
    expected_events.extend(live.finish());
    let rule = settings.segmenter().expect("rule");
    let expected_segments = rule.segments(logits, probabilities, s, logits.len() / s, 8);
    assert!(!expected_events.is_empty(), "{mode:?}: the case makes no event, the comparison would be empty");

    let primed = case.engine.stream_with_speakers(mode, settings, &profile).expect("primed session");
    assert_eq!(primed.processed_seconds(), 0.0, "the clips are not the recording's");
    let fork = primed.fork().expect("forked");
    for (which, session, piece) in [("primed", primed, 1_600), ("fork", fork, 7_777)] {
        let (events, got) = run(session, recording, piece);
        let what = format!("{mode:?}, {which}");
        assert_eq!(bits(got.diarized.logits()), bits(logits), "{what}: logits");
        assert_eq!(bits(got.diarized.probabilities()), bits(probabilities), "{what}: probabilities");
        assert_eq!(got.diarized.names(), expected_names, "{what}: names");
        assert_eq!(sorted(events), sorted(expected_events.clone()), "{what}: events");
        assert_eq!(got.segments, expected_segments, "{what}: segments");
    }
}

#[test]
fn every_mode_gives_the_concatenations_stream_from_the_recording_on() {
    // diar-tiny's 1.23 s (19,680 samples) and 1.99 s: neither a multiple of 1,280; the first shorter than any mode's
    // chunk. The Transcribe checkpoint's 1.2 s (a multiple) and 1.5 s (not).
    for case in [diar_tiny(), release_chunks()] {
        let [first, second] = case.two_clips();
        assert!(first.len() % ROW != 0 || second.len() % ROW != 0, "a clip must need zeros after it");
        let recording = case.audio(2.0, 6.0);
        for mode in StreamingMode::NAMED {
            check(&case, mode, &SegmentSettings::default(), &[("alice", &first), ("bob", &second)], &recording);
        }
    }
}

#[test]
fn one_speaker_under_nemos_post_processing() {
    let nemo = nemo_settings();
    check(&diar_tiny(), StreamingMode::VeryLowLatency, &nemo, &[("alice", &audio(0.0, 1.23))], &audio(3.0, 5.0));
}

#[test]
fn clips_longer_than_the_speaker_cache() {
    // 4 s: 50 rows, more than the speaker cache and FIFO keep (34 on this checkpoint).
    let c = engine().diarizer().config().streaming_cache;
    let long = audio(0.0, 4.0);
    assert!(long.len() / ROW > c.cache_length + c.fifo_length, "the clip must overflow the cache");
    check(
        &diar_tiny(),
        StreamingMode::UltraLowLatency,
        &SegmentSettings::default(),
        &[("alice", &long)],
        &audio(3.0, 3.0),
    );
}

#[test]
fn a_naming_that_fails_in_one_mode_fails_that_stream() {
    // On the Transcribe checkpoint, these two clips take two slots offline but one slot at low latency.
    let case = release_chunks();
    let (first, second) = (case.audio(1.0, 1.3), case.audio(5.0, 1.7));
    let profile = profile(&[("alice", &first), ("bob", &second)]);
    assert!(case.with_speakers(&case.audio(2.0, 6.0), &profile).is_ok(), "offline names both");
    let settings = SegmentSettings::default();
    let stream = |mode| -> Result<(), EngineError> {
        let mut session = case.engine.stream_with_speakers(mode, &settings, &profile)?;
        session.push(&case.audio(2.0, 6.0))?;
        session.finish_recording().map(drop)
    };
    let error = stream(StreamingMode::LowLatency).expect_err("one slot for two clips");
    let EngineError::Enrollment(EnrollmentError::SlotTaken { first, second, .. }) = &error else { panic!("{error}") };
    assert_eq!((first.as_str(), second.as_str()), ("alice", "bob"));
    stream(StreamingMode::UltraLowLatency).expect("two slots at ultra-low latency");
}
