// Masked bidirectional multi-head attention, flash style (online softmax, no n×n score matrix).
//
// Layout: `qkv` is f32 [seqs·seq_len, 3·d], d = heads·head_dim; q, k, v are the column blocks
// [0,d), [d,2d), [2d,3d) and head h uses columns [h·head_dim, (h+1)·head_dim) of each block.
// Row r = s·seq_len + i is row i of sequence s; sequences never see each other's keys.
// `key_valid[r]` is 1 for a valid key, 0 for padding. `out` is f32 [seqs·seq_len, d]:
//   out[r, head h] = softmax(q·kᵀ / √head_dim + mask) · v.
// Masked scores are replaced by f32's lowest value, as Transformers' eager attention does (it adds
// finfo(f32).min, which absorbs the score): they vanish next to any valid key, and a sequence
// without valid keys ends up attending uniformly to all of its keys.
//
// Tiling: one workgroup of 128 invocations takes one (sequence, head, block of 32 queries). The
// query block, pre-scaled by 1/√head_dim, stays in workgroup memory; the keys are walked in tiles
// of BLOCK_KEYS rows, K and V taking turns in one staging buffer. Per tile:
//   1. stage K;  2. scores = Q·Kᵀ, each invocation a 2×(BLOCK_KEYS/8) micro-tile;
//   3. stage V while one invocation per query row updates the row's running max and sum and turns
//      the scores into probabilities (and the factor that rescales the row's earlier output);
//   4. output += P·V, each invocation owning ROWS_PER_THREAD rows × COLS_PER_THREAD vec4 columns
//      of the 32×HEAD_DIM accumulator, kept in registers.
// HEAD_DIM is head_dim padded up to 32, 64 or 128 (padding dims are zero, never written out).
// Staged rows are padded by one vec4 so that neighbouring invocations reading different key rows
// hit different banks; the probability rows by one float for the same reason.

struct Params {
    seq_len: u32,
    heads: u32,
    head_dim: u32,
    query_blocks: u32,
    workgroups: u32,
    scale: f32,
}

@group(0) @binding(0) var<storage, read> qkv: array<f32>;
@group(0) @binding(1) var<storage, read> key_valid: array<u32>;
@group(0) @binding(2) var<storage, read_write> out: array<f32>;
@group(1) @binding(0) var<uniform> p: Params;

override HEAD_DIM: u32 = 128u;
override BLOCK_KEYS: u32 = 16u;

const WG: u32 = 128u;
const BLOCK_QUERIES: u32 = 32u;
// Scores micro-tile: 8 invocations across the keys of a tile, 16 across the queries (2 rows each).
const SCORE_KEY_LANES: u32 = 8u;
const SCORE_ROW_LANES: u32 = WG / SCORE_KEY_LANES;
// finfo(f32).min, the score of a masked key.
const MASKED: f32 = -3.40282347e38;

override VEC_DIM: u32 = HEAD_DIM / 4u;
override KV_STRIDE: u32 = VEC_DIM + 1u;
override PROB_STRIDE: u32 = BLOCK_KEYS + 1u;
override KEYS_PER_THREAD: u32 = BLOCK_KEYS / SCORE_KEY_LANES;
// Output micro-tile: up to 16 invocations across the vec4 columns, the rest across the rows.
override COL_LANES: u32 = min(VEC_DIM, 16u);
override COLS_PER_THREAD: u32 = VEC_DIM / COL_LANES;
override ROW_LANES: u32 = WG / COL_LANES;
override ROWS_PER_THREAD: u32 = BLOCK_QUERIES / ROW_LANES;

var<workgroup> q_tile: array<vec4<f32>, BLOCK_QUERIES * VEC_DIM>;
var<workgroup> kv_tile: array<vec4<f32>, BLOCK_KEYS * KV_STRIDE>;
var<workgroup> probs: array<f32, BLOCK_QUERIES * PROB_STRIDE>;
var<workgroup> row_factor: array<f32, BLOCK_QUERIES>;

// Dims 4·dim4 .. 4·dim4+3 of one head's q, k or v in row `row` of the sequence; zero past the
// sequence end and past head_dim.
fn head_vec4(seq_row0: u32, row: u32, column0: u32, dim4: u32) -> vec4<f32> {
    var v = vec4<f32>(0.0);
    if row < p.seq_len {
        let start = (seq_row0 + row) * 3u * p.heads * p.head_dim + column0;
        for (var k = 0u; k < 4u; k++) {
            let dim = 4u * dim4 + k;
            if dim < p.head_dim {
                v[k] = qkv[start + dim];
            }
        }
    }
    return v;
}

fn stage_kv(seq_row0: u32, key0: u32, column0: u32, lid: u32) {
    for (var i = lid; i < BLOCK_KEYS * VEC_DIM; i += WG) {
        let key = i / VEC_DIM;
        let dim4 = i % VEC_DIM;
        kv_tile[key * KV_STRIDE + dim4] = head_vec4(seq_row0, key0 + key, column0, dim4);
    }
}

fn key_is_valid(seq_row0: u32, key: u32) -> bool {
    return key < p.seq_len && key_valid[seq_row0 + key] != 0u;
}

@compute @workgroup_size(WG)
fn attention(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>,
             @builtin(local_invocation_index) lid: u32) {
    let flat = wid.y * groups.x + wid.x;
    // Uniform across the workgroup, so the barriers below stay in uniform control flow.
    if flat >= p.workgroups {
        return;
    }
    let query0 = (flat % p.query_blocks) * BLOCK_QUERIES;
    let head = (flat / p.query_blocks) % p.heads;
    let seq = flat / (p.query_blocks * p.heads);
    let seq_row0 = seq * p.seq_len;
    let width = p.heads * p.head_dim;
    let q_column0 = head * p.head_dim;

    for (var i = lid; i < BLOCK_QUERIES * VEC_DIM; i += WG) {
        q_tile[i] = head_vec4(seq_row0, query0 + i / VEC_DIM, q_column0, i % VEC_DIM) * p.scale;
    }

    // Score micro-tile of this invocation: rows score_row and score_row + SCORE_ROW_LANES, keys
    // score_key + SCORE_KEY_LANES·c.
    let score_key = lid % SCORE_KEY_LANES;
    let score_row = lid / SCORE_KEY_LANES;
    // Output micro-tile: rows out_row + ROW_LANES·r, vec4 columns out_col + COL_LANES·c.
    let out_col = lid % COL_LANES;
    let out_row = lid / COL_LANES;
    // Register arrays are sized for the largest tiling (HEAD_DIM 128: 4 rows × 2 vec4; BLOCK_KEYS
    // 32: 2 rows × 4 keys); the loops over them have constant bounds and unroll.
    var acc: array<vec4<f32>, 8>;
    // Running max and sum of the query row `lid`, for the first BLOCK_QUERIES invocations.
    var row_max = MASKED;
    var row_sum = 0.0;

    for (var key0 = 0u; key0 < p.seq_len; key0 += BLOCK_KEYS) {
        let keys = min(BLOCK_KEYS, p.seq_len - key0);
        workgroupBarrier();
        stage_kv(seq_row0, key0, width + q_column0, lid);
        workgroupBarrier();

        var score: array<f32, 8>;
        for (var d = 0u; d < VEC_DIM; d++) {
            let qa = q_tile[score_row * VEC_DIM + d];
            let qb = q_tile[(score_row + SCORE_ROW_LANES) * VEC_DIM + d];
            for (var c = 0u; c < KEYS_PER_THREAD; c++) {
                let k = kv_tile[(score_key + SCORE_KEY_LANES * c) * KV_STRIDE + d];
                score[2u * c] += dot(qa, k);
                score[2u * c + 1u] += dot(qb, k);
            }
        }
        for (var c = 0u; c < KEYS_PER_THREAD; c++) {
            let key = score_key + SCORE_KEY_LANES * c;
            let valid = key_is_valid(seq_row0, key0 + key);
            probs[score_row * PROB_STRIDE + key] = select(MASKED, score[2u * c], valid);
            probs[(score_row + SCORE_ROW_LANES) * PROB_STRIDE + key] = select(MASKED, score[2u * c + 1u], valid);
        }
        workgroupBarrier();

        stage_kv(seq_row0, key0, 2u * width + q_column0, lid);
        if lid < BLOCK_QUERIES {
            let row = lid * PROB_STRIDE;
            var new_max = row_max;
            for (var j = 0u; j < keys; j++) {
                new_max = max(new_max, probs[row + j]);
            }
            var sum = 0.0;
            for (var j = 0u; j < BLOCK_KEYS; j++) {
                // Keys past the sequence end are excluded outright, unlike masked ones.
                let e = select(0.0, exp(probs[row + j] - new_max), j < keys);
                probs[row + j] = e;
                sum += e;
            }
            let factor = exp(row_max - new_max);
            row_sum = row_sum * factor + sum;
            row_max = new_max;
            row_factor[lid] = factor;
        }
        workgroupBarrier();

        for (var r = 0u; r < ROWS_PER_THREAD; r++) {
            let factor = row_factor[out_row + ROW_LANES * r];
            for (var c = 0u; c < COLS_PER_THREAD; c++) {
                acc[r * COLS_PER_THREAD + c] *= factor;
            }
        }
        for (var j = 0u; j < BLOCK_KEYS; j++) {
            var v: array<vec4<f32>, 2>;
            for (var c = 0u; c < COLS_PER_THREAD; c++) {
                v[c] = kv_tile[j * KV_STRIDE + out_col + COL_LANES * c];
            }
            for (var r = 0u; r < ROWS_PER_THREAD; r++) {
                let prob = probs[(out_row + ROW_LANES * r) * PROB_STRIDE + j];
                for (var c = 0u; c < COLS_PER_THREAD; c++) {
                    acc[r * COLS_PER_THREAD + c] += prob * v[c];
                }
            }
        }
    }

    workgroupBarrier();
    if lid < BLOCK_QUERIES {
        row_factor[lid] = 1.0 / row_sum;
    }
    workgroupBarrier();
    for (var r = 0u; r < ROWS_PER_THREAD; r++) {
        let query = query0 + out_row + ROW_LANES * r;
        if query >= p.seq_len {
            continue;
        }
        let inv_sum = row_factor[out_row + ROW_LANES * r];
        let start = (seq_row0 + query) * width + q_column0;
        for (var c = 0u; c < COLS_PER_THREAD; c++) {
            let value = acc[r * COLS_PER_THREAD + c] * inv_sum;
            let dim0 = 4u * (out_col + COL_LANES * c);
            for (var k = 0u; k < 4u; k++) {
                if dim0 + k < p.head_dim {
                    out[start + dim0 + k] = value[k];
                }
            }
        }
    }
}
