//! Text → `diarization::rttm::parse_rttm` and `parse_uem`; what parses is scored against itself and against a
//! shifted copy (collar and overlap removal on), so the scorer's geometry sees the same strange inputs.
#![no_main]

use libfuzzer_sys::fuzz_target;
use nemotron_postprocess::diarization::rttm::{Turn, parse_rttm, parse_uem};
use nemotron_postprocess::diarization::scoring::{ScoreOptions, score};

/// Turns scored per input: the scorer is quadratic in the worst case, and more turns find nothing fewer do not.
const MAX_TURNS: usize = 200;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let uem = parse_uem(&text, "fuzz.uem");
    let Ok(turns) = parse_rttm(&text, "fuzz.rttm") else { return };
    if turns.len() > MAX_TURNS {
        return;
    }
    let shifted: Vec<Turn> = turns.iter().map(|t| Turn { start: t.start * 1.5 + 0.01, ..t.clone() }).collect();
    for options in [ScoreOptions::default(), ScoreOptions { collar: 0.25, skip_overlap: true }] {
        if let Ok(result) = score(&turns, &shifted, None, &options) {
            for file in &result.files {
                let der = file.components.der();
                assert!(der.is_finite() && der >= 0.0, "DER {der}");
                assert!((0.0..=1.0).contains(&file.jer()), "JER {}", file.jer());
            }
        }
        if let Ok(uem) = &uem {
            let _ = score(&turns, &turns, Some(uem), &options);
        }
    }
});
