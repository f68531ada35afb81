//! Reading NIST RTTM and UEM files, as pyannote.database reads them, with an error naming the file and line for
//! anything it would misread.

use std::path::Path;

use super::error::{DiarizationError, read_text};

/// One `SPEAKER` line: a speaker talking in a file.
#[derive(Clone, Debug, PartialEq)]
pub struct Turn {
    /// File id (second field).
    pub uri: String,
    /// Start, seconds.
    pub start: f64,
    /// Duration, seconds (`end = start + duration`, computed in `f64` as pyannote does).
    pub duration: f64,
    /// Speaker name (eighth field), any text.
    pub speaker: String,
}

/// One UEM line: a region of a file to score.
#[derive(Clone, Debug, PartialEq)]
pub struct UemSegment {
    /// File id.
    pub uri: String,
    /// Start, seconds.
    pub start: f64,
    /// End, seconds.
    pub end: f64,
}

/// The other line types of NIST RTTM: read past, as pyannote does.
const OTHER_TYPES: [&str; 13] = [
    "SEGMENT",
    "NOSCORE",
    "NO_RT_METADATA",
    "LEXEME",
    "NON-LEX",
    "NON-SPEECH",
    "FILLER",
    "EDIT",
    "IP",
    "SU",
    "CB",
    "A/P",
    "SPKR-INFO",
];

/// Reads an RTTM file (see [`parse_rttm`]).
pub fn read_rttm(path: &Path) -> Result<Vec<Turn>, DiarizationError> {
    parse_rttm(&read_text(path)?, &path.display().to_string())
}

/// Parses RTTM text: `SPEAKER <uri> <channel> <start> <duration> <NA> <NA> <speaker> [<NA> [<NA>]]`, fields
/// separated by any run of spaces or tabs; blank lines, `;;` comments and the other NIST line types are skipped.
/// Start and duration must be finite and not negative. `file` names the source in errors.
pub fn parse_rttm(text: &str, file: &str) -> Result<Vec<Turn>, DiarizationError> {
    let mut turns = Vec::new();
    for (number, fields) in lines(text) {
        let fail = |problem: String| DiarizationError::line(file, number, problem);
        match fields[0] {
            "SPEAKER" => {}
            kind if OTHER_TYPES.contains(&kind) => continue,
            kind => return Err(fail(format!("unknown RTTM line type `{}` (expected SPEAKER)", clip(kind)))),
        }
        if !(8..=10).contains(&fields.len()) {
            return Err(fail(format!(
                "a SPEAKER line has 10 fields (type, file, channel, start, duration, NA, NA, speaker, NA, NA), \
                 this one {}",
                fields.len()
            )));
        }
        let start = seconds(fields[3], "start").map_err(fail)?;
        let duration = seconds(fields[4], "duration").map_err(fail)?;
        turns.push(Turn { uri: fields[1].to_string(), start, duration, speaker: fields[7].to_string() });
    }
    Ok(turns)
}

/// Reads a UEM file (see [`parse_uem`]).
pub fn read_uem(path: &Path) -> Result<Vec<UemSegment>, DiarizationError> {
    parse_uem(&read_text(path)?, &path.display().to_string())
}

/// Parses UEM text: `<uri> <channel> <start> <end>` per line (blank lines and `;;` comments skipped), with
/// `0 ≤ start ≤ end`, finite. `file` names the source in errors.
pub fn parse_uem(text: &str, file: &str) -> Result<Vec<UemSegment>, DiarizationError> {
    let mut segments = Vec::new();
    for (number, fields) in lines(text) {
        let fail = |problem: String| DiarizationError::line(file, number, problem);
        if fields.len() != 4 {
            return Err(fail(format!(
                "a UEM line has 4 fields (file, channel, start, end), this one {}",
                fields.len()
            )));
        }
        let start = seconds(fields[2], "start").map_err(fail)?;
        let end = seconds(fields[3], "end").map_err(fail)?;
        if end < start {
            return Err(fail(format!("end {end} is before start {start}")));
        }
        segments.push(UemSegment { uri: fields[0].to_string(), start, end });
    }
    Ok(segments)
}

/// The lines that carry fields, numbered from 1, split at runs of whitespace.
fn lines(text: &str) -> impl Iterator<Item = (usize, Vec<&str>)> {
    text.lines()
        .enumerate()
        .map(|(i, line)| (i + 1, line.split_whitespace().collect::<Vec<_>>()))
        .filter(|(_, fields)| fields.first().is_some_and(|first| !first.starts_with(";;")))
}

/// A time field: a finite number ≥ 0.
fn seconds(text: &str, name: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(value) if value.is_finite() && value >= 0.0 => Ok(value),
        Ok(value) => {
            Err(format!("{name} `{}` is {}", clip(text), if value.is_finite() { "negative" } else { "not finite" }))
        }
        Err(_) => Err(format!("{name} `{}` is not a number", clip(text))),
    }
}

/// The start of a field, for messages about files that may be anything.
fn clip(text: &str) -> String {
    match text.char_indices().nth(40) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn speaker_lines_are_read_and_other_lines_skipped() {
        // Tabs and runs of spaces separate fields; the last two fields may be left out.
        let text = ";; a comment\n\nSPKR-INFO rec1 1 <NA> <NA> <NA> unknown alice <NA> <NA>\n\
                    SPEAKER rec1 1 0.10 2.5 <NA> <NA> alice <NA> <NA>\n\
                    SPEAKER\trec 2  2 3e-1\t<NA> <NA> 1\n";
        assert_eq!(
            parse_rttm(text, "x.rttm").unwrap(),
            [
                Turn { uri: "rec1".into(), start: 0.1, duration: 2.5, speaker: "alice".into() },
                Turn { uri: "rec".into(), start: 2.0, duration: 0.3, speaker: "1".into() },
            ]
        );
    }

    #[test]
    fn bad_lines_are_named() {
        for (text, needle) in [
            ("SPEAKER a 1 0 1 <NA> <NA>\n", "x.rttm, line 1: a SPEAKER line has 10 fields"),
            ("\nSPEAKER a 1 zero 1 <NA> <NA> s <NA> <NA>\n", "x.rttm, line 2: start `zero` is not a number"),
            ("SPEAKER a 1 0 -1 <NA> <NA> s <NA> <NA>\n", "line 1: duration `-1` is negative"),
            ("SPEAKER a 1 NaN 1 <NA> <NA> s <NA> <NA>\n", "line 1: start `NaN` is not finite"),
            ("SPEAKER a 1 0 inf <NA> <NA> s <NA> <NA>\n", "line 1: duration `inf` is not finite"),
            ("hello world\n", "x.rttm, line 1: unknown RTTM line type `hello`"),
        ] {
            let error = parse_rttm(text, "x.rttm").unwrap_err().to_string();
            assert!(error.contains(needle), "{error:?} should contain {needle:?}");
        }
        for (text, needle) in [
            ("a 1 0\n", "u.uem, line 1: a UEM line has 4 fields"),
            ("a 1 0 1\na 1 5 2\n", "u.uem, line 2: end 2 is before start 5"),
            ("a 1 x 1\n", "line 1: start `x` is not a number"),
        ] {
            let error = parse_uem(text, "u.uem").unwrap_err().to_string();
            assert!(error.contains(needle), "{error:?} should contain {needle:?}");
        }
        assert_eq!(
            parse_uem(";; c\nrec1 1 0.0 3.5\n", "u.uem").unwrap(),
            [UemSegment { uri: "rec1".into(), start: 0.0, end: 3.5 }]
        );
    }
}
