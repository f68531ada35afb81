/// In place `x[t, c] += Σ_s z[t, s] · table[s, c]` for `x` `[rows, width]`, `z` `[rows, speakers]`, `table`
/// `[speakers, width]`.
pub fn speaker_fusion(x: &mut [f64], z: &[f64], table: &[f64], rows: usize, width: usize, speakers: usize) {
    for (t, row) in x.chunks_mut(width).take(rows).enumerate() {
        for (c, value) in row.iter_mut().enumerate() {
            *value += (0..speakers).map(|s| z[t * speakers + s] * table[s * width + c]).sum::<f64>();
        }
    }
}
