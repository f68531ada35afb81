//! Subtitles from an [`Alignment`]: SRT and WebVTT text. A cue holds consecutive words of one speaker tag, at most
//! [`MAX_CUE_WORDS`] of them and at most [`MAX_CUE_SECONDS`] long, and ends at a pause longer than [`MAX_PAUSE`];
//! the speaker is a `[speaker N]` prefix in SRT and a `<v speaker N>` voice span in WebVTT.

use super::unicode_tables as tables;
use super::{Alignment, Tag, WordChunk};

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

/// The alignment's words grouped into cues: each speaker tag's words in time order, cut by
/// [`MAX_CUE_WORDS`], [`MAX_CUE_SECONDS`] and [`MAX_PAUSE`]; the cues sorted by (start, end), tags in order of
/// appearance on ties. Overlapping speech gives overlapping cues.
pub fn cues(alignment: &Alignment) -> Vec<Cue> {
    let mut tags: Vec<Tag> = Vec::new();
    for word in &alignment.chunks {
        if !tags.contains(&word.speaker) {
            tags.push(word.speaker);
        }
    }
    let mut cues: Vec<Cue> = Vec::new();
    for tag in tags {
        let mut words: Vec<&WordChunk> = Vec::new();
        for word in alignment.chunks.iter().filter(|w| w.speaker == tag) {
            let breaks = words.first().is_some_and(|first| {
                words.len() >= MAX_CUE_WORDS
                    || word.timestamp.1 - first.timestamp.0 > MAX_CUE_SECONDS
                    || word.timestamp.0 - words[words.len() - 1].timestamp.1 > MAX_PAUSE
            });
            if breaks {
                cues.push(cue(&words));
                words.clear();
            }
            words.push(word);
        }
        if !words.is_empty() {
            cues.push(cue(&words));
        }
    }
    cues.sort_by(|a, b| (a.start, a.end).partial_cmp(&(b.start, b.end)).unwrap_or(std::cmp::Ordering::Equal));
    cues
}

/// One cue of consecutive words of a tag (at least one).
fn cue(words: &[&WordChunk]) -> Cue {
    let mut text = String::new();
    for (i, w) in words.iter().enumerate() {
        if i > 0 && !(is_cjk(&words[i - 1].text) && is_cjk(&w.text)) {
            text.push(' ');
        }
        text.push_str(&w.text);
    }
    let start = words[0].timestamp.0;
    let end = words.iter().map(|w| w.timestamp.1).fold(start, f64::max);
    Cue { start, end, speaker: words[0].speaker, text }
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
