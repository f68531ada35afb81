//! proptest strategies shared by the test files.

use nemotron_postprocess::diarization::PostProcessing;
use proptest::prelude::*;

/// NeMo post-processing settings: onset and offset from `thresholds`, both pads from `pads`, both minimum durations
/// from `durations`, either filter order, no speaker limit.
pub fn post_processing(
    thresholds: impl Strategy<Value = f64> + Clone,
    pads: impl Strategy<Value = f64> + Clone,
    durations: impl Strategy<Value = f64> + Clone,
) -> impl Strategy<Value = PostProcessing> {
    (thresholds.clone(), thresholds, pads.clone(), pads, durations.clone(), durations, any::<bool>()).prop_map(
        |(onset, offset, pad_onset, pad_offset, min_duration_on, min_duration_off, filter_speech_first)| {
            PostProcessing {
                onset,
                offset,
                pad_onset,
                pad_offset,
                min_duration_on,
                min_duration_off,
                filter_speech_first,
                max_speakers: None,
            }
        },
    )
}
