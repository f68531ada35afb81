// In place on packed attention rows: optional per-head LayerNorm of q and k (HAS_NORM), then NeoX
// rotate-half RoPE on the first `rot` dims of every q and k head.
//
// Layout: qkv [rows, 3·d] f32 with d = heads·head_dim; q = columns [0, d), k = [d, 2d), v = [2d, 3d)
// (never touched). Head h of a block = its columns [h·head_dim, (h+1)·head_dim). Row r is at position
// r % seq_len: the rows are a batch of sequences whose positions restart at 0.
// LayerNorm: biased variance, eps inside the sqrt, affine weight/bias [head_dim] shared by all heads,
// separate parameters for q and k.
// RoPE: dim i < rot/2 pairs with i + rot/2 under the angle table rope[pos·rot/2 + i] = (cos, sin),
//   x'_i = x_i·cos − x_{i+rot/2}·sin,   x'_{i+rot/2} = x_{i+rot/2}·cos + x_i·sin;
// dims ≥ rot keep their (normalized) value. The table is computed on the host because angles reach
// ~830 rad, where device sin/cos lose the precision the reference has.
//
// Tiling: one workgroup per UNITS consecutive (row, block ∈ {q, k}, head) units; thread i owns dim i of each
// (head_dim ≤ WG). The heads are staged in workgroup memory so each thread can read its rotation partners after a
// barrier; every global read happens before the barrier and every write after it, so working in place is safe.
// UNITS heads a workgroup (set by the launcher, at most MAX_UNITS) keep that many loads in flight per thread.

override HAS_NORM: bool = false;

struct Params {
    rows: u32,
    seq_len: u32,
    heads: u32,
    head_dim: u32,
    rot: u32,
    eps: f32,
}

@group(0) @binding(0) var<storage, read_write> qkv: array<f32>;
@group(0) @binding(1) var<storage, read> rope: array<vec2<f32>>;
// Read only when HAS_NORM; the launcher binds placeholders otherwise.
@group(0) @binding(2) var<storage, read> q_weight: array<f32>;
@group(0) @binding(3) var<storage, read> q_bias: array<f32>;
@group(0) @binding(4) var<storage, read> k_weight: array<f32>;
@group(0) @binding(5) var<storage, read> k_bias: array<f32>;
@group(1) @binding(0) var<uniform> p: Params;

const WG: u32 = 128u;
override UNITS: u32 = 8u;
const MAX_UNITS: u32 = 8u;
var<workgroup> partial: array<f32, WG>;
var<workgroup> heads: array<f32, WG * UNITS>;

// #include "row_sum.wgsl"

// LayerNorm of the head over its head_dim values; threads past head_dim pass and get back 0.
fn head_norm(x: f32, lid: u32, in_head: bool, is_k: bool) -> f32 {
    let width = f32(p.head_dim);
    let mean = workgroup_sum(x, lid) / width;
    let d = select(0.0, x - mean, in_head);
    let inv_std = 1.0 / sqrt(workgroup_sum(d * d, lid) / width + p.eps);
    if !in_head {
        return 0.0;
    }
    if is_k {
        return d * inv_std * k_weight[lid] + k_bias[lid];
    }
    return d * inv_std * q_weight[lid] + q_bias[lid];
}

// Units go by row, then q or k, then head.
fn unit_row(index: u32) -> u32 {
    return index / (2u * p.heads);
}

fn unit_is_k(index: u32) -> bool {
    return (index / p.heads) % 2u == 1u;
}

// Where unit `index` starts in `qkv`.
fn unit_base(index: u32) -> u32 {
    let d = p.heads * p.head_dim;
    return unit_row(index) * 3u * d + select(0u, d, unit_is_k(index)) + (index % p.heads) * p.head_dim;
}

@compute @workgroup_size(WG)
fn qk_norm_rope(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>,
                @builtin(local_invocation_index) lid: u32) {
    let first = (wid.y * groups.x + wid.x) * UNITS;
    let units = p.rows * 2u * p.heads;
    // Uniform across the workgroup, so the barriers below stay in uniform control flow.
    if first >= units {
        return;
    }
    let in_head = lid < p.head_dim;

    var x: array<f32, MAX_UNITS>;
    for (var u = 0u; u < UNITS; u++) {
        x[u] = 0.0;
        if in_head && first + u < units {
            x[u] = qkv[unit_base(first + u) + lid];
        }
    }
    for (var u = 0u; u < UNITS; u++) {
        if HAS_NORM {
            x[u] = head_norm(x[u], lid, in_head, unit_is_k(first + u));
        }
        heads[u * WG + lid] = x[u];
    }
    workgroupBarrier();

    for (var u = 0u; u < UNITS; u++) {
        let index = first + u;
        if !in_head || index >= units {
            continue;
        }
        var value = x[u];
        if lid < p.rot {
            let half_rot = p.rot / 2u;
            let angle = rope[(unit_row(index) % p.seq_len) * half_rot + lid % half_rot];
            let at = u * WG;
            if lid < half_rot {
                value = value * angle.x - heads[at + lid + half_rot] * angle.y;
            } else {
                value = value * angle.x + heads[at + lid - half_rot] * angle.y;
            }
        }
        qkv[unit_base(index) + lid] = value;
    }
}
