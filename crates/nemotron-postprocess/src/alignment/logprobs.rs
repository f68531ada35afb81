//! The head's log-probabilities as the alignment reads them: `log_softmax` over the whole vocabulary per frame
//! (computed in f64 and rounded to f32, as upstream's `log_softmax(-1).float()`), kept only for the classes an
//! alignment can read (the blank and its transcript's tokens), so a long recording's `[frames, vocab]` logits never
//! have to be held at once.

/// Per-frame log-probabilities of a set of classes.
#[derive(Clone, Debug)]
pub struct FrameLogProbs {
    vocab: usize,
    /// Kept classes, ascending; the blank (`vocab − 1`) among them.
    classes: Vec<u32>,
    /// `[frames, classes]`.
    values: Vec<f32>,
}

impl FrameLogProbs {
    /// An empty set of frames of a `vocab`-class head keeping `classes` (the blank, `vocab − 1`, is added).
    pub fn new(vocab: usize, classes: impl IntoIterator<Item = u32>) -> Self {
        let blank = vocab.saturating_sub(1) as u32;
        let mut classes: Vec<u32> = classes.into_iter().filter(|&c| (c as usize) < vocab).chain([blank]).collect();
        classes.sort_unstable();
        classes.dedup();
        Self { vocab, classes, values: Vec::new() }
    }

    /// Appends frames of raw logits (`[n, vocab]`, row-major).
    pub fn push_logits(&mut self, logits: &[f32]) {
        for row in logits.chunks_exact(self.vocab.max(1)) {
            let max = row.iter().fold(f64::NEG_INFINITY, |m, &v| m.max(v as f64));
            let sum: f64 = row.iter().map(|&v| (v as f64 - max).exp()).sum();
            let log_sum = max + sum.ln();
            self.values.extend(self.classes.iter().map(|&c| (row[c as usize] as f64 - log_sum) as f32));
        }
    }

    /// Appends frames of log-probabilities already taken (`[n, classes().len()]`, row-major, in the order of
    /// [`FrameLogProbs::classes`]), e.g. by the word-timestamp head's GPU log-softmax.
    pub fn push_log_probs(&mut self, values: &[f32]) {
        let width = self.classes.len();
        self.values.extend_from_slice(&values[..values.len() / width * width]);
    }

    /// The kept classes, ascending, the blank among them.
    pub fn classes(&self) -> &[u32] {
        &self.classes
    }

    /// Frames held.
    pub fn frames(&self) -> usize {
        self.values.len() / self.classes.len()
    }

    /// Classes of the head (the blank is the last).
    pub fn vocab(&self) -> usize {
        self.vocab
    }

    /// The CTC blank: the last logit column, as upstream's processor takes it.
    pub fn blank(&self) -> u32 {
        self.vocab.saturating_sub(1) as u32
    }

    /// Whether `class` was kept.
    pub fn has(&self, class: u32) -> bool {
        self.classes.binary_search(&class).is_ok()
    }

    /// The log-probability of `class` at frame `t` (−∞ for a class that was not kept: check with
    /// [`FrameLogProbs::has`]).
    pub fn get(&self, t: usize, class: u32) -> f32 {
        match self.classes.binary_search(&class) {
            Ok(column) => self.values[t * self.classes.len() + column],
            Err(_) => f32::NEG_INFINITY,
        }
    }
}
