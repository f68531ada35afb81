use crate::shapes::AttentionShape;

/// Masked bidirectional multi-head attention over `shape.seqs` independent sequences of `shape.seq_len` rows.
///
/// `qkv` is `[seqs·seq_len, 3·d]` with `d = heads·head_dim` (q, k, v column blocks; head h at
/// columns `[h·head_dim, (h+1)·head_dim)` of each); `key_valid` one flag per row. Returns
/// `[seqs·seq_len, d]`: `softmax(q·kᵀ/√head_dim)·v` over the valid keys of the row's sequence.
/// A sequence with no valid key attends uniformly to all its keys: Transformers adds
/// `finfo(f32).min` to masked scores, which makes them all equal.
pub fn attention(qkv: &[f64], key_valid: &[bool], shape: AttentionShape) -> Vec<f64> {
    let AttentionShape { seqs, seq_len, heads, head_dim } = shape;
    let width = heads * head_dim;
    let scale = 1.0 / (head_dim as f64).sqrt();
    let head = |row: usize, block: usize, h: usize| {
        let start = row * 3 * width + block * width + h * head_dim;
        &qkv[start..start + head_dim]
    };
    let mut out = vec![0.0; seqs * seq_len * width];
    for s in 0..seqs {
        let rows = s * seq_len..(s + 1) * seq_len;
        let valid: Vec<usize> = rows.clone().filter(|&k| key_valid[k]).collect();
        // Without valid keys every score sits at finfo(f32).min upstream: equal weights.
        let uniform = valid.is_empty();
        let attended = if uniform { rows.clone().collect() } else { valid };
        for h in 0..heads {
            for query in rows.clone() {
                let q = head(query, 0, h);
                let scaled_dot = |k: usize| q.iter().zip(head(k, 1, h)).map(|(a, b)| a * b).sum::<f64>() * scale;
                let scores: Vec<f64> = attended.iter().map(|&k| if uniform { 0.0 } else { scaled_dot(k) }).collect();
                let max = scores.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                let weights: Vec<f64> = scores.iter().map(|score| (score - max).exp()).collect();
                let total: f64 = weights.iter().sum();
                let o = &mut out[query * width + h * head_dim..][..head_dim];
                for (&k, w) in attended.iter().zip(&weights) {
                    for (o, v) in o.iter_mut().zip(head(k, 2, h)) {
                        *o += w / total * v;
                    }
                }
            }
        }
    }
    out
}
