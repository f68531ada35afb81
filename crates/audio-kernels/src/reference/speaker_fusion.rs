/// In place `x[t, c] += Σ_s z[t, s] · table[s, c]` for `x` `[rows, width]`, `z` `[rows, speakers]`, `table`
/// `[speakers, width]`.
pub fn speaker_fusion(x: &mut [f64], z: &[f64], table: &[f64], rows: usize, width: usize, speakers: usize) {
    for (t, row) in x.chunks_mut(width).take(rows).enumerate() {
        for (c, value) in row.iter_mut().enumerate() {
            *value += (0..speakers).map(|s| z[t * speakers + s] * table[s * width + c]).sum::<f64>();
        }
    }
}

/// The fixed sinusoid speaker table `[speakers, width]`: `Tab[s, 2i] = sin(s·ω_i)`, `Tab[s, 2i+1] = cos(s·ω_i)`,
/// `ω_i = exp(−2i·ln(10000)/width)`. Upstream evaluates it in f32; here it is evaluated in f64 and rounded, which
/// differs from the f32 recipe by a few f32 ulps (angles stay below `speakers` radians).
pub fn speaker_table(speakers: usize, width: usize) -> Vec<f32> {
    let mut table = Vec::with_capacity(speakers * width);
    for s in 0..speakers {
        for c in 0..width {
            let i = c / 2;
            let angle = s as f64 * (-((2 * i) as f64) * 10000f64.ln() / width as f64).exp();
            table.push(if c % 2 == 0 { angle.sin() } else { angle.cos() } as f32);
        }
    }
    table
}
