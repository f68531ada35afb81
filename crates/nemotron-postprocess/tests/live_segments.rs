//! Live segment events under NeMo's post-processing, on any probabilities cut any way: they pair up, a start is
//! never taken back, and they close the offline rule's segments of the whole stream. (On a real session's outputs:
//! `crates/nemotron-towers/tests/streaming.rs`.)

mod events;
mod strategies;

use events::closed_segments;
use nemotron_postprocess::diarization::{FrameGrid, LiveSegments, PostProcessing, SegmentRule};
use proptest::prelude::*;

/// A probability column that dwells on values around the thresholds of [`settings`] (ties included).
fn column(rows: usize) -> impl Strategy<Value = Vec<f32>> {
    let values = prop::sample::select(vec![0.0f32, 0.1, 0.3, 0.4, 0.45, 0.5, 0.55, 0.6, 0.7, 0.9, 1.0]);
    prop::collection::vec((values, 1..6usize), 0..rows)
        .prop_map(|runs| runs.into_iter().flat_map(|(p, n)| std::iter::repeat_n(p, n)).collect())
}

/// Post-processing settings on the 10 ms grid and off it, negative pads included.
fn settings() -> impl Strategy<Value = PostProcessing> {
    let thresholds = prop::sample::select(vec![0.0, 0.3, 0.4, 0.5, 0.6, 1.0]);
    let pads = prop::sample::select(vec![-0.12, -0.03, 0.0, 0.04, 0.08, 0.155, 0.3]);
    strategies::post_processing(thresholds, pads, prop::sample::select(vec![0.0, 0.05, 0.08, 0.16, 0.2, 0.37, 0.6]))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1024, ..ProptestConfig::default() })]

    /// Under any settings and however the rows arrive, the events pair up, a start is never taken back, and the
    /// segments are the offline post-processing's of the whole stream.
    #[test]
    fn live_post_processing_ends_with_the_offline_segments(
        columns in prop::collection::vec(column(80), 1..4),
        settings in settings(),
        cuts in prop::collection::vec(1..12usize, 1..40),
    ) {
        let speakers = columns.len();
        let rows = columns.iter().map(Vec::len).max().unwrap_or(0);
        // Shorter columns are padded with silence; row r holds every speaker's value.
        let probabilities: Vec<f32> =
            (0..rows).flat_map(|r| columns.iter().map(move |c| c.get(r).copied().unwrap_or(0.0))).collect();
        // The release diarizer's encoder rows: 8 frames of 10 ms.
        let mut live = LiveSegments::new(SegmentRule::PostProcessing(settings), speakers, 8).unwrap();
        let (mut events, mut at) = (Vec::new(), 0);
        // Outputs of `cuts` rows in turn, an empty one first (a push that completes no chunk).
        let mut sizes = std::iter::once(&0).chain(cuts.iter().cycle());
        while let Some(cut) = sizes.next().filter(|_| at < rows) {
            let end = (at + cut).min(rows);
            let logits = vec![0.0; (end - at) * 8 * speakers];
            events.extend(live.push(&logits, &probabilities[at * speakers..end * speakers]));
            at = end;
        }
        prop_assert_eq!(live.frames(), rows * 8);
        events.extend(live.finish());
        let offline = settings.segments(&probabilities, speakers, rows, FrameGrid::sortformer(8));
        prop_assert_eq!(closed_segments(&events, speakers), offline);
    }
}
