//! pyannote.core's geometry (6.1.0, `segment.py`, `timeline.py`), with its 1 µs tolerance at the same places:
//! a segment is empty unless longer than 1 µs, two segments "intersect" only when they share a start or overlap by
//! more than 1 µs, supports join segments whose gap is at most 1 µs. Scores equal pyannote's only if these rules
//! are the same.

/// pyannote.core's `SEGMENT_PRECISION`.
const PRECISION: f64 = 1e-6;

/// A `[start, end]` segment (pyannote's `Segment`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Span {
    pub start: f64,
    pub end: f64,
}

impl Span {
    pub fn new(start: f64, end: f64) -> Self {
        Span { start, end }
    }

    /// pyannote's `bool(segment)` is false.
    pub fn is_empty(&self) -> bool {
        self.end - self.start <= PRECISION
    }

    /// pyannote's `segment.duration`: 0 for an empty segment.
    pub fn duration(&self) -> f64 {
        if self.is_empty() { 0.0 } else { self.end - self.start }
    }

    /// `self & other`, possibly empty.
    pub fn intersection(&self, other: &Span) -> Span {
        Span::new(self.start.max(other.start), self.end.min(other.end))
    }

    /// pyannote's `Segment.intersects`: the same start, or an overlap of more than 1 µs.
    pub fn intersects(&self, other: &Span) -> bool {
        (self.start < other.start && other.start < self.end - PRECISION)
            || (self.start > other.start && self.start < other.end - PRECISION)
            || self.start == other.start
    }

    fn middle(&self) -> f64 {
        0.5 * (self.start + self.end)
    }
}

/// A pyannote `Timeline`: the non-empty segments, sorted by (start, end), each once.
pub(crate) fn timeline(mut spans: Vec<Span>) -> Vec<Span> {
    spans.retain(|s| !s.is_empty());
    spans.sort_by(|a, b| a.start.total_cmp(&b.start).then(a.end.total_cmp(&b.end)));
    spans.dedup();
    spans
}

/// `Timeline.support()`: joins segments that overlap or whose gap is at most 1 µs. `spans` is a [`timeline`].
pub(crate) fn support(spans: &[Span]) -> Vec<Span> {
    let mut out = Vec::new();
    let Some(&first) = spans.first() else { return out };
    let mut current = first;
    for s in spans {
        let gap = Span::new(s.end.min(current.end), s.start.max(current.start));
        if gap.is_empty() {
            current = Span::new(current.start.min(s.start), current.end.max(s.end));
        } else {
            out.push(current);
            current = *s;
        }
    }
    out.push(current);
    out
}

/// `Timeline.duration()`: the length of the support (0.0 when empty; Rust's `sum` would give −0.0).
pub(crate) fn duration(spans: &[Span]) -> f64 {
    support(spans).iter().map(Span::duration).fold(0.0, |total, d| total + d)
}

/// Calls `f(i, j)` for each `a[i]` and `b[j]` that [`Span::intersects`]; `b` must be sorted by start.
pub(crate) fn intersecting(a: &[Span], b: &[Span], mut f: impl FnMut(usize, usize)) {
    // Segments of `b` that reach `x` start after `x − longest`: no need to look further back (with a margin far
    // above rounding; `intersects` decides).
    let longest = b.iter().map(|s| s.end - s.start).fold(0.0, f64::max);
    for (i, x) in a.iter().enumerate() {
        let first = b.partition_point(|s| s.start < x.start - longest - 1.0);
        for (j, y) in b.iter().enumerate().skip(first) {
            if y.start > x.end {
                break;
            }
            if x.intersects(y) {
                f(i, j);
            }
        }
    }
}

/// `Timeline.crop(support, mode="intersection")`: the non-empty parts of `spans` inside `region`'s support.
pub(crate) fn crop(spans: &[Span], region: &[Span]) -> Vec<Span> {
    let region = support(&timeline(region.to_vec()));
    let mut out = Vec::new();
    intersecting(spans, &region, |i, j| out.push(spans[i].intersection(&region[j])));
    timeline(out)
}

/// `self.gaps(support=region)`: the parts of `region`'s support that `spans` do not cover, longer than 1 µs.
pub(crate) fn gaps(spans: &[Span], region: &[Span]) -> Vec<Span> {
    let mut out = Vec::new();
    for u in support(&timeline(region.to_vec())) {
        let mut end = u.start;
        for s in support(&crop(spans, &[u])) {
            out.push(Span::new(end, s.start));
            end = s.end;
        }
        out.push(Span::new(end, u.end));
    }
    timeline(out)
}

/// `Timeline.segmentation()`: the pieces between consecutive boundaries of `spans` that lie inside them (middle
/// point in the support, closed bounds), longer than 1 µs.
pub(crate) fn segmentation(spans: &[Span]) -> Vec<Span> {
    let covered = support(spans);
    let mut boundaries: Vec<f64> = spans.iter().flat_map(|s| [s.start, s.end]).collect();
    boundaries.sort_by(f64::total_cmp);
    boundaries.dedup();
    let mut out = Vec::new();
    for pair in boundaries.windows(2) {
        let piece = Span::new(pair[0], pair[1]);
        let middle = piece.middle();
        if !piece.is_empty() && covered.iter().any(|u| u.start <= middle && middle <= u.end) {
            out.push(piece);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spans(pairs: &[(f64, f64)]) -> Vec<Span> {
        pairs.iter().map(|&(s, e)| Span::new(s, e)).collect()
    }

    #[test]
    fn the_microsecond_tolerance_applies_where_pyannote_applies_it() {
        assert!(Span::new(1.0, 1.000001).is_empty());
        assert!(!Span::new(1.0, 1.0000011).is_empty());
        // Overlap of 0.5 µs: no intersection; a shared start always intersects.
        assert!(!Span::new(1.0, 2.0).intersects(&Span::new(1.9999995, 3.0)));
        assert!(Span::new(1.0, 2.0).intersects(&Span::new(1.999, 3.0)));
        assert!(Span::new(1.0, 2.0).intersects(&Span::new(1.0, 1.5)));
        // A gap of 0.5 µs joins in the support, one of 2 µs does not.
        assert_eq!(
            support(&spans(&[(1.0, 2.0), (2.0000005, 3.0), (3.000002, 4.0)])),
            spans(&[(1.0, 3.0), (3.000002, 4.0)])
        );
        assert_eq!(
            timeline(spans(&[(2.0, 3.0), (1.0, 2.0), (2.0, 3.0), (5.0, 5.0000008)])),
            spans(&[(1.0, 2.0), (2.0, 3.0)])
        );
    }

    #[test]
    fn crop_gaps_and_segmentation() {
        let a = timeline(spans(&[(0.0, 2.0), (1.0, 4.0), (6.0, 7.0)]));
        assert_eq!(duration(&a), 5.0);
        assert_eq!(crop(&a, &spans(&[(1.5, 6.5)])), spans(&[(1.5, 2.0), (1.5, 4.0), (6.0, 6.5)]));
        assert_eq!(gaps(&a, &spans(&[(-1.0, 10.0)])), spans(&[(-1.0, 0.0), (4.0, 6.0), (7.0, 10.0)]));
        assert_eq!(segmentation(&a), spans(&[(0.0, 1.0), (1.0, 2.0), (2.0, 4.0), (6.0, 7.0)]));
    }
}
