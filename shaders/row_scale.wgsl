// The tensor-core GEMM's scale of one row of X (`gemm_coop.wgsl`, "Precision"): 2^r and 2^-r with r chosen so that
// the row's largest magnitude lands in [2^14, 2^15). Zero, subnormal or non-finite rows keep r = 0. Included by
// `gemm_coop.wgsl` (its `row_scales` pass) and `layer_norm.wgsl` (which writes the scales of the rows it outputs,
// so the product that reads them needs no pass of its own): both must give the same bits.
fn row_scale(largest: f32) -> vec2<f32> {
    // floor(log2(largest)) from the exponent bits.
    let exponent = i32((bitcast<u32>(largest) >> 23u) & 0xffu) - 127;
    var r = 0;
    if exponent > -127 && exponent < 128 {
        r = clamp(14 - exponent, -100, 100);
    }
    return vec2(bitcast<f32>(u32(r + 127) << 23u), bitcast<f32>(u32(127 - r) << 23u));
}
