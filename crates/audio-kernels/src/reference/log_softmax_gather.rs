/// `out[r, j] = logits[r, classes[j]] − log Σ_c exp(logits[r, c])` for `logits` `[rows, vocab]`.
pub fn log_softmax_gather(logits: &[f64], classes: &[u32], vocab: usize) -> Vec<f64> {
    logits
        .chunks_exact(vocab)
        .flat_map(|row| {
            let max = row.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            let lse = max + row.iter().map(|v| (v - max).exp()).sum::<f64>().ln();
            classes.iter().map(move |&c| row[c as usize] - lse)
        })
        .collect()
}
