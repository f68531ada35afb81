//! How speaker activity becomes segments, as one typed value: upstream's one-threshold rule, or NeMo's
//! post-processing (settings from a YAML file, each overridable), and how many speakers to keep. This struct is the
//! one list of the settings: the CLI's flags are its fields (feature `clap`), the server's form fields, a Python
//! call's keyword arguments and the browser package's options are read into it by serde
//! ([`SegmentSettings::from_fields`]), the server's OpenAPI schema is made from it (feature `schema`), and each value
//! is checked here ([`SegmentSettings::validate`]), the error naming the field.

use serde::Deserialize;

use super::fields::NemoParameters;
use super::{DiarizationError, PostProcessing, SegmentRule};

/// The segment settings, each one optional. None set: upstream's rule at threshold 0.5. NeMo's
/// post-processing is used as soon as one of its settings or a YAML file is given (even at NeMo's default values,
/// whose results differ slightly from the one-threshold rule's).
// These doc comments are also the flags' `--help` and the descriptions of the server's OpenAPI document.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(default, deny_unknown_fields)]
pub struct SegmentSettings {
    /// Activity threshold in [0, 1) (default 0.5). Alone: on each 10 ms speaker probability (upstream's rule). With
    /// post-processing settings: onset = offset = this.
    #[cfg_attr(feature = "clap", arg(long))]
    pub threshold: Option<f64>,
    /// Post-processing: speech starts where the speaker probability is above this (NeMo's `onset`, in [0, 1]).
    #[cfg_attr(feature = "clap", arg(long))]
    pub onset: Option<f64>,
    /// Post-processing: speech ends where the speaker probability is below this (NeMo's `offset`, in [0, 1]).
    #[cfg_attr(feature = "clap", arg(long))]
    pub offset: Option<f64>,
    /// Post-processing: seconds added before each segment (may be negative, as in NeMo).
    #[cfg_attr(feature = "clap", arg(long, value_name = "SECONDS", allow_negative_numbers = true))]
    pub pad_onset: Option<f64>,
    /// Post-processing: seconds added after each segment (may be negative).
    #[cfg_attr(feature = "clap", arg(long, value_name = "SECONDS", allow_negative_numbers = true))]
    pub pad_offset: Option<f64>,
    /// Post-processing: drop segments shorter than this many seconds.
    #[cfg_attr(feature = "clap", arg(long, value_name = "SECONDS"))]
    pub min_duration_on: Option<f64>,
    /// Post-processing: fill gaps shorter than this many seconds.
    #[cfg_attr(feature = "clap", arg(long, value_name = "SECONDS"))]
    pub min_duration_off: Option<f64>,
    /// Post-processing parameters from a NeMo YAML file; the settings above override its values.
    #[cfg_attr(feature = "clap", arg(long, value_name = "FILE.yaml", value_parser = NemoParameters::flag()))]
    pub postprocessing: Option<NemoParameters>,
    /// NeMo post-processing YAML text (what a client sends a server instead of a file); the settings above override
    /// its values.
    #[cfg_attr(feature = "clap", arg(skip))]
    pub postprocessing_yaml: Option<String>,
    /// Keep the N speakers with the most active time (N ≥ 1); drop the others. Not with a stream (they are known
    /// only at its end).
    #[cfg_attr(feature = "clap", arg(long, value_name = "N"))]
    pub max_speakers: Option<usize>,
}

/// What a numeric setting may be: each range stated once, checked by [`SegmentSettings::validate`] and written into
/// the JSON Schema.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Range {
    /// A probability in [0, 1), or [0, 1] when `closed`.
    Probability { closed: bool },
    /// A finite number of seconds, at least 0 unless `signed`.
    Seconds { signed: bool },
    /// A whole number, at least 1.
    Count,
}

impl Range {
    /// The range of the setting `field`, if it is a number.
    pub(super) fn of(field: &str) -> Option<Range> {
        match field {
            "threshold" => Some(Range::Probability { closed: false }),
            "onset" | "offset" => Some(Range::Probability { closed: true }),
            "pad_onset" | "pad_offset" => Some(Range::Seconds { signed: true }),
            "min_duration_on" | "min_duration_off" => Some(Range::Seconds { signed: false }),
            "max_speakers" => Some(Range::Count),
            _ => None,
        }
    }

    /// Why `value` is out of this range, if it is.
    fn check(self, value: f64) -> Result<(), String> {
        match self {
            Range::Probability { closed } => {
                let within = if closed { (0.0..=1.0).contains(&value) } else { (0.0..1.0).contains(&value) };
                match within {
                    true => Ok(()),
                    false => Err(format!("{value} is not in [0, 1{}", if closed { "]" } else { ")" })),
                }
            }
            Range::Seconds { .. } if !value.is_finite() => Err(format!("{value} is not a finite number of seconds")),
            Range::Seconds { signed: false } if value < 0.0 => Err(format!("{value} is negative")),
            Range::Count if value < 1.0 => Err(format!("{value} is not at least 1")),
            _ => Ok(()),
        }
    }

    /// The JSON Schema keywords of this range, with their bounds.
    #[cfg(feature = "schema")]
    pub(super) fn keywords(self) -> Vec<(&'static str, i64)> {
        match self {
            Range::Probability { closed: true } => vec![("minimum", 0), ("maximum", 1)],
            Range::Probability { closed: false } => vec![("minimum", 0), ("exclusiveMaximum", 1)],
            Range::Seconds { signed: true } => vec![],
            Range::Seconds { signed: false } => vec![("minimum", 0)],
            Range::Count => vec![("minimum", 1)],
        }
    }
}

impl SegmentSettings {
    /// The numeric settings by field name.
    fn numbers(&self) -> [(&'static str, Option<f64>); 7] {
        [
            ("threshold", self.threshold),
            ("onset", self.onset),
            ("offset", self.offset),
            ("pad_onset", self.pad_onset),
            ("pad_offset", self.pad_offset),
            ("min_duration_on", self.min_duration_on),
            ("min_duration_off", self.min_duration_off),
        ]
    }

    /// Checks every setting; the error names the field.
    pub fn validate(&self) -> Result<(), DiarizationError> {
        let count = ("max_speakers", self.max_speakers.map(|n| n as f64));
        for (field, value) in self.numbers().into_iter().chain([count]) {
            if let (Some(value), Some(range)) = (value, Range::of(field)) {
                range.check(value).map_err(|problem| DiarizationError::Field { field, problem })?;
            }
        }
        let setting = |field, problem: &str| Err(DiarizationError::Field { field, problem: problem.into() });
        if self.threshold.is_some() && (self.onset.is_some() || self.offset.is_some()) {
            return setting("threshold", "give it, or onset and offset, not both");
        }
        if self.postprocessing.is_some() && self.postprocessing_yaml.is_some() {
            return setting("postprocessing", "give a file or YAML text, not both");
        }
        Ok(())
    }

    /// The rule these settings ask for (reading the YAML file, if one is named).
    pub fn segmenter(&self) -> Result<SegmentRule, DiarizationError> {
        self.validate()?;
        let tuned = self.numbers()[1..].iter().any(|(_, value)| value.is_some());
        let yaml = self.postprocessing.is_some() || self.postprocessing_yaml.is_some();
        if !tuned && !yaml {
            return Ok(SegmentRule::Threshold {
                threshold: self.threshold.unwrap_or(0.5),
                max_speakers: self.max_speakers,
            });
        }
        let mut settings = match (&self.postprocessing, &self.postprocessing_yaml) {
            (Some(parameters), _) => parameters.read()?,
            (None, Some(text)) => PostProcessing::from_nemo_yaml(text, "the post-processing YAML")?,
            (None, None) => PostProcessing::default(),
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
        settings.max_speakers = self.max_speakers;
        settings.validate()?;
        Ok(SegmentRule::PostProcessing(settings))
    }

    /// The rule of a stream's events: [`SegmentSettings::segmenter`]'s, refused when it keeps the most active
    /// speakers (which are known only at the end of a recording).
    pub fn live_rule(&self) -> Result<SegmentRule, DiarizationError> {
        let rule = self.segmenter()?;
        match rule.max_speakers() {
            None => Ok(rule),
            Some(_) => Err(DiarizationError::Field {
                field: "max_speakers",
                problem: "needs the whole recording (the most active speakers are known only at its end): not with \
                          a stream"
                    .into(),
            }),
        }
    }
}
