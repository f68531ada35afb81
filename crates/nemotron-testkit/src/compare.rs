//! The error gates every GPU result is held to: relative Frobenius errors against an f64 reference, and the
//! widening conversions that feed them.

/// bf16 bit patterns widened to f64.
pub fn bf16_to_f64(bits: &[u16]) -> Vec<f64> {
    bits.iter().map(|&b| half::bf16::from_bits(b).to_f64()).collect()
}

/// f32 values widened to f64.
pub fn f32_to_f64(values: &[f32]) -> Vec<f64> {
    values.iter().map(|&v| v as f64).collect()
}

/// ‖got − want‖_F / ‖want‖_F, or +∞ when `got` holds a non-finite value or the lengths differ.
pub fn rel_frobenius(got: &[f32], want: &[f64]) -> f64 {
    let norm = want.iter().map(|w| w * w).sum::<f64>().sqrt();
    error_against(got, want, norm)
}

/// ‖got − want‖_F / `scale`, or +∞ when `got` holds a non-finite value or the lengths differ.
pub fn error_against(got: &[f32], want: &[f64], scale: f64) -> f64 {
    if got.len() != want.len() || got.iter().any(|v| !v.is_finite()) {
        return f64::INFINITY;
    }
    let diff: f64 = got.iter().zip(want).map(|(&g, &w)| (g as f64 - w) * (g as f64 - w)).sum();
    diff.sqrt() / scale.max(f64::MIN_POSITIVE)
}

/// Asserts `rel_frobenius(got, want) <= tolerance`, printing the error either way.
pub fn assert_close(what: &str, got: &[f32], want: &[f64], tolerance: f64) {
    let norm = want.iter().map(|w| w * w).sum::<f64>().sqrt();
    assert_close_to_scale(what, got, want, norm, tolerance);
}

/// Asserts `‖got − want‖_F ≤ tolerance · scale`, printing the error either way. For outputs that are sums of terms
/// that can cancel (a residual plus a product), `scale` is the size of the terms (e.g. ‖a‖_F + ‖b‖_F): rounding
/// errors scale with the terms, not with what is left of their sum, so the gate holds for every draw.
pub fn assert_close_to_scale(what: &str, got: &[f32], want: &[f64], scale: f64, tolerance: f64) {
    let error = error_against(got, want, scale);
    eprintln!("{what}: relative Frobenius error {error:.3e} (tolerance {tolerance:.0e})");
    assert!(
        error <= tolerance,
        "{what}: relative Frobenius error {error:.3e} exceeds {tolerance:.0e} (len {} vs {}, first got {:?})",
        got.len(),
        want.len(),
        &got[..got.len().min(4)]
    );
}

/// ‖values‖_F.
pub fn frobenius(values: &[f64]) -> f64 {
    values.iter().map(|v| v * v).sum::<f64>().sqrt()
}
