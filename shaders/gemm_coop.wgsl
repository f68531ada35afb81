// Linear layer on cooperative matrices (tensor cores), f32-accurate: Y = act(X · Wᵀ + bias), or += with ACCUMULATE.
// Same layout and epilogue as gemm.wgsl, except W: on this path it is stored as f16, the exact image W·2^s of the
// bf16 weights (checked on the host at upload), with its rows padded to a multiple of 128 by zeros. k is a multiple
// of 16.
//
// Precision: the hardware multiplies f16 × f16 exactly into f32 and accumulates in f32. `split_rows` scales each row
// of X by a power of two 2^r (its largest value lands in [2^14, 2^15)) and splits x·2^r = hi + lo: hi keeps the top
// 11 significant bits (the low 13 mantissa bits cleared, so hi is exactly an f16 and x·2^r − hi is exact in f32),
// lo = f16(x·2^r − hi) the next 11: 22 bits, against f32's 24. Both halves are multiplied with the same W tile, and
// the epilogue multiplies by 2^−(r+s), which is exact. The tensor cores round their f32 accumulation toward zero, a
// bias that grows with the number of steps accumulated (measured: 1.1e-5 relative at k = 5120), so each block of
// BLOCK_K products starts from zero and is added to the running total with an ordinary, correctly rounded f32 add.
//
// Tiling: a workgroup of 4 subgroups (SUBGROUP lanes each) computes a 64×128 tile of Y; each subgroup 32 rows × 64
// columns as 2×4 accumulators (and 2×4 block accumulators), loading its 16×16 operand tiles straight from memory one
// step ahead (the row and column halves of a workgroup share them through the cache). There is no staging and no
// barrier in the k loop. The epilogue stages one 16×16 accumulator per subgroup in workgroup memory at a time.
// `gemm_coop_staged` (the default) is the same product with its operands staged through workgroup memory; the two
// differ only in where their operands come from, and share `split_rows`, the products (`multiply`), the block
// accumulation (`flush`) and the epilogue (`write_tile`).

enable f16;
enable wgpu_cooperative_matrix;

struct Params {
    n: u32,
    m: u32,
    k: u32,
    // Rows of the split X (n rounded up to 64; the extra rows are zero).
    padded_n: u32,
    // 2^-s for the weight's scale 2^s.
    w_unscale: f32,
}

@group(0) @binding(0) var<storage, read> x: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read> w: array<f16>;
@group(0) @binding(2) var<storage, read> bias: array<f32>;
@group(0) @binding(3) var<storage, read_write> y: array<f32>;
// hi [padded_n, k] then lo [padded_n, k], written by `split_rows`.
@group(0) @binding(4) var<storage, read_write> split: array<f16>;
// Per row of X: 2^r and 2^-r.
@group(0) @binding(5) var<storage, read_write> scales: array<vec2<f32>>;
// `w` and `split` again, 4 f16 to an element, for the vector loads of `gemm_coop_staged` (WGSL cannot reinterpret a
// buffer; two declarations may share a binding as long as no entry point uses both). Not vec4<u32>: naga has no
// bitcast between vectors of different lengths, and takes a cooperative matrix's scalar type from the pointer it is
// loaded through, so the workgroup copy must be f16 too.
@group(0) @binding(1) var<storage, read> w4: array<vec4<f16>>;
@group(0) @binding(4) var<storage, read_write> split4: array<vec4<f16>>;
@group(1) @binding(0) var<uniform> p: Params;

override HAS_BIAS: bool = false;
override ACTIVATION: u32 = 0u;  // read by `activate` (gemm_epilogue.wgsl)
override ACCUMULATE: bool = false;
// Lanes per subgroup: the launcher uses this path only where the subgroup size is fixed.
override SUBGROUP: u32 = 32u;

// Products accumulated on the tensor cores before the block joins the f32 total (4 cooperative steps).
const BLOCK_K: u32 = 64u;

const SPLIT_THREADS: u32 = 64u;
var<workgroup> row_max: array<f32, SPLIT_THREADS>;

// One workgroup per row of the padded X: scales and splits it (rows past n become zeros).
@compute @workgroup_size(SPLIT_THREADS)
fn split_rows(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>,
              @builtin(local_invocation_index) t: u32) {
    let row = wid.y * groups.x + wid.x;
    if row >= p.padded_n {
        return;
    }
    let k4 = p.k / 4u;
    var m = 0.0;
    if row < p.n {
        for (var c = t; c < k4; c += SPLIT_THREADS) {
            let v = abs(x[row * k4 + c]);
            m = max(m, max(max(v.x, v.y), max(v.z, v.w)));
        }
    }
    row_max[t] = m;
    workgroupBarrier();
    for (var stride = SPLIT_THREADS / 2u; stride > 0u; stride /= 2u) {
        if t < stride {
            row_max[t] = max(row_max[t], row_max[t + stride]);
        }
        workgroupBarrier();
    }
    // floor(log2(max)) from the exponent bits; zero, subnormal or non-finite rows keep r = 0.
    let exponent = i32((bitcast<u32>(row_max[0]) >> 23u) & 0xffu) - 127;
    var r = 0;
    if exponent > -127 && exponent < 128 {
        r = clamp(14 - exponent, -100, 100);
    }
    let scale = bitcast<f32>(u32(r + 127) << 23u);
    if t == 0u {
        scales[row] = vec2(scale, bitcast<f32>(u32(127 - r) << 23u));
    }
    let lo_base = p.padded_n * p.k;
    for (var c = t; c < k4; c += SPLIT_THREADS) {
        var v = vec4<f32>(0.0);
        if row < p.n {
            v = x[row * k4 + c] * scale;
        }
        let hi = bitcast<vec4<f32>>(bitcast<vec4<u32>>(v) & vec4(0xffffe000u));
        let hi16 = vec4<f16>(hi);
        let lo16 = vec4<f16>(v - hi);
        let at = row * p.k + 4u * c;
        for (var j = 0u; j < 4u; j++) {
            split[at + j] = hi16[j];
            split[lo_base + at + j] = lo16[j];
        }
    }
}

// Rows of Y per workgroup: TILE_M / 16 subgroups of 32 rows × 64 columns. `gemm_coop` is built for 64 only;
// `gemm_coop_staged` takes 64 or 128.
override TILE_M: u32 = 64u;
// One 16×16 f32 epilogue tile per subgroup. (An array's length must name an override, not be an expression of
// one: naga 30 panics on the nameless override it would make.)
override STAGED_LEN: u32 = 16u * TILE_M;
var<workgroup> staged: array<f32, STAGED_LEN>;

// One subgroup's 32 × 64 share of the tile: the totals c and the block accumulators d, 2 × 4 tiles each.
struct Accumulators {
    c00: coop_mat16x16<f32, C>,
    c01: coop_mat16x16<f32, C>,
    c02: coop_mat16x16<f32, C>,
    c03: coop_mat16x16<f32, C>,
    c10: coop_mat16x16<f32, C>,
    c11: coop_mat16x16<f32, C>,
    c12: coop_mat16x16<f32, C>,
    c13: coop_mat16x16<f32, C>,
    d00: coop_mat16x16<f32, C>,
    d01: coop_mat16x16<f32, C>,
    d02: coop_mat16x16<f32, C>,
    d03: coop_mat16x16<f32, C>,
    d10: coop_mat16x16<f32, C>,
    d11: coop_mat16x16<f32, C>,
    d12: coop_mat16x16<f32, C>,
    d13: coop_mat16x16<f32, C>,
}

// The operands of one k step of 16: the subgroup's two X hi and two X lo row tiles, and its four W column tiles.
struct Operands {
    h0: coop_mat16x16<f16, A>,
    h1: coop_mat16x16<f16, A>,
    l0: coop_mat16x16<f16, A>,
    l1: coop_mat16x16<f16, A>,
    b0: coop_mat16x16<f16, B>,
    b1: coop_mat16x16<f16, B>,
    b2: coop_mat16x16<f16, B>,
    b3: coop_mat16x16<f16, B>,
}

// The step's 16 products into the block accumulators: hi first, then lo, in the same order in both kernels.
fn multiply(o: Operands, a: ptr<function, Accumulators>) {
    (*a).d00 = coopMultiplyAdd(o.h0, o.b0, (*a).d00);
    (*a).d01 = coopMultiplyAdd(o.h0, o.b1, (*a).d01);
    (*a).d02 = coopMultiplyAdd(o.h0, o.b2, (*a).d02);
    (*a).d03 = coopMultiplyAdd(o.h0, o.b3, (*a).d03);
    (*a).d10 = coopMultiplyAdd(o.h1, o.b0, (*a).d10);
    (*a).d11 = coopMultiplyAdd(o.h1, o.b1, (*a).d11);
    (*a).d12 = coopMultiplyAdd(o.h1, o.b2, (*a).d12);
    (*a).d13 = coopMultiplyAdd(o.h1, o.b3, (*a).d13);
    (*a).d00 = coopMultiplyAdd(o.l0, o.b0, (*a).d00);
    (*a).d01 = coopMultiplyAdd(o.l0, o.b1, (*a).d01);
    (*a).d02 = coopMultiplyAdd(o.l0, o.b2, (*a).d02);
    (*a).d03 = coopMultiplyAdd(o.l0, o.b3, (*a).d03);
    (*a).d10 = coopMultiplyAdd(o.l1, o.b0, (*a).d10);
    (*a).d11 = coopMultiplyAdd(o.l1, o.b1, (*a).d11);
    (*a).d12 = coopMultiplyAdd(o.l1, o.b2, (*a).d12);
    (*a).d13 = coopMultiplyAdd(o.l1, o.b3, (*a).d13);
}

// After the step that ends at global k `kn`: every BLOCK_K products and at the end, the block accumulators join the
// totals with a correctly rounded f32 add and start again from zero.
fn flush(kn: u32, a: ptr<function, Accumulators>) {
    if kn % BLOCK_K == 0u || kn >= p.k {
        (*a).c00 = (*a).c00 + (*a).d00;
        (*a).c01 = (*a).c01 + (*a).d01;
        (*a).c02 = (*a).c02 + (*a).d02;
        (*a).c03 = (*a).c03 + (*a).d03;
        (*a).c10 = (*a).c10 + (*a).d10;
        (*a).c11 = (*a).c11 + (*a).d11;
        (*a).c12 = (*a).c12 + (*a).d12;
        (*a).c13 = (*a).c13 + (*a).d13;
        (*a).d00 = coop_mat16x16<f32, C>();
        (*a).d01 = coop_mat16x16<f32, C>();
        (*a).d02 = coop_mat16x16<f32, C>();
        (*a).d03 = coop_mat16x16<f32, C>();
        (*a).d10 = coop_mat16x16<f32, C>();
        (*a).d11 = coop_mat16x16<f32, C>();
        (*a).d12 = coop_mat16x16<f32, C>();
        (*a).d13 = coop_mat16x16<f32, C>();
    }
}

// The epilogue: each total through the subgroup's staging tile in workgroup memory to Y.
fn write_tiles(a: ptr<function, Accumulators>, row0: u32, col0: u32, sg: u32, lane: u32) {
    let base = sg * 256u;
    coopStoreT((*a).c00, &staged[base], 16u);
    finish(row0, col0, base, lane);
    coopStoreT((*a).c01, &staged[base], 16u);
    finish(row0, col0 + 16u, base, lane);
    coopStoreT((*a).c02, &staged[base], 16u);
    finish(row0, col0 + 32u, base, lane);
    coopStoreT((*a).c03, &staged[base], 16u);
    finish(row0, col0 + 48u, base, lane);
    coopStoreT((*a).c10, &staged[base], 16u);
    finish(row0 + 16u, col0, base, lane);
    coopStoreT((*a).c11, &staged[base], 16u);
    finish(row0 + 16u, col0 + 16u, base, lane);
    coopStoreT((*a).c12, &staged[base], 16u);
    finish(row0 + 16u, col0 + 32u, base, lane);
    coopStoreT((*a).c13, &staged[base], 16u);
    finish(row0 + 16u, col0 + 48u, base, lane);
}

// Unscales, adds the bias, activates and writes this lane's share of the staged 16×16 tile at (row, col). The
// barriers order the subgroup's store before the reads, and the reads before the next store.
fn finish(row: u32, col: u32, base: u32, lane: u32) {
    workgroupBarrier();
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
    workgroupBarrier();
}

// The step at `at` (k offset) of operands straight from memory: X hi/lo rows `hi`/`lo` and W rows `wr` of the
// split X and of W, stride k.
fn load_direct(at: u32, hi: vec2<u32>, lo: vec2<u32>, wr: vec4<u32>) -> Operands {
    let k = p.k;
    return Operands(
        coopLoadT<coop_mat16x16<f16, A>>(&split[hi.x + at], k),
        coopLoadT<coop_mat16x16<f16, A>>(&split[hi.y + at], k),
        coopLoadT<coop_mat16x16<f16, A>>(&split[lo.x + at], k),
        coopLoadT<coop_mat16x16<f16, A>>(&split[lo.y + at], k),
        coopLoad<coop_mat16x16<f16, B>>(&w[wr.x + at], k),
        coopLoad<coop_mat16x16<f16, B>>(&w[wr.y + at], k),
        coopLoad<coop_mat16x16<f16, B>>(&w[wr.z + at], k),
        coopLoad<coop_mat16x16<f16, B>>(&w[wr.w + at], k),
    );
}

@compute @workgroup_size(4u * SUBGROUP)
fn gemm_coop(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) t: u32) {
    let sg = t / SUBGROUP;
    let lane = t % SUBGROUP;
    let row0 = wid.y * 64u + (sg / 2u) * 32u;
    let col0 = wid.x * 128u + (sg % 2u) * 64u;
    let k = p.k;
    let hi = vec2(row0 * k, (row0 + 16u) * k);
    let lo = hi + vec2(p.padded_n * k);
    let wr = vec4(col0 * k, (col0 + 16u) * k, (col0 + 32u) * k, (col0 + 48u) * k);

    var a = Accumulators();
    // The next step's operands are loaded before this step's products, so the loads overlap the tensor-core work;
    // the last step reloads itself rather than reading past the row.
    var operands = load_direct(0u, hi, lo, wr);
    for (var k0 = 0u; k0 < k; k0 += 16u) {
        let next = load_direct(select(k0, k0 + 16u, k0 + 16u < k), hi, lo, wr);
        multiply(operands, &a);
        flush(k0 + 16u, &a);
        operands = next;
    }
    write_tiles(&a, row0, col0, sg, lane);
}

// Depth in k of one stage of `gemm_coop_staged` (16 or 32).
override STAGE_K: u32 = 16u;
// Most 4-f16 groups of a stage one invocation copies into `tiles` per stage (see `gemm_coop_staged`).
const MAX_STAGE_LOADS: u32 = 16u;

// Two stage buffers, each: X hi (TILE_M rows), X lo (TILE_M rows), then W (128 rows), each row STAGE_K f16 and 8 f16
// of padding. Scalar f16 elements: `coopLoad` reads through a pointer to an f16 and its stride counts f16. The
// padding makes the row stride 48 or 80 bytes, so the 8 rows of one 8×8 fragment load fall in distinct 16-byte bank
// groups; every operand's first row starts on a 16-byte boundary (a multiple of 8 f16), as `coopLoad` requires.
override TILES_LEN: u32 = 2u * (2u * TILE_M + 128u) * (STAGE_K + 8u);
var<workgroup> tiles: array<f16, TILES_LEN>;

// Group `u` (4 f16 of one staged row, rows in `tiles` order) of the stage that starts at k0, read from memory;
// zeros past k (the last stage of a k that is not a multiple of STAGE_K).
fn stage_load(u: u32, k0: u32, wid: vec3<u32>) -> vec4<f16> {
    let chunks = STAGE_K / 4u;
    let row = u / chunks;
    let kc = k0 + (u % chunks) * 4u;
    var v = vec4<f16>();
    if kc < p.k {
        if row < 2u * TILE_M {
            // hi rows are split rows 0..padded_n, lo rows padded_n..2·padded_n. padded_n is a multiple of 64, not
            // of TILE_M: rows of the last tile past it read other (or clamped) rows, feeding only output rows ≥ n.
            let r = (row / TILE_M) * p.padded_n + wid.y * TILE_M + row % TILE_M;
            v = split4[(r * p.k + kc) / 4u];
        } else {
            let c = wid.x * 128u + row - 2u * TILE_M;
            v = w4[(c * p.k + kc) / 4u];
        }
    }
    return v;
}

// Where group `u` of a stage starts in its stage buffer, in f16.
fn stage_slot(u: u32) -> u32 {
    let chunks = STAGE_K / 4u;
    return (u / chunks) * (STAGE_K + 8u) + (u % chunks) * 4u;
}

// Stores group `v` at f16 `at` of `tiles`, one f16 at a time.
fn stage_store(at: u32, v: vec4<f16>) {
    tiles[at] = v.x;
    tiles[at + 1u] = v.y;
    tiles[at + 2u] = v.z;
    tiles[at + 3u] = v.w;
}

// The step at f16 `at` of `tiles`: rows `hi`/`lo`/`wr` of a stage buffer, stride `stride`.
fn load_staged(at: u32, stride: u32, hi: vec2<u32>, lo: vec2<u32>, wr: vec4<u32>) -> Operands {
    return Operands(
        coopLoadT<coop_mat16x16<f16, A>>(&tiles[at + hi.x], stride),
        coopLoadT<coop_mat16x16<f16, A>>(&tiles[at + hi.y], stride),
        coopLoadT<coop_mat16x16<f16, A>>(&tiles[at + lo.x], stride),
        coopLoadT<coop_mat16x16<f16, A>>(&tiles[at + lo.y], stride),
        coopLoad<coop_mat16x16<f16, B>>(&tiles[at + wr.x], stride),
        coopLoad<coop_mat16x16<f16, B>>(&tiles[at + wr.y], stride),
        coopLoad<coop_mat16x16<f16, B>>(&tiles[at + wr.z], stride),
        coopLoad<coop_mat16x16<f16, B>>(&tiles[at + wr.w], stride),
    );
}

// `gemm_coop` with the operands staged through workgroup memory. A workgroup of TILE_M / 16 subgroups computes a
// TILE_M × 128 tile of Y, each subgroup 32 × 64 as in `gemm_coop`, with the same products in the same order and the
// same BLOCK_K blocking, so the results are bit-identical to `gemm_coop`'s. The k range is walked in stages of STAGE_K:
// the workgroup copies a stage's X hi, X lo and W rows into `tiles` once (each invocation a few 4-f16 groups,
// consecutive invocations along a row, so the global loads coalesce), and the subgroups `coopLoad` their 16×16
// operands from there. Double-buffered with one barrier per stage: stage s + 1's global loads are issued into
// registers before stage s's products and stored to the other buffer after them; the barrier at the end of the stage
// publishes those stores and keeps anyone from overwriting the buffer just read before every subgroup is done with
// it. Stage 0 is copied before the loop.
@compute @workgroup_size(TILE_M / 16u * SUBGROUP)
fn gemm_coop_staged(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) t: u32) {
    let threads = TILE_M / 16u * SUBGROUP;
    // 4-f16 groups of a stage per invocation (the launcher's shapes divide evenly, ≤ MAX_STAGE_LOADS).
    let loads = (2u * TILE_M + 128u) * (STAGE_K / 4u) / threads;
    // Offsets and strides in `tiles` count f16.
    let row_elems = STAGE_K + 8u;
    let stage_elems = (2u * TILE_M + 128u) * row_elems;
    let sg = t / SUBGROUP;
    let lane = t % SUBGROUP;
    let row0 = wid.y * TILE_M + (sg / 2u) * 32u;
    let col0 = wid.x * 128u + (sg % 2u) * 64u;
    let k = p.k;
    // This subgroup's operand rows within a stage buffer.
    let hi = vec2((sg / 2u) * 32u, (sg / 2u) * 32u + 16u) * row_elems;
    let lo = hi + vec2(TILE_M * row_elems);
    let w0 = (2u * TILE_M + (sg % 2u) * 64u) * row_elems;
    let wr = vec4(w0, w0 + 16u * row_elems, w0 + 32u * row_elems, w0 + 48u * row_elems);

    var a = Accumulators();
    for (var i = 0u; i < loads; i++) {
        let u = i * threads + t;
        stage_store(stage_slot(u), stage_load(u, 0u, wid));
    }
    workgroupBarrier();
    var next: array<vec4<f16>, MAX_STAGE_LOADS>;
    let stages = (k + STAGE_K - 1u) / STAGE_K;
    for (var s = 0u; s < stages; s++) {
        let k0 = s * STAGE_K;
        let cur = (s % 2u) * stage_elems;
        let more = s + 1u < stages;
        if more {
            for (var i = 0u; i < loads; i++) {
                next[i] = stage_load(i * threads + t, k0 + STAGE_K, wid);
            }
        }
        // Steps of 16 within the stage. Past k (the last stage of a k that is not a multiple of STAGE_K) the staged
        // operands are zeros, so the steps there add nothing. The bound is a constant on purpose: a loop bound that
        // also tests k made the NVIDIA driver (580) crash at pipeline creation.
        for (var kk = 0u; kk < STAGE_K; kk += 16u) {
            multiply(load_staged(cur + kk, row_elems, hi, lo, wr), &a);
            flush(k0 + kk + 16u, &a);
        }
        if more {
            let other = stage_elems - cur;
            for (var i = 0u; i < loads; i++) {
                stage_store(other + stage_slot(i * threads + t), next[i]);
            }
        }
        // Publishes the next stage's buffer, and keeps its stores (next iteration) off this stage's buffer until
        // every subgroup has read it.
        workgroupBarrier();
    }
    write_tiles(&a, row0, col0, sg, lane);
}

// #include "gemm_epilogue.wgsl"
