// Masked bidirectional multi-head attention on cooperative matrices (tensor cores), f32-accurate: the same layout,
// masking and result as attention.wgsl (see its header), for head dims that are a multiple of T.
//
// Written for T×T×T f16→f32 cooperative matrices of either size the including file chooses (`attention_coop16.wgsl`,
// `attention_coop8.wgsl`): that file enables f16 and cooperative matrices and names MatA, MatB, MatC and T.
//
// Precision: every operand goes through the tensor cores as an exact split into two f16 halves, hi (the top 11
// significant bits) and lo (the next 11), after a power-of-two scaling of its block (its largest magnitude into
// [2^14, 2^15) for q and k, [2^14, 2^15) for v, into (0, 1] for probabilities, which need none): q·k = qh·kh + qh·kl
// + ql·kh and p·v = ph·vh + ph·vl + pl·vh (the dropped lo·lo terms are 2^-22 of the product). Each step's three
// products start from zero and join the running sum with a correctly rounded f32 add (the hardware rounds its
// accumulation toward zero), and the power-of-two scales come off exactly.
//
// Tiling: a workgroup takes one (sequence, head, block of SG_Q·T queries), each of its SG_Q subgroups T of the
// queries, whose q halves stay in registers. Softmax needs each row's maximum before its probabilities can be
// summed on the tensor cores without rescaling the output, so the keys are walked twice, in blocks of KEY_TILES·T
// staged in workgroup memory: the first pass computes the scores and keeps each row's running maximum; the second
// computes them again (the same products, the same bits), turns them into probabilities with the final maximum
// (exp(s − max), summed in f32), splits the probabilities into f16 halves in workgroup memory and multiplies them
// with the staged v halves into the output accumulators. The scores of a subgroup pass through workgroup memory so
// that its lanes can each take a share of a row (lanes of one row combine with subgroup shuffles).

struct Params {
    seq_len: u32,
    heads: u32,
    head_dim: u32,
    query_blocks: u32,
    workgroups: u32,
    scale: f32,
}

@group(0) @binding(0) var<storage, read> qkv: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read> key_valid: array<u32>;
@group(0) @binding(2) var<storage, read_write> out: array<f32>;
@group(1) @binding(0) var<uniform> p: Params;

// Lanes per subgroup (fixed on the device; a multiple of T).
override SUBGROUP: u32 = 32u;
// Subgroups per workgroup (T queries each) and key tiles per staged block (SG_Q ≤ KEY_TILES: q is staged in the
// area of v).
override SG_Q: u32 = 2u;
override KEY_TILES: u32 = 2u;
// head_dim / T.
override D_TILES: u32 = 8u;
const MAX_D_TILES: u32 = 128u / T;
// Most 4-value groups one invocation stages per block (the launcher keeps rows·D/4 ≤ STAGE_GROUPS·WG).
const STAGE_GROUPS: u32 = 256u / T;
const MASKED: f32 = -3.40282347e38;

override WG: u32 = SG_Q * SUBGROUP;
override BQ: u32 = SG_Q * T;
override BK: u32 = KEY_TILES * T;
override D: u32 = D_TILES * T;
// Staged rows of f16: D values and 8 of padding (bank spread, 16-byte aligned operands).
override ROW: u32 = D + 8u;
// K hi (BK rows), K lo, V hi, V lo; q (hi then lo, BQ rows each) first goes where v will.
override KV_LEN: u32 = 4u * BK * ROW;
var<workgroup> kv: array<f16, KV_LEN>;
// Per subgroup: its T × BK scores, f32; also where its output tiles are staged at the end.
override SCORES_LEN: u32 = SG_Q * T * BK;
var<workgroup> scores: array<f32, SCORES_LEN>;
// Per subgroup: its T rows of probabilities, hi then lo, BK + 8 f16 each.
override P_ROW: u32 = BK + 8u;
override PROBS_LEN: u32 = SG_Q * 2u * T * P_ROW;
var<workgroup> probs: array<f16, PROBS_LEN>;
// Per key of the block: 0 past the sequence end, 1 masked, 2 valid.
var<workgroup> key_state: array<u32, BK>;
var<workgroup> reduce: array<f32, WG>;

// The largest of `value` over the workgroup (every invocation calls it; the last barrier lets `reduce` be reused).
fn workgroup_max(value: f32, t: u32) -> f32 {
    reduce[t] = value;
    workgroupBarrier();
    for (var stride = WG / 2u; stride > 0u; stride /= 2u) {
        if t < stride {
            reduce[t] = max(reduce[t], reduce[t + stride]);
        }
        workgroupBarrier();
    }
    let largest = reduce[0];
    workgroupBarrier();
    return largest;
}

// 2^e and 2^-e with e putting `largest` in [2^14, 2^15) (e = 0 for zero, subnormal or non-finite values).
fn block_scale(largest: f32) -> vec2<f32> {
    let exponent = i32((bitcast<u32>(largest) >> 23u) & 0xffu) - 127;
    var e = 0;
    if exponent > -127 && exponent < 128 {
        e = clamp(14 - exponent, -100, 100);
    }
    return vec2(bitcast<f32>(u32(e + 127) << 23u), bitcast<f32>(u32(127 - e) << 23u));
}

// Stores the hi and lo halves of `v` (already scaled) at f16 offsets `hi_at` and `lo_at` of `kv`.
fn store_split(hi_at: u32, lo_at: u32, v: vec4<f32>) {
    let hi = bitcast<vec4<f32>>(bitcast<vec4<u32>>(v) & vec4(0xffffe000u));
    let h = vec4<f16>(hi);
    let l = vec4<f16>(v - hi);
    kv[hi_at] = h.x;
    kv[hi_at + 1u] = h.y;
    kv[hi_at + 2u] = h.z;
    kv[hi_at + 3u] = h.w;
    kv[lo_at] = l.x;
    kv[lo_at + 1u] = l.y;
    kv[lo_at + 2u] = l.z;
    kv[lo_at + 3u] = l.w;
}

// Stages `count` rows of one head's q, k or v (columns from `column0` of the row) starting at sequence row `first`
// (rows past the sequence end are zeros), multiplied by `factor`, as hi rows at f16 `hi_base` and lo rows `count`
// rows further; returns 2^-e of the block's scale.
fn stage_rows(seq_row0: u32, first: u32, count: u32, column0: u32, factor: f32, hi_base: u32, t: u32) -> f32 {
    let groups = D / 4u;
    let width4 = 3u * p.heads * p.head_dim / 4u;
    var values: array<vec4<f32>, STAGE_GROUPS>;
    var largest = 0.0;
    for (var i = 0u; i * WG < count * groups; i++) {
        let u = i * WG + t;
        var v = vec4<f32>();
        if u < count * groups && first + u / groups < p.seq_len {
            v = qkv[(seq_row0 + first + u / groups) * width4 + (column0 + 4u * (u % groups)) / 4u] * factor;
        }
        values[i] = v;
        let a = abs(v);
        largest = max(largest, max(max(a.x, a.y), max(a.z, a.w)));
    }
    let scale = block_scale(workgroup_max(largest, t));
    for (var i = 0u; i * WG < count * groups; i++) {
        let u = i * WG + t;
        if u < count * groups {
            let at = hi_base + (u / groups) * ROW + 4u * (u % groups);
            store_split(at, at + count * ROW, values[i] * scale.x);
        }
    }
    return scale.y;
}

// The T × BK scores of subgroup `sg` for the staged key block, raw (scaled by 2^(eq+ek)), into its `scores` area.
fn score_block(qh: ptr<function, array<MatA, MAX_D_TILES>>, ql: ptr<function, array<MatA, MAX_D_TILES>>, sg: u32) {
    for (var jt = 0u; jt < KEY_TILES; jt++) {
        var s = MatC();
        for (var ct = 0u; ct < D_TILES; ct++) {
            let kh = coopLoad<MatB>(&kv[jt * T * ROW + ct * T], ROW);
            let kl = coopLoad<MatB>(&kv[(BK + jt * T) * ROW + ct * T], ROW);
            s = s + coopMultiplyAdd((*ql)[ct], kh, coopMultiplyAdd((*qh)[ct], kl, coopMultiplyAdd((*qh)[ct], kh, MatC())));
        }
        coopStoreT(s, &scores[sg * T * BK + jt * T], BK);
    }
}

// Marks the keys of the block at `key0`: past the sequence end, masked, or valid.
fn stage_key_state(seq_row0: u32, key0: u32, t: u32) {
    if t < BK {
        let key = key0 + t;
        let valid = key_valid[seq_row0 + min(key, p.seq_len - 1u)] != 0u;
        key_state[t] = select(0u, select(1u, 2u, valid), key < p.seq_len);
    }
}

@compute @workgroup_size(WG)
fn attention_coop(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>,
                  @builtin(local_invocation_index) t: u32) {
    let flat = wid.y * groups.x + wid.x;
    // Uniform across the workgroup, so the barriers below stay in uniform control flow.
    if flat >= p.workgroups {
        return;
    }
    let query0 = (flat % p.query_blocks) * BQ;
    let head = (flat / p.query_blocks) % p.heads;
    let seq_row0 = (flat / (p.query_blocks * p.heads)) * p.seq_len;
    let width = p.heads * p.head_dim;
    let q_column0 = head * p.head_dim;
    let sg = t / SUBGROUP;
    let lane = t % SUBGROUP;
    // Lanes per query row, and this lane's row and first column within the subgroup's T × BK scores.
    let lanes_per_row = SUBGROUP / T;
    let row = lane / lanes_per_row;
    let column0 = lane % lanes_per_row;
    let score_row = sg * T * BK + row * BK;

    // q (pre-multiplied by 1/√head_dim, as attention.wgsl does) into registers, through the v area.
    let q_unscale = stage_rows(seq_row0, query0, BQ, q_column0, p.scale, 2u * BK * ROW, t);
    workgroupBarrier();
    var qh: array<MatA, MAX_D_TILES>;
    var ql: array<MatA, MAX_D_TILES>;
    for (var ct = 0u; ct < D_TILES; ct++) {
        qh[ct] = coopLoadT<MatA>(&kv[(2u * BK + sg * T) * ROW + ct * T], ROW);
        ql[ct] = coopLoadT<MatA>(&kv[(2u * BK + BQ + sg * T) * ROW + ct * T], ROW);
    }
    workgroupBarrier();

    // Pass 1: each row's maximum score (masked keys score MASKED, as in attention.wgsl).
    var row_max = MASKED;
    for (var key0 = 0u; key0 < p.seq_len; key0 += BK) {
        let unscale = q_unscale * stage_rows(seq_row0, key0, BK, width + q_column0, 1.0, 0u, t);
        stage_key_state(seq_row0, key0, t);
        workgroupBarrier();
        score_block(&qh, &ql, sg);
        workgroupBarrier();
        for (var j = column0; j < BK; j += lanes_per_row) {
            let state = key_state[j];
            if state != 0u {
                row_max = max(row_max, select(MASKED, scores[score_row + j] * unscale, state == 2u));
            }
        }
        workgroupBarrier();
    }
    for (var offset = 1u; offset < lanes_per_row; offset *= 2u) {
        row_max = max(row_max, subgroupShuffleXor(row_max, offset));
    }

    // Pass 2: probabilities with the final maximum, their sum, and probabilities × v on the tensor cores.
    var o: array<MatC, MAX_D_TILES>;
    var row_sum = 0.0;
    let p_hi = sg * 2u * T * P_ROW;
    let p_lo = p_hi + T * P_ROW;
    for (var key0 = 0u; key0 < p.seq_len; key0 += BK) {
        let unscale = q_unscale * stage_rows(seq_row0, key0, BK, width + q_column0, 1.0, 0u, t);
        let v_unscale = stage_rows(seq_row0, key0, BK, 2u * width + q_column0, 1.0, 2u * BK * ROW, t);
        stage_key_state(seq_row0, key0, t);
        workgroupBarrier();
        score_block(&qh, &ql, sg);
        workgroupBarrier();
        for (var j = column0; j < BK; j += lanes_per_row) {
            let state = key_state[j];
            var prob = 0.0;
            if state != 0u {
                prob = exp(select(MASKED, scores[score_row + j] * unscale, state == 2u) - row_max);
            }
            row_sum += prob;
            let hi = bitcast<f32>(bitcast<u32>(prob) & 0xffffe000u);
            probs[p_hi + row * P_ROW + j] = f16(hi);
            probs[p_lo + row * P_ROW + j] = f16(prob - hi);
        }
        workgroupBarrier();
        for (var jt = 0u; jt < KEY_TILES; jt++) {
            let ph = coopLoadT<MatA>(&probs[p_hi + jt * T], P_ROW);
            let pl = coopLoadT<MatA>(&probs[p_lo + jt * T], P_ROW);
            for (var ct = 0u; ct < D_TILES; ct++) {
                let vh = coopLoadT<MatB>(&kv[(2u * BK + jt * T) * ROW + ct * T], ROW);
                let vl = coopLoadT<MatB>(&kv[(3u * BK + jt * T) * ROW + ct * T], ROW);
                let pv = coopMultiplyAdd(pl, vh, coopMultiplyAdd(ph, vl, coopMultiplyAdd(ph, vh, MatC())));
                o[ct] = o[ct] + pv * v_unscale;
            }
        }
        workgroupBarrier();
    }
    for (var offset = 1u; offset < lanes_per_row; offset *= 2u) {
        row_sum += subgroupShuffleXor(row_sum, offset);
    }

    // The output rows of this subgroup, one T × T tile at a time through its scores area.
    let query = query0 + sg * T + row;
    let inv_sum = 1.0 / row_sum;
    for (var ct = 0u; ct < D_TILES; ct++) {
        coopStoreT(o[ct], &scores[sg * T * BK], T);
        workgroupBarrier();
        if query < p.seq_len {
            for (var c = column0; c < T; c += lanes_per_row) {
                out[(seq_row0 + query) * width + q_column0 + ct * T + c] = scores[sg * T * BK + row * T + c] * inv_sum;
            }
        }
        workgroupBarrier();
    }
}
