//! Subtitles from an [`Alignment`]: SRT and WebVTT text. A cue holds consecutive words of one speaker tag, at most
//! [`MAX_CUE_WORDS`] of them and at most [`MAX_CUE_SECONDS`] long, and ends at a pause longer than [`MAX_PAUSE`];
//! the speaker is a `[speaker N]` prefix in SRT and a `<v speaker N>` voice span in WebVTT, or the enrolled name of
//! the diarizer speaker the tag matched.

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
    /// The enrolled name of the diarizer speaker its tag matched, if any: the label in place of `speaker N`.
    pub name: Option<String>,
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
/// appearance on ties. Overlapping speech gives overlapping cues. `names` are the diarizer's slots' enrolled names
/// (`None` for a slot without one; empty without known speakers): a tag matched to a named slot is labelled by it.
pub fn cues(alignment: &Alignment, names: &[Option<String>]) -> Vec<Cue> {
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
    for cue in &mut cues {
        let slot = alignment.speaker_tag_to_diarization_speaker.iter().find(|(tag, _)| *tag == cue.speaker);
        cue.name = slot.and_then(|(_, slot)| names.get((*slot)?)?.clone());
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
    Cue { start, end, speaker: words[0].speaker, name: None, text }
}

/// `HH:MM:SS` and milliseconds of a time (rounded to the millisecond, never negative).
fn clock(seconds: f64, separator: char) -> String {
    let ms = (seconds.max(0.0) * 1000.0).round() as u64;
    format!("{:02}:{:02}:{:02}{separator}{:03}", ms / 3_600_000, ms / 60_000 % 60, ms / 1000 % 60, ms % 1000)
}

fn speaker_label(cue: &Cue) -> Option<String> {
    cue.name.clone().or_else(|| cue.speaker.map(|t| format!("speaker {t}")))
}

/// SRT: numbered cues from 1, `HH:MM:SS,mmm --> HH:MM:SS,mmm`, a blank line after each.
pub fn to_srt(cues: &[Cue]) -> String {
    let mut out = String::new();
    for (i, cue) in cues.iter().enumerate() {
        let label = speaker_label(cue).map_or_else(String::new, |s| format!("[{s}] "));
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
        let text = speaker_label(cue).map_or(text.clone(), |s| format!("<v {s}>{text}</v>"));
        out += &format!("{} --> {}\n{text}\n\n", clock(cue.start, '.'), clock(cue.end, '.'));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn word(text: &str, start: f64, speaker: Tag) -> WordChunk {
        WordChunk { text: text.into(), timestamp: (start, start + 0.3), speaker }
    }

    #[test]
    fn a_tag_matched_to_a_named_slot_is_labelled_by_the_name() {
        let alignment = Alignment {
            chunks: vec![word("hello", 0.0, Some(0)), word("there", 2.0, Some(1)), word("again", 4.0, Some(2))],
            diarization: Vec::new(),
            speaker_tag_to_diarization_speaker: vec![(Some(0), Some(3)), (Some(1), Some(0)), (Some(2), None)],
            failed_speakers: Vec::new(),
        };
        let names = [None, None, None, Some("alice".to_string())];
        let cues = cues(&alignment, &names);
        let labels: Vec<Option<&str>> = cues.iter().map(|c| c.name.as_deref()).collect();
        assert_eq!(labels, [Some("alice"), None, None]);
        let srt = to_srt(&cues);
        assert!(
            srt.contains("[alice] hello") && srt.contains("[speaker 1] there") && srt.contains("[speaker 2] again")
        );
        let vtt = to_vtt(&cues);
        assert!(vtt.contains("<v alice>hello</v>") && vtt.contains("<v speaker 1>there</v>"), "{vtt}");
        assert_eq!(to_srt(&super::cues(&alignment, &[])), srt.replace("[alice]", "[speaker 0]"));
    }
}
