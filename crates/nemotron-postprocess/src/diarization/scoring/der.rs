//! The diarization error rate's parts, as pyannote.metrics 4.2.0 computes them (`utils.py` `uemify`/`extrude`,
//! `diarization.py` `DiarizationErrorRate`, `identification.py`, `matcher.py`).

use super::Components;
use super::annotation::Annotation;
use super::timeline::{Span, gaps, intersecting, segmentation, support, timeline};

/// The evaluated region (`extrude`): the UEM less, when asked, a collar around each reference boundary (`collar`
/// seconds in all, half on each side) and the reference's overlapping speech (every pair of intersecting tracks,
/// a speaker with itself and repeated lines included). Pieces of 1 µs or less vanish.
pub(crate) fn evaluated_region(uem: &[Span], reference: &Annotation, collar: f64, skip_overlap: bool) -> Vec<Span> {
    if collar == 0.0 && !skip_overlap {
        return timeline(uem.to_vec());
    }
    let mut removed = Vec::new();
    if collar > 0.0 {
        for s in timeline(reference.spans()) {
            for t in [s.start, s.end] {
                removed.push(Span::new(t - 0.5 * collar, t + 0.5 * collar));
            }
        }
    }
    if skip_overlap {
        let spans = reference.spans();
        intersecting(&spans, &spans, |i, j| {
            if i != j {
                removed.push(spans[i].intersection(&spans[j]));
            }
        });
    }
    gaps(&support(&timeline(removed)), uem)
}

/// The components on `reference` and `hypothesis` (already cropped to the evaluated region), with `mapping[h]` the
/// reference label hypothesis label `h` maps to: on each piece of their common segmentation, with `NR` reference
/// tracks and `NH` hypothesis tracks on it, `correct` = the tracks whose labels match one to one, `confusion` =
/// `min(NR, NH) − correct`, missed `max(0, NR − NH)`, false alarm `max(0, NH − NR)`, each times the piece's length.
pub(crate) fn components(reference: &Annotation, hypothesis: &Annotation, mapping: &[Option<usize>]) -> Components {
    let mut spans = reference.spans();
    spans.extend(hypothesis.spans());
    let pieces = segmentation(&timeline(spans));
    // Labels on each piece: reference labels as they are, hypothesis labels mapped, or past the reference's labels
    // when unmapped (they match nothing).
    let mut on_piece: Vec<(Vec<usize>, Vec<usize>)> = vec![(Vec::new(), Vec::new()); pieces.len()];
    intersecting(&reference.spans(), &pieces, |t, p| on_piece[p].0.push(reference.tracks[t].label));
    let unmapped = reference.labels.len();
    intersecting(&hypothesis.spans(), &pieces, |t, p| {
        let label = hypothesis.tracks[t].label;
        on_piece[p].1.push(mapping[label].unwrap_or(unmapped + label));
    });
    let mut total = Components::default();
    for (piece, (mut r, mut h)) in pieces.iter().zip(on_piece) {
        let duration = piece.duration();
        r.sort_unstable();
        h.sort_unstable();
        let correct = matching(&r, &h);
        let (nr, nh) = (r.len(), h.len());
        total.reference_speech += duration * nr as f64;
        total.correct += duration * correct as f64;
        total.confusion += duration * (nr.min(nh) - correct) as f64;
        total.missed += duration * nr.saturating_sub(nh) as f64;
        total.false_alarm += duration * nh.saturating_sub(nr) as f64;
    }
    total
}

/// How many items of two sorted lists pair up with an equal item of the other (Σ over labels of the smaller count).
fn matching(a: &[usize], b: &[usize]) -> usize {
    let (mut i, mut j, mut pairs) = (0, 0, 0);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                pairs += 1;
                i += 1;
                j += 1;
            }
        }
    }
    pairs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repeated_labels_match_one_to_one() {
        assert_eq!(matching(&[0, 0, 1], &[0, 1, 1, 2]), 2);
        assert_eq!(matching(&[], &[3]), 0);
    }

    #[test]
    fn collars_and_overlap_leave_the_rest_of_the_uem() {
        let reference = Annotation::new([(Span::new(1.0, 3.0), "a"), (Span::new(2.0, 4.0), "b")]);
        let uem = [Span::new(0.0, 5.0)];
        assert_eq!(evaluated_region(&uem, &reference, 0.0, false), uem);
        assert_eq!(
            evaluated_region(&uem, &reference, 0.5, false),
            [(0.0, 0.75), (1.25, 1.75), (2.25, 2.75), (3.25, 3.75), (4.25, 5.0)].map(|(s, e)| Span::new(s, e))
        );
        assert_eq!(evaluated_region(&uem, &reference, 0.0, true), [Span::new(0.0, 2.0), Span::new(3.0, 5.0)]);
    }
}
