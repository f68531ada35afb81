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
// Tiling: one workgroup per (row, block ∈ {q, k}, head); thread i owns dim i (head_dim ≤ WG). The head
// is staged in workgroup memory so each thread can read its rotation partner after a barrier; every
// global read happens before the barrier and every write after it, so working in place is safe.

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
var<workgroup> partial: array<f32, WG>;
var<workgroup> head: array<f32, WG>;

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

@compute @workgroup_size(WG)
fn qk_norm_rope(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>,
                @builtin(local_invocation_index) lid: u32) {
    let index = wid.y * groups.x + wid.x;
    let row = index / (2u * p.heads);
    // Uniform across the workgroup, so the barriers below stay in uniform control flow.
    if row >= p.rows {
        return;
    }
    let is_k = (index / p.heads) % 2u == 1u;
    let d = p.heads * p.head_dim;
    let base = row * 3u * d + select(0u, d, is_k) + (index % p.heads) * p.head_dim;
    let in_head = lid < p.head_dim;

    var x = 0.0;
    if in_head {
        x = qkv[base + lid];
    }
    if HAS_NORM {
        x = head_norm(x, lid, in_head, is_k);
    }
    head[lid] = x;
    workgroupBarrier();

    if in_head && lid < p.rot {
        let half_rot = p.rot / 2u;
        let angle = rope[(row % p.seq_len) * half_rot + lid % half_rot];
        if lid < half_rot {
            x = x * angle.x - head[lid + half_rot] * angle.y;
        } else {
            x = x * angle.x + head[lid - half_rot] * angle.y;
        }
    }
    if in_head {
        qkv[base + lid] = x;
    }
}
