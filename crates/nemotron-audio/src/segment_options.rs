//! The `diarize` flags that decide how speaker activity becomes segments (upstream's one-threshold rule, or NeMo's
//! post-processing) and where the segments go (`--segments`, `--rttm`, `--format`, `--uri`).

use std::path::{Path, PathBuf};

use clap::{Args, ValueEnum};
use nemotron_engine::{Segment, SegmentFormat, SegmentSettings, output, write_segments};

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
    /// Activity threshold in [0, 1) (default 0.5). Alone: on each 10 ms speaker probability (upstream's rule). With
    /// post-processing options: onset = offset = this.
    #[arg(long, value_parser = threshold, conflicts_with_all = ["onset", "offset"])]
    threshold: Option<f64>,
    /// Post-processing: speech starts where the speaker probability is above this (NeMo's `onset`).
    #[arg(long, value_parser = probability)]
    onset: Option<f64>,
    /// Post-processing: speech ends where the speaker probability is below this (NeMo's `offset`).
    #[arg(long, value_parser = probability)]
    offset: Option<f64>,
    /// Post-processing: seconds added before each segment.
    #[arg(long, value_name = "SECONDS", value_parser = finite_seconds, allow_negative_numbers = true)]
    pad_onset: Option<f64>,
    /// Post-processing: seconds added after each segment.
    #[arg(long, value_name = "SECONDS", value_parser = finite_seconds, allow_negative_numbers = true)]
    pad_offset: Option<f64>,
    /// Post-processing: drop segments shorter than this many seconds.
    #[arg(long, value_name = "SECONDS", value_parser = duration)]
    min_duration_on: Option<f64>,
    /// Post-processing: fill gaps shorter than this many seconds.
    #[arg(long, value_name = "SECONDS", value_parser = duration)]
    min_duration_off: Option<f64>,
    /// Post-processing parameters from a NeMo YAML file (the flags above override its values).
    #[arg(long, value_name = "FILE.yaml")]
    postprocessing: Option<PathBuf>,
    /// Keep the N speakers with the most active time; drop the others.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    max_speakers: Option<u32>,
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
    pub fn settings(&self) -> SegmentSettings {
        SegmentSettings {
            threshold: self.threshold,
            onset: self.onset,
            offset: self.offset,
            pad_onset: self.pad_onset,
            pad_offset: self.pad_offset,
            min_duration_on: self.min_duration_on,
            min_duration_off: self.min_duration_off,
            postprocessing: self.postprocessing.clone(),
            postprocessing_yaml: None,
            max_speakers: self.max_speakers.map(|n| n as usize),
        }
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
    /// no flag names a place and `stdout_by_default`. `uri` is the RTTM file id unless --uri gives one.
    pub fn write(&self, segments: &[Segment], uri: &str, stdout_by_default: bool) -> Result<(), Failure> {
        let (named, format) = match (&self.rttm, &self.segments) {
            (Some(_), _) => (true, SegmentFormat::Rttm),
            (None, Some(path)) => (true, self.format(path)),
            (None, None) => (false, self.batch_format()),
        };
        let text = write_segments(segments, format, self.uri.as_deref().unwrap_or(uri));
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

/// A number for the setting `field`, checked as the library checks it (a usage error otherwise, exit status 2).
fn setting(field: &str, text: &str) -> Result<f64, String> {
    let value = text.parse::<f64>().map_err(|e| e.to_string())?;
    SegmentSettings::check(field, value)?;
    Ok(value)
}

/// `--threshold`: a probability in [0, 1).
fn threshold(text: &str) -> Result<f64, String> {
    setting("threshold", text)
}

/// `--uri`: some text besides whitespace.
fn file_id(text: &str) -> Result<String, String> {
    match text.trim() {
        "" => Err("an RTTM file id cannot be empty".into()),
        _ => Ok(text.to_string()),
    }
}

/// `--onset`, `--offset`: a probability in [0, 1].
fn probability(text: &str) -> Result<f64, String> {
    setting("onset", text)
}

/// `--pad-*`: finite seconds (NeMo allows negative pads).
fn finite_seconds(text: &str) -> Result<f64, String> {
    setting("pad_onset", text)
}

/// `--min-duration-*`: seconds ≥ 0.
fn duration(text: &str) -> Result<f64, String> {
    setting("min_duration_on", text)
}
