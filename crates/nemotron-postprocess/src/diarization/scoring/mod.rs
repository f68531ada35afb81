//! Diarization error rate (DER, with its missed speech, false alarm and speaker confusion), the optimal speaker
//! mapping, and the Jaccard error rate (JER), equal to pyannote.metrics 4.2.0's (`DiarizationErrorRate`,
//! `JaccardErrorRate`) to rounding: the same 1 µs tolerances, collars, overlap removal, UEM handling, one track per
//! RTTM line, mapping (with scipy's choice among equally good ones) and aggregation over files.

mod annotation;
mod der;
mod jer;
mod timeline;

use std::collections::{BTreeMap, BTreeSet};

use self::annotation::{Annotation, Renaming};
use self::timeline::{Span, duration, timeline};
use super::error::DiarizationError;
use super::rttm::{Turn, UemSegment};

/// What is scored.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ScoreOptions {
    /// Seconds around each reference boundary left out of the score, half on each side (NIST's `md-eval` uses
    /// 0.25; pyannote.metrics' default is 0).
    pub collar: f64,
    /// Leave out the regions where reference speakers overlap.
    pub skip_overlap: bool,
}

impl Default for ScoreOptions {
    /// pyannote.metrics' defaults: no collar, overlap scored.
    fn default() -> Self {
        ScoreOptions { collar: 0.0, skip_overlap: false }
    }
}

/// Seconds of reference speech and of each kind of error. Where `k` reference speakers talk at once, each counts.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Components {
    /// Reference speech.
    pub reference_speech: f64,
    /// Reference speech attributed to the mapped hypothesis speaker.
    pub correct: f64,
    /// Reference speech without hypothesis speech.
    pub missed: f64,
    /// Hypothesis speech beyond the reference speech.
    pub false_alarm: f64,
    /// Reference speech attributed to another speaker.
    pub confusion: f64,
}

impl Components {
    /// `(missed + false alarm + confusion) / reference speech`; without reference speech, 0 if there is no error
    /// and 1 otherwise (pyannote's rule).
    pub fn der(&self) -> f64 {
        let errors = self.confusion + self.false_alarm + self.missed;
        if self.reference_speech > 0.0 {
            errors / self.reference_speech
        } else if errors == 0.0 {
            0.0
        } else {
            1.0
        }
    }

    /// Missed speech over reference speech; `None` without reference speech.
    pub fn miss_rate(&self) -> Option<f64> {
        self.rate(self.missed)
    }

    /// False alarm over reference speech; `None` without reference speech.
    pub fn false_alarm_rate(&self) -> Option<f64> {
        self.rate(self.false_alarm)
    }

    /// Confusion over reference speech; `None` without reference speech.
    pub fn confusion_rate(&self) -> Option<f64> {
        self.rate(self.confusion)
    }

    fn rate(&self, seconds: f64) -> Option<f64> {
        (self.reference_speech > 0.0).then(|| seconds / self.reference_speech)
    }

    fn add(&mut self, other: &Components) {
        self.reference_speech += other.reference_speech;
        self.correct += other.correct;
        self.missed += other.missed;
        self.false_alarm += other.false_alarm;
        self.confusion += other.confusion;
    }
}

/// One reference speaker's part of the JER.
#[derive(Clone, Debug, PartialEq)]
pub struct SpeakerScore {
    /// The reference speaker.
    pub reference: String,
    /// The hypothesis speaker mapped to it, if any.
    pub hypothesis: Option<String>,
    /// Its Jaccard error, 0 to 1.
    pub jer: f64,
}

/// The score of one file.
#[derive(Clone, Debug, PartialEq)]
pub struct FileScore {
    /// File id.
    pub uri: String,
    /// Seconds scored: the UEM (or the extent of both sides) less collars and skipped overlap.
    pub scored_seconds: f64,
    /// DER's parts.
    pub components: Components,
    /// The optimal mapping, hypothesis speaker → reference speaker, ordered by hypothesis speaker.
    pub mapping: Vec<(String, String)>,
    /// Per reference speaker left in the scored region, ordered by name.
    pub speakers: Vec<SpeakerScore>,
}

impl FileScore {
    /// The file's JER: the mean over its reference speakers, 1 when there is none (pyannote's rule).
    pub fn jer(&self) -> f64 {
        mean_jer(self.speakers.iter().map(|s| s.jer).sum(), self.speakers.len())
    }
}

/// Every file's score, and the totals.
#[derive(Clone, Debug, PartialEq)]
pub struct Score {
    /// Per file, ordered by file id.
    pub files: Vec<FileScore>,
    /// The parts summed over files (the overall DER is [`Components::der`] of these, not a mean of rates).
    pub total: Components,
}

impl Score {
    /// The overall JER: the mean over the reference speakers of all files, 1 when there is none.
    pub fn jer(&self) -> f64 {
        let errors = self.files.iter().map(|f| f.speakers.iter().map(|s| s.jer).sum::<f64>()).sum();
        mean_jer(errors, self.files.iter().map(|f| f.speakers.len()).sum())
    }

    /// Seconds scored, over all files.
    pub fn scored_seconds(&self) -> f64 {
        self.files.iter().fold(0.0, |total, f| total + f.scored_seconds)
    }
}

fn mean_jer(errors: f64, speakers: usize) -> f64 {
    if speakers == 0 { 1.0 } else { errors / speakers as f64 }
}

/// Scores `hypothesis` against `reference`, file by file (every file id either side or the UEM names; a file
/// missing on one side is empty there). Without a UEM, each file is scored over `[first start, last end]` of both
/// sides together; with one, every file of the RTTMs must appear in it.
pub fn score(
    reference: &[Turn],
    hypothesis: &[Turn],
    uem: Option<&[UemSegment]>,
    options: &ScoreOptions,
) -> Result<Score, DiarizationError> {
    if !(options.collar.is_finite() && options.collar >= 0.0) {
        return Err(DiarizationError::Setting(format!("collar = {} (must be seconds ≥ 0)", options.collar)));
    }
    let mut uris: BTreeSet<&str> = reference.iter().chain(hypothesis).map(|t| t.uri.as_str()).collect();
    let regions: Option<BTreeMap<&str, Vec<Span>>> = uem.map(|segments| {
        let mut regions: BTreeMap<&str, Vec<Span>> = BTreeMap::new();
        for s in segments {
            regions.entry(&s.uri).or_default().push(Span::new(s.start, s.end));
        }
        regions
    });
    if let Some(regions) = &regions {
        if let Some(missing) = uris.iter().find(|uri| !regions.contains_key(*uri)) {
            return Err(DiarizationError::Scoring(format!(
                "the UEM has no line for file `{missing}`, which the RTTM files have (add it, or remove its turns)"
            )));
        }
        uris.extend(regions.keys());
    }
    let side = |turns: &[Turn], uri: &str| {
        Annotation::new(
            turns
                .iter()
                .filter(|t| t.uri == uri)
                .map(|t| (Span::new(t.start, t.start + t.duration), t.speaker.as_str())),
        )
    };
    let mut files = Vec::new();
    let mut total = Components::default();
    for uri in uris {
        let (r, h) = (side(reference, uri), side(hypothesis, uri));
        let uem = match &regions {
            Some(regions) => regions.get(uri).cloned().unwrap_or_default(),
            None => default_uem(&r, &h),
        };
        let file = score_file(uri, &r, &h, &uem, options);
        total.add(&file.components);
        files.push(file);
    }
    Ok(Score { files, total })
}

/// pyannote's UEM when none is given: the hull of both sides' extents (nothing when both are empty).
fn default_uem(reference: &Annotation, hypothesis: &Annotation) -> Vec<Span> {
    match (reference.extent(), hypothesis.extent()) {
        (Some(a), Some(b)) => vec![Span::new(a.start.min(b.start), a.end.max(b.end))],
        (Some(a), None) | (None, Some(a)) => vec![a],
        (None, None) => Vec::new(),
    }
}

fn score_file(
    uri: &str,
    reference: &Annotation,
    hypothesis: &Annotation,
    uem: &[Span],
    options: &ScoreOptions,
) -> FileScore {
    let region = der::evaluated_region(uem, reference, options.collar, options.skip_overlap);
    let (r, h) = (reference.crop(&region), hypothesis.crop(&region));
    let mapping = h.optimal_mapping(Renaming::Numbers, &r, Renaming::Letters);
    let components = der::components(&r, &h, &mapping);
    let speakers = jer::speaker_errors(&r, &h)
        .into_iter()
        .enumerate()
        .map(|(label, (mapped, jer))| SpeakerScore {
            reference: r.labels[label].clone(),
            hypothesis: mapped.map(|m| h.labels[m].clone()),
            jer,
        })
        .collect();
    FileScore {
        uri: uri.to_string(),
        scored_seconds: duration(&timeline(region)),
        components,
        mapping: mapping
            .iter()
            .enumerate()
            .filter_map(|(label, mapped)| mapped.map(|m| (h.labels[label].clone(), r.labels[m].clone())))
            .collect(),
        speakers,
    }
}
