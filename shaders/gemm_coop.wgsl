// Linear layer on cooperative matrices (tensor cores), f32-accurate: Y = act(X · Wᵀ + bias), or += with ACCUMULATE,
// or, with PARTIALS, the raw product of one slice of k into partials[z] (split-k: the slices are summed, in order, by
// whoever consumes them, so the result is deterministic; with STREAM the slices hold stream-k's pieces instead).
// Same layout and epilogue as gemm.wgsl, except W: on this path it is stored as f16, the exact image W·2^s of the
// bf16 weights (checked on the host at upload), with its rows padded to a multiple of 128 by zeros. k is a multiple
// of T.
//
// Written for T×T×T f16→f32 cooperative matrices of either size the file that includes this one chooses
// (`gemm_coop16.wgsl`: T = 16, e.g. NVIDIA and AMD; `gemm_coop8.wgsl`: T = 8, e.g. Mesa's lavapipe): that file
// enables f16 and cooperative matrices and names the matrix types MatA, MatB, MatC and the constant T.
//
// Precision: the hardware multiplies f16 × f16 exactly into f32. Each row of X is scaled by a power of two 2^r (its
// largest value lands in [2^14, 2^15); `row_scales` computes it) and split while it is staged: x·2^r = hi + lo, hi
// the top 11 significant bits (the low 13 mantissa bits cleared, so hi is exactly an f16 and x·2^r − hi is exact in
// f32), lo = f16(x·2^r − hi) the next 11: 22 bits, against f32's 24. Both halves are multiplied with the same W tile,
// and the epilogue multiplies by 2^−(r+s), which is exact. The tensor cores round their f32 accumulation toward zero,
// a bias that grows with the number of products accumulated, so each step's two products start from zero and join
// the running total with an ordinary, correctly rounded f32 add. With SPLIT off (the fast precision) x·2^r is
// rounded to the nearest f16 (11 significant bits), only that half is staged and multiplied, and the products
// accumulate on the tensor cores: half the staging and half the products, at f16's precision.
//
// Tiling: a workgroup of SG_M × SG_N multiplying subgroups (SUBGROUP lanes each) computes a TILE_M × TILE_N tile of
// Y, each subgroup 2T rows × 4T columns as 2×4 accumulators. k is walked in stages of STAGE_K, double-buffered in
// workgroup memory with one barrier per stage: a stage's X rows (f32, scaled and split into hi and lo on the way)
// and W rows (f16) are copied in once — each staging invocation a few groups of 4 values, consecutive invocations
// along a row, so the global loads coalesce — and the multiplying subgroups `coopLoad` their T×T operands from there.
// With PRODUCERS > 0, that many further subgroups only stage (the next stage's buffer, while the others multiply
// from the current one); the barrier at the end of each stage publishes the one and frees the other. Without them
// every subgroup stages too, its next stage's loads issued before its products and stored after them. Measured on
// the H200 (fc1, 600 × 5120 × 1280): a subgroup's instructions run in order and the driver does not keep those loads
// ahead of the products, so staging and products add up (170 µs); eight staging subgroups beside the eight
// multiplying ones overlap them (124 µs, 128 registers per invocation, one workgroup per multiprocessor).
// Staging subgroups that also prefetched the stage after next into registers were slower (169 µs). Where two stage
// buffers do not fit (BUFFERS = 1: 32-deep stages with X split in 48 KiB), the next stage's loads are issued while
// this one is multiplied and wait in registers until a second barrier frees the buffer: two barriers per stage, as
// many per k as two 16-deep buffers, with twice the loads in flight. The epilogue stages one T×T accumulator per
// multiplying subgroup in workgroup memory at a time.

struct Params {
    n: u32,
    m: u32,
    k: u32,
    // k per split (a multiple of STAGE_K); the workgroup with z = wid.z takes [z·k_split, (z+1)·k_split) ∩ [0, k).
    k_split: u32,
    // 2^-s for the weight's scale 2^s.
    w_unscale: f32,
    // With STREAM: the slices of the partial products (the most pieces a tile is cut into).
    slots: u32,
}

@group(0) @binding(0) var<storage, read> x: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read> w: array<vec4<f16>>;
@group(0) @binding(2) var<storage, read> bias: array<f32>;
@group(0) @binding(3) var<storage, read_write> y: array<f32>;
// Per row of X: 2^r and 2^-r (`row_scales` writes them).
@group(0) @binding(4) var<storage, read_write> scales: array<vec2<f32>>;
@group(1) @binding(0) var<uniform> p: Params;

override HAS_BIAS: bool = false;
override ACTIVATION: u32 = 0u;  // read by `activate` (gemm_epilogue.wgsl)
override ACCUMULATE: bool = false;
// Write the raw product of this workgroup's k slice to y[z·n·m + …] (no bias, activation or accumulation).
override PARTIALS: bool = false;
// With PARTIALS: stream-k (see `gemm_coop`) instead of one workgroup per tile and slice of k.
override STREAM: bool = false;
// Lanes per subgroup: the launcher uses this path only where the subgroup size is fixed.
override SUBGROUP: u32 = 32u;
override SG_M: u32 = 4u;
override SG_N: u32 = 2u;
override STAGE_K: u32 = 16u;
// Subgroups that only stage (see the tiling note); 0: the multiplying subgroups stage too.
override PRODUCERS: u32 = 8u;
// X split into hi and lo halves (f32-accurate), or rounded to one f16 (see the precision note).
override SPLIT: bool = true;
// Stage buffers in workgroup memory: 2 (the next stage is stored while this one is multiplied), or 1 where two do
// not fit (the next stage waits in the staging invocations' registers, stored between two barriers).
override BUFFERS: u32 = 2u;

const ROW_THREADS: u32 = 64u;
var<workgroup> row_max: array<f32, ROW_THREADS>;

// One workgroup per row of X: its scale 2^r (largest magnitude into [2^14, 2^15)) and 2^-r (`row_scale`). Where a
// LayerNorm wrote X, it wrote the scales too (`layer_norm.wgsl`) and this pass does not run.
@compute @workgroup_size(ROW_THREADS)
fn row_scales(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>,
              @builtin(local_invocation_index) t: u32) {
    let row = wid.y * groups.x + wid.x;
    if row >= p.n {
        return;
    }
    let k4 = p.k / 4u;
    var m = 0.0;
    for (var c = t; c < k4; c += ROW_THREADS) {
        let v = abs(x[row * k4 + c]);
        m = max(m, max(max(v.x, v.y), max(v.z, v.w)));
    }
    row_max[t] = m;
    workgroupBarrier();
    for (var stride = ROW_THREADS / 2u; stride > 0u; stride /= 2u) {
        if t < stride {
            row_max[t] = max(row_max[t], row_max[t + stride]);
        }
        workgroupBarrier();
    }
    if t == 0u {
        scales[row] = row_scale(row_max[0]);
    }
}

// #include "row_scale.wgsl"

override TILE_M: u32 = SG_M * 2u * T;
override TILE_N: u32 = SG_N * 4u * T;
// Staged rows: X hi (TILE_M), X lo (TILE_M, with SPLIT), W (TILE_N); each STAGE_K f16 and 8 f16 of padding, so that
// the rows of one fragment load fall in distinct 16-byte bank groups and every operand starts on a 16-byte boundary.
override STAGED_X: u32 = select(1u, 2u, SPLIT) * TILE_M;
override STAGE_ROWS: u32 = STAGED_X + TILE_N;
override ROW_ELEMS: u32 = STAGE_K + 8u;
// BUFFERS stage buffers, as groups of four f16 (every row and operand starts on a group): a staged group is one 8-byte
// store, and `coopLoad` reads through a pointer to the group, its stride counted in groups (ROW_ELEMS / 4).
override TILES_LEN: u32 = BUFFERS * STAGE_ROWS * ROW_ELEMS / 4u;
var<workgroup> tiles: array<vec4<f16>, TILES_LEN>;
// One T×T f32 epilogue tile per subgroup. (An array's length must name an override, not be an expression of one:
// naga 30 panics on the nameless override it would make.)
override STAGED_LEN: u32 = SG_M * SG_N * T * T;
var<workgroup> staged: array<f32, STAGED_LEN>;
// Groups of 4 values of X, and of W, one staging invocation copies per stage, at most (the launcher checks).
const MAX_STAGE_LOADS: u32 = 8u;

// One invocation's share of a stage, in registers between its loads and its stores to workgroup memory.
struct StageLoads {
    x: array<vec4<f32>, MAX_STAGE_LOADS>,
    w: array<vec4<f16>, MAX_STAGE_LOADS>,
}

// Who stages what: `stagers` invocations, this one number `at`; the groups of a stage are numbered X rows first
// (TILE_M of them, STAGE_K / 4 groups each), then W rows, and invocation `at` takes groups at, at + stagers, …
struct Stager {
    at: u32,
    stagers: u32,
}

fn x_loads(s: Stager) -> u32 {
    return TILE_M * (STAGE_K / 4u) / s.stagers;
}

fn w_loads(s: Stager) -> u32 {
    return TILE_N * (STAGE_K / 4u) / s.stagers;
}

// Loads this invocation's groups of the stage starting at k0 into registers. Zeros past the row's end (n; the
// padded W rows cannot be passed: W is padded to 128 rows and TILE_N divides 128) and past `k_end`.
fn stage_load(s: Stager, k0: u32, k_end: u32, wid: vec3<u32>, loads: ptr<function, StageLoads>) {
    let chunks = STAGE_K / 4u;
    for (var i = 0u; i < x_loads(s); i++) {
        let u = i * s.stagers + s.at;
        let kc = k0 + (u % chunks) * 4u;
        let r = wid.y * TILE_M + u / chunks;
        var v = vec4<f32>();
        if kc < k_end && r < p.n {
            v = x[(r * p.k + kc) / 4u];
        }
        (*loads).x[i] = v;
    }
    for (var i = 0u; i < w_loads(s); i++) {
        let u = i * s.stagers + s.at;
        let kc = k0 + (u % chunks) * 4u;
        var v = vec4<f16>();
        if kc < k_end {
            v = w[((wid.x * TILE_N + u / chunks) * p.k + kc) / 4u];
        }
        (*loads).w[i] = v;
    }
}

// Stores the loaded groups into the stage buffer at f16 offset `base`: an X group scaled by its row's 2^r
// (`row_scale`, read once per row before the loop) as its hi and lo halves in the hi and lo rows (or, without SPLIT,
// rounded in the hi rows), a W group as it is.
fn stage_store(s: Stager, base: u32, loads: ptr<function, StageLoads>,
               row_scale: ptr<function, array<f32, MAX_STAGE_LOADS>>) {
    let chunks = STAGE_K / 4u;
    for (var i = 0u; i < x_loads(s); i++) {
        let u = i * s.stagers + s.at;
        let at = base + (u / chunks) * ROW_ELEMS + (u % chunks) * 4u;
        let scaled = (*loads).x[i] * (*row_scale)[i];
        if SPLIT {
            let hi = bitcast<vec4<f32>>(bitcast<vec4<u32>>(scaled) & vec4(0xffffe000u));
            tiles[at / 4u] = vec4<f16>(hi);
            tiles[(at + TILE_M * ROW_ELEMS) / 4u] = vec4<f16>(scaled - hi);
        } else {
            tiles[at / 4u] = vec4<f16>(scaled);
        }
    }
    for (var i = 0u; i < w_loads(s); i++) {
        let u = i * s.stagers + s.at;
        let at = base + (STAGED_X + u / chunks) * ROW_ELEMS + (u % chunks) * 4u;
        tiles[at / 4u] = (*loads).w[i];
    }
}

// One subgroup's 2T × 4T share of the tile.
struct Accumulators {
    c00: MatC,
    c01: MatC,
    c02: MatC,
    c03: MatC,
    c10: MatC,
    c11: MatC,
    c12: MatC,
    c13: MatC,
}

// c += hi·b + lo·b, the two products of one operand pair started from zero (see the precision note).
fn product(hi: MatA, lo: MatA, b: MatB) -> MatC {
    return coopMultiplyAdd(lo, b, coopMultiplyAdd(hi, b, MatC()));
}

// The step at f16 `at` of `tiles`: this subgroup's rows `hi`, `lo` (2 tiles each) and `wr` (4 tiles), all f16
// offsets that are multiples of 4.
fn multiply(at: u32, hi: vec2<u32>, lo: vec2<u32>, wr: vec4<u32>, a: ptr<function, Accumulators>) {
    let stride = ROW_ELEMS / 4u;
    let h0 = coopLoadT<MatA>(&tiles[(at + hi.x) / 4u], stride);
    let h1 = coopLoadT<MatA>(&tiles[(at + hi.y) / 4u], stride);
    let l0 = coopLoadT<MatA>(&tiles[(at + lo.x) / 4u], stride);
    let l1 = coopLoadT<MatA>(&tiles[(at + lo.y) / 4u], stride);
    let b0 = coopLoad<MatB>(&tiles[(at + wr.x) / 4u], stride);
    let b1 = coopLoad<MatB>(&tiles[(at + wr.y) / 4u], stride);
    let b2 = coopLoad<MatB>(&tiles[(at + wr.z) / 4u], stride);
    let b3 = coopLoad<MatB>(&tiles[(at + wr.w) / 4u], stride);
    (*a).c00 = (*a).c00 + product(h0, l0, b0);
    (*a).c01 = (*a).c01 + product(h0, l0, b1);
    (*a).c02 = (*a).c02 + product(h0, l0, b2);
    (*a).c03 = (*a).c03 + product(h0, l0, b3);
    (*a).c10 = (*a).c10 + product(h1, l1, b0);
    (*a).c11 = (*a).c11 + product(h1, l1, b1);
    (*a).c12 = (*a).c12 + product(h1, l1, b2);
    (*a).c13 = (*a).c13 + product(h1, l1, b3);
}

// Without SPLIT: c += x·b on the tensor cores, one product per accumulator and step.
fn multiply_rounded(at: u32, x: vec2<u32>, wr: vec4<u32>, a: ptr<function, Accumulators>) {
    let stride = ROW_ELEMS / 4u;
    let x0 = coopLoadT<MatA>(&tiles[(at + x.x) / 4u], stride);
    let x1 = coopLoadT<MatA>(&tiles[(at + x.y) / 4u], stride);
    let b0 = coopLoad<MatB>(&tiles[(at + wr.x) / 4u], stride);
    let b1 = coopLoad<MatB>(&tiles[(at + wr.y) / 4u], stride);
    let b2 = coopLoad<MatB>(&tiles[(at + wr.z) / 4u], stride);
    let b3 = coopLoad<MatB>(&tiles[(at + wr.w) / 4u], stride);
    (*a).c00 = coopMultiplyAdd(x0, b0, (*a).c00);
    (*a).c01 = coopMultiplyAdd(x0, b1, (*a).c01);
    (*a).c02 = coopMultiplyAdd(x0, b2, (*a).c02);
    (*a).c03 = coopMultiplyAdd(x0, b3, (*a).c03);
    (*a).c10 = coopMultiplyAdd(x1, b0, (*a).c10);
    (*a).c11 = coopMultiplyAdd(x1, b1, (*a).c11);
    (*a).c12 = coopMultiplyAdd(x1, b2, (*a).c12);
    (*a).c13 = coopMultiplyAdd(x1, b3, (*a).c13);
}

// The products of one stage at f16 offset `cur` of `tiles`. Past k_end the staged operands are zeros, so those
// steps add nothing. The bound is a constant on purpose: a loop bound that also tested k made the NVIDIA driver (580)
// crash at pipeline creation.
fn multiply_stage(cur: u32, hi: vec2<u32>, lo: vec2<u32>, wr: vec4<u32>, a: ptr<function, Accumulators>) {
    for (var kk = 0u; kk < STAGE_K; kk += T) {
        if SPLIT {
            multiply(cur + kk, hi, lo, wr, a);
        } else {
            multiply_rounded(cur + kk, hi, wr, a);
        }
    }
}

@compute @workgroup_size((SG_M * SG_N + PRODUCERS) * SUBGROUP)
fn gemm_coop(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>,
             @builtin(local_invocation_index) t: u32) {
    if !STREAM {
        let k0 = wid.z * p.k_split;
        tile_product(wid, k0, min(k0 + p.k_split, p.k), t);
        return;
    }
    // Stream-k: the tiles' stages laid end to end, row-major over the tiles, and cut into one even share per
    // workgroup. A share covers the end of one tile, whole tiles and the start of another; each piece of a tile
    // goes to the slot numbered by the cuts before it within the tile, and the workgroup that finishes a tile zeroes
    // the slots past its piece, so the consumer adds `slots` slices as it adds split-k's.
    let tiles_x = (p.m + TILE_N - 1u) / TILE_N;
    let per_tile = (p.k + STAGE_K - 1u) / STAGE_K;
    let total = tiles_x * ((p.n + TILE_M - 1u) / TILE_M) * per_tile;
    let units = groups.x;
    let end = (wid.x + 1u) * total / units;
    for (var g = wid.x * total / units; g < end;) {
        let tile = g / per_tile;
        let s0 = g % per_tile;
        let s1 = min(per_tile, s0 + end - g);
        // The workgroup whose share holds the tile's first stage (the largest u with u·total/units ≤ that stage).
        let first = ((tile * per_tile + 1u) * units - 1u) / total;
        let slot = wid.x - first;
        tile_product(vec3(tile % tiles_x, tile / tiles_x, slot), s0 * STAGE_K, min(s1 * STAGE_K, p.k), t);
        if s1 == per_tile {
            zero_slots(vec2(tile % tiles_x, tile / tiles_x), slot + 1u, t);
        }
        g += s1 - s0;
    }
}

// Zeros slots `first`, … of the partial products at a tile (stream-k: the tile had fewer pieces).
fn zero_slots(tile: vec2<u32>, first: u32, t: u32) {
    let threads = (SG_M * SG_N + PRODUCERS) * SUBGROUP;
    for (var z = first; z < p.slots; z++) {
        for (var e = t; e < TILE_M * TILE_N; e += threads) {
            let r = tile.y * TILE_M + e / TILE_N;
            let c = tile.x * TILE_N + e % TILE_N;
            if r < p.n && c < p.m {
                y[(z * p.n + r) * p.m + c] = 0.0;
            }
        }
    }
}

// The product of X's rows and W's rows of tile `wid.xy` over k in [k0, k_end), written to slice `wid.z` (with
// PARTIALS) or through the epilogue.
fn tile_product(wid: vec3<u32>, k0: u32, k_end: u32, t: u32) {
    let multipliers = SG_M * SG_N * SUBGROUP;
    let multiplies = t < multipliers;
    var stager = Stager(t, multipliers);
    if PRODUCERS > 0u {
        stager = Stager(t - multipliers, PRODUCERS * SUBGROUP);
    }
    let stage_elems = STAGE_ROWS * ROW_ELEMS;
    let sg = t / SUBGROUP;
    let lane = t % SUBGROUP;
    let sm = sg / SG_N;
    let sn = sg % SG_N;
    let row0 = wid.y * TILE_M + sm * 2u * T;
    let col0 = wid.x * TILE_N + sn * 4u * T;
    // This subgroup's operand rows within a stage buffer, in f16.
    let hi = vec2(sm * 2u * T, sm * 2u * T + T) * ROW_ELEMS;
    let lo = hi + vec2(TILE_M * ROW_ELEMS);
    let w0 = (STAGED_X + sn * 4u * T) * ROW_ELEMS;
    let wr = vec4(w0, w0 + T * ROW_ELEMS, w0 + 2u * T * ROW_ELEMS, w0 + 3u * T * ROW_ELEMS);
    let stages = (k_end - min(k0, k_end) + STAGE_K - 1u) / STAGE_K;

    var a = Accumulators();
    var loads: StageLoads;
    var row_scale: array<f32, MAX_STAGE_LOADS>;
    let staging = PRODUCERS == 0u || !multiplies;
    if staging {
        for (var i = 0u; i < x_loads(stager); i++) {
            let row = (i * stager.stagers + stager.at) / (STAGE_K / 4u);
            row_scale[i] = scales[min(wid.y * TILE_M + row, p.n - 1u)].x;
        }
        stage_load(stager, k0, k_end, wid, &loads);
    }
    if BUFFERS == 1u {
        for (var s = 0u; s < stages; s++) {
            if staging {
                stage_store(stager, 0u, &loads, &row_scale);
            }
            workgroupBarrier();
            let more = s + 1u < stages;
            let next = k0 + (s + 1u) * STAGE_K;
            // The next stage's loads are in flight while this one is multiplied, and stored once every subgroup
            // has read it (the second barrier).
            if PRODUCERS == 0u {
                if more {
                    stage_load(stager, next, k_end, wid, &loads);
                }
                multiply_stage(0u, hi, lo, wr, &a);
            } else if multiplies {
                multiply_stage(0u, hi, lo, wr, &a);
            } else if more {
                stage_load(stager, next, k_end, wid, &loads);
            }
            workgroupBarrier();
        }
    } else {
        if staging {
            stage_store(stager, 0u, &loads, &row_scale);
        }
        workgroupBarrier();
        for (var s = 0u; s < stages; s++) {
            let cur = (s % 2u) * stage_elems;
            let more = s + 1u < stages;
            let next = k0 + (s + 1u) * STAGE_K;
            // Three disjoint paths, not one path with the roles as conditions: written as `load if staging;
            // multiply if multiplying; store if staging`, the driver kept the staging registers live across the
            // products and the kernel ran 152 µs instead of 124 (fc1, H200).
            if PRODUCERS == 0u {
                if more {
                    stage_load(stager, next, k_end, wid, &loads);
                }
                multiply_stage(cur, hi, lo, wr, &a);
                if more {
                    stage_store(stager, stage_elems - cur, &loads, &row_scale);
                }
            } else if multiplies {
                multiply_stage(cur, hi, lo, wr, &a);
            } else if more {
                stage_load(stager, next, k_end, wid, &loads);
                stage_store(stager, stage_elems - cur, &loads, &row_scale);
            }
            // Publishes the next stage's buffer, and keeps its stores (next iteration) off this stage's buffer
            // until every subgroup has read it.
            workgroupBarrier();
        }
    }

    // Staging subgroups take part in the epilogue's barriers only.
    let base = min(sg, SG_M * SG_N - 1u) * T * T;
    finish(a.c00, multiplies, row0, col0, base, lane, wid.z);
    finish(a.c01, multiplies, row0, col0 + T, base, lane, wid.z);
    finish(a.c02, multiplies, row0, col0 + 2u * T, base, lane, wid.z);
    finish(a.c03, multiplies, row0, col0 + 3u * T, base, lane, wid.z);
    finish(a.c10, multiplies, row0 + T, col0, base, lane, wid.z);
    finish(a.c11, multiplies, row0 + T, col0 + T, base, lane, wid.z);
    finish(a.c12, multiplies, row0 + T, col0 + 2u * T, base, lane, wid.z);
    finish(a.c13, multiplies, row0 + T, col0 + 3u * T, base, lane, wid.z);
}

// Stages accumulator `c` of the tile at (row, col), then unscales, adds the bias, activates and writes this lane's
// share — or, with PARTIALS, writes the unscaled product to split z's slice. The barriers order the subgroup's store
// before the reads, and the reads before the next store.
fn finish(c: MatC, multiplies: bool, row: u32, col: u32, base: u32, lane: u32, z: u32) {
    if multiplies {
        coopStoreT(c, &staged[base], T);
    }
    workgroupBarrier();
    if multiplies {
        for (var e = lane; e < T * T; e += SUBGROUP) {
            let r = row + e / T;
            let cc = col + e % T;
            if r < p.n && cc < p.m {
                var v = staged[base + e] * p.w_unscale * scales[r].y;
                let at = r * p.m + cc;
                if PARTIALS {
                    y[z * p.n * p.m + at] = v;
                } else {
                    if HAS_BIAS {
                        v += bias[cc];
                    }
                    v = activate(v);
                    if ACCUMULATE {
                        v += y[at];
                    }
                    y[at] = v;
                }
            }
        }
    }
    workgroupBarrier();
}

// #include "gemm_epilogue.wgsl"
