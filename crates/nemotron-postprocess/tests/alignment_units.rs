//! The alignment's parts on their own: scipy's `linear_sum_assignment` on tie-heavy matrices (expected values from
//! scipy itself: `scripts/alignment/assignment_cases.py`), the alignment tokenizer on the reference vocabulary, and
//! property tests of the transcript parser (any text: no panic, tags and words as upstream splits them).

use std::path::{Path, PathBuf};

use nemotron_postprocess::alignment::{AlignmentTokenizer, tokenize_transcript};
use nemotron_postprocess::math::linear_sum_assignment;
use proptest::prelude::*;
use serde_json::Value;

fn testdata(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata").join(path)
}

fn tokenizer() -> AlignmentTokenizer {
    AlignmentTokenizer::from_dir(&testdata("reference/tiny-chunks/alignment_tokenizer")).unwrap()
}

#[test]
fn assignment_matches_scipy_on_tie_heavy_matrices() {
    let json: Value =
        serde_json::from_slice(&std::fs::read(testdata("alignment/assignment_cases.json")).unwrap()).unwrap();
    let cases = json["cases"].as_array().unwrap();
    assert!(cases.len() >= 300);
    let as_usize = |v: &Value| v.as_array().unwrap().iter().map(|x| x.as_u64().unwrap() as usize).collect::<Vec<_>>();
    for (i, case) in cases.iter().enumerate() {
        let (rows, cols) = (case["rows"].as_u64().unwrap() as usize, case["cols"].as_u64().unwrap() as usize);
        let cost: Vec<f64> = case["cost"].as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect();
        let got = linear_sum_assignment(&cost, rows, cols).expect("finite costs");
        let want: Vec<(usize, usize)> =
            as_usize(&case["row_ind"]).into_iter().zip(as_usize(&case["col_ind"])).collect();
        assert_eq!(got, want, "case {i}: {rows}×{cols} {cost:?}");
    }
}

#[test]
fn assignment_refuses_nan_and_minus_infinity() {
    assert!(linear_sum_assignment(&[0.0, f64::NAN], 1, 2).is_none());
    assert!(linear_sum_assignment(&[f64::NEG_INFINITY, 0.0], 2, 1).is_none());
    assert_eq!(linear_sum_assignment(&[], 0, 3), Some(vec![]));
}

#[test]
fn tokenizer_gives_the_sentencepiece_ids() {
    let t = tokenizer();
    // `▁ he ll o`, whatever the leading spaces (Metaspace with the Strip/Replace normalizers).
    for text in ["hello", " hello", "  hello"] {
        assert_eq!(t.encode(text).unwrap(), [36, 6, 22, 39], "{text:?}");
    }
    assert_eq!(t.unk_id(), Some(0));
    assert_eq!(t.token_to_id("no such piece"), Some(0), "absent pieces are the unknown piece");
}

#[test]
fn transcripts_the_head_cannot_represent_are_refused() {
    let t = tokenizer();
    let err = tokenize_transcript(&t, "hello สวัสดี", None, 63, &[]).unwrap_err().to_string();
    assert!(err.contains("Thai"), "{err}");
    let err = tokenize_transcript(&t, "漢", None, 63, &[]).unwrap_err().to_string();
    assert!(err.contains("unrepresentable character"), "{err}");
    // A head with fewer classes than the tokenizer's pieces.
    let err = tokenize_transcript(&t, "hello", None, 30, &[]).unwrap_err().to_string();
    assert!(err.contains("outside the head's non-blank classes"), "{err}");
}

#[test]
fn dropped_tokens_and_em_dashes_become_spaces() {
    let t = tokenizer();
    let streams = tokenize_transcript(&t, "<|im_end|>hello—there<spk:1>you", None, 63, &["<|im_end|>".into()]).unwrap();
    let words: Vec<(Option<u64>, &str)> =
        streams.iter().flat_map(|s| s.units.iter().map(move |u| (s.tag, u.text.as_str()))).collect();
    assert_eq!(words, [(None, "hello"), (None, "there"), (Some(1), "you")]);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Any text: an answer or a typed error, never a panic; without tags every word is tag 0, in order.
    #[test]
    fn any_transcript_parses_or_is_refused(text in "\\PC{0,40}") {
        let t = tokenizer();
        let _ = tokenize_transcript(&t, &text, None, 63, &[]);
        let plain: String = text.chars().filter(|&c| c != '<').collect();
        if let Ok(streams) = tokenize_transcript(&t, &plain, Some("en"), 63, &[]) {
            prop_assert!(streams.len() <= 1);
            let words: Vec<String> = streams.iter().flat_map(|s| s.units.iter().map(|u| u.text.clone())).collect();
            let want: Vec<String> = plain.replace('\u{2014}', " ").split_whitespace().map(str::to_string).collect();
            prop_assert_eq!(words, want);
            prop_assert!(streams.iter().all(|s| s.tag == Some(0)));
        }
    }

    /// Tags in any case with any number: each turn's words get its tag, tags in order of first appearance.
    #[test]
    fn tagged_turns_keep_their_words(turns in proptest::collection::vec((0u64..5, "[a-z]{1,6}( [a-z]{1,6}){0,2}", any::<bool>()), 1..5)) {
        let text: String = turns
            .iter()
            .map(|(tag, words, upper)| format!("{}{tag}> {words} ", if *upper { "<SPK:" } else { "<spk:" }))
            .collect();
        let streams = tokenize_transcript(&tokenizer(), &text, None, 63, &[]).unwrap();
        let mut order: Vec<u64> = Vec::new();
        for (tag, _, _) in &turns {
            if !order.contains(tag) {
                order.push(*tag);
            }
        }
        prop_assert_eq!(streams.iter().map(|s| s.tag).collect::<Vec<_>>(), order.iter().map(|&t| Some(t)).collect::<Vec<_>>());
        for stream in &streams {
            let want: Vec<&str> = turns
                .iter()
                .filter(|(tag, _, _)| Some(*tag) == stream.tag)
                .flat_map(|(_, words, _)| words.split(' '))
                .collect();
            prop_assert_eq!(stream.units.iter().map(|u| u.text.as_str()).collect::<Vec<_>>(), want);
        }
    }
}
