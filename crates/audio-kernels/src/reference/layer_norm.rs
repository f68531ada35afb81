/// Row LayerNorm with biased variance: `(x − mean)/sqrt(var + eps) · weight + bias`.
pub fn layer_norm(x: &[f64], weight: &[f64], bias: &[f64], width: usize, eps: f64) -> Vec<f64> {
    let mut y = Vec::with_capacity(x.len());
    for row in x.chunks(width) {
        let mean = row.iter().sum::<f64>() / width as f64;
        let var = row.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / width as f64;
        let inv_std = 1.0 / (var + eps).sqrt();
        y.extend(row.iter().enumerate().map(|(c, v)| (v - mean) * inv_std * weight[c] + bias[c]));
    }
    y
}
