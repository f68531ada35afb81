// The GEMM epilogue's activations, included by `gemm.wgsl` and `gemm_coop.wgsl`. Reads the override constant
// `ACTIVATION` of the shader that includes it.

// GELU in its exact erf form, 0.5·v·(1 + erf(v/√2)), with erf's absolute error within 2e-7 over all of f32: the
// fits below are good to 4e-9; evaluating them in f32 adds about 7e-8, and an exp with 3e-7 relative error about
// 6e-8 more (checked in f32 emulation; the test measures it through the result). Two pieces, Chebyshev fits made with
// mpmath's `chebyfit` (Q: 7 terms on s ∈ [0, 1]; H: 10 terms on t ∈ [0, 2/3]):
//   |z| < 1: erf(z) = z + z·Q(z²). Q excludes the leading 1, so that 1 is exact rather than a rounded coefficient.
//   |z| ≥ 1: erfc(|z|) = t·H(t)·exp(−z²), t = 1/(1 + |z|/2). Its error is relative, so GELU stays accurate in the
//            far negative tail, where 1 + erf(z) = erfc(|z|) would otherwise be a cancellation.
// Four values at a time and branch-free (both pieces evaluated, one selected): GEMM epilogues apply it
// to whole register rows, where a per-element branch would keep drivers from unrolling the loops.
fn erf_below_one(z: vec4<f32>) -> vec4<f32> {
    let s = z * z;
    var q = vec4(7.87587506269e-5);
    q = fma(q, s, vec4(-8.01686428717e-4));
    q = fma(q, s, vec4(5.18908742343e-3));
    q = fma(q, s, vec4(-2.68542120106e-2));
    q = fma(q, s, vec4(1.12835947152e-1));
    q = fma(q, s, vec4(-3.76126266667e-1));
    q = fma(q, s, vec4(1.28379165848e-1));
    return fma(z, q, z);
}

fn erfc_from_one(a: vec4<f32>) -> vec4<f32> {
    let t = 1.0 / (1.0 + 0.5 * a);
    var h = vec4(-8.17515802895e-2);
    h = fma(h, t, vec4(2.63308377547e-1));
    h = fma(h, t, vec4(-2.62995492498e-1));
    h = fma(h, t, vec4(3.56949746395e-2));
    h = fma(h, t, vec4(-2.93144205311e-2));
    h = fma(h, t, vec4(8.78569444745e-2));
    h = fma(h, t, vec4(1.75914156569e-1));
    h = fma(h, t, vec4(2.46852579693e-1));
    h = fma(h, t, vec4(2.82094405494e-1));
    h = fma(h, t, vec4(2.82094793055e-1));
    return t * h * exp(-a * a);
}

fn gelu(v: vec4<f32>) -> vec4<f32> {
    let z = v * 0.70710678118654752;
    let half_v = 0.5 * v;
    let inner = fma(half_v, erf_below_one(z), half_v);
    let tail = erfc_from_one(abs(z));
    // 1 + erf(z) is 2 − erfc(z) above zero and erfc(−z) below.
    let outer = select(half_v * tail, fma(-half_v, tail, v), z > vec4(0.0));
    return select(outer, inner, abs(z) < vec4(1.0));
}

fn activate4(v: vec4<f32>) -> vec4<f32> {
    if ACTIVATION == 1u {
        return gelu(v);
    }
    if ACTIVATION == 2u {
        return max(v, vec4(0.0));
    }
    return v;
}

fn activate(v: f32) -> f32 {
    return activate4(vec4(v)).x;
}
