// The operands of the tensor-core attention (attention_coop.wgsl): every row of every head's q, k and v, scaled by a
// power of two and split into two f16 halves, in planes the attention loads its cooperative matrices from.
//
// Input: `qkv` f32 [seqs·seq_len, 3·d] as attention.wgsl reads it (q, k, v column blocks; head h at columns
// [h·head_dim, (h+1)·head_dim) of each).
// Output, per slot = (sequence·heads + head)·3 + which (which: 0 q, 1 k, 2 v):
//   planes (f16): hi at [(slot·2)·padded_len + row]·D + dim, lo one plane (padded_len·D values) further;
//   unscales (f32): [slot·padded_len + row] = 2^-e,
// with x·2^e = hi + lo for every dim of the row: e puts the row's largest magnitude into [2^14, 2^15) (e = 100 for rows
// of zeros or subnormals, 0 for non-finite values), hi = x·2^e with its low 13 mantissa bits rounded off (to nearest, ties
// away: an exact f16, and x·2^e − hi is exact in f32 and at most half hi's last place) and lo = f16(x·2^e − hi): hi + lo
// keeps 23 significant bits of the row's largest values. (Not hi = f16(x·2^e): compilers may fold f32(f16(x)) back to x, and then lo would be 0; Mesa does.) Rows from seq_len to
// padded_len and dims from head_dim to D are zeros, so the attention's products over whole matrices add nothing
// for them.
//
// One workgroup of D / 4 ≤ 32 invocations per (slot, row): invocation t converts dims 4t .. 4t + 3.

enable f16;

struct Params {
    seq_len: u32,
    heads: u32,
    head_dim: u32,
    // seq_len rounded up to a whole block of the attention's keys and queries.
    padded_len: u32,
    // seqs · heads · 3 · padded_len.
    workgroups: u32,
}

@group(0) @binding(0) var<storage, read> qkv: array<f32>;
@group(0) @binding(1) var<storage, read_write> planes: array<vec4<f16>>;
@group(0) @binding(2) var<storage, read_write> unscales: array<f32>;
@group(1) @binding(0) var<uniform> p: Params;

// head_dim padded up to a multiple of the attention's matrix size, ≤ 128.
override D: u32 = 128u;
const WG: u32 = 32u;
var<workgroup> largest: array<f32, WG>;

@compute @workgroup_size(WG)
fn attention_operands(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>,
                      @builtin(local_invocation_index) t: u32) {
    let item = wid.y * groups.x + wid.x;
    // Uniform across the workgroup, so the barriers below stay in uniform control flow.
    if item >= p.workgroups {
        return;
    }
    let row = item % p.padded_len;
    let slot = item / p.padded_len;
    let which = slot % 3u;
    let head = (slot / 3u) % p.heads;
    let seq = slot / (3u * p.heads);
    let width = p.heads * p.head_dim;
    var v = vec4<f32>();
    if row < p.seq_len {
        let start = (seq * p.seq_len + row) * 3u * width + which * width + head * p.head_dim;
        for (var k = 0u; k < 4u; k++) {
            if 4u * t + k < p.head_dim {
                v[k] = qkv[start + 4u * t + k];
            }
        }
    }
    let a = abs(v);
    largest[t] = max(max(a.x, a.y), max(a.z, a.w));
    workgroupBarrier();
    for (var stride = WG / 2u; stride > 0u; stride /= 2u) {
        if t < stride {
            largest[t] = max(largest[t], largest[t + stride]);
        }
        workgroupBarrier();
    }
    // floor(log2(largest)) from the exponent bits.
    let exponent = i32((bitcast<u32>(largest[0]) >> 23u) & 0xffu) - 127;
    // Rows of zeros (and subnormals) take the largest e, so that their unscale is the smallest: the attention scales
    // the probabilities by each v row's unscale over the sequence's largest.
    var e = 0;
    if exponent < 128 {
        e = clamp(14 - exponent, -100, 100);
    }
    if 4u * t < D {
        let scaled = v * bitcast<f32>(u32(e + 127) << 23u);
        let hi = bitcast<vec4<f32>>((bitcast<vec4<u32>>(scaled) + vec4(0x1000u)) & vec4(0xffffe000u));
        let at = ((slot * 2u) * p.padded_len + row) * D + 4u * t;
        planes[at / 4u] = vec4<f16>(hi);
        planes[(at + p.padded_len * D) / 4u] = vec4<f16>(scaled - hi);
    }
    if t == 0u {
        unscales[slot * p.padded_len + row] = bitcast<f32>(u32(127 - e) << 23u);
    }
}
