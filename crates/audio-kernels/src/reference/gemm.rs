/// `y[n×m] = x[n×k] · wᵀ + bias`, with `w` in PyTorch's `[m×k]` (`[out, in]`) layout.
pub fn linear(x: &[f64], w: &[f64], bias: Option<&[f64]>, n: usize, m: usize, k: usize) -> Vec<f64> {
    let mut y = Vec::with_capacity(n * m);
    for row in 0..n {
        for col in 0..m {
            let dot: f64 = (0..k).map(|i| x[row * k + i] * w[col * k + i]).sum();
            y.push(dot + bias.map_or(0.0, |b| b[col]));
        }
    }
    y
}

/// Exact GELU, `0.5·x·(1 + erf(x/√2))`, written with erfc so the negative tail does not cancel.
pub fn gelu(x: f64) -> f64 {
    0.5 * x * libm::erfc(-x / std::f64::consts::SQRT_2)
}

/// `max(x, 0)`, the activation around the Sortformer classifier's dense layer.
pub fn relu(x: f64) -> f64 {
    x.max(0.0)
}
