// Masked bidirectional multi-head attention, flash style (online softmax, no n×n score matrix).
//
// Layout: `qkv` is f32 [seqs·seq_len, 3·d], d = heads·head_dim; q, k, v are the column blocks
// [0,d), [d,2d), [2d,3d) and head h uses columns [h·head_dim, (h+1)·head_dim) of each block.
// Row r = s·seq_len + i is row i of sequence s; sequences never see each other's keys.
// `key_valid[r]` is 1 for a valid key, 0 for padding. `out` is f32 [seqs·seq_len, d]:
//   out[r, head h] = softmax(q·kᵀ / √head_dim + mask) · v.
// Masked scores are replaced by f32's lowest value, as Transformers' eager attention does (it adds
// finfo(f32).min, which absorbs the score): they vanish next to any valid key, and a sequence
// without valid keys ends up attending uniformly to all of its keys. Keys past the end of the
// sequence (in a partial tile) are excluded outright.
//
// Tiling: a workgroup takes one (sequence, head, block of 32 queries), LANES = HEAD_DIM/16 invocations
// per query, so that each invocation holds exactly four vec4 of its query (dims 4·(lane + LANES·i),
// pre-scaled by 1/√head_dim) and of the output accumulator in named registers. Keys go by tiles of
// BLOCK_KEYS rows, K and V staged in workgroup memory (a lane reads 16 consecutive bytes, the lanes
// of a query a contiguous run, the queries of a subgroup the same run: conflict-free broadcasts).
// Per tile: each lane forms partial dot products with every key, the LANES partials of a query are
// summed with subgroup shuffles and the score is staged in workgroup memory; then every lane
// rescales its running max, sum and accumulator once and accumulates probability × v.
// HEAD_DIM is head_dim padded up to 32, 64 or 128 (padding dims are zero, never written out).

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
override BLOCK_KEYS: u32 = 32u;

const BLOCK_QUERIES: u32 = 32u;
const MASKED: f32 = -3.40282347e38;

override VEC_DIM: u32 = HEAD_DIM / 4u;
override LANES: u32 = VEC_DIM / 4u;
override WG: u32 = BLOCK_QUERIES * LANES;
override SCORE_STRIDE: u32 = BLOCK_KEYS + 1u;

var<workgroup> k_tile: array<vec4<f32>, BLOCK_KEYS * VEC_DIM>;
var<workgroup> v_tile: array<vec4<f32>, BLOCK_KEYS * VEC_DIM>;
// Per key of the tile: 0 past the sequence end, 1 masked, 2 valid.
var<workgroup> key_state: array<u32, BLOCK_KEYS>;
var<workgroup> scores: array<f32, BLOCK_QUERIES * SCORE_STRIDE>;

// Dims 4·dim4 .. 4·dim4+3 of one head's q, k or v in `row` of the sequence; zero past head_dim.
fn head_vec4(row: u32, column0: u32, dim4: u32) -> vec4<f32> {
    let start = row * 3u * p.heads * p.head_dim + column0 + 4u * dim4;
    if 4u * dim4 + 3u < p.head_dim {
        return vec4(qkv[start], qkv[start + 1u], qkv[start + 2u], qkv[start + 3u]);
    }
    var v = vec4<f32>(0.0);
    for (var k = 0u; k < 4u; k++) {
        if 4u * dim4 + k < p.head_dim {
            v[k] = qkv[start + k];
        }
    }
    return v;
}

@compute @workgroup_size(WG)
fn attention(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>,
             @builtin(local_invocation_index) t: u32) {
    let flat = wid.y * groups.x + wid.x;
    // Uniform across the workgroup, so the barriers below stay in uniform control flow.
    if flat >= p.workgroups {
        return;
    }
    let query0 = (flat % p.query_blocks) * BLOCK_QUERIES;
    let head = (flat / p.query_blocks) % p.heads;
    let seq_row0 = (flat / (p.query_blocks * p.heads)) * p.seq_len;
    let width = p.heads * p.head_dim;
    let q_column0 = head * p.head_dim;
    let q_row = t / LANES;
    let query = query0 + q_row;
    let lane = t % LANES;
    // Rows past the sequence end compute on a clamped row and are not written.
    let query_row = seq_row0 + min(query, p.seq_len - 1u);
    let q0 = head_vec4(query_row, q_column0, lane) * p.scale;
    let q1 = head_vec4(query_row, q_column0, lane + LANES) * p.scale;
    let q2 = head_vec4(query_row, q_column0, lane + 2u * LANES) * p.scale;
    let q3 = head_vec4(query_row, q_column0, lane + 3u * LANES) * p.scale;
    var acc0 = vec4<f32>(0.0);
    var acc1 = vec4<f32>(0.0);
    var acc2 = vec4<f32>(0.0);
    var acc3 = vec4<f32>(0.0);
    var row_max = MASKED;
    var row_sum = 0.0;
    let score_row = q_row * SCORE_STRIDE;

    for (var key0 = 0u; key0 < p.seq_len; key0 += BLOCK_KEYS) {
        workgroupBarrier();
        for (var i = t; i < BLOCK_KEYS * VEC_DIM; i += WG) {
            let key = min(key0 + i / VEC_DIM, p.seq_len - 1u);
            k_tile[i] = head_vec4(seq_row0 + key, width + q_column0, i % VEC_DIM);
            v_tile[i] = head_vec4(seq_row0 + key, 2u * width + q_column0, i % VEC_DIM);
        }
        if t < BLOCK_KEYS {
            let key = key0 + t;
            let valid = key_valid[seq_row0 + min(key, p.seq_len - 1u)] != 0u;
            key_state[t] = select(0u, select(1u, 2u, valid), key < p.seq_len);
        }
        workgroupBarrier();

        for (var j = 0u; j < BLOCK_KEYS; j++) {
            let at = j * VEC_DIM + lane;
            var s = dot(q0, k_tile[at]) + dot(q1, k_tile[at + LANES]) + dot(q2, k_tile[at + 2u * LANES])
                + dot(q3, k_tile[at + 3u * LANES]);
            for (var offset = 1u; offset < LANES; offset *= 2u) {
                s += subgroupShuffleXor(s, offset);
            }
            if lane == 0u {
                scores[score_row + j] = select(MASKED, s, key_state[j] == 2u);
            }
        }
        workgroupBarrier();

        var tile_max = row_max;
        for (var j = 0u; j < BLOCK_KEYS; j++) {
            if key_state[j] != 0u {
                tile_max = max(tile_max, scores[score_row + j]);
            }
        }
        let factor = exp(row_max - tile_max);
        row_sum *= factor;
        acc0 *= factor;
        acc1 *= factor;
        acc2 *= factor;
        acc3 *= factor;
        for (var j = 0u; j < BLOCK_KEYS; j++) {
            let prob = select(0.0, exp(scores[score_row + j] - tile_max), key_state[j] != 0u);
            row_sum += prob;
            let at = j * VEC_DIM + lane;
            acc0 += prob * v_tile[at];
            acc1 += prob * v_tile[at + LANES];
            acc2 += prob * v_tile[at + 2u * LANES];
            acc3 += prob * v_tile[at + 3u * LANES];
        }
        row_max = tile_max;
    }

    if query < p.seq_len {
        let start = (seq_row0 + query) * width + q_column0;
        let inv_sum = 1.0 / row_sum;
        write_vec4(start, lane, acc0 * inv_sum);
        write_vec4(start, lane + LANES, acc1 * inv_sum);
        write_vec4(start, lane + 2u * LANES, acc2 * inv_sum);
        write_vec4(start, lane + 3u * LANES, acc3 * inv_sum);
    }
}

// Dims 4·dim4 .. 4·dim4+3 of an output row starting at `start`, those below head_dim.
fn write_vec4(start: u32, dim4: u32, value: vec4<f32>) {
    for (var k = 0u; k < 4u; k++) {
        if 4u * dim4 + k < p.head_dim {
            out[start + 4u * dim4 + k] = value[k];
        }
    }
}
