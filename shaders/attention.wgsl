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
// Tiling: a workgroup takes one (sequence, head, block of 32 queries), LANES invocations per query.
// Each invocation keeps its query's head dims 4·(lane + LANES·i) .. +3 (pre-scaled by 1/√head_dim)
// and the same dims of the output accumulator in registers. Keys go by tiles of BLOCK_KEYS rows,
// K and V staged in workgroup memory (a lane reads 16 consecutive bytes, the LANES lanes of a query
// a contiguous run, and the queries of a subgroup the same run: conflict-free broadcasts). Per tile:
// each lane forms partial dot products with every key, the LANES partials of a query are summed
// with subgroup shuffles (every lane ends with all scores), the running max, sum and accumulator are
// rescaled once, and the lane's output dims accumulate probability × v.
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
// Invocations per query row: a power of two no larger than the subgroup, so that a query's lanes
// share one subgroup.
override LANES: u32 = 8u;

const BLOCK_QUERIES: u32 = 32u;
const MASKED: f32 = -3.40282347e38;
// Register arrays are sized for the largest specialisation; loops over them have constant bounds.
const MAX_PER_LANE: u32 = 8u;
const MAX_KEYS: u32 = 32u;

override WG: u32 = BLOCK_QUERIES * LANES;
override VEC_DIM: u32 = HEAD_DIM / 4u;
override PER_LANE: u32 = VEC_DIM / LANES;

var<workgroup> k_tile: array<vec4<f32>, BLOCK_KEYS * VEC_DIM>;
var<workgroup> v_tile: array<vec4<f32>, BLOCK_KEYS * VEC_DIM>;
// Per key of the tile: 0 past the sequence end, 1 masked, 2 valid.
var<workgroup> key_state: array<u32, BLOCK_KEYS>;

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
    let query = query0 + t / LANES;
    let lane = t % LANES;
    // Rows past the sequence end compute on a clamped row and are not written.
    let query_row = seq_row0 + min(query, p.seq_len - 1u);

    var q: array<vec4<f32>, MAX_PER_LANE>;
    var acc: array<vec4<f32>, MAX_PER_LANE>;
    for (var i = 0u; i < PER_LANE; i++) {
        q[i] = head_vec4(query_row, q_column0, lane + LANES * i) * p.scale;
    }
    var row_max = MASKED;
    var row_sum = 0.0;

    for (var key0 = 0u; key0 < p.seq_len; key0 += BLOCK_KEYS) {
        workgroupBarrier();
        for (var i = t; i < BLOCK_KEYS * VEC_DIM; i += WG) {
            let key = min(key0 + i / VEC_DIM, p.seq_len - 1u);
            k_tile[i] = head_vec4(seq_row0 + key, width + q_column0, i % VEC_DIM);
            v_tile[i] = head_vec4(seq_row0 + key, 2u * width + q_column0, i % VEC_DIM);
        }
        if t < BLOCK_KEYS {
            let key = key0 + t;
            key_state[t] = select(0u, select(1u, 2u, key_valid[seq_row0 + min(key, p.seq_len - 1u)] != 0u), key < p.seq_len);
        }
        workgroupBarrier();

        var score: array<f32, MAX_KEYS>;
        for (var j = 0u; j < BLOCK_KEYS; j++) {
            var partial = 0.0;
            for (var i = 0u; i < PER_LANE; i++) {
                partial += dot(q[i], k_tile[j * VEC_DIM + lane + LANES * i]);
            }
            score[j] = partial;
        }
        for (var offset = 1u; offset < LANES; offset *= 2u) {
            for (var j = 0u; j < BLOCK_KEYS; j++) {
                score[j] += subgroupShuffleXor(score[j], offset);
            }
        }
        var tile_max = row_max;
        for (var j = 0u; j < BLOCK_KEYS; j++) {
            let state = key_state[j];
            score[j] = select(MASKED, score[j], state == 2u);
            if state != 0u {
                tile_max = max(tile_max, score[j]);
            }
        }
        let factor = exp(row_max - tile_max);
        row_sum *= factor;
        for (var i = 0u; i < PER_LANE; i++) {
            acc[i] *= factor;
        }
        for (var j = 0u; j < BLOCK_KEYS; j++) {
            let prob = select(0.0, exp(score[j] - tile_max), key_state[j] != 0u);
            row_sum += prob;
            for (var i = 0u; i < PER_LANE; i++) {
                acc[i] += prob * v_tile[j * VEC_DIM + lane + LANES * i];
            }
        }
        row_max = tile_max;
    }

    if query < p.seq_len {
        let start = (seq_row0 + query) * width + q_column0;
        let inv_sum = 1.0 / row_sum;
        for (var i = 0u; i < PER_LANE; i++) {
            let value = acc[i] * inv_sum;
            let dim0 = 4u * (lane + LANES * i);
            for (var k = 0u; k < 4u; k++) {
                if dim0 + k < p.head_dim {
                    out[start + dim0 + k] = value[k];
                }
            }
        }
    }
}
