//! A transcript → its speaker tags' streams of (unit, token ids), as upstream's `_tokenize_transcript`: `<spk:N>`
//! tags (case-insensitive, any decimal digits) open speaker turns; words before the first tag have tag `None`, a
//! transcript without tags is tag 0; words split on Python's whitespace; Chinese and Japanese (given, or detected
//! from the script) are aligned one letter, mark or number at a time.

use unicode_normalization::UnicodeNormalization;

use super::AlignmentError;
use super::tokenizer::AlignmentTokenizer;
use super::unicode_tables as tables;

/// A speaker tag: `Some(N)` for `<spk:N>`, `None` for the words before the first tag.
pub type Tag = Option<u64>;

/// What one word (or, in Chinese and Japanese, one character) is aligned as.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unit {
    /// The word or character as it appears in the output.
    pub text: String,
    /// Its alignment-token ids (at least one, all below the blank).
    pub ids: Vec<u32>,
}

/// The units of one speaker tag, in transcript order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stream {
    /// The tag.
    pub tag: Tag,
    /// Its units, all its turns concatenated.
    pub units: Vec<Unit>,
}

impl Stream {
    /// The CTC target: every unit's ids in order.
    pub fn target(&self) -> Vec<u32> {
        self.units.iter().flat_map(|u| u.ids.iter().copied()).collect()
    }
}

/// The scripts that set a transcript's language, by priority (upstream's `SCRIPT_LANGUAGES`).
const SCRIPT_LANGUAGES: [(&str, &[(u32, u32)]); 6] = [
    ("ko", tables::HANGUL),
    ("ja", tables::HIRAGANA),
    ("ja", tables::KATAKANA),
    ("zh", tables::CJK_UNIFIED),
    ("zh", tables::CJK_COMPATIBILITY),
    ("th", tables::THAI),
];

fn in_table(table: &[(u32, u32)], c: char) -> bool {
    let c = c as u32;
    table
        .binary_search_by(|&(lo, hi)| {
            if hi < c {
                std::cmp::Ordering::Less
            } else if lo > c {
                std::cmp::Ordering::Greater
            } else {
                std::cmp::Ordering::Equal
            }
        })
        .is_ok()
}

/// The value of a decimal digit (Unicode category Nd, as `re`'s `\d` and `int()` take them).
fn digit_value(c: char) -> Option<u64> {
    let c = c as u32;
    let i = tables::DIGIT_ZEROS.partition_point(|&zero| zero <= c).checked_sub(1)?;
    let value = c - tables::DIGIT_ZEROS[i];
    (value < 10).then_some(value as u64)
}

/// Python's `str.split()` whitespace: White_Space plus the four information separators U+001C..U+001F.
fn is_python_space(c: char) -> bool {
    c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)
}

/// `re` `IGNORECASE` equality with an ASCII letter of the tag, including the non-ASCII characters that fold to it
/// (`ſ` to s, the Kelvin sign to k).
fn folds_to(c: char, letter: char) -> bool {
    c.eq_ignore_ascii_case(&letter) || matches!((c, letter), ('\u{17f}', 's') | ('\u{212a}', 'k'))
}

/// A `<spk:N>` tag at the start of `text`: its length in bytes and the digits' value.
fn speaker_tag(text: &str) -> Option<(usize, Result<u64, String>)> {
    let mut chars = text.char_indices();
    let mut expect = |pred: &dyn Fn(char) -> bool| chars.next().filter(|&(_, c)| pred(c)).map(|_| ());
    expect(&|c| c == '<')?;
    expect(&|c| folds_to(c, 's'))?;
    expect(&|c| folds_to(c, 'p'))?;
    expect(&|c| folds_to(c, 'k'))?;
    expect(&|c| c == ':')?;
    let mut value: Option<u64> = Some(0);
    let mut digits = 0;
    for (i, c) in chars {
        if let Some(d) = digit_value(c) {
            value = value.and_then(|v| v.checked_mul(10)).and_then(|v| v.checked_add(d));
            digits += 1;
        } else if c == '>' && digits > 0 {
            let tag = &text[..i + 1];
            return Some((i + 1, value.ok_or_else(|| tag.to_string())));
        } else {
            return None;
        }
    }
    None
}

/// `KEPT_TAG_PATTERN.fullmatch(word)`: a speaker tag, or an `<ev:…>` / `<sty:…>` tag without `<` or `>` inside.
fn is_kept_tag(word: &str) -> bool {
    if speaker_tag(word).is_some_and(|(len, _)| len == word.len()) {
        return true;
    }
    let inner = ["<ev:", "<sty:"].iter().find_map(|p| word.strip_prefix(p)).and_then(|rest| rest.strip_suffix('>'));
    inner.is_some_and(|inner| !inner.contains(['<', '>']))
}

/// The text between speaker tags and the tags' values: `SPEAKER_TAG_PATTERN.split` as `(tag, text)` pairs.
fn turns(text: &str) -> Result<Vec<(Tag, &str)>, AlignmentError> {
    let mut turns = Vec::new();
    let (mut tag, mut start, mut i) = (None, 0, 0);
    while let Some(offset) = text[i..].find('<') {
        let at = i + offset;
        match speaker_tag(&text[at..]) {
            Some((len, value)) => {
                turns.push((tag, &text[start..at]));
                tag = Some(value.map_err(|tag| AlignmentError::Transcript(format!("speaker tag {tag} is too large")))?);
                (start, i) = (at + len, at + len);
            }
            None => i = at + 1,
        }
    }
    turns.push((tag, &text[start..]));
    if turns.len() == 1 {
        turns[0].0 = Some(0);
    }
    Ok(turns)
}

/// The language of the words' script, as upstream detects it (tags excluded).
fn detect_language(words: &[(&str, Tag)]) -> Option<&'static str> {
    let chars: Vec<char> = words.iter().filter(|(w, _)| !is_kept_tag(w)).flat_map(|(w, _)| w.chars()).collect();
    SCRIPT_LANGUAGES.iter().find(|(_, table)| chars.iter().any(|&c| in_table(table, c))).map(|(lang, _)| *lang)
}

/// The ids of one Chinese or Japanese character: its own piece, else its pieces without the bare word boundary.
fn character_ids(tokenizer: &AlignmentTokenizer, c: char) -> Result<Vec<u32>, AlignmentError> {
    let text = c.to_string();
    let unk = tokenizer.unk_id();
    let direct = tokenizer.token_to_id(&text);
    let ids: Vec<u32> = match direct {
        Some(id) if direct != unk => vec![id],
        _ => {
            let boundary = tokenizer.token_to_id("\u{2581}");
            tokenizer.encode(&format!(" {text}"))?.into_iter().filter(|&id| Some(id) != boundary).collect()
        }
    };
    if unk.is_some_and(|unk| ids.contains(&unk)) {
        return Err(AlignmentError::Transcript(format!("unrepresentable character {text:?}")));
    }
    Ok(ids)
}

/// The transcript's streams in order of each tag's first appearance (upstream's `_tokenize_transcript`, after the
/// language model's special tokens `dropped` were replaced by spaces and em dashes became spaces). `language`:
/// `Some("zh" | "ja")` aligns by character, `Some("th")` is refused; `None` detects it from the script.
pub fn tokenize_transcript(
    tokenizer: &AlignmentTokenizer,
    text: &str,
    language: Option<&str>,
    blank_id: u32,
    dropped: &[String],
) -> Result<Vec<Stream>, AlignmentError> {
    let mut text = text.to_string();
    for token in dropped {
        text = text.replace(token.as_str(), " ");
    }
    let text = text.replace('\u{2014}', " ");
    let turns = turns(&text)?;
    let words: Vec<(&str, Tag)> = turns
        .iter()
        .flat_map(|&(tag, part)| part.split(is_python_space).filter(|w| !w.is_empty()).map(move |w| (w, tag)))
        .collect();
    let language = language.or_else(|| detect_language(&words));
    if language == Some("th") {
        return Err(AlignmentError::Transcript(
            "word timestamps are not supported for Thai, which needs a word segmenter".into(),
        ));
    }
    let by_character = matches!(language, Some("zh" | "ja"));
    let mut streams: Vec<Stream> = Vec::new();
    for (word, tag) in words {
        let units = if by_character && !is_kept_tag(word) {
            word.nfc()
                .filter(|&c| in_table(tables::LEXICAL, c))
                .map(|c| Ok(Unit { text: c.to_string(), ids: character_ids(tokenizer, c)? }))
                .collect::<Result<Vec<_>, AlignmentError>>()?
        } else {
            vec![Unit { text: word.to_string(), ids: tokenizer.encode(&format!(" {word}"))? }]
        };
        if let Some(unit) = units.iter().find(|u| u.ids.is_empty() || u.ids.iter().any(|&id| id >= blank_id)) {
            return Err(AlignmentError::Transcript(format!(
                "the alignment tokenizer gives {:?} the ids {:?}, outside the head's non-blank classes 0..{blank_id}",
                unit.text, unit.ids
            )));
        }
        match streams.iter_mut().find(|s| s.tag == tag) {
            Some(stream) => stream.units.extend(units),
            None => streams.push(Stream { tag, units }),
        }
    }
    Ok(streams)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_split_as_upstreams_regular_expression() {
        let turns = turns("hi <SPK:1>a b<spk:02>c <spk:x> <spk:>d<ſpK:3>e").unwrap();
        let tags: Vec<Tag> = turns.iter().map(|t| t.0).collect();
        assert_eq!(tags, [None, Some(1), Some(2), Some(3)]);
        assert_eq!(turns[2].1, "c <spk:x> <spk:>d");
        assert_eq!(self::turns("no tags").unwrap(), [(Some(0), "no tags")]);
        // Arabic-Indic digits are decimal digits of `\d` and `int()`.
        assert_eq!(self::turns("<spk:\u{663}>x").unwrap()[1].0, Some(3));
        assert!(self::turns("<spk:99999999999999999999999>x").is_err());
    }

    #[test]
    fn kept_tags_and_python_whitespace() {
        assert!(is_kept_tag("<spk:3>") && is_kept_tag("<ev:laugh>") && is_kept_tag("<sty:>"));
        assert!(!is_kept_tag("<EV:laugh>") && !is_kept_tag("<ev:a>b>") && !is_kept_tag("<spk:3>x"));
        let words: Vec<&str> = "a\u{1f}b\u{3000}c\u{a0}d".split(is_python_space).collect();
        assert_eq!(words, ["a", "b", "c", "d"]);
    }

    #[test]
    fn language_follows_the_first_script_by_priority() {
        let detect = |w: &'static str| detect_language(&[(w, None)]);
        assert_eq!(detect("漢字かな"), Some("ja"));
        assert_eq!(detect("漢字"), Some("zh"));
        assert_eq!(detect("한국어"), Some("ko"));
        assert_eq!(detect("hello"), None);
        assert_eq!(detect("ｶﾀｶﾅ"), None, "halfwidth katakana are named HALFWIDTH");
        assert_eq!(detect_language(&[("<ev:漢>", None)]), None, "tags do not count");
    }
}
