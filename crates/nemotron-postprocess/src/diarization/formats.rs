//! Writing segments: RTTM, JSON (upstream's `extract_speaker_dict` layout) and CSV.

use std::fmt::Write as _;
use std::path::Path;
use std::str::FromStr;

use super::segments::{Segment, round_hundredths};

/// A file format for segments.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SegmentFormat {
    /// NIST RTTM `SPEAKER` lines, speakers `spk<k>`.
    Rttm,
    /// A JSON list of `{"Start", "End", "Speaker"}` objects, as upstream's `extract_speaker_dict` returns them.
    Json,
    /// `start,end,duration,speaker` with a header line, speakers `spk<k>`.
    Csv,
}

impl SegmentFormat {
    /// The format a file name asks for: `.json` → JSON, `.csv` → CSV (any case), anything else RTTM.
    pub fn from_extension(path: &Path) -> Self {
        match path.extension().map(|e| e.to_string_lossy().to_ascii_lowercase()).as_deref() {
            Some("json") => SegmentFormat::Json,
            Some("csv") => SegmentFormat::Csv,
            _ => SegmentFormat::Rttm,
        }
    }

    /// The file extension of this format: `rttm`, `json` or `csv`.
    pub fn extension(self) -> &'static str {
        match self {
            SegmentFormat::Rttm => "rttm",
            SegmentFormat::Json => "json",
            SegmentFormat::Csv => "csv",
        }
    }

    /// The segments as text in this format. `uri` is the RTTM file id (the other formats do not carry one).
    pub fn write(self, uri: &str, segments: &[Segment]) -> String {
        self.write_named(uri, segments, &[])
    }

    /// [`SegmentFormat::write`] with the names of enrolled speakers, by slot (`None`, or a slot past the end, for
    /// a speaker without one): RTTM's speaker field is the name, JSON objects gain `"Name"`, CSV a `name` column.
    /// With no names (an empty slice) the text is [`SegmentFormat::write`]'s, byte for byte.
    pub fn write_named(self, uri: &str, segments: &[Segment], names: &[Option<String>]) -> String {
        match self {
            SegmentFormat::Rttm => rttm(uri, segments, names),
            SegmentFormat::Json => json(segments, names),
            SegmentFormat::Csv => csv(segments, names),
        }
    }
}

impl FromStr for SegmentFormat {
    type Err = String;

    fn from_str(name: &str) -> Result<Self, String> {
        [SegmentFormat::Rttm, SegmentFormat::Json, SegmentFormat::Csv]
            .into_iter()
            .find(|format| format.extension() == name)
            .ok_or_else(|| format!("unknown segment format `{name}` (rttm, json or csv)"))
    }
}

/// `SPEAKER <uri> 1 <start> <duration> <NA> <NA> spk<k> <NA> <NA>` lines, seconds with two decimals (segments lie
/// on the 10 ms grid). Whitespace in `uri` becomes `_`, since it would split the field.
pub fn to_rttm(uri: &str, segments: &[Segment]) -> String {
    rttm(uri, segments, &[])
}

/// The segments as upstream's `extract_speaker_dict` gives them: `Start`/`End` rounded to 0.01 s and written as
/// Python writes floats (shortest form, `0.0`), `Speaker` the index. One object per line, in the layout the
/// committed `speaker_dict.json` files have, so the bytes match too.
pub fn to_json(segments: &[Segment]) -> String {
    json(segments, &[])
}

/// `start,end,duration,speaker` then one line per segment, seconds with two decimals.
pub fn to_csv(segments: &[Segment]) -> String {
    csv(segments, &[])
}

fn name(names: &[Option<String>], speaker: usize) -> Option<&str> {
    names.get(speaker).and_then(Option::as_deref)
}

/// The speaker field: an enrolled speaker's name (profile names hold no whitespace), `spk<k>` for the others.
fn rttm(uri: &str, segments: &[Segment], names: &[Option<String>]) -> String {
    let id: String = uri.chars().map(|c| if c.is_whitespace() { '_' } else { c }).collect();
    let mut text = String::new();
    for s in segments {
        let (start, duration, speaker) = (s.start, s.duration(), s.speaker);
        let who = name(names, speaker).map_or_else(|| format!("spk{speaker}"), str::to_string);
        let _ = writeln!(text, "SPEAKER {id} 1 {start:.2} {duration:.2} <NA> <NA> {who} <NA> <NA>");
    }
    text
}

/// `"Name"` follows `"Speaker"` for an enrolled speaker.
fn json(segments: &[Segment], names: &[Option<String>]) -> String {
    if segments.is_empty() {
        return "[]\n".to_string();
    }
    let lines: Vec<String> = segments
        .iter()
        .map(|s| {
            let (start, end) = (round_hundredths(s.start), round_hundredths(s.end));
            let named = name(names, s.speaker).map_or_else(String::new, |n| format!(", \"Name\": {}", quoted(n)));
            format!(r#"{{"Start": {start:?}, "End": {end:?}, "Speaker": {}{named}}}"#, s.speaker)
        })
        .collect();
    format!("[\n{}\n]\n", lines.join(",\n"))
}

/// With names, a `name` column (empty for a speaker without one), quoted as RFC 4180 quotes.
fn csv(segments: &[Segment], names: &[Option<String>]) -> String {
    let named = !names.is_empty();
    let mut text =
        String::from(if named { "start,end,duration,speaker,name\n" } else { "start,end,duration,speaker\n" });
    for s in segments {
        let _ = write!(text, "{:.2},{:.2},{:.2},spk{}", s.start, s.end, s.duration(), s.speaker);
        if named {
            let field = name(names, s.speaker).unwrap_or("");
            let field = match field.contains([',', '"', '\n', '\r']) {
                true => format!("\"{}\"", field.replace('"', "\"\"")),
                false => field.to_string(),
            };
            let _ = write!(text, ",{field}");
        }
        text.push('\n');
    }
    text
}

/// A JSON string.
fn quoted(text: &str) -> String {
    serde_json::to_string(text).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seg(speaker: usize, start: f64, end: f64) -> Segment {
        Segment { speaker, start, end }
    }

    #[test]
    fn each_format_writes_what_it_promises() {
        let segments = [seg(0, 0.0, 0.07), seg(3, 0.3, 1.0), seg(1, 12.34, 15.0)];
        assert_eq!(
            to_rttm("my file", &segments),
            "SPEAKER my_file 1 0.00 0.07 <NA> <NA> spk0 <NA> <NA>\n\
             SPEAKER my_file 1 0.30 0.70 <NA> <NA> spk3 <NA> <NA>\n\
             SPEAKER my_file 1 12.34 2.66 <NA> <NA> spk1 <NA> <NA>\n"
        );
        // Python's json.dumps writes 0.0, 0.07, 1.0, 12.34, 15.0: Rust's `{:?}` of f64 is the same shortest form.
        assert_eq!(
            to_json(&segments),
            "[\n{\"Start\": 0.0, \"End\": 0.07, \"Speaker\": 0},\n{\"Start\": 0.3, \"End\": 1.0, \"Speaker\": 3},\n\
             {\"Start\": 12.34, \"End\": 15.0, \"Speaker\": 1}\n]\n"
        );
        assert_eq!(to_json(&[]), "[]\n");
        assert_eq!(
            to_csv(&segments),
            "start,end,duration,speaker\n0.00,0.07,0.07,spk0\n0.30,1.00,0.70,spk3\n12.34,15.00,2.66,spk1\n"
        );
        assert_eq!(SegmentFormat::Csv.write("x", &[]), "start,end,duration,speaker\n");
    }

    #[test]
    fn enrolled_speakers_are_named_in_each_format() {
        let segments = [seg(0, 0.0, 0.07), seg(3, 0.3, 1.0)];
        let names = [None, None, None, Some("a\"b,c".to_string())];
        let write = |format: SegmentFormat| format.write_named("f", &segments, &names);
        assert_eq!(
            write(SegmentFormat::Rttm),
            "SPEAKER f 1 0.00 0.07 <NA> <NA> spk0 <NA> <NA>\nSPEAKER f 1 0.30 0.70 <NA> <NA> a\"b,c <NA> <NA>\n"
        );
        assert_eq!(
            write(SegmentFormat::Json),
            "[\n{\"Start\": 0.0, \"End\": 0.07, \"Speaker\": 0},\n\
             {\"Start\": 0.3, \"End\": 1.0, \"Speaker\": 3, \"Name\": \"a\\\"b,c\"}\n]\n"
        );
        assert_eq!(
            write(SegmentFormat::Csv),
            "start,end,duration,speaker,name\n0.00,0.07,0.07,spk0,\n0.30,1.00,0.70,spk3,\"a\"\"b,c\"\n"
        );
        for format in [SegmentFormat::Rttm, SegmentFormat::Json, SegmentFormat::Csv] {
            assert_eq!(format.write_named("f", &segments, &[]), format.write("f", &segments), "{format:?}");
        }
    }

    #[test]
    fn the_extension_picks_the_format() {
        for (name, format) in [
            ("a.json", SegmentFormat::Json),
            ("b.CSV", SegmentFormat::Csv),
            ("c.rttm", SegmentFormat::Rttm),
            ("d.txt", SegmentFormat::Rttm),
            ("-", SegmentFormat::Rttm),
        ] {
            assert_eq!(SegmentFormat::from_extension(Path::new(name)), format, "{name}");
        }
        assert_eq!("json".parse(), Ok(SegmentFormat::Json));
        assert!("xml".parse::<SegmentFormat>().unwrap_err().contains("rttm, json or csv"));
    }
}
