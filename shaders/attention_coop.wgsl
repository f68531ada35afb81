// Masked bidirectional multi-head attention on cooperative matrices (tensor cores), f32-accurate: the same result,
// masking and output layout as attention.wgsl (see its header), from the operand planes attention_operands.wgsl
// writes (each row of q, k and v scaled by its own power of two and split into f16 halves hi + lo).
//
// Written for T×T×T f16→f32 cooperative matrices of either size the including file chooses
// (`attention_coop16.wgsl`, `attention_coop8.wgsl`): that file enables f16 and cooperative matrices and names MatA,
// MatB, MatC and T.
//
// Precision: q·k = qh·kh + qh·kl + ql·kh and p·v = ph·vh + ph·vl + pl·vh (the dropped lo·lo terms are 2^-24 of a
// product). Each step's three products start from zero and join the running sum with a correctly rounded f32 add
// (the tensor cores round their own accumulation toward zero); the powers of two come off exactly. Scores are
// s = (q̃·k̃)·2^-(eq+ek)/√head_dim. The probabilities go through the tensor cores as p̃ = exp(s − max)·2^-(ev − E)·2^14
// (≤ 2^14), E = the smallest ev of the sequence's rows (the largest v row), so that the output is
// Σ p̃·ṽ · 2^-E·2^-14 / Σ exp(s − max) with every v row at its own scale; a row of v far smaller than the sequence's
// largest contributes with an error relative to that largest row.
//
// Tiling: a workgroup of SG_Q subgroups takes one (sequence, head, block of SG_Q·T queries, slice of the keys); each
// subgroup T of the queries, whose q halves stay in registers. Every block of BK = KEY_TILES·T keys is staged once in
// workgroup memory for all the subgroups (every invocation a few 8-byte loads, all issued before any store), and the
// subgroups load their cooperative matrices from there: loads from memory straight into cooperative matrices were
// measured 2–3× slower (each step waited for its own loads). The softmax needs each row's maximum before probabilities
// can be accumulated on the tensor cores without rescaling the output (no element access to a cooperative matrix),
// so the slice's keys are walked twice. Pass 1 finds each row's maximum from cheap scores: qh·kh only (one product
// instead of three, k's hi rows only staged), within about 2^-10·|q|·|k| of the exact ones. Pass 2 computes the
// exact scores, turns them into probabilities exp(s − m) with that maximum m, sums them, splits them into f16 halves
// in workgroup memory and multiplies them with the block's v (staged over its k) into the output accumulators. The
// softmax does not depend on m; m only has to keep the largest probability's exp(s − m)·2^14 inside f16 (no exact
// score passes m by more than MAX_LEAD) and far from its subnormals (the exact maximum stays within MAX_LAG of m).
// Where either fails (scores so large that the cheap ones err by more), pass 2 runs again for the whole workgroup
// with the exact maxima it found. A subgroup's scores pass through workgroup memory so that its lanes can each take
// a share of a row: SUBGROUP / T lanes per row, BK·T / SUBGROUP consecutive keys each, combined by shuffles. With
// `splits` > 1 each slice writes its unnormalised output, maximum and sum as attention.wgsl's slices do, and its
// `merge` combines them in order (deterministic).
//
// Rounded operands (EXACT false, the fast precision): each product once, on the hi halves alone (q, k, v and the
// probabilities each rounded to f16 under its row's power of two, as the fast GEMMs round X), accumulated on the
// tensor cores. Pass 2's scores are then pass 1's, so its maxima are exact and it never runs twice; only hi rows are
// staged, in half the workgroup memory.
//
// The cooperative matrices a subgroup keeps (its q halves, its output tiles) are named values, not arrays: the
// NVIDIA driver (580) put an array of them in local memory.

struct Params {
    seq_len: u32,
    heads: u32,
    head_dim: u32,
    // Rows of a plane: seq_len rounded up to whole blocks of keys and of queries.
    padded_len: u32,
    query_blocks: u32,
    // The group's (sequence, head) pairs · query_blocks · splits.
    workgroups: u32,
    scale: f32,
    splits: u32,
    // Key blocks per slice (the last slice may have fewer).
    split_blocks: u32,
    rows: u32,
    // The group's first pair (sequence · heads + head): the planes hold the group's pairs only.
    first_pair: u32,
}

@group(0) @binding(0) var<storage, read> planes: array<vec4<f16>>;
@group(0) @binding(1) var<storage, read> unscales: array<f32>;
@group(0) @binding(2) var<storage, read> key_valid: array<u32>;
@group(0) @binding(3) var<storage, read_write> out: array<f32>;
// With splits > 1: the unnormalised outputs [splits][rows][d], then (maximum, sum) per [splits][rows][heads].
@group(0) @binding(4) var<storage, read_write> partial: array<f32>;
@group(1) @binding(0) var<uniform> p: Params;

// Lanes per subgroup (fixed on the device; a multiple of T).
override SUBGROUP: u32 = 32u;
// Subgroups per workgroup, T queries each.
override SG_Q: u32 = 4u;
// Head dim padded to a multiple of T, over T (at most 8: the named tiles below).
override D_TILES: u32 = 8u;
const KEY_TILES: u32 = 2u;
const BK: u32 = KEY_TILES * T;
// f32's lowest value, in hex: exact, where a decimal spelling past it (-3.40282347e38) is refused by Tint.
const MASKED: f32 = -0x1.fffffep+127f;
// 2^14: the probabilities' scale on the tensor cores, and its inverse.
const P_SCALE: f32 = 16384.0;
const P_UNSCALE: f32 = 0.00006103515625;
// How far the exact maximum may lie above pass 1's (exp(MAX_LEAD)·2^14 < 65504, f16's largest) and below it (the
// largest probability stays at least exp(−MAX_LAG)·2^14 ≈ 5.5, its split halves normal f16 numbers).
const MAX_LEAD: f32 = 1.0;
const MAX_LAG: f32 = 8.0;
// Staged key tiles: past the sequence's end (weigh nothing), masked (score MASKED).
const OUTSIDE: f32 = -1.0;
const IS_MASKED: f32 = 0.0;
// Three products per step over hi + lo halves (f32-accurate), or one over the hi halves (see the header).
override EXACT: bool = true;
// Halves staged per row of k, v and the probabilities.
override HALVES: u32 = select(1u, 2u, EXACT);

override WG: u32 = SG_Q * SUBGROUP;
override D: u32 = D_TILES * T;
override D4: u32 = D / 4u;
override LANES_PER_ROW: u32 = SUBGROUP / T;
// Consecutive keys of a block per lane, in groups of 4.
override LANE_GROUPS: u32 = BK / LANES_PER_ROW / 4u;
// Staged k or v rows (hi rows, then lo rows), D + 8 f16 apart; a subgroup's T rows of scores (f32) BK + 4 apart and
// of probabilities (f16, hi rows then lo rows) BK + 8: rows start on 16 bytes, and the rows one instruction touches
// fall in different banks.
override KV_ROW4: u32 = D4 + 2u;
override KV_LEN: u32 = HALVES * BK * KV_ROW4;
var<workgroup> kv: array<vec4<f16>, KV_LEN>;
const S_ROW4: u32 = BK / 4u + 1u;
const P_ROW4: u32 = BK / 4u + 2u;
override S_LEN: u32 = SG_Q * T * S_ROW4;
var<workgroup> scores: array<vec4<f32>, S_LEN>;
override P_LEN: u32 = SG_Q * HALVES * T * P_ROW4;
var<workgroup> probs: array<vec4<f16>, P_LEN>;
// Per key of the staged block: (its k unscale, OUTSIDE or IS_MASKED; its v unscale).
var<workgroup> key_info: array<vec2<f32>, BK>;
// x: set (to 1) by any row whose exact maximum lies outside [m − MAX_LAG, m + MAX_LEAD] of pass 1's maximum m. A
// vec4 on purpose: the NVIDIA driver (580) lays the workgroup variables out one after another, and a 4-byte one
// left the arrays after it off the 16-byte alignment cooperative-matrix loads need (wrong results, measured).
var<workgroup> redo: vec4<u32>;

// #include "attention_coop_products.wgsl"

// Most 8-byte groups one invocation stages per block (the launcher keeps 2·BK·D/4 ≤ MAX_STAGE·WG), and how many it
// loads before it stores them. Measured on the H200 (2026-12-04; registers from the driver's pipeline statistics, see
// docs/performance.md): with a whole share in flight at once the kernel took 255 registers at head dim 128 and
// spilled (970 µs per ASR layer against 128 µs in rounds of 8); at head dim 64 a whole share ran 86 µs against 115,
// but the same code spilled as soon as the rounds' loop bounds were not constants. Rounds of 8 everywhere: the loop
// bounds below are constants, so the driver unrolls them and keeps `loaded` in registers.
const MAX_STAGE: u32 = 32u;
const STAGE_ROUND: u32 = 8u;

// Stages the hi rows key0 .. key0 + BK − 1 of the plane pair starting at f16 `plane` into `kv`, and with `lo` the lo
// rows too.
fn stage(plane: u32, key0: u32, t: u32, lo: bool) {
    let groups = select(1u, 2u, lo) * BK * D4;
    for (var first = 0u; first < MAX_STAGE; first += STAGE_ROUND) {
        if first * WG < groups {
            var loaded: array<vec4<f16>, STAGE_ROUND>;
            for (var i = 0u; i < STAGE_ROUND; i++) {
                let u = (first + i) * WG + t;
                if u < groups {
                    let part = u / (BK * D4);
                    let row = (u / D4) % BK;
                    loaded[i] = planes[(plane + part * p.padded_len * D + (key0 + row) * D) / 4u + u % D4];
                }
            }
            for (var i = 0u; i < STAGE_ROUND; i++) {
                let u = (first + i) * WG + t;
                if u < groups {
                    kv[(u / D4) * KV_ROW4 + u % D4] = loaded[i];
                }
            }
        }
    }
}

// This block's key information (see `key_info`).
fn stage_key_info(key0: u32, seq_row0: u32, k_unscale0: u32, v_unscale0: u32, t: u32) {
    if t < BK {
        let key = key0 + t;
        let k = min(key, p.seq_len - 1u);
        var uk = unscales[k_unscale0 + k];
        if key_valid[seq_row0 + k] == 0u {
            uk = IS_MASKED;
        }
        if key >= p.seq_len {
            uk = OUTSIDE;
        }
        key_info[t] = vec2(uk, unscales[v_unscale0 + k]);
    }
}

// The scores of this lane's 4 keys from `key` of the staged block (MASKED for masked keys and keys past the end),
// and which of them are inside the sequence.
struct Scores4 {
    s: vec4<f32>,
    inside: vec4<bool>,
    v_unscale: vec4<f32>,
}

fn scores4(raw: vec4<f32>, key: u32, uq: f32) -> Scores4 {
    var r: Scores4;
    for (var i = 0u; i < 4u; i++) {
        let info = key_info[key + i];
        r.inside[i] = info.x != OUTSIDE;
        r.s[i] = select(MASKED, raw[i] * uq * info.x, info.x > 0.0);
        r.v_unscale[i] = info.y;
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
    let split = flat % p.splits;
    let block = flat / p.splits;
    let query0 = (block % p.query_blocks) * SG_Q * T;
    let pair = block / p.query_blocks;
    let head = (p.first_pair + pair) % p.heads;
    let seq = (p.first_pair + pair) / p.heads;
    let seq_row0 = seq * p.seq_len;
    let sg = t / SUBGROUP;
    let lane = t % SUBGROUP;
    let row = lane / LANES_PER_ROW;
    let my_key = (lane % LANES_PER_ROW) * LANE_GROUPS * 4u;
    // Planes of this (sequence, head): the q, k and v slots, each hi then lo.
    let slot = pair * 3u;
    let k_plane = (slot + 1u) * 2u * p.padded_len * D;
    let v_plane = (slot + 2u) * 2u * p.padded_len * D;
    let k_unscale0 = (slot + 1u) * p.padded_len;
    let v_unscale0 = (slot + 2u) * p.padded_len;
    let s_at = sg * T * S_ROW4;
    let s_row = s_at + row * S_ROW4 + my_key / 4u;
    let query = query0 + sg * T + row;
    let uq = unscales[slot * p.padded_len + query] * p.scale;
    var q = load_queries(slot * 2u * p.padded_len * D + (query0 + sg * T) * D);
    // Blocks holding keys of the sequence (the planes' padding rows past them are never staged).
    let blocks = (p.seq_len + BK - 1u) / BK;
    let block0 = split * p.split_blocks;
    let block_end = min(block0 + p.split_blocks, blocks);

    // Pass 1: each row's maximum over the slice, from the cheap scores.
    if t == 0u {
        redo = vec4(0u);
    }
    var row_max = MASKED;
    for (var b = block0; b < block_end; b++) {
        let key0 = b * BK;
        stage(k_plane, key0, t, false);
        stage_key_info(key0, seq_row0, k_unscale0, v_unscale0, t);
        workgroupBarrier();
        cheap_block(&q, s_at);
        workgroupBarrier();
        for (var g = 0u; g < LANE_GROUPS; g++) {
            let s = scores4(scores[s_row + g], my_key + 4u * g, uq);
            row_max = max(row_max, max(max(s.s.x, s.s.y), max(s.s.z, s.s.w)));
        }
        // The next block is staged over this one's keys and key information only after every lane has read them.
        workgroupBarrier();
    }
    // The lanes of a row are adjacent.
    for (var offset = 1u; offset < LANES_PER_ROW; offset *= 2u) {
        row_max = max(row_max, subgroupShuffleXor(row_max, offset));
    }
    // 2^-E: the largest v unscale of the slice's keys (its largest row of v).
    var v_largest = 0.0;
    for (var key = block0 * BK + lane; key < min(block_end * BK, p.seq_len); key += SUBGROUP) {
        v_largest = max(v_largest, unscales[v_unscale0 + key]);
    }
    v_largest = subgroupMax(v_largest);
    let v_rescale = P_SCALE / v_largest;

    // Pass 2: probabilities with that maximum, summed, and through the tensor cores with v; once more with the exact
    // maxima where a cheap one lay too far from its row's exact maximum, either way (see the header).
    var o: Output;
    var row_sum = 0.0;
    let p_hi = sg * HALVES * T * P_ROW4;
    let p_row = p_hi + row * P_ROW4 + my_key / 4u;
    for (var attempt = 0u; attempt < 2u; attempt++) {
        o = Output();
        row_sum = 0.0;
        var exact_max = MASKED;
        for (var b = block0; b < block_end; b++) {
            let key0 = b * BK;
            stage(k_plane, key0, t, EXACT);
            stage_key_info(key0, seq_row0, k_unscale0, v_unscale0, t);
            workgroupBarrier();
            if EXACT {
                score_block(&q, s_at);
            } else {
                cheap_block(&q, s_at);
            }
            workgroupBarrier();
            for (var g = 0u; g < LANE_GROUPS; g++) {
                let s = scores4(scores[s_row + g], my_key + 4u * g, uq);
                exact_max = max(exact_max, max(max(s.s.x, s.s.y), max(s.s.z, s.s.w)));
                let e = select(vec4(0.0), exp(s.s - row_max), s.inside);
                row_sum += (e.x + e.y) + (e.z + e.w);
                let prob = e * s.v_unscale * v_rescale;
                // Split as attention_operands.wgsl splits q, k and v.
                let hi = split_hi(prob);
                probs[p_row + g] = vec4<f16>(hi);
                if EXACT {
                    probs[p_row + T * P_ROW4 + g] = vec4<f16>(prob - hi);
                }
            }
            // v over k: every subgroup is done with k.
            stage(v_plane, key0, t, EXACT);
            workgroupBarrier();
            value_block(&o, p_hi);
            workgroupBarrier();
        }
        // Combined in a fixed order (a sum of two lanes' sums is the same either way round).
        for (var offset = 1u; offset < LANES_PER_ROW; offset *= 2u) {
            row_sum += subgroupShuffleXor(row_sum, offset);
            exact_max = max(exact_max, subgroupShuffleXor(exact_max, offset));
        }
        if exact_max > row_max + MAX_LEAD || exact_max < row_max - MAX_LAG {
            redo.x = 1u;
        }
        if workgroupUniformLoad(&redo).x == 0u || attempt == 1u {
            break;
        }
        row_max = exact_max;
    }

    // The output tiles, one T × T tile at a time through this subgroup's scores area.
    // o = Σ p̃·ṽ = Σ exp(s − max)·v · 2^14·2^E: written times 2^-E·2^-14, over the row's sum unless split.
    var multiplier = P_UNSCALE * v_largest;
    if p.splits == 1u {
        multiplier /= row_sum;
    }
    finish(o.c0, 0u, s_at, query0 + sg * T, lane, head, seq_row0, split, multiplier);
    if D_TILES > 1u {
        finish(o.c1, 1u, s_at, query0 + sg * T, lane, head, seq_row0, split, multiplier);
    }
    if D_TILES > 2u {
        finish(o.c2, 2u, s_at, query0 + sg * T, lane, head, seq_row0, split, multiplier);
    }
    if D_TILES > 3u {
        finish(o.c3, 3u, s_at, query0 + sg * T, lane, head, seq_row0, split, multiplier);
    }
    if D_TILES > 4u {
        finish(o.c4, 4u, s_at, query0 + sg * T, lane, head, seq_row0, split, multiplier);
    }
    if D_TILES > 5u {
        finish(o.c5, 5u, s_at, query0 + sg * T, lane, head, seq_row0, split, multiplier);
    }
    if D_TILES > 6u {
        finish(o.c6, 6u, s_at, query0 + sg * T, lane, head, seq_row0, split, multiplier);
    }
    if D_TILES > 7u {
        finish(o.c7, 7u, s_at, query0 + sg * T, lane, head, seq_row0, split, multiplier);
    }
    if p.splits > 1u && lane % LANES_PER_ROW == 0u && query < p.seq_len {
        let at = p.splits * p.rows * p.heads * p.head_dim + 2u * ((split * p.rows + seq_row0 + query) * p.heads + head);
        partial[at] = row_max;
        partial[at + 1u] = row_sum;
    }
}

// hi half of x: its low 13 mantissa bits rounded off (to nearest, ties away), an exact f16 whose difference from x
// is exact in f32 and at most half its last place, so lo = f16(x − hi) holds the next 11 bits. (Not f16(x): compilers
// may fold f32(f16(x)) back to x, and then lo would be 0; Mesa does.)
fn split_hi(x: vec4<f32>) -> vec4<f32> {
    return bitcast<vec4<f32>>((bitcast<vec4<u32>>(x) + vec4(0x1000u)) & vec4(0xffffe000u));
}

// Writes output tile `ct` of this subgroup (queries from `query0`), times `multiplier`: staged through its scores
// area, then each lane a share of its row — into `out`, or, with split keys, into the slice's part of `partial`.
fn finish(c: MatC, ct: u32, s_at: u32, query0: u32, lane: u32, head: u32, seq_row0: u32, split: u32,
          multiplier: f32) {
    coopStoreT(c, &scores[s_at], T / 4u);
    workgroupBarrier();
    let row = lane / LANES_PER_ROW;
    let columns = T / LANES_PER_ROW;
    let width = p.heads * p.head_dim;
    let query = query0 + row;
    for (var col = (lane % LANES_PER_ROW) * columns; col < (lane % LANES_PER_ROW + 1u) * columns; col++) {
        let dim = ct * T + col;
        if query < p.seq_len && dim < p.head_dim {
            let value = scores[s_at + (row * T + col) / 4u][col % 4u];
            let at = (seq_row0 + query) * width + head * p.head_dim + dim;
            if p.splits == 1u {
                out[at] = value * multiplier;
            } else {
                partial[split * p.rows * width + at] = value * multiplier;
            }
        }
    }
    workgroupBarrier();
}
