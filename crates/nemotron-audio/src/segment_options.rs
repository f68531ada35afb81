//! The `diarize` flags that decide how speaker activity becomes segments (upstream's one-threshold rule, or NeMo's
//! post-processing) and where the segments go (`--segments`, `--rttm`, `--format`, `--uri`).

use std::path::{Path, PathBuf};

use clap::{Args, ValueEnum};
use nemotron_engine::{Segment, SegmentFormat, SegmentSettings, output, write_named_segments};

use crate::failure::Failure;
use crate::output::write_stdout;

/// How segments are made and written.
#[derive(Args)]
pub struct SegmentOptions {
    /// Write the segments here (`-`: standard output), in --format.
    #[arg(long, value_name = "FILE", conflicts_with = "out_dir")]
    segments: Option<PathBuf>,
    /// Write RTTM segments here: --segments FILE --format rttm.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["segments", "format", "out_dir"])]
    rttm: Option<PathBuf>,
    /// Segment format; default: from the --segments file's extension (`.json`, `.csv`), RTTM otherwise. With
    /// --out-dir: the format of each entry's `<id>.rttm`, `<id>.json` or `<id>.csv`.
    #[arg(long, value_enum)]
    format: Option<FormatFlag>,
    /// RTTM file id (whitespace becomes `_`); default: the input file's name without its extension (with
    /// --out-dir: each entry's id).
    #[arg(long, value_parser = file_id, conflicts_with = "out_dir")]
    uri: Option<String>,
    /// The rule: `--threshold`, NeMo's post-processing flags, `--max-speakers` (the library's settings, each a
    /// flag; checked before any work by [`SegmentSettings::segmenter`]).
    #[command(flatten)]
    settings: SegmentSettings,
}

/// `--format`.
#[derive(Clone, Copy, ValueEnum)]
enum FormatFlag {
    Rttm,
    Json,
    Csv,
}

impl From<FormatFlag> for SegmentFormat {
    fn from(flag: FormatFlag) -> Self {
        match flag {
            FormatFlag::Rttm => SegmentFormat::Rttm,
            FormatFlag::Json => SegmentFormat::Json,
            FormatFlag::Csv => SegmentFormat::Csv,
        }
    }
}

impl SegmentOptions {
    /// The segment settings of the flags (checked when the rule is made: [`SegmentSettings::segmenter`]).
    pub fn settings(&self) -> &SegmentSettings {
        &self.settings
    }

    /// The file the segments go to, if any (`-`, standard output, is not a file): one of the outputs checked
    /// before any work.
    pub fn file(&self) -> Option<&Path> {
        self.rttm.as_deref().or(self.segments.as_deref()).filter(|path| *path != Path::new("-"))
    }

    /// Whether the flags send the segments to standard output (`--segments -` or `--rttm -`).
    pub fn to_standard_output(&self) -> bool {
        self.rttm.as_deref().or(self.segments.as_deref()) == Some(Path::new("-"))
    }

    /// Writes the segments where the flags say: to their file (atomically), or to standard output for `-`, or when
    /// no flag names a place and `stdout_by_default`. `uri` is the RTTM file id unless --uri gives one. `names` are
    /// the enrolled speakers' (each slot's, `None` for the others; empty without known speakers): RTTM's speaker
    /// field is the name, JSON objects gain `"Name"`, CSV a `name` column.
    pub fn write(
        &self,
        segments: &[Segment],
        names: &[Option<String>],
        uri: &str,
        stdout_by_default: bool,
    ) -> Result<(), Failure> {
        let (named, format) = match (&self.rttm, &self.segments) {
            (Some(_), _) => (true, SegmentFormat::Rttm),
            (None, Some(path)) => (true, self.format(path)),
            (None, None) => (false, self.batch_format()),
        };
        let text = write_named_segments(segments, format, self.uri.as_deref().unwrap_or(uri), names);
        match self.file() {
            Some(path) => Ok(output::write_bytes(path, text.as_bytes())?),
            None if named || stdout_by_default => write_stdout(&text, "the segments"),
            None => Ok(()),
        }
    }

    /// The format of a batch run's segment files, and of standard output: --format, RTTM by default.
    pub fn batch_format(&self) -> SegmentFormat {
        self.format(Path::new("-"))
    }

    fn format(&self, path: &Path) -> SegmentFormat {
        match self.format {
            Some(format) => format.into(),
            None => SegmentFormat::from_extension(path),
        }
    }
}

/// `--uri`: some text besides whitespace.
fn file_id(text: &str) -> Result<String, String> {
    match text.trim() {
        "" => Err("an RTTM file id cannot be empty".into()),
        _ => Ok(text.to_string()),
    }
}
