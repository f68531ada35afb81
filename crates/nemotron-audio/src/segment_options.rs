//! The `diarize` flags that decide how speaker activity becomes segments (upstream's one-threshold rule, or NeMo's
//! post-processing) and where the segments go (`--segments`, `--rttm`, `--format`, `--uri`).

use std::path::{Path, PathBuf};

use clap::Args;
use nemotron_postprocess::diarization::{
    FrameGrid, PostProcessing, Segment, SegmentFormat, keep_most_active, threshold_segments,
};
use nemotron_towers::{Diarization, DiarizationConfig};

use crate::failure::Failure;
use crate::output;

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
    #[arg(long, value_parser = ["rttm", "json", "csv"])]
    format: Option<String>,
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

/// How segments are made.
#[derive(Clone, Copy)]
pub enum Rule {
    /// Upstream's `extract_speaker_dict`: `sigmoid(logit) > threshold` on each valid 10 ms frame.
    Threshold { threshold: f64, max_speakers: Option<usize> },
    /// NeMo's post-processing on the encoder-rate probabilities.
    PostProcessing(PostProcessing),
}

impl SegmentOptions {
    /// The rule the flags ask for: NeMo's post-processing as soon as one of its options or a file is given (even at
    /// NeMo's default values, whose results differ slightly from the one-threshold rule's), else the threshold.
    pub fn rule(&self) -> Result<Rule, Failure> {
        let max_speakers = self.max_speakers.map(|n| n as usize);
        let tuned =
            [self.onset, self.offset, self.pad_onset, self.pad_offset, self.min_duration_on, self.min_duration_off]
                .iter()
                .any(Option::is_some);
        if !tuned && self.postprocessing.is_none() {
            return Ok(Rule::Threshold { threshold: self.threshold.unwrap_or(0.5), max_speakers });
        }
        let mut settings = match &self.postprocessing {
            Some(path) => PostProcessing::read_nemo_yaml(path)?,
            None => PostProcessing::default(),
        };
        let overrides = [
            (&mut settings.onset, self.onset.or(self.threshold)),
            (&mut settings.offset, self.offset.or(self.threshold)),
            (&mut settings.pad_onset, self.pad_onset),
            (&mut settings.pad_offset, self.pad_offset),
            (&mut settings.min_duration_on, self.min_duration_on),
            (&mut settings.min_duration_off, self.min_duration_off),
        ];
        for (slot, value) in overrides {
            if let Some(value) = value {
                *slot = value;
            }
        }
        settings.max_speakers = max_speakers;
        settings.validate().map_err(|e| Failure::Usage(e.to_string()))?;
        Ok(Rule::PostProcessing(settings))
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
        let text = format.write(self.uri.as_deref().unwrap_or(uri), segments);
        match self.file() {
            Some(path) => output::write_bytes(path, text.as_bytes()),
            None if named || stdout_by_default => output::write_stdout(&text, "the segments"),
            None => Ok(()),
        }
    }

    /// The format of a batch run's segment files, and of standard output: --format, RTTM by default.
    pub fn batch_format(&self) -> SegmentFormat {
        self.format(Path::new("-"))
    }

    fn format(&self, path: &Path) -> SegmentFormat {
        match self.format.as_deref().map(str::parse) {
            Some(Ok(format)) => format,
            _ => SegmentFormat::from_extension(path),
        }
    }
}

impl Rule {
    /// The segments of one recording, ordered by start then speaker.
    pub fn segments(&self, result: &Diarization, config: &DiarizationConfig) -> Vec<Segment> {
        let (speakers, subsampling) = (config.speakers, config.encoder.subsampling);
        match self {
            Rule::Threshold { threshold, max_speakers } => {
                let mut segments =
                    threshold_segments(&result.speaker_logits, speakers, result.features.valid, *threshold);
                if let Some(n) = max_speakers {
                    keep_most_active(&mut segments, *n);
                }
                segments
            }
            Rule::PostProcessing(settings) => {
                // The encoder rows that hold valid frames: NeMo's encoder length, ⌈valid / subsampling⌉.
                let rows = result.features.valid.div_ceil(subsampling);
                settings.segments(&result.speaker_probabilities, speakers, rows, FrameGrid::sortformer(subsampling))
            }
        }
    }

    /// The thresholds to draw: `(name, value)`.
    pub fn thresholds(&self) -> Vec<(&'static str, f64)> {
        match self {
            Rule::Threshold { threshold, .. } => vec![("threshold", *threshold)],
            Rule::PostProcessing(p) if p.onset == p.offset => vec![("onset = offset", p.onset)],
            Rule::PostProcessing(p) => vec![("onset", p.onset), ("offset", p.offset)],
        }
    }
}

/// `--threshold`: a probability in [0, 1) (a usage error otherwise, exit status 2).
fn threshold(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(t) if (0.0..1.0).contains(&t) => Ok(t),
        Ok(t) => Err(format!("{t} is not in [0, 1)")),
        Err(e) => Err(e.to_string()),
    }
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
    match text.parse::<f64>() {
        Ok(p) if (0.0..=1.0).contains(&p) => Ok(p),
        Ok(p) => Err(format!("{p} is not in [0, 1]")),
        Err(e) => Err(e.to_string()),
    }
}

/// `--pad-*`: finite seconds (NeMo allows negative pads).
fn finite_seconds(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(s) if s.is_finite() => Ok(s),
        Ok(s) => Err(format!("{s} is not a finite number of seconds")),
        Err(e) => Err(e.to_string()),
    }
}

/// `--min-duration-*`: seconds ≥ 0.
fn duration(text: &str) -> Result<f64, String> {
    match finite_seconds(text)? {
        s if s >= 0.0 => Ok(s),
        s => Err(format!("{s} is negative")),
    }
}
