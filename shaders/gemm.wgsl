// Linear layer with bf16 weights: Y = act(X · Wᵀ + bias), or Y += act(X · Wᵀ + bias) with ACCUMULATE.
//
// Layout: X [n×k], Y [n×m] and bias [m] are f32, row-major. W is [m×k] (PyTorch's [out, in]) in bf16, packed two
// per u32 word in flat row-major order: element e lives in word e/2, the even element in the low half. With odd k a
// word can therefore straddle two rows of W. Products and sums are f32.
//
// Tiling: a workgroup of 256 threads computes a 128×64 tile of Y (128 rows of X against 64 rows of W); each thread
// owns an 8×4 register tile (8 consecutive rows, 4 consecutive columns). K advances in steps of 16. Each step's X and
// W slices are staged in workgroup memory k-major (xs[kk][row], ws[kk][col]), so that a thread reads its 8 X values
// as two vec4 and its 4 W values as one vec4 per kk; W is widened from bf16 on its way in. Global loads are
// coalesced: consecutive threads read consecutive k of one row (whole u32 words of W when k is even). The staging
// area is double-buffered: the next step is fetched into registers while the current one is multiplied, then stored
// into the other buffer, so one barrier per step suffices. Every load and store is bounds-checked, so any n, m, k
// work; the grid is x over column tiles and y over row tiles.

struct Params {
    n: u32,
    m: u32,
    k: u32,
}

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read> w: array<u32>;
@group(0) @binding(2) var<storage, read> bias: array<f32>;
@group(0) @binding(3) var<storage, read_write> y: array<f32>;
@group(1) @binding(0) var<uniform> p: Params;

// k is even, so every row of W starts on a word boundary and a word never straddles rows: W is read a word (two
// elements) at a time. Otherwise each element is located and extracted on its own.
override EVEN_K: bool = true;
override HAS_BIAS: bool = false;
// 0: identity, 1: GELU (exact erf form), 2: ReLU.
override ACTIVATION: u32 = 0u;  // read by `activate` (gemm_epilogue.wgsl)
override ACCUMULATE: bool = false;

const THREADS: u32 = 256u;
const BM: u32 = 128u;  // rows of Y (rows of X) per workgroup
const BN: u32 = 64u;   // columns of Y (rows of W) per workgroup
const BK: u32 = 16u;   // k per step
const TM: u32 = 8u;    // rows per thread
const TN: u32 = 4u;    // columns per thread
const X_PER_THREAD: u32 = BM * BK / THREADS;           // 8
const W_ROWS_PER_THREAD: u32 = BN * BK / 2u / THREADS;  // 2 (each a pair of k)

// Each k row of the staging area is padded by one vec4: the transposed stores of a warp then spread over the banks
// instead of all landing on one.
const XS_ROW: u32 = BM / 4u + 1u;
const WS_ROW: u32 = BN / 4u + 1u;
var<workgroup> xs: array<vec4<f32>, 2u * BK * XS_ROW>;
var<workgroup> ws: array<vec4<f32>, 2u * BK * WS_ROW>;

// This thread's share of one K step, held in registers between the global load and the workgroup store. Thread t
// loads X at kk = t % BK for rows t / BK + i·(THREADS / BK), and W at kk = 2·(t % 8) + {0, 1} for W rows
// t / 8 + i·(THREADS / 8).
struct Fetched {
    x: array<f32, X_PER_THREAD>,
    w: array<vec2<f32>, W_ROWS_PER_THREAD>,
}

fn fetch(row0: u32, col0: u32, k0: u32, t: u32) -> Fetched {
    var f: Fetched;  // zero-initialised: elements outside the matrices stay 0
    let xk = k0 + t % BK;
    for (var i = 0u; i < X_PER_THREAD; i++) {
        let row = row0 + t / BK + i * (THREADS / BK);
        if row < p.n && xk < p.k {
            f.x[i] = x[row * p.k + xk];
        }
    }
    let wk = k0 + 2u * (t % (BK / 2u));
    for (var i = 0u; i < W_ROWS_PER_THREAD; i++) {
        let col = col0 + t / (BK / 2u) + i * (THREADS / (BK / 2u));
        f.w[i] = fetch_w_pair(col, wk);
    }
    return f;
}

// W[col, kk] and W[col, kk + 1], zero outside the matrix.
fn fetch_w_pair(col: u32, kk: u32) -> vec2<f32> {
    if col >= p.m {
        return vec2(0.0);
    }
    if EVEN_K {
        // kk is even, so both elements are in one word, and both are inside the row when kk is.
        if kk >= p.k {
            return vec2(0.0);
        }
        let word = w[(col * p.k + kk) / 2u];
        return vec2(bitcast<f32>(word << 16u), bitcast<f32>(word & 0xffff0000u));
    }
    return vec2(fetch_w_element(col, kk), fetch_w_element(col, kk + 1u));
}

fn fetch_w_element(col: u32, kk: u32) -> f32 {
    if kk >= p.k {
        return 0.0;
    }
    let e = col * p.k + kk;
    let word = w[e / 2u];
    return bitcast<f32>(select(word << 16u, word & 0xffff0000u, (e & 1u) == 1u));
}

fn stage(buf: u32, t: u32, f: Fetched) {
    let xk = buf * BK + t % BK;
    for (var i = 0u; i < X_PER_THREAD; i++) {
        let row = t / BK + i * (THREADS / BK);
        xs[xk * XS_ROW + row / 4u][row % 4u] = f.x[i];
    }
    let wk = buf * BK + 2u * (t % (BK / 2u));
    for (var i = 0u; i < W_ROWS_PER_THREAD; i++) {
        let col = t / (BK / 2u) + i * (THREADS / (BK / 2u));
        ws[wk * WS_ROW + col / 4u][col % 4u] = f.w[i].x;
        ws[(wk + 1u) * WS_ROW + col / 4u][col % 4u] = f.w[i].y;
    }
}

// acc[i][j] += Σ_kk X[row i, kk] · W[col j, kk] over the staged step in buffer `buf`.
fn multiply(buf: u32, tx: u32, ty: u32, acc: ptr<function, array<vec4<f32>, TM>>) {
    for (var kk = 0u; kk < BK; kk++) {
        let at = buf * BK + kk;
        let upper = xs[at * XS_ROW + ty * 2u];
        let lower = xs[at * XS_ROW + ty * 2u + 1u];
        let wv = ws[at * WS_ROW + tx];
        for (var i = 0u; i < 4u; i++) {
            (*acc)[i] += upper[i] * wv;
            (*acc)[i + 4u] += lower[i] * wv;
        }
    }
}

@compute @workgroup_size(THREADS)
fn gemm(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) t: u32) {
    let row0 = wid.y * BM;
    let col0 = wid.x * BN;
    let tx = t % (BN / TN);
    let ty = t / (BN / TN);

    var acc: array<vec4<f32>, TM>;
    let steps = (p.k + BK - 1u) / BK;
    var next = fetch(row0, col0, 0u, t);
    stage(0u, t, next);
    workgroupBarrier();
    for (var s = 0u; s < steps; s++) {
        let buf = s % 2u;
        let more = s + 1u < steps;
        if more {
            next = fetch(row0, col0, (s + 1u) * BK, t);
        }
        multiply(buf, tx, ty, &acc);
        if more {
            stage(1u - buf, t, next);
        }
        workgroupBarrier();
    }

    // Row i of the thread's tile is one vec4 of 4 consecutive columns, activated as a whole. The rows are written with
    // constant indices: a loop over `acc` that the driver does not unroll (a long activation keeps NVIDIA's from it)
    // makes `acc` an indexed array in local memory for the whole kernel, 14× slower at the tower shapes.
    let col = col0 + tx * TN;
    var bias4 = vec4<f32>(0.0);
    if HAS_BIAS {
        for (var j = 0u; j < TN; j++) {
            if col + j < p.m {
                bias4[j] = bias[col + j];
            }
        }
    }
    const_assert TM == 8u;
    let row = row0 + ty * TM;
    write_row(row, col, acc[0] + bias4);
    write_row(row + 1u, col, acc[1] + bias4);
    write_row(row + 2u, col, acc[2] + bias4);
    write_row(row + 3u, col, acc[3] + bias4);
    write_row(row + 4u, col, acc[4] + bias4);
    write_row(row + 5u, col, acc[5] + bias4);
    write_row(row + 6u, col, acc[6] + bias4);
    write_row(row + 7u, col, acc[7] + bias4);
}

// Activates and writes (or adds) 4 consecutive values of Y at (row, col), those inside Y.
fn write_row(row: u32, col: u32, linear: vec4<f32>) {
    if row >= p.n {
        return;
    }
    let v = activate4(linear);
    for (var j = 0u; j < TN; j++) {
        if col + j < p.m {
            let at = row * p.m + col + j;
            var out = v[j];
            if ACCUMULATE {
                out += y[at];
            }
            y[at] = out;
        }
    }
}

// #include "gemm_epilogue.wgsl"
