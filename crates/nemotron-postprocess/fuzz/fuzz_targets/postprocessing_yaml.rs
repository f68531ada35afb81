//! Text → `PostProcessing::from_nemo_yaml`; settings it accepts run on a fixed probability array, whose segments
//! must be ordered and non-empty.
#![no_main]

use libfuzzer_sys::fuzz_target;
use nemotron_postprocess::diarization::{FrameGrid, PostProcessing};

/// Two speakers × 40 rows of 80 ms.
fn probabilities() -> Vec<f32> {
    (0..80).map(|i| ((i * 37 % 101) as f32) / 100.0).collect()
}

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let Ok(settings) = PostProcessing::from_nemo_yaml(&text, "fuzz.yaml") else { return };
    let segments = settings.segments(&probabilities(), 2, 40, FrameGrid::sortformer(8));
    assert!(segments.iter().all(|s| s.end > s.start && s.start >= 0.0), "{segments:?}");
    assert!(segments.windows(2).all(|w| w[0].start <= w[1].start), "unordered: {segments:?}");
});
