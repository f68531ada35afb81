/// `cols[t, ci·3 + tap] = h[t + tap − 1, ci]` (0 outside `[0, n)`) for `h` `[n, channels]`; `cols` is `[n, 3·channels]`.
pub fn conv_im2col(h: &[f64], n: usize, channels: usize) -> Vec<f64> {
    let mut cols = vec![0.0; n * 3 * channels];
    for t in 0..n {
        for ci in 0..channels {
            for tap in 0..3 {
                if let Some(source) = (t + tap).checked_sub(1).filter(|&s| s < n) {
                    cols[(t * channels + ci) * 3 + tap] = h[source * channels + ci];
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
