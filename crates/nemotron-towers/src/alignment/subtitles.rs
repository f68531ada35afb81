//! Subtitles from an [`Alignment`]: SRT and WebVTT text. A cue holds consecutive words of one speaker tag, at most
//! [`MAX_CUE_WORDS`] of them and at most [`MAX_CUE_SECONDS`] long, and ends at a pause longer than [`MAX_PAUSE`];
//! the speaker is a `[speaker N]` prefix in SRT and a `<v speaker N>` voice span in WebVTT.

use super::{Alignment, Tag, WordChunk};
use super::unicode_tables as tables;

/// Most words in one cue.
pub const MAX_CUE_WORDS: usize = 12;
/// Longest cue, seconds.
pub const MAX_CUE_SECONDS: f64 = 6.0;
/// A longer pause between two words starts a new cue, seconds.
pub const MAX_PAUSE: f64 = 1.0;

/// One subtitle cue.
#[derive(Clone, Debug, PartialEq)]
pub struct Cue {
    /// Start, seconds.
    pub start: f64,
    /// End, seconds.
    pub end: f64,
    /// The speaker tag of its words.
    pub speaker: Tag,
    /// The words, joined.
    pub text: String,
}

/// Chinese and Japanese units are characters, written without spaces between them.
fn is_cjk(text: &str) -> bool {
    let mut chars = text.chars();
    let (Some(c), None) = (chars.next(), chars.next()) else { return false };
    [tables::CJK_UNIFIED, tables::CJK_COMPATIBILITY, tables::HIRAGANA, tables::KATAKANA]
        .iter()
        .any(|table| table.iter().any(|&(lo, hi)| (lo..=hi).contains(&(c as u32))))
}

/// The alignment's words grouped into cues, in time order.
pub fn cues(alignment: &Alignment) -> Vec<Cue> {
    let mut cues: Vec<Cue> = Vec::new();
    let mut words: Vec<&WordChunk> = Vec::new();
    let flush = |words: &mut Vec<&WordChunk>, cues: &mut Vec<Cue>| {
        let (Some(first), Some(last)) = (words.first(), words.last()) else { return };
        let mut text = String::new();
        for (i, w) in words.iter().enumerate() {
            if i > 0 && !(is_cjk(&words[i - 1].text) && is_cjk(&w.text)) {
                text.push(' ');
            }
            text.push_str(&w.text);
        }
        let end = words.iter().map(|w| w.timestamp.1).fold(first.timestamp.0, f64::max);
        cues.push(Cue { start: first.timestamp.0, end: end.max(last.timestamp.1), speaker: first.speaker, text });
        words.clear();
    };
    for word in &alignment.chunks {
        let breaks = words.first().is_some_and(|first| {
            let previous = words[words.len() - 1];
            word.speaker != first.speaker
                || words.len() >= MAX_CUE_WORDS
                || word.timestamp.1 - first.timestamp.0 > MAX_CUE_SECONDS
                || word.timestamp.0 - previous.timestamp.1 > MAX_PAUSE
        });
        if breaks {
            flush(&mut words, &mut cues);
        }
        words.push(word);
    }
    flush(&mut words, &mut cues);
    cues
}

/// `HH:MM:SS` and milliseconds of a time (rounded to the millisecond, never negative).
fn clock(seconds: f64, separator: char) -> String {
    let ms = (seconds.max(0.0) * 1000.0).round() as u64;
    format!("{:02}:{:02}:{:02}{separator}{:03}", ms / 3_600_000, ms / 60_000 % 60, ms / 1000 % 60, ms % 1000)
}

fn speaker_label(tag: Tag) -> Option<String> {
    tag.map(|t| format!("speaker {t}"))
}

/// SRT: numbered cues from 1, `HH:MM:SS,mmm --> HH:MM:SS,mmm`, a blank line after each.
pub fn to_srt(cues: &[Cue]) -> String {
    let mut out = String::new();
    for (i, cue) in cues.iter().enumerate() {
        let label = speaker_label(cue.speaker).map_or_else(String::new, |s| format!("[{s}] "));
        out += &format!("{}\n{} --> {}\n{label}{}\n\n", i + 1, clock(cue.start, ','), clock(cue.end, ','), cue.text);
    }
    out
}

/// WebVTT: the `WEBVTT` header, cues `HH:MM:SS.mmm --> HH:MM:SS.mmm` with the speaker as a voice span. `<`, `>`
/// and `&` in the text are escaped.
pub fn to_vtt(cues: &[Cue]) -> String {
    let mut out = String::from("WEBVTT\n\n");
    for cue in cues {
        let text = cue.text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;");
        let text = speaker_label(cue.speaker).map_or(text.clone(), |s| format!("<v {s}>{text}</v>"));
        out += &format!("{} --> {}\n{text}\n\n", clock(cue.start, '.'), clock(cue.end, '.'));
    }
    out
}
