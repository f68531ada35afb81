/// Per sequence `s` of `lengths.len()` sequences of `seq_len` rows, `cols[s·L + t, ci·3 + tap] = h[s·L + t + tap − 1,
/// ci]` (0 where `t + tap − 1` is outside `[0, min(lengths[s], L))`) for `h` `[sequences·L, channels]`; `cols` is
/// `[sequences·L, 3·channels]`.
pub fn conv_im2col(h: &[f64], lengths: &[usize], seq_len: usize, channels: usize) -> Vec<f64> {
    let mut cols = vec![0.0; lengths.len() * seq_len * 3 * channels];
    for (s, &length) in lengths.iter().enumerate() {
        let first = s * seq_len;
        for t in 0..seq_len {
            for ci in 0..channels {
                for tap in 0..3 {
                    if let Some(source) = (t + tap).checked_sub(1).filter(|&r| r < length.min(seq_len)) {
                        cols[((first + t) * channels + ci) * 3 + tap] = h[(first + source) * channels + ci];
                    }
                }
            }
        }
    }
    cols
}

/// Conv1d with kernel 3 and zero padding 1 written directly: `y[t, o] = bias[o] + Σ_{ci, tap} weight[o, ci, tap] ·
/// h[t + tap − 1, ci]` for `h` `[n, channels]`, `weight` `[out, channels, 3]`; `y` is `[n, out]`.
pub fn conv1d_k3(h: &[f64], weight: &[f64], bias: &[f64], n: usize, channels: usize, out: usize) -> Vec<f64> {
    let mut y = Vec::with_capacity(n * out);
    for t in 0..n {
        for o in 0..out {
            let mut sum = bias[o];
            for tap in 0..3 {
                let Some(source) = (t + tap).checked_sub(1).filter(|&s| s < n) else { continue };
                for ci in 0..channels {
                    sum += weight[(o * channels + ci) * 3 + tap] * h[source * channels + ci];
                }
            }
            y.push(sum);
        }
    }
    y
}
