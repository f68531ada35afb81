//! Live: a session with a profile behaves as one session pushed the clips before the recording's first sample; its
//! outputs, segments and events are that stream's from the recording's first frame on, in every streaming mode, and
//! a fork of a primed session gives the same.

use nemotron_engine::{LiveRecording, LiveSession, SegmentEvent, SegmentSettings, SpeakerProfile, StreamingMode};
use nemotron_postprocess::diarization::LiveSegments;

use crate::{ROW, audio, bits, concatenation, engine, expected_names, profile};

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
fn check(mode: StreamingMode, settings: &SegmentSettings, clips: &[(&str, &[f32])], recording: &[f32]) {
    let profile: SpeakerProfile = profile(clips);
    let (samples, spans) = concatenation(&profile, recording);
    let offset = samples.len() - recording.len();
    let (_, p) = run(engine().stream(mode, settings).expect("session"), &samples, 4_000);
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

    let primed = engine().stream_with_speakers(mode, settings, &profile).expect("primed session");
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
    // 1.23 s (19,680 samples) and 1.99 s: neither a multiple of 1,280; the first shorter than any mode's chunk.
    let (first, second) = (audio(0.0, 1.23), audio(3.0, 1.99));
    assert_ne!(first.len() % ROW, 0);
    for mode in StreamingMode::NAMED {
        check(mode, &SegmentSettings::default(), &[("alice", &first), ("bob", &second)], &audio(2.0, 6.0));
    }
}

#[test]
fn one_speaker_under_nemos_post_processing() {
    let nemo = SegmentSettings {
        onset: Some(0.6),
        offset: Some(0.4),
        pad_onset: Some(0.05),
        min_duration_on: Some(0.1),
        min_duration_off: Some(0.2),
        ..SegmentSettings::default()
    };
    check(StreamingMode::VeryLowLatency, &nemo, &[("alice", &audio(0.0, 1.23))], &audio(3.0, 5.0));
}

#[test]
fn clips_longer_than_the_speaker_cache() {
    // 4 s: 50 rows, more than the speaker cache and FIFO keep (34 on this checkpoint).
    let c = engine().diarizer().config().streaming_cache;
    let long = audio(0.0, 4.0);
    assert!(long.len() / ROW > c.cache_length + c.fifo_length, "the clip must overflow the cache");
    check(StreamingMode::UltraLowLatency, &SegmentSettings::default(), &[("alice", &long)], &audio(3.0, 3.0));
}
