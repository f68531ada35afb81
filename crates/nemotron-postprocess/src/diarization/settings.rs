//! How speaker activity becomes segments, as one typed value: upstream's one-threshold rule, or NeMo's
//! post-processing (settings from a YAML file, each overridable), and how many speakers to keep. The CLI's segment
//! flags, the server's form fields, a Python dict and the browser package's options all map onto
//! [`SegmentSettings`] (serde), and each value is checked here, the error naming the field.

use std::path::PathBuf;

use serde::Deserialize;

use super::{DiarizationError, PostProcessing, SegmentRule};

/// The segment settings. Every field is optional; `Default` (nothing set) is upstream's rule at threshold 0.5.
/// NeMo's post-processing is used as soon as one of its settings or a YAML file is given (even at NeMo's default
/// values, whose results differ slightly from the one-threshold rule's).
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SegmentSettings {
    /// Activity threshold in [0, 1) (default 0.5). Alone: on each 10 ms speaker probability (upstream's rule). With
    /// post-processing settings: onset = offset = this.
    pub threshold: Option<f64>,
    /// Post-processing: speech starts where the speaker probability is above this (in [0, 1]).
    pub onset: Option<f64>,
    /// Post-processing: speech ends where the speaker probability is below this (in [0, 1]).
    pub offset: Option<f64>,
    /// Post-processing: seconds added before each segment (finite; may be negative, as in NeMo).
    pub pad_onset: Option<f64>,
    /// Post-processing: seconds added after each segment (finite; may be negative).
    pub pad_offset: Option<f64>,
    /// Post-processing: drop segments shorter than this many seconds (≥ 0).
    pub min_duration_on: Option<f64>,
    /// Post-processing: fill gaps shorter than this many seconds (≥ 0).
    pub min_duration_off: Option<f64>,
    /// Post-processing parameters from a NeMo YAML file; the settings above override its values.
    pub postprocessing: Option<PathBuf>,
    /// Post-processing parameters as NeMo YAML text (instead of a file: what a client sends a server).
    pub postprocessing_yaml: Option<String>,
    /// Keep the N speakers with the most active time (N ≥ 1); drop the others.
    pub max_speakers: Option<usize>,
}

impl SegmentSettings {
    /// Checks one numeric setting, by field name: the reason it is refused, without the name.
    pub fn check(field: &str, value: f64) -> Result<(), String> {
        let probability = |closed: bool| {
            let within = if closed { (0.0..=1.0).contains(&value) } else { (0.0..1.0).contains(&value) };
            match within {
                true => Ok(()),
                false => Err(format!("{value} is not in [0, 1{}", if closed { "]" } else { ")" })),
            }
        };
        match field {
            "threshold" => probability(false),
            "onset" | "offset" => probability(true),
            "pad_onset" | "pad_offset" | "min_duration_on" | "min_duration_off" if !value.is_finite() => {
                Err(format!("{value} is not a finite number of seconds"))
            }
            "min_duration_on" | "min_duration_off" if value < 0.0 => Err(format!("{value} is negative")),
            _ => Ok(()),
        }
    }

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
        for (field, value) in self.numbers() {
            if let Some(value) = value {
                Self::check(field, value).map_err(|problem| DiarizationError::Field { field, problem })?;
            }
        }
        let setting = |field, problem: &str| Err(DiarizationError::Field { field, problem: problem.into() });
        if self.threshold.is_some() && (self.onset.is_some() || self.offset.is_some()) {
            return setting("threshold", "give it, or onset and offset, not both");
        }
        if self.postprocessing.is_some() && self.postprocessing_yaml.is_some() {
            return setting("postprocessing", "give a file or YAML text, not both");
        }
        if self.max_speakers == Some(0) {
            return setting("max_speakers", "0 is not at least 1");
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
            (Some(path), _) => PostProcessing::read_nemo_yaml(path)?,
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
