//! CTC forced alignment as torchaudio 2.11.1's CPU `forced_align` computes it (f32 Viterbi over the
//! blank-interleaved target, with its window of reachable states and its tie rules), and `merge_tokens`.

/// The Viterbi path: one label per frame, over `em`, `[frames, width]` f32 scores whose columns are labels
/// `0..width`. `target` holds no `blank`; it must fit (`frames ≥ len + repeats`, which the caller checks: upstream's
/// processor does before calling torchaudio).
///
/// Tie rules (torchaudio ≤ 2.11.1): from `s−2` only when strictly above both others; from `s−1` only when
/// strictly above both others; otherwise stay. The path ends on the last token when its score is strictly above
/// the final blank's.
pub fn forced_align(em: &[f32], width: usize, target: &[usize], blank: usize) -> Vec<usize> {
    let (frames, len) = (em.len() / width.max(1), target.len());
    let states = 2 * len + 1;
    let repeats = target.windows(2).filter(|w| w[0] == w[1]).count();
    let labels: Vec<usize> = (0..states).map(|s| if s % 2 == 0 { blank } else { target[s / 2] }).collect();
    let skip_ok: Vec<bool> = (0..states).map(|s| s % 2 == 1 && s != 1 && target[s / 2] != target[s / 2 - 1]).collect();
    let score = |t: usize, s: usize| em[t * width + labels[s]];
    let mut alpha = vec![f32::NEG_INFINITY; states];
    let mut back = vec![0u8; frames * states];
    let mut start = if frames > len + repeats { 0 } else { 1 };
    let mut end = if states == 1 { 1 } else { 2 };
    for (s, a) in alpha.iter_mut().enumerate().take(end).skip(start) {
        *a = score(0, s);
    }
    let mut next = vec![f32::NEG_INFINITY; states];
    for t in 1..frames {
        if frames - t <= len + repeats {
            if start % 2 == 1 && target[start / 2] != target[start / 2 + 1] {
                start += 1;
            }
            start += 1;
        }
        if t <= len + repeats {
            if end % 2 == 0 && end < 2 * len && target[end / 2 - 1] != target[end / 2] {
                end += 1;
            }
            end += 1;
        }
        next.fill(f32::NEG_INFINITY);
        let mut first = start;
        if start == 0 {
            next[0] = alpha[0] + score(t, 0);
            first = 1;
        }
        let back_t = &mut back[t * states..(t + 1) * states];
        for s in first..end {
            let (x0, x1) = (alpha[s], alpha[s - 1]);
            let x2 = if skip_ok[s] { alpha[s - 2] } else { f32::NEG_INFINITY };
            let (picked, step) = if x2 > x1 && x2 > x0 {
                (x2, 2)
            } else if x1 > x0 && x1 > x2 {
                (x1, 1)
            } else {
                (x0, 0)
            };
            next[s] = picked + score(t, s);
            back_t[s] = step;
        }
        std::mem::swap(&mut alpha, &mut next);
    }
    let mut s = if states > 1 && alpha[states - 1] > alpha[states - 2] { states - 1 } else { states.saturating_sub(2) };
    let mut path = vec![blank; frames];
    for t in (0..frames).rev() {
        path[t] = labels[s];
        s -= back[t * states + s] as usize;
    }
    path
}

/// One token of a path: its label and its frames `[start, end)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Span {
    /// The token.
    pub token: usize,
    /// First frame.
    pub start: usize,
    /// One past the last frame.
    pub end: usize,
}

/// `merge_tokens`: the runs of equal non-blank labels.
pub fn merge_tokens(path: &[usize], blank: usize) -> Vec<Span> {
    let mut spans = Vec::new();
    let mut start = 0;
    for t in 1..=path.len() {
        if t == path.len() || path[t] != path[start] {
            if path[start] != blank {
                spans.push(Span { token: path[start], start, end: t });
            }
            start = t;
        }
    }
    spans
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_ties_stay_on_the_state() {
        // Every score equal (values from torchaudio's rules, worked by hand): a state first reached stays on
        // exact ties rather than coming from a neighbour, and the final tie between the last token and the last
        // blank ends on the token, so the last token holds every frame after the first.
        let em = vec![0.0f32; 5 * 3];
        let path = forced_align(&em, 3, &[0, 1], 2);
        assert_eq!(path, [0, 1, 1, 1, 1]);
        assert_eq!(merge_tokens(&path, 2), [Span { token: 0, start: 0, end: 1 }, Span { token: 1, start: 1, end: 5 }]);
    }

    #[test]
    fn a_strictly_better_neighbour_wins_and_ties_between_neighbours_stay() {
        // x1 == x2 > x0: neither neighbour is strictly above both others, so the state stays (the rule of
        // torchaudio ≤ 2.11.1; later sources pick x1 here).
        // A case where the two rules part (found by search with the Python port of both; the newer rule gives
        // [0, 2, 2, 2, 1]).
        let em = [0.0f32, 0.0, 0.0, 0.0, 0.0, 0.0, -1.0, -1.0, -1.0, 0.0, -1.0, 0.0, 0.0, 0.0, 0.0];
        let path = forced_align(&em, 3, &[0, 1], 2);
        assert_eq!(path, [0, 1, 2, 2, 2]);
    }

    #[test]
    fn repeated_tokens_are_separated_by_a_blank() {
        let em = [0.0f32, -1.0].repeat(3);
        assert_eq!(forced_align(&em, 2, &[0, 0], 1), [0, 1, 0]);
        assert_eq!(merge_tokens(&[0, 1, 0], 1).len(), 2);
    }
}
