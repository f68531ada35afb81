/// `dst[d, ..] = src[s, ..]` for each `(s, d)` of `pairs`, rows of `width` values; the other rows of `dst` keep their
/// values.
pub fn gather_rows(src: &[f64], dst: &mut [f64], pairs: &[(usize, usize)], width: usize) {
    for &(s, d) in pairs {
        dst[d * width..(d + 1) * width].copy_from_slice(&src[s * width..(s + 1) * width]);
    }
}
