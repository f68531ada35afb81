//! pyannote's `Annotation` as the metrics use it: one track per RTTM line (two lines never merge, so a speaker
//! overlapping itself counts twice), cropping, per-label timelines, co-occurrence, and the optimal mapping.

use crate::math::linear_sum_assignment;

use super::timeline::{Span, crop, intersecting, support, timeline};

/// One track: a segment with a label (an index into [`Annotation::labels`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Track {
    pub span: Span,
    pub label: usize,
}

/// The tracks of one file on one side (reference or hypothesis), sorted by start.
#[derive(Clone, Debug, Default)]
pub(crate) struct Annotation {
    pub tracks: Vec<Track>,
    /// The labels present, sorted (pyannote sorts labels with `key=str`: Unicode order, as Rust's `String`).
    pub labels: Vec<String>,
}

/// How pyannote renames labels before mapping (`rename_labels(generator=…)`): the matrix it hands to scipy has its
/// rows and columns in the order of the new names, which decides between equally good mappings.
#[derive(Clone, Copy)]
pub(crate) enum Renaming {
    /// The reference: `A`, `B`, …, `Z`, `AA`, `AB`, …
    Letters,
    /// The hypothesis: `0`, `1`, …, ordered as text (`10` before `2`).
    Numbers,
}

impl Annotation {
    /// The non-empty segments with their labels.
    pub fn new<'a>(tracks: impl IntoIterator<Item = (Span, &'a str)>) -> Self {
        let tracks: Vec<(Span, &str)> = tracks.into_iter().filter(|(span, _)| !span.is_empty()).collect();
        let mut labels: Vec<String> = tracks.iter().map(|(_, label)| label.to_string()).collect();
        labels.sort();
        labels.dedup();
        let mut tracks: Vec<Track> = tracks
            .into_iter()
            .map(|(span, label)| Track { span, label: labels.binary_search_by(|l| l.as_str().cmp(label)).unwrap_or(0) })
            .collect();
        tracks.sort_by(|a, b| a.span.start.total_cmp(&b.span.start));
        Annotation { tracks, labels }
    }

    /// The segments of all tracks.
    pub fn spans(&self) -> Vec<Span> {
        self.tracks.iter().map(|t| t.span).collect()
    }

    /// The segments of the tracks with this label, as a timeline.
    pub fn label_timeline(&self, label: usize) -> Vec<Span> {
        timeline(self.tracks.iter().filter(|t| t.label == label).map(|t| t.span).collect())
    }

    /// `[first start, last end]` of the tracks (pyannote's `extent`), if any.
    pub fn extent(&self) -> Option<Span> {
        let start = self.tracks.iter().map(|t| t.span.start).reduce(f64::min)?;
        let end = self.tracks.iter().map(|t| t.span.end).reduce(f64::max)?;
        Some(Span::new(start, end))
    }

    /// `Annotation.crop(region, mode="intersection")`: each track cut into its non-empty parts inside the region's
    /// support; labels left without a track disappear.
    pub fn crop(&self, region: &[Span]) -> Annotation {
        let region = support(&timeline(region.to_vec()));
        let spans = self.spans();
        let mut pieces = Vec::new();
        intersecting(&spans, &region, |i, j| {
            let label = self.labels[self.tracks[i].label].as_str();
            pieces.push((spans[i].intersection(&region[j]), label));
        });
        Annotation::new(pieces)
    }

    /// The label order after pyannote's renaming (see [`Renaming`]): position `k` of the result is the label whose
    /// new name sorts `k`-th.
    fn renamed_order(&self, renaming: Renaming) -> Vec<usize> {
        let names: Vec<String> = (0..self.labels.len()).map(|i| new_name(i, renaming)).collect();
        let mut order: Vec<usize> = (0..names.len()).collect();
        order.sort_by(|&a, &b| names[a].cmp(&names[b]));
        order
    }

    /// pyannote's `HungarianMapper()(self, other)`: for each label of `self`, the label of `other` it maps to,
    /// maximising the total co-occurrence; pairs without co-occurrence are not kept.
    pub fn optimal_mapping(
        &self,
        renaming: Renaming,
        other: &Annotation,
        other_renaming: Renaming,
    ) -> Vec<Option<usize>> {
        let (rows, columns) = (self.renamed_order(renaming), other.renamed_order(other_renaming));
        let cooc = self.cooccurrence(other);
        let width = other.labels.len();
        let weights: Vec<f64> =
            rows.iter().flat_map(|&a| columns.iter().map(move |&b| (a, b))).map(|(a, b)| cooc[a * width + b]).collect();
        // pyannote solves `linear_sum_assignment(-cooccurrence)`: the same costs, so equally good mappings are
        // broken as scipy breaks them. Sums of finite durations leave nothing to refuse but an overflow to infinity,
        // which maps nothing.
        let cost: Vec<f64> = weights.iter().map(|w| -w).collect();
        let mut mapping = vec![None; self.labels.len()];
        for (r, c) in linear_sum_assignment(&cost, rows.len(), columns.len()).unwrap_or_default() {
            if weights[r * columns.len() + c] > 0.0 {
                mapping[rows[r]] = Some(columns[c]);
            }
        }
        mapping
    }

    /// `self * other`: seconds during which each label of `self` and each label of `other` are both on, summed over
    /// intersecting pairs of tracks (row-major, `self`'s labels as rows).
    fn cooccurrence(&self, other: &Annotation) -> Vec<f64> {
        let width = other.labels.len();
        let mut matrix = vec![0.0; self.labels.len() * width];
        intersecting(&self.spans(), &other.spans(), |i, j| {
            let (a, b) = (&self.tracks[i], &other.tracks[j]);
            matrix[a.label * width + b.label] += a.span.intersection(&b.span).duration();
        });
        matrix
    }
}

/// The `i`-th name of pyannote's generators: `string_generator` (`A`…`Z`, `AA`, …) or `int_generator`.
fn new_name(i: usize, renaming: Renaming) -> String {
    match renaming {
        Renaming::Numbers => i.to_string(),
        Renaming::Letters => {
            // Names of length `n` come after all shorter ones, in base-26 order within their length.
            let (mut length, mut first, mut count) = (1usize, 0usize, 26usize);
            while i >= first + count {
                first += count;
                length += 1;
                count = count.saturating_mul(26);
            }
            let mut rest = i - first;
            let mut name = vec![b'A'; length];
            for slot in name.iter_mut().rev() {
                *slot = b'A' + (rest % 26) as u8;
                rest /= 26;
            }
            String::from_utf8_lossy(&name).into_owned()
        }
    }
}

/// The total length of the parts of `spans` inside `region` (pyannote's `crop(...).duration()`).
pub(crate) fn covered(spans: &[Span], region: &[Span]) -> f64 {
    super::timeline::duration(&crop(spans, region))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn new_names_follow_pyannotes_generators() {
        let names: Vec<String> = [0, 1, 25, 26, 27, 51, 52, 701, 702].map(|i| new_name(i, Renaming::Letters)).to_vec();
        assert_eq!(names, ["A", "B", "Z", "AA", "AB", "AZ", "BA", "ZZ", "AAA"]);
        let a = Annotation { tracks: Vec::new(), labels: (0..12).map(|i| format!("h{i:02}")).collect() };
        // 0, 1, 10, 11, 2, …: labels 10 and 11 come third and fourth.
        assert_eq!(a.renamed_order(Renaming::Numbers), [0, 1, 10, 11, 2, 3, 4, 5, 6, 7, 8, 9]);
    }

    #[test]
    fn every_line_is_a_track() {
        let a = Annotation::new([(Span::new(0.0, 2.0), "x"), (Span::new(0.0, 2.0), "x"), (Span::new(3.0, 3.0), "y")]);
        assert_eq!((a.tracks.len(), a.labels.as_slice()), (2, &["x".to_string()][..]));
        let b = Annotation::new([(Span::new(1.0, 4.0), "p")]);
        assert_eq!(a.cooccurrence(&b), [2.0]);
        assert_eq!(a.optimal_mapping(Renaming::Letters, &b, Renaming::Numbers), [Some(0)]);
    }
}
