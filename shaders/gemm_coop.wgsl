// Linear layer on cooperative matrices (tensor cores), f32-accurate: Y = act(X · Wᵀ + bias), or += with ACCUMULATE.
// Same layout and epilogue as gemm.wgsl; used when the adapter has 16×16×16 f16→f32 cooperative matrices, k is a
// multiple of 32, and W converts to f16 exactly under a power-of-two scale 2^s (checked on the host at upload).
//
// Precision: the hardware multiplies f16 × f16 exactly into f32 and accumulates in f32. W·2^s is exact in f16. Each
// row of X is scaled by its own power of two 2^r (from `row_scales`, so its largest value lands in [2^14, 2^15)) and
// split into x·2^r = hi + lo, hi = f16(x·2^r), lo = f16(x·2^r − hi): 22 significant bits, against f32's 24. Both
// halves are multiplied with the same W tile into one accumulator, and the epilogue multiplies by 2^−(r+s), which is
// exact. The result carries f32-level error (measured against the f64 reference in tests/gemm.rs).
//
// Tiling: a workgroup of 4 subgroups (SUBGROUP lanes each) computes a 64×64 tile of Y; each subgroup a 32×32 quarter
// as 2×2 accumulators. K advances by 32: the X slice is split into hi/lo and the W slice widened from bf16 on their
// way into workgroup memory (rows padded by 8 halves against bank conflicts), while the next slice is already being
// fetched into registers. The epilogue stages one 16×16 accumulator per subgroup in workgroup memory at a time.

enable f16;
enable wgpu_cooperative_matrix;

struct Params {
    n: u32,
    m: u32,
    k: u32,
    // The weight's scale 2^s and its inverse (both exact).
    w_scale: f32,
    w_unscale: f32,
}

@group(0) @binding(0) var<storage, read> x: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read> w: array<vec4<u32>>;
@group(0) @binding(2) var<storage, read> bias: array<f32>;
@group(0) @binding(3) var<storage, read_write> y: array<f32>;
// Per row of X: 2^r and 2^-r, interleaved (written by `row_scales`).
@group(0) @binding(4) var<storage, read_write> scales: array<vec2<f32>>;
@group(1) @binding(0) var<uniform> p: Params;

override HAS_BIAS: bool = false;
override ACTIVATION: u32 = 0u;  // read by `activate` (gemm_epilogue.wgsl)
override ACCUMULATE: bool = false;
// Lanes per subgroup: the launcher uses this path only where the subgroup size is fixed.
override SUBGROUP: u32 = 32u;

const THREADS: u32 = 4u * 32u;
const BM: u32 = 64u;
const BN: u32 = 64u;
const BK: u32 = 32u;
const STRIDE: u32 = BK + 8u;  // halves per staged row
const X_VEC4: u32 = BM * BK / 4u / THREADS;  // vec4<f32> of X per thread per step: 4
const W_VEC4: u32 = BN * BK / 8u / THREADS;  // vec4<u32> (8 bf16) of W per thread per step: 2

var<workgroup> x_hi: array<f16, BM * STRIDE>;
var<workgroup> x_lo: array<f16, BM * STRIDE>;
var<workgroup> w_tile: array<f16, BN * STRIDE>;
var<workgroup> staged: array<f32, 4u * 256u>;

struct Fetched {
    x: array<vec4<f32>, X_VEC4>,
    w: array<vec4<u32>, W_VEC4>,
}

// Thread t fetches X rows t/8 + 16i (vec4 column t%8 of the step) and W rows t/4 + 32i (vec4<u32> column t%4).
fn fetch(row0: u32, col0: u32, k0: u32, t: u32) -> Fetched {
    var f: Fetched;
    let kx = k0 / 4u + t % 8u;
    for (var i = 0u; i < X_VEC4; i++) {
        let row = row0 + t / 8u + 16u * i;
        if row < p.n {
            f.x[i] = x[row * (p.k / 4u) + kx];
        }
    }
    let kw = k0 / 8u + t % 4u;
    for (var i = 0u; i < W_VEC4; i++) {
        let col = col0 + t / 4u + 32u * i;
        if col < p.m {
            f.w[i] = w[col * (p.k / 8u) + kw];
        }
    }
    return f;
}

fn widen_bf16(word: u32) -> vec2<f32> {
    return vec2(bitcast<f32>(word << 16u), bitcast<f32>(word & 0xffff0000u));
}

fn stage(t: u32, f: Fetched, row_scale: array<f32, X_VEC4>) {
    for (var i = 0u; i < X_VEC4; i++) {
        let r = t / 8u + 16u * i;
        let scaled = f.x[i] * row_scale[i];
        let hi = vec4<f16>(scaled);
        let lo = vec4<f16>(scaled - vec4<f32>(hi));
        let at = r * STRIDE + 4u * (t % 8u);
        for (var j = 0u; j < 4u; j++) {
            x_hi[at + j] = hi[j];
            x_lo[at + j] = lo[j];
        }
    }
    for (var i = 0u; i < W_VEC4; i++) {
        let at = (t / 4u + 32u * i) * STRIDE + 8u * (t % 4u);
        for (var j = 0u; j < 4u; j++) {
            let pair = vec2<f16>(widen_bf16(f.w[i][j]) * p.w_scale);
            w_tile[at + 2u * j] = pair.x;
            w_tile[at + 2u * j + 1u] = pair.y;
        }
    }
}

// One workgroup per row: scales[row] = (2^r, 2^-r) with max|x[row, :]|·2^r in [2^14, 2^15) (r = 0 for an all-zero
// row). Both are built from exponent bits, so they are exact powers of two.
var<workgroup> row_max: array<f32, 64>;

@compute @workgroup_size(64)
fn row_scales(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>,
              @builtin(local_invocation_index) t: u32) {
    let row = wid.y * groups.x + wid.x;
    if row >= p.n {
        return;
    }
    var m = 0.0;
    for (var c = t; c < p.k / 4u; c += 64u) {
        let v = abs(x[row * (p.k / 4u) + c]);
        m = max(m, max(max(v.x, v.y), max(v.z, v.w)));
    }
    row_max[t] = m;
    workgroupBarrier();
    for (var stride = 32u; stride > 0u; stride /= 2u) {
        if t < stride {
            row_max[t] = max(row_max[t], row_max[t + stride]);
        }
        workgroupBarrier();
    }
    if t == 0u {
        let biggest = row_max[0];
        // floor(log2(biggest)) from the exponent bits; zero, subnormal or non-finite rows keep scale 1.
        let exponent = i32((bitcast<u32>(biggest) >> 23u) & 0xffu) - 127;
        var r = 0;
        if exponent > -127 && exponent < 128 {
            r = clamp(14 - exponent, -100, 100);
        }
        scales[row] = vec2(bitcast<f32>(u32(r + 127) << 23u), bitcast<f32>(u32(127 - r) << 23u));
    }
}

@compute @workgroup_size(THREADS)
fn gemm_coop(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) t: u32) {
    let row0 = wid.y * BM;
    let col0 = wid.x * BN;
    let sg = t / SUBGROUP;
    let lane = t % SUBGROUP;
    // This subgroup's 32×32 quarter of the tile.
    let sr = (sg / 2u) * 32u;
    let sc = (sg % 2u) * 32u;
    var row_scale: array<f32, X_VEC4>;
    for (var i = 0u; i < X_VEC4; i++) {
        row_scale[i] = scales[min(row0 + t / 8u + 16u * i, p.n - 1u)].x;
    }

    var acc00 = coop_mat16x16<f32, C>();
    var acc01 = coop_mat16x16<f32, C>();
    var acc10 = coop_mat16x16<f32, C>();
    var acc11 = coop_mat16x16<f32, C>();
    let steps = p.k / BK;
    var next = fetch(row0, col0, 0u, t);
    for (var s = 0u; s < steps; s++) {
        stage(t, next, row_scale);
        workgroupBarrier();
        if s + 1u < steps {
            next = fetch(row0, col0, (s + 1u) * BK, t);
        }
        for (var kk = 0u; kk < BK; kk += 16u) {
            let a0 = (sr + 0u) * STRIDE + kk;
            let a1 = (sr + 16u) * STRIDE + kk;
            let b0 = coopLoad<coop_mat16x16<f16, B>>(&w_tile[(sc + 0u) * STRIDE + kk], STRIDE);
            let b1 = coopLoad<coop_mat16x16<f16, B>>(&w_tile[(sc + 16u) * STRIDE + kk], STRIDE);
            let h0 = coopLoadT<coop_mat16x16<f16, A>>(&x_hi[a0], STRIDE);
            let h1 = coopLoadT<coop_mat16x16<f16, A>>(&x_hi[a1], STRIDE);
            let l0 = coopLoadT<coop_mat16x16<f16, A>>(&x_lo[a0], STRIDE);
            let l1 = coopLoadT<coop_mat16x16<f16, A>>(&x_lo[a1], STRIDE);
            acc00 = coopMultiplyAdd(h0, b0, acc00);
            acc01 = coopMultiplyAdd(h0, b1, acc01);
            acc10 = coopMultiplyAdd(h1, b0, acc10);
            acc11 = coopMultiplyAdd(h1, b1, acc11);
            acc00 = coopMultiplyAdd(l0, b0, acc00);
            acc01 = coopMultiplyAdd(l0, b1, acc01);
            acc10 = coopMultiplyAdd(l1, b0, acc10);
            acc11 = coopMultiplyAdd(l1, b1, acc11);
        }
        workgroupBarrier();
    }

    let base = sg * 256u;
    coopStoreT(acc00, &staged[base], 16u);
    workgroupBarrier();
    finish(row0 + sr, col0 + sc, base, lane);
    workgroupBarrier();
    coopStoreT(acc01, &staged[base], 16u);
    workgroupBarrier();
    finish(row0 + sr, col0 + sc + 16u, base, lane);
    workgroupBarrier();
    coopStoreT(acc10, &staged[base], 16u);
    workgroupBarrier();
    finish(row0 + sr + 16u, col0 + sc, base, lane);
    workgroupBarrier();
    coopStoreT(acc11, &staged[base], 16u);
    workgroupBarrier();
    finish(row0 + sr + 16u, col0 + sc + 16u, base, lane);
}

// Unscales, adds the bias, activates and writes this lane's share of one staged 16×16 tile at (row, col).
fn finish(row: u32, col: u32, base: u32, lane: u32) {
    for (var e = lane; e < 256u; e += SUBGROUP) {
        let r = row + e / 16u;
        let c = col + e % 16u;
        if r < p.n && c < p.m {
            var v = staged[base + e] * p.w_unscale * scales[r].y;
            if HAS_BIAS {
                v += bias[c];
            }
            v = activate(v);
            let at = r * p.m + c;
            if ACCUMULATE {
                v += y[at];
            }
            y[at] = v;
        }
    }
}
