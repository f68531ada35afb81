// The operands of the tensor-core attention (attention_coop.wgsl): every row of every head's q, k and v, scaled by a
// power of two and split into two f16 halves, in planes the attention loads its cooperative matrices from.
//
// Input: `qkv` f32 [seqs·seq_len, 3·d] as attention.wgsl reads it (q, k, v column blocks; head h at columns
// [h·head_dim, (h+1)·head_dim) of each), or the q/k/v product in `slices` partial products of k one after another
// ([slices, seqs·seq_len, 3·d]), added here in order.
// Output, per slot = pair·3 + which (which: 0 q, 1 k, 2 v) of the (sequence, head) pairs from `first_pair` on
// (pair = sequence·heads + head − first_pair: a batch whose planes outgrow one binding runs as groups of pairs):
//   planes (f16): hi at [(slot·2)·padded_len + row]·D + dim, lo one plane (padded_len·D values) further (written
//   only with LO: the fast precision's attention multiplies the hi halves alone);
//   unscales (f32): [slot·padded_len + row] = 2^-e,
// with x·2^e = hi + lo for every dim of the row: e puts the row's largest magnitude into [2^14, 2^15) (e = 100 for
// rows of zeros or subnormals, 0 for non-finite values), hi = x·2^e with its low 13 mantissa bits rounded off (to
// nearest, ties away: an exact f16, and x·2^e − hi is exact in f32 and at most half hi's last place) and
// lo = f16(x·2^e − hi): hi + lo keeps 23 significant bits of the row's largest values. (Not hi = f16(x·2^e):
// compilers may fold f32(f16(x)) back to x, and then lo would be 0; Mesa does.) Rows from seq_len to padded_len and
// dims from head_dim to D are zeros, so the attention's products over whole matrices add nothing for them.
//
// With NORM_ROPE, q and k first get what `qk_norm_rope.wgsl` applies in place for the f32 attention: the per-head
// LayerNorm (HAS_NORM; biased variance, eps inside the sqrt, γ and β shared by the heads) and rotate-half RoPE on
// their first `rot` dims at the row's position; qkv itself is left as it is. Folded in here, the towers' q, k and v
// rows are read once and never written back (two passes, 40 µs per ASR layer on the H200, became one).
//
// One workgroup of WG = 32 invocations per (sequence, head, row): invocation t holds dims 4t .. 4t + 3 of the row's
// q, k and v. Its sums and maxima go through the subgroup operations, then through workgroup memory to join the
// subgroups (one, where subgroups have 32 lanes or more).

enable f16;

struct Params {
    seq_len: u32,
    heads: u32,
    head_dim: u32,
    // seq_len rounded up to a whole block of the attention's keys and queries.
    padded_len: u32,
    // The group's pairs · padded_len.
    workgroups: u32,
    // NORM_ROPE: rotated dims per head and the LayerNorm's epsilon.
    rot: u32,
    eps: f32,
    // Partial products in qkv, and the words of each (seqs·seq_len·3·d).
    slices: u32,
    slice_words: u32,
    // The group's first (sequence, head) pair in qkv.
    first_pair: u32,
}

@group(0) @binding(0) var<storage, read> qkv: array<f32>;
@group(0) @binding(1) var<storage, read_write> planes: array<vec4<f16>>;
@group(0) @binding(2) var<storage, read_write> unscales: array<f32>;
// NORM_ROPE only (the launcher binds stand-ins otherwise): the RoPE table [positions, rot/2] of (cos, sin), and with
// HAS_NORM the q and k LayerNorms' γ and β [head_dim].
@group(0) @binding(3) var<storage, read> rope: array<vec2<f32>>;
@group(0) @binding(4) var<storage, read> q_weight: array<f32>;
@group(0) @binding(5) var<storage, read> q_bias: array<f32>;
@group(0) @binding(6) var<storage, read> k_weight: array<f32>;
@group(0) @binding(7) var<storage, read> k_bias: array<f32>;
@group(1) @binding(0) var<uniform> p: Params;

// head_dim padded up to a multiple of the attention's matrix size, ≤ 128.
override D: u32 = 128u;
override NORM_ROPE: bool = false;
override HAS_NORM: bool = false;
override LO: bool = true;
const WG: u32 = 32u;
// One partial per subgroup.
var<workgroup> exchange: array<vec4<f32>, WG>;
// The normalised q and k of every dim, for each dim's RoPE partner.
var<workgroup> normalized: array<vec2<f32>, 128>;

// The sum over the workgroup of one vec4 per invocation; every invocation calls it.
fn group_sum(value: vec4<f32>, subgroup: u32, subgroups: u32) -> vec4<f32> {
    exchange[subgroup] = subgroupAdd(value);
    workgroupBarrier();
    var total = exchange[0];
    for (var i = 1u; i < subgroups; i++) {
        total += exchange[i];
    }
    workgroupBarrier();
    return total;
}

// The largest over the workgroup, as `group_sum`.
fn group_max(value: vec4<f32>, subgroup: u32, subgroups: u32) -> vec4<f32> {
    exchange[subgroup] = subgroupMax(value);
    workgroupBarrier();
    var largest = exchange[0];
    for (var i = 1u; i < subgroups; i++) {
        largest = max(largest, exchange[i]);
    }
    workgroupBarrier();
    return largest;
}

fn largest_of(x: vec4<f32>) -> f32 {
    let a = abs(x);
    return max(max(a.x, a.y), max(a.z, a.w));
}

// Splits invocation t's four values of one row of `slot` under the row's scale and writes them (and, from t = 0,
// the row's unscale).
fn write_operand(slot: u32, row: u32, t: u32, x: vec4<f32>, largest: f32) {
    // floor(log2(largest)) from the exponent bits.
    let exponent = i32((bitcast<u32>(largest) >> 23u) & 0xffu) - 127;
    // Rows of zeros (and subnormals) take the largest e, so that their unscale is the smallest: the attention scales
    // the probabilities by each v row's unscale over the sequence's largest.
    var e = 0;
    if exponent < 128 {
        e = clamp(14 - exponent, -100, 100);
    }
    if 4u * t < D {
        let scaled = x * bitcast<f32>(u32(e + 127) << 23u);
        let hi = bitcast<vec4<f32>>((bitcast<vec4<u32>>(scaled) + vec4(0x1000u)) & vec4(0xffffe000u));
        let at = ((slot * 2u) * p.padded_len + row) * D + 4u * t;
        planes[at / 4u] = vec4<f16>(hi);
        if LO {
            planes[(at + p.padded_len * D) / 4u] = vec4<f16>(scaled - hi);
        }
    }
    if t == 0u {
        unscales[slot * p.padded_len + row] = bitcast<f32>(u32(127 - e) << 23u);
    }
}

@compute @workgroup_size(WG)
fn attention_operands(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>,
                      @builtin(local_invocation_index) t: u32, @builtin(subgroup_id) subgroup: u32,
                      @builtin(num_subgroups) subgroups: u32) {
    let item = wid.y * groups.x + wid.x;
    // Uniform across the workgroup, so the barriers below stay in uniform control flow.
    if item >= p.workgroups {
        return;
    }
    let row = item % p.padded_len;
    // The pair within the group, and in the batch (sequence · heads + head).
    let pair = item / p.padded_len;
    let head = (p.first_pair + pair) % p.heads;
    let seq = (p.first_pair + pair) / p.heads;
    let width = p.heads * p.head_dim;
    var q = vec4<f32>();
    var k = vec4<f32>();
    var v = vec4<f32>();
    if row < p.seq_len {
        let start = (seq * p.seq_len + row) * 3u * width + head * p.head_dim;
        for (var c = 0u; c < 4u; c++) {
            let dim = 4u * t + c;
            if dim < p.head_dim {
                q[c] = qkv[start + dim];
                k[c] = qkv[start + width + dim];
                v[c] = qkv[start + 2u * width + dim];
                for (var s = 1u; s < p.slices; s++) {
                    let at = s * p.slice_words + start + dim;
                    q[c] += qkv[at];
                    k[c] += qkv[at + width];
                    v[c] += qkv[at + 2u * width];
                }
            }
        }
        if NORM_ROPE {
            if HAS_NORM {
                let n = f32(p.head_dim);
                let sums = vec4(dot(q, vec4(1.0)), dot(k, vec4(1.0)), 0.0, 0.0);
                let mean = group_sum(sums, subgroup, subgroups).xy / n;
                var dq = vec4<f32>();
                var dk = vec4<f32>();
                for (var c = 0u; c < 4u; c++) {
                    if 4u * t + c < p.head_dim {
                        dq[c] = q[c] - mean.x;
                        dk[c] = k[c] - mean.y;
                    }
                }
                let squares = vec4(dot(dq, dq), dot(dk, dk), 0.0, 0.0);
                let variance = group_sum(squares, subgroup, subgroups).xy / n;
                let inv_std = 1.0 / sqrt(variance + p.eps);
                for (var c = 0u; c < 4u; c++) {
                    let dim = 4u * t + c;
                    if dim < p.head_dim {
                        q[c] = dq[c] * inv_std.x * q_weight[dim] + q_bias[dim];
                        k[c] = dk[c] * inv_std.y * k_weight[dim] + k_bias[dim];
                    }
                }
            }
            for (var c = 0u; c < 4u; c++) {
                if 4u * t + c < D {
                    normalized[4u * t + c] = vec2(q[c], k[c]);
                }
            }
            workgroupBarrier();
            let half_rot = p.rot / 2u;
            for (var c = 0u; c < 4u; c++) {
                let dim = 4u * t + c;
                if dim < p.rot {
                    let angle = rope[row * half_rot + dim % half_rot];
                    if dim < half_rot {
                        let partner = normalized[dim + half_rot];
                        q[c] = q[c] * angle.x - partner.x * angle.y;
                        k[c] = k[c] * angle.x - partner.y * angle.y;
                    } else {
                        let partner = normalized[dim - half_rot];
                        q[c] = q[c] * angle.x + partner.x * angle.y;
                        k[c] = k[c] * angle.x + partner.y * angle.y;
                    }
                }
            }
        }
    }
    let largest = group_max(vec4(largest_of(q), largest_of(k), largest_of(v), 0.0), subgroup, subgroups);
    write_operand(pair * 3u, row, t, q, largest.x);
    write_operand(pair * 3u + 1u, row, t, k, largest.y);
    write_operand(pair * 3u + 2u, row, t, v, largest.z);
}
