//! The Jaccard error rate per reference speaker, as pyannote.metrics 4.2.0 computes it (`diarization.py`
//! `JaccardErrorRate.compute_components`).

use super::annotation::{Annotation, Renaming, covered};
use super::timeline::{duration, timeline};

/// For each reference label (in label order): the hypothesis label mapped to it (the optimal mapping from the
/// reference side) and its JER, `(false alarm + missed) / union` over the two speakers' timelines (a speaker
/// overlapping itself counts once here), or 1 when nothing maps to it. Unmapped hypothesis speakers cost nothing.
pub(crate) fn speaker_errors(reference: &Annotation, hypothesis: &Annotation) -> Vec<(Option<usize>, f64)> {
    let mapping = reference.optimal_mapping(Renaming::Letters, hypothesis, Renaming::Numbers);
    mapping
        .iter()
        .enumerate()
        .map(|(r, mapped)| {
            let Some(h) = *mapped else { return (None, 1.0) };
            let (r_spans, h_spans) = (reference.label_timeline(r), hypothesis.label_timeline(h));
            let mut both = r_spans.clone();
            both.extend_from_slice(&h_spans);
            let union = duration(&timeline(both));
            let false_alarm = duration(&h_spans) - covered(&h_spans, &r_spans);
            let missed = duration(&r_spans) - covered(&r_spans, &h_spans);
            (Some(h), (false_alarm + missed) / union)
        })
        .collect()
}
