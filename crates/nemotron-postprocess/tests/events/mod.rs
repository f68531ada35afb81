//! The check of live segment events that the tests of `nemotron-postprocess` and `nemotron-towers` share.

use nemotron_postprocess::diarization::segments::sort_segments;
use nemotron_postprocess::diarization::{Segment, SegmentEvent};

/// Checks that `events` pair up (per speaker, each start closed by the next end, which names it) and returns the
/// segments of the end events, ordered as the offline rules order them.
pub fn closed_segments(events: &[SegmentEvent], speakers: usize) -> Vec<Segment> {
    let mut open = vec![None; speakers];
    let mut last_end = vec![0; speakers];
    for event in events {
        match *event {
            SegmentEvent::Start { speaker, frame } => {
                assert!(open[speaker].replace(frame).is_none(), "{event:?}: speaker {speaker} already open");
                assert!(frame >= last_end[speaker], "{event:?} starts before the previous end");
            }
            SegmentEvent::End { speaker, start, end } => {
                assert_eq!(open[speaker].take(), Some(start), "{event:?} closes the open segment");
                assert!(end > start, "{event:?}");
                last_end[speaker] = end;
            }
        }
    }
    assert!(open.iter().all(Option::is_none), "every segment closed: {open:?}");
    let mut segments: Vec<Segment> = events.iter().filter_map(SegmentEvent::segment).collect();
    sort_segments(&mut segments);
    segments
}
