// Masked bidirectional multi-head attention on cooperative matrices (tensor cores), f32-accurate: the same result,
// masking and output layout as attention.wgsl (see its header), from the operand planes attention_operands.wgsl
// writes (each row of q, k and v scaled by its own power of two and split into f16 halves hi + lo).
//
// Written for T×T×T f16→f32 cooperative matrices of either size the including file chooses
// (`attention_coop16.wgsl`, `attention_coop8.wgsl`): that file enables f16 and cooperative matrices and names MatA,
// MatB, MatC and T.
//
// Precision: q·k = qh·kh + qh·kl + ql·kh and p·v = ph·vh + ph·vl + pl·vh (the dropped lo·lo terms are 2^-22 of a
// product). Each step's three products start from zero and join the running sum with a correctly rounded f32 add
// (the tensor cores round their own accumulation toward zero); the powers of two come off exactly. Scores are
// s = (q̃·k̃)·2^-(eq+ek)/√head_dim. The probabilities go through the tensor cores as p̃ = exp(s − max)·2^-(ev − E)·2^14
// (≤ 2^14), E = the smallest ev of the sequence's rows (the largest v row), so that the output is
// Σ p̃·ṽ · 2^-E·2^-14 / Σ exp(s − max) with every v row at its own scale; a row of v far smaller than the sequence's
// largest contributes with an error relative to that largest row.
//
// Tiling: a workgroup takes one (sequence, head, block of T queries); its SG_K subgroups share the key blocks of
// BK = KEY_TILES·T keys (subgroup k takes blocks k, k + SG_K, …), so that a short sequence still gives the GPU
// enough subgroups. The softmax needs each row's maximum before probabilities can be accumulated on the tensor
// cores without rescaling the output (no element access to a cooperative matrix), so the keys are walked twice:
// pass 1 computes the scores and each row's running maximum and sum of exponentials (the subgroups' combined
// through workgroup memory in a fixed order); pass 2 computes the same scores again (the same products in the same
// order: the same bits), turns them into probabilities with the final maximum, splits them into f16 halves in
// workgroup memory and multiplies them with v into the output accumulators; the subgroups' outputs are added in
// order at the end (deterministic). q, k and v are loaded straight from the planes. A subgroup's scores pass through
// workgroup memory so that its lanes can each take a share of a row: SUBGROUP / T lanes per row, BK·T / SUBGROUP
// consecutive keys each, combined by shuffles.

struct Params {
    seq_len: u32,
    heads: u32,
    head_dim: u32,
    // Rows of a plane: seq_len rounded up to a whole block of keys (and of queries).
    padded_len: u32,
    query_blocks: u32,
    // seqs · heads · query_blocks.
    workgroups: u32,
    scale: f32,
}

@group(0) @binding(0) var<storage, read> planes: array<vec4<f16>>;
@group(0) @binding(1) var<storage, read> unscales: array<f32>;
@group(0) @binding(2) var<storage, read> key_valid: array<u32>;
@group(0) @binding(3) var<storage, read_write> out: array<f32>;
@group(1) @binding(0) var<uniform> p: Params;

// Lanes per subgroup (fixed on the device; a multiple of T).
override SUBGROUP: u32 = 32u;
// Subgroups per workgroup: the same T queries, each a share of the key blocks.
override SG_K: u32 = 4u;
// Head dim padded to a multiple of T, over T (≤ MAX_D_TILES).
override D_TILES: u32 = 8u;
const MAX_D_TILES: u32 = 128u / T;
const KEY_TILES: u32 = 4u;
const BK: u32 = KEY_TILES * T;
const MASKED: f32 = -3.40282347e38;
// 2^14: the probabilities' scale on the tensor cores, and its inverse.
const P_SCALE: f32 = 16384.0;
const P_UNSCALE: f32 = 0.00006103515625;

override WG: u32 = SG_K * SUBGROUP;
override D: u32 = D_TILES * T;
override LANES_PER_ROW: u32 = SUBGROUP / T;
// Consecutive keys of a block per lane, in groups of 4.
override LANE_GROUPS: u32 = BK / LANES_PER_ROW / 4u;
// A subgroup's T rows of scores (f32) are BK + 4 apart, its probabilities (f16, hi rows then lo rows) BK + 8: rows
// start on 16 bytes, and the rows one instruction touches fall in different banks.
const S_ROW4: u32 = BK / 4u + 1u;
const P_ROW4: u32 = BK / 4u + 2u;
override S_LEN: u32 = SG_K * T * S_ROW4;
var<workgroup> scores: array<vec4<f32>, S_LEN>;
override P_LEN: u32 = SG_K * 2u * T * P_ROW4;
var<workgroup> probs: array<vec4<f16>, P_LEN>;
// Per subgroup and row: its maximum score and sum of exponentials.
override STATS_LEN: u32 = SG_K * T;
var<workgroup> stats: array<vec2<f32>, STATS_LEN>;

// The BK scores of this subgroup's T queries against the key block at `key0`, in its area of `scores` (raw: scaled
// by 2^(eq + ek)). `q` and `k` are the f16 offsets of the hi planes' first used rows; lo planes follow at `lo`.
fn score_block(q: u32, k: u32, lo: u32, s_at: u32) {
    var s0 = MatC();
    var s1 = MatC();
    var s2 = MatC();
    var s3 = MatC();
    let stride = D / 4u;
    for (var ct = 0u; ct < D_TILES; ct++) {
        let qh = coopLoadT<MatA>(&planes[(q + ct * T) / 4u], stride);
        let ql = coopLoadT<MatA>(&planes[(q + lo + ct * T) / 4u], stride);
        let k0 = k + ct * T;
        s0 = s0 + score_step(qh, ql, k0, lo, stride);
        s1 = s1 + score_step(qh, ql, k0 + T * D, lo, stride);
        s2 = s2 + score_step(qh, ql, k0 + 2u * T * D, lo, stride);
        s3 = s3 + score_step(qh, ql, k0 + 3u * T * D, lo, stride);
    }
    coopStoreT(s0, &scores[s_at], S_ROW4);
    coopStoreT(s1, &scores[s_at + T / 4u], S_ROW4);
    coopStoreT(s2, &scores[s_at + 2u * T / 4u], S_ROW4);
    coopStoreT(s3, &scores[s_at + 3u * T / 4u], S_ROW4);
}

// One T×T tile of q̃·k̃ᵀ for one step of T dims: three products from zero (see the precision note).
fn score_step(qh: MatA, ql: MatA, k: u32, lo: u32, stride: u32) -> MatC {
    let kh = coopLoad<MatB>(&planes[k / 4u], stride);
    let kl = coopLoad<MatB>(&planes[(k + lo) / 4u], stride);
    return coopMultiplyAdd(ql, kh, coopMultiplyAdd(qh, kl, coopMultiplyAdd(qh, kh, MatC())));
}

// o += p̃·ṽ for the probabilities of this subgroup's block (hi rows at `p_hi` of `probs`, lo rows T further) and
// the block's v (the hi plane's first row at f16 `v`; lo `lo` further). (A function of its own also because naga
// checks the uniformity cooperative matrices need only within a function: a subgroup's control flow is uniform
// here, the workgroup's is not.)
fn value_block(p_hi: u32, v: u32, lo: u32, o: ptr<function, array<MatC, MAX_D_TILES>>) {
    let stride = D / 4u;
    for (var jt = 0u; jt < KEY_TILES; jt++) {
        let ph = coopLoadT<MatA>(&probs[p_hi + jt * T / 4u], P_ROW4);
        let pl = coopLoadT<MatA>(&probs[p_hi + (T * P_ROW4 + jt * T / 4u)], P_ROW4);
        let v0 = v + jt * T * D;
        for (var ct = 0u; ct < D_TILES; ct++) {
            let vh = coopLoadT<MatB>(&planes[(v0 + ct * T) / 4u], stride);
            let vl = coopLoadT<MatB>(&planes[(v0 + lo + ct * T) / 4u], stride);
            (*o)[ct] = (*o)[ct] + coopMultiplyAdd(pl, vh, coopMultiplyAdd(ph, vl, coopMultiplyAdd(ph, vh, MatC())));
        }
    }
}

// Where this lane's keys of a block are: its row of the subgroup's scores and its first key (a multiple of 4).
struct Lane {
    row: u32,
    key: u32,
}

// Masked or valid key scores of this lane's 4 keys from `key` of the block at `key0`, or MASKED and `false` past the
// sequence's end. `seq_row0` is the sequence's first row, `k_unscale0` its first k unscale, `uq` the query's
// unscale times 1/√head_dim.
struct Scores4 {
    s: vec4<f32>,
    inside: vec4<bool>,
}

fn scores4(raw: vec4<f32>, key: u32, seq_row0: u32, k_unscale0: u32, uq: f32) -> Scores4 {
    var r: Scores4;
    for (var i = 0u; i < 4u; i++) {
        let k = key + i;
        r.inside[i] = k < p.seq_len;
        let kk = min(k, p.seq_len - 1u);
        let valid = r.inside[i] && key_valid[seq_row0 + kk] != 0u;
        r.s[i] = select(MASKED, raw[i] * uq * unscales[k_unscale0 + kk], valid);
    }
    return r;
}

@compute @workgroup_size(WG)
fn attention_coop(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>,
                  @builtin(local_invocation_index) t: u32) {
    let flat = wid.y * groups.x + wid.x;
    // Uniform across the workgroup, so the barriers below stay in uniform control flow.
    if flat >= p.workgroups {
        return;
    }
    let query0 = (flat % p.query_blocks) * T;
    let head = (flat / p.query_blocks) % p.heads;
    let seq = flat / (p.query_blocks * p.heads);
    let seq_row0 = seq * p.seq_len;
    let sg = t / SUBGROUP;
    let lane = t % SUBGROUP;
    let my = Lane(lane / LANES_PER_ROW, (lane % LANES_PER_ROW) * LANE_GROUPS * 4u);
    // Planes of this (sequence, head): the q, k and v slots, each hi then lo.
    let slot = (seq * p.heads + head) * 3u;
    let plane = p.padded_len * D;
    let lo = plane;
    let q_at = (slot * 2u) * plane + query0 * D;
    let k_plane = (slot + 1u) * 2u * plane;
    let v_plane = (slot + 2u) * 2u * plane;
    let k_unscale0 = (slot + 1u) * p.padded_len;
    let v_unscale0 = (slot + 2u) * p.padded_len;
    let s_at = sg * T * S_ROW4;
    let s_row = s_at + my.row * S_ROW4 + my.key / 4u;
    let query = query0 + my.row;
    let uq = unscales[slot * p.padded_len + query] * p.scale;
    // Subgroup sg takes key blocks sg, sg + SG_K, …; every subgroup walks the same number of rounds (the barriers),
    // idle in the last where it has no block left.
    let rounds = (p.padded_len / BK + SG_K - 1u) / SG_K;

    // Pass 1: each row's maximum and sum of exponentials over this subgroup's keys, online.
    var row_max = MASKED;
    var row_sum = 0.0;
    for (var round = 0u; round < rounds; round++) {
        let key0 = (round * SG_K + sg) * BK;
        let busy = key0 < p.padded_len;
        if busy {
            score_block(q_at, k_plane + key0 * D, lo, s_at);
        }
        workgroupBarrier();
        if busy {
            var block_max = MASKED;
            for (var g = 0u; g < LANE_GROUPS; g++) {
                let s = scores4(scores[s_row + g], key0 + my.key + 4u * g, seq_row0, k_unscale0, uq);
                block_max = max(block_max, max(max(s.s.x, s.s.y), max(s.s.z, s.s.w)));
            }
            let new_max = max(row_max, block_max);
            var sum = 0.0;
            for (var g = 0u; g < LANE_GROUPS; g++) {
                let s = scores4(scores[s_row + g], key0 + my.key + 4u * g, seq_row0, k_unscale0, uq);
                let e = select(vec4(0.0), exp(s.s - new_max), s.inside);
                sum += (e.x + e.y) + (e.z + e.w);
            }
            row_sum = row_sum * exp(row_max - new_max) + sum;
            row_max = new_max;
        }
        // Every lane has read its scores before the next block's are stored.
        workgroupBarrier();
    }
    // The lanes of a row are adjacent: combine their maxima and sums, then the subgroups', in a fixed order.
    for (var offset = 1u; offset < LANES_PER_ROW; offset *= 2u) {
        let other = subgroupShuffleXor(vec2(row_max, row_sum), offset);
        let m = max(row_max, other.x);
        row_sum = row_sum * exp(row_max - m) + other.y * exp(other.x - m);
        row_max = m;
    }
    stats[sg * T + my.row] = vec2(row_max, row_sum);
    workgroupBarrier();
    row_max = MASKED;
    for (var k = 0u; k < SG_K; k++) {
        row_max = max(row_max, stats[k * T + my.row].x);
    }
    row_sum = 0.0;
    for (var k = 0u; k < SG_K; k++) {
        let other = stats[k * T + my.row];
        row_sum += other.y * exp(other.x - row_max);
    }
    // 2^-E: the largest v unscale of the sequence (its largest row of v).
    var v_largest = 0.0;
    for (var key = lane; key < p.seq_len; key += SUBGROUP) {
        v_largest = max(v_largest, unscales[v_unscale0 + key]);
    }
    v_largest = subgroupMax(v_largest);
    let v_rescale = P_SCALE / v_largest;

    // Pass 2: probabilities with the final maximum, through the tensor cores with v.
    var o: array<MatC, MAX_D_TILES>;
    let p_hi = sg * 2u * T * P_ROW4;
    let p_lo = p_hi + T * P_ROW4;
    let p_row = my.row * P_ROW4 + my.key / 4u;
    for (var round = 0u; round < rounds; round++) {
        let key0 = (round * SG_K + sg) * BK;
        let busy = key0 < p.padded_len;
        if busy {
            score_block(q_at, k_plane + key0 * D, lo, s_at);
        }
        workgroupBarrier();
        if busy {
            for (var g = 0u; g < LANE_GROUPS; g++) {
                let key = key0 + my.key + 4u * g;
                let s = scores4(scores[s_row + g], key, seq_row0, k_unscale0, uq);
                var v_unscale = vec4<f32>();
                for (var i = 0u; i < 4u; i++) {
                    v_unscale[i] = unscales[v_unscale0 + min(key + i, p.seq_len - 1u)];
                }
                let prob = select(vec4(0.0), exp(s.s - row_max) * v_unscale * v_rescale, s.inside);
                // Split as attention_operands.wgsl splits q, k and v (the low 13 mantissa bits cleared).
                let hi = bitcast<vec4<f32>>(bitcast<vec4<u32>>(prob) & vec4(0xffffe000u));
                probs[p_hi + p_row + g] = vec4<f16>(hi);
                probs[p_lo + p_row + g] = vec4<f16>(prob - hi);
            }
        }
        workgroupBarrier();
        if busy {
            value_block(p_hi, v_plane + key0 * D, lo, &o);
        }
    }

    // The output, one T × T tile at a time: each subgroup stages its partial sum in its scores area, then the
    // workgroup adds the subgroups' in order and writes the rows inside the sequence.
    let factor = P_UNSCALE * v_largest;
    let width = p.heads * p.head_dim;
    for (var ct = 0u; ct < D_TILES; ct++) {
        coopStoreT(o[ct], &scores[s_at], T / 4u);
        workgroupBarrier();
        for (var e = t; e < T * T; e += WG) {
            let row = e / T;
            let dim = ct * T + e % T;
            var sum = 0.0;
            for (var k = 0u; k < SG_K; k++) {
                sum += scores[k * T * S_ROW4 + e / 4u][e % 4u];
            }
            if query0 + row < p.seq_len && dim < p.head_dim {
                out[(seq_row0 + query0 + row) * width + head * p.head_dim + dim] = sum * factor / stats_sum(row);
            }
        }
        workgroupBarrier();
    }
}

// The softmax denominator of row `row` of the block: the subgroups' sums combined as every lane combined them.
fn stats_sum(row: u32) -> f32 {
    var m = MASKED;
    for (var k = 0u; k < SG_K; k++) {
        m = max(m, stats[k * T + row].x);
    }
    var sum = 0.0;
    for (var k = 0u; k < SG_K; k++) {
        let other = stats[k * T + row];
        sum += other.y * exp(other.x - m);
    }
    return sum;
}
