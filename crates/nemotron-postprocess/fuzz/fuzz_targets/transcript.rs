//! Text → the word alignment's transcript parser (`<spk:N>` tags, whitespace, script detection, the zh/ja
//! character rule) with the reference cases' alignment tokenizer, then the subtitle writers on a fake alignment.
#![no_main]

use std::sync::LazyLock;

use libfuzzer_sys::fuzz_target;
use nemotron_postprocess::alignment::subtitles::{cues, to_srt, to_vtt};
use nemotron_postprocess::alignment::{Alignment, AlignmentTokenizer, WordChunk, tokenize_transcript};

static TOKENIZER: LazyLock<AlignmentTokenizer> = LazyLock::new(|| {
    let json = include_bytes!("../../../../testdata/reference/tiny-chunks/alignment_tokenizer/tokenizer.json");
    AlignmentTokenizer::from_json("tokenizer.json", json, "<unk>").expect("the reference tokenizer loads")
});

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    for language in [None, Some("zh"), Some("en")] {
        let Ok(streams) = tokenize_transcript(&TOKENIZER, &text, language, 63, &["<|im_end|>".to_string()]) else {
            continue;
        };
        // Each unit a word of a second, to exercise the cue grouping.
        let chunks = streams
            .iter()
            .flat_map(|s| s.units.iter().map(move |u| (s.tag, u.text.clone())))
            .enumerate()
            .map(|(i, (speaker, text))| WordChunk { text, timestamp: (i as f64 * 0.7, i as f64 * 0.7 + 0.5), speaker })
            .collect();
        let alignment = Alignment {
            chunks,
            diarization: Vec::new(),
            speaker_tag_to_diarization_speaker: Vec::new(),
            failed_speakers: Vec::new(),
        };
        let cues = cues(&alignment, &[]);
        let _ = (to_srt(&cues), to_vtt(&cues));
    }
});
