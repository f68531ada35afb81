// Masked bidirectional multi-head attention, flash style (online softmax, no n×n score matrix), register-blocked.
//
// This file is the body, included by a small file that says how the 8 invocations of a query group exchange values:
// `attention_subgroup_exchange.wgsl` (subgroup shuffles) or `attention_workgroup_exchange.wgsl` (workgroup memory,
// for devices without subgroup operations). That file defines
//   fn group_max(v: vec4<f32>, t: u32) -> vec4<f32>   and   fn group_sum(v: vec4<f32>, t: u32) -> vec4<f32>:
// for invocation t, the maximum or sum of v over the invocations of its query group (t & ~7 .. +7), the same value
// in all 8, combined as ((e0 ⊕ e1) ⊕ (e2 ⊕ e3)) ⊕ ((e4 ⊕ e5) ⊕ (e6 ⊕ e7)) (what the xor butterfly gives every
// lane), so both give the same bits. Both are called in uniform control flow, and every invocation passes a
// workgroupBarrier between one call's return and the next call (the workgroup exchange relies on it).
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
// Tiling: a workgroup of 64 invocations takes one (sequence, head, block of 32 queries, slice of the keys). Invocation
// t is query group g = t / 8 and key group c = t % 8; it owns queries g, g + 8, g + 16, g + 24 of the block (with
// BLOCK_QUERIES = 16, a fallback for small workgroup memories: 32 invocations, queries g + 4i). Q is
// staged once (scaled by 1/√head_dim); the keys go by tiles of 32, each tile in two rounds through one buffer:
//   1. K staged; the invocation forms the 4×4 scores of its queries with keys c, c + 8, c + 16, c + 24 in
//      registers (two 16-byte workgroup loads per 16 FMAs), takes each query's tile maximum across the 8
//      invocations of its group (`group_max`), rescales its running sums and outputs once, and turns
//      each score into a probability with one `exp`;
//   2. V staged over K and the probabilities in `p_tile`; the invocation adds probability × v for its queries and
//      output dims 4·(c + 8·b) .. +3, b < HEAD_DIM / 32 (one 16-byte load of 4 probabilities and HEAD_DIM / 32 of v
//      per 4·HEAD_DIM / 8 FMAs).
// Staged rows are HEAD_DIM / 4 + 1 groups of 4 apart, so the rows that one instruction reads fall in distinct
// banks. Each invocation keeps its share of the running sums; the 8 shares of a query are added (`group_sum`, a fixed
// order) at the end. HEAD_DIM is head_dim padded up to 32, 64, 96 or 128 (padding dims are zero, never written).
//
// Split keys: with `splits` > 1 the key tiles are divided among `splits` workgroups per query block, each writing its
// unnormalised output, maximum and sum to `partial`; `merge` then combines the slices in order (deterministic).

struct Params {
    seq_len: u32,
    heads: u32,
    head_dim: u32,
    query_blocks: u32,
    // seqs · heads · query_blocks · splits for `attention`; rows · heads · head_dim for `merge`.
    workgroups: u32,
    scale: f32,
    splits: u32,
    // Key tiles per slice (the last slice may have fewer).
    split_tiles: u32,
    rows: u32,
}

@group(0) @binding(0) var<storage, read> qkv: array<f32>;
// The same buffer by 16-byte groups, read where a head's rows start on one (ALIGNED).
@group(0) @binding(1) var<storage, read> qkv4: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read> key_valid: array<u32>;
@group(0) @binding(3) var<storage, read_write> out: array<f32>;
// With splits > 1: the unnormalised outputs [splits][rows][d], then (maximum, sum) per [splits][rows][heads].
@group(0) @binding(4) var<storage, read_write> partial: array<f32>;
@group(1) @binding(0) var<uniform> p: Params;

override HEAD_DIM: u32 = 128u;
// head_dim % 4 == 0: every head's row starts on a 16-byte group of `qkv`.
override ALIGNED: bool = true;

// 32, or 16 where the device's workgroup memory is too small for 32 (not on the GPUs this is tuned for).
override BLOCK_QUERIES: u32 = 32u;
const BLOCK_KEYS: u32 = 32u;
// Query groups (of 8 invocations, one per key group), each holding 4 queries.
override QG: u32 = BLOCK_QUERIES / 4u;
override THREADS: u32 = QG * 8u;
// f32's lowest value, in hex: exact, where a decimal spelling past it (-3.40282347e38) is refused by Tint.
const MASKED: f32 = -0x1.fffffep+127f;
// Row stride of `p_tile` in groups of 4: 40 floats, so that the 4 query groups of a subgroup write distinct banks.
const P_ROW4: u32 = 10u;

override D4: u32 = HEAD_DIM / 4u;
override ROW4: u32 = D4 + 1u;
// Output groups of 4 per invocation and query.
override DV: u32 = HEAD_DIM / 32u;
override TILE_LEN: u32 = BLOCK_QUERIES * ROW4;
override KV_LEN: u32 = BLOCK_KEYS * ROW4;
override P_LEN: u32 = BLOCK_QUERIES * P_ROW4;
override STAGE_LOADS: u32 = BLOCK_KEYS * D4 / THREADS;

var<workgroup> q_tile: array<vec4<f32>, TILE_LEN>;
var<workgroup> kv_tile: array<vec4<f32>, KV_LEN>;
var<workgroup> p_tile: array<vec4<f32>, P_LEN>;
// The tile's `key_valid`, staged with K: read from memory between the products, each invocation's 4 loads of it
// cost 6 % of the Sortformer's layer.
var<workgroup> mask_tile: array<u32, BLOCK_KEYS>;

// Dims 4·dim4 .. 4·dim4+3 of one head's q, k or v in `row`; zero past head_dim.
fn head_vec4(row: u32, column0: u32, dim4: u32) -> vec4<f32> {
    let start = row * 3u * p.heads * p.head_dim + column0 + 4u * dim4;
    var v = vec4<f32>(0.0);
    if 4u * dim4 < p.head_dim {
        if ALIGNED {
            v = qkv4[start / 4u];
        } else {
            for (var k = 0u; k < 4u; k++) {
                if 4u * dim4 + k < p.head_dim {
                    v[k] = qkv[start + k];
                }
            }
        }
    }
    return v;
}

// Stages rows row0 .. row0 + 31 (clamped to the sequence) of the block at `column0` into `kv_tile`: consecutive
// invocations read consecutive 16-byte groups of a row.
fn stage_kv(seq_row0: u32, row0: u32, column0: u32, t: u32) {
    // All loads issued before the first store (STAGE_LOADS ≤ 32).
    var v: array<vec4<f32>, 32>;
    for (var i = 0u; i < STAGE_LOADS; i++) {
        let u = i * THREADS + t;
        v[i] = head_vec4(seq_row0 + min(row0 + u / D4, p.seq_len - 1u), column0, u % D4);
    }
    for (var i = 0u; i < STAGE_LOADS; i++) {
        let u = i * THREADS + t;
        kv_tile[(u / D4) * ROW4 + u % D4] = v[i];
    }
}

// acc + a·b, as a chain of FMAs.
fn dot_acc(acc: f32, a: vec4<f32>, b: vec4<f32>) -> f32 {
    return fma(a.w, b.w, fma(a.z, b.z, fma(a.y, b.y, fma(a.x, b.x, acc))));
}

// acc + (q·k0, q·k1, q·k2, q·k3).
fn scores4(acc: vec4<f32>, q: vec4<f32>, k0: vec4<f32>, k1: vec4<f32>, k2: vec4<f32>, k3: vec4<f32>) -> vec4<f32> {
    return vec4(dot_acc(acc.x, q, k0), dot_acc(acc.y, q, k1), dot_acc(acc.z, q, k2), dot_acc(acc.w, q, k3));
}

fn max4(v: vec4<f32>) -> f32 {
    return max(max(v.x, v.y), max(v.z, v.w));
}

fn sum4(v: vec4<f32>) -> f32 {
    return (v.x + v.y) + (v.z + v.w);
}

@compute @workgroup_size(THREADS)
fn attention(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>,
             @builtin(local_invocation_index) t: u32) {
    let flat = wid.y * groups.x + wid.x;
    // Uniform across the workgroup, so the barriers below stay in uniform control flow.
    if flat >= p.workgroups {
        return;
    }
    let split = flat % p.splits;
    let block = flat / p.splits;
    let query0 = (block % p.query_blocks) * BLOCK_QUERIES;
    let head = (block / p.query_blocks) % p.heads;
    let seq_row0 = (block / (p.query_blocks * p.heads)) * p.seq_len;
    let width = p.heads * p.head_dim;
    let column0 = head * p.head_dim;
    let g = t / 8u;
    let c = t % 8u;

    // Q, scaled; rows past the sequence end compute on a clamped row and are not written.
    for (var u = t; u < BLOCK_QUERIES * D4; u += THREADS) {
        let row = seq_row0 + min(query0 + u / D4, p.seq_len - 1u);
        q_tile[(u / D4) * ROW4 + u % D4] = head_vec4(row, column0, u % D4) * p.scale;
    }

    // Component i: query g + 8i. Running maximum, this invocation's share of the running sum.
    var row_max = vec4<f32>(MASKED);
    var row_sum = vec4<f32>(0.0);
    // Output of query g + 8i, dims 4·(c + 8b) .. +3, at [i·4 + b].
    var acc: array<vec4<f32>, 16>;
    for (var i = 0u; i < 16u; i++) {
        acc[i] = vec4<f32>(0.0);
    }

    let tiles = (p.seq_len + BLOCK_KEYS - 1u) / BLOCK_KEYS;
    let tile0 = split * p.split_tiles;
    let tile_end = min(tile0 + p.split_tiles, tiles);
    let qa = g * ROW4;
    let ka = c * ROW4;
    for (var tile = tile0; tile < tile_end; tile++) {
        let key0 = tile * BLOCK_KEYS;
        workgroupBarrier();
        stage_kv(seq_row0, key0, width + column0, t);
        if t < BLOCK_KEYS {
            mask_tile[t] = key_valid[seq_row0 + min(key0 + t, p.seq_len - 1u)];
        }
        workgroupBarrier();

        // s_i: query g + 8i against keys c, c + 8, c + 16, c + 24.
        var s0 = vec4<f32>(0.0);
        var s1 = vec4<f32>(0.0);
        var s2 = vec4<f32>(0.0);
        var s3 = vec4<f32>(0.0);
        for (var d = 0u; d < D4; d++) {
            let k0 = kv_tile[ka + d];
            let k1 = kv_tile[ka + 8u * ROW4 + d];
            let k2 = kv_tile[ka + 16u * ROW4 + d];
            let k3 = kv_tile[ka + 24u * ROW4 + d];
            s0 = scores4(s0, q_tile[qa + d], k0, k1, k2, k3);
            s1 = scores4(s1, q_tile[qa + QG * ROW4 + d], k0, k1, k2, k3);
            s2 = scores4(s2, q_tile[qa + 2u * QG * ROW4 + d], k0, k1, k2, k3);
            s3 = scores4(s3, q_tile[qa + 3u * QG * ROW4 + d], k0, k1, k2, k3);
        }
        // Per key: inside the sequence, and valid.
        var inside = vec4<bool>(false);
        var valid = vec4<bool>(false);
        for (var j = 0u; j < 4u; j++) {
            let key = key0 + c + 8u * j;
            inside[j] = key < p.seq_len;
            valid[j] = inside[j] && mask_tile[c + 8u * j] != 0u;
        }
        // Masked keys score MASKED; keys past the end too for the maximum (never above it), then weigh 0.
        s0 = select(vec4(MASKED), s0, valid);
        s1 = select(vec4(MASKED), s1, valid);
        s2 = select(vec4(MASKED), s2, valid);
        s3 = select(vec4(MASKED), s3, valid);
        let tile_max = group_max(vec4(max4(s0), max4(s1), max4(s2), max4(s3)), t);
        let new_max = max(row_max, tile_max);
        let factor = exp(row_max - new_max);
        row_max = new_max;
        let p0 = select(vec4(0.0), exp(s0 - new_max.x), inside);
        let p1 = select(vec4(0.0), exp(s1 - new_max.y), inside);
        let p2 = select(vec4(0.0), exp(s2 - new_max.z), inside);
        let p3 = select(vec4(0.0), exp(s3 - new_max.w), inside);
        row_sum = row_sum * factor + vec4(sum4(p0), sum4(p1), sum4(p2), sum4(p3));
        for (var b = 0u; b < DV; b++) {
            acc[b] *= factor.x;
            acc[4u + b] *= factor.y;
            acc[8u + b] *= factor.z;
            acc[12u + b] *= factor.w;
        }

        // Every invocation is done with K.
        workgroupBarrier();
        stage_kv(seq_row0, key0, 2u * width + column0, t);
        // Key c + 8j of query g + 8i at row g + 8i, column c + 8j.
        for (var j = 0u; j < 4u; j++) {
            let at = g * P_ROW4 + c / 4u + 2u * j;
            p_tile[at][c % 4u] = p0[j];
            p_tile[at + QG * P_ROW4][c % 4u] = p1[j];
            p_tile[at + 2u * QG * P_ROW4][c % 4u] = p2[j];
            p_tile[at + 3u * QG * P_ROW4][c % 4u] = p3[j];
        }
        workgroupBarrier();

        for (var j4 = 0u; j4 < BLOCK_KEYS / 4u; j4++) {
            let pa = g * P_ROW4 + j4;
            let w0 = p_tile[pa];
            let w1 = p_tile[pa + QG * P_ROW4];
            let w2 = p_tile[pa + 2u * QG * P_ROW4];
            let w3 = p_tile[pa + 3u * QG * P_ROW4];
            for (var kk = 0u; kk < 4u; kk++) {
                let va = (4u * j4 + kk) * ROW4 + c;
                for (var b = 0u; b < DV; b++) {
                    let v = kv_tile[va + 8u * b];
                    acc[b] = fma(vec4(w0[kk]), v, acc[b]);
                    acc[4u + b] = fma(vec4(w1[kk]), v, acc[4u + b]);
                    acc[8u + b] = fma(vec4(w2[kk]), v, acc[8u + b]);
                    acc[12u + b] = fma(vec4(w3[kk]), v, acc[12u + b]);
                }
            }
        }
    }

    let rows = p.rows;
    let total = group_sum(row_sum, t);
    for (var i = 0u; i < 4u; i++) {
        let query = query0 + g + QG * i;
        if query < p.seq_len {
            let row = seq_row0 + query;
            if p.splits == 1u {
                let inv_sum = 1.0 / total[i];
                for (var b = 0u; b < DV; b++) {
                    write4(row * width + column0, c + 8u * b, acc[4u * i + b] * inv_sum);
                }
            } else {
                let slice = split * rows + row;
                for (var b = 0u; b < DV; b++) {
                    write4_partial(slice * width + column0, c + 8u * b, acc[4u * i + b]);
                }
                if c == 0u {
                    let at = p.splits * rows * width + 2u * (slice * p.heads + head);
                    partial[at] = row_max[i];
                    partial[at + 1u] = total[i];
                }
            }
        }
    }
}

// Dims 4·dim4 .. 4·dim4+3 of the output row starting at `start`, those below head_dim.
fn write4(start: u32, dim4: u32, value: vec4<f32>) {
    for (var k = 0u; k < 4u; k++) {
        if 4u * dim4 + k < p.head_dim {
            out[start + 4u * dim4 + k] = value[k];
        }
    }
}

fn write4_partial(start: u32, dim4: u32, value: vec4<f32>) {
    for (var k = 0u; k < 4u; k++) {
        if 4u * dim4 + k < p.head_dim {
            partial[start + 4u * dim4 + k] = value[k];
        }
    }
}

const MERGE_THREADS: u32 = 64u;

// One invocation per output value: the slices' outputs rescaled to their common maximum, added in slice order, over
// their rescaled sums.
@compute @workgroup_size(MERGE_THREADS)
fn merge(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>,
         @builtin(local_invocation_index) t: u32) {
    let e = (wid.y * groups.x + wid.x) * MERGE_THREADS + t;
    if e >= p.workgroups {
        return;
    }
    let width = p.heads * p.head_dim;
    let row = e / width;
    let head = (e % width) / p.head_dim;
    let stats = p.splits * p.rows * width;
    var m = MASKED;
    for (var z = 0u; z < p.splits; z++) {
        m = max(m, partial[stats + 2u * ((z * p.rows + row) * p.heads + head)]);
    }
    var sum = 0.0;
    var value = 0.0;
    for (var z = 0u; z < p.splits; z++) {
        let at = stats + 2u * ((z * p.rows + row) * p.heads + head);
        let w = exp(partial[at] - m);
        sum += partial[at + 1u] * w;
        value += partial[z * p.rows * width + e] * w;
    }
    out[e] = value / sum;
}
