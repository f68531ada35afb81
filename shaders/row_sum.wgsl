// The sum (or the largest) of one f32 per invocation over the workgroup, a tree reduction through workgroup memory.
// Included by `layer_norm.wgsl`, `qk_norm_rope.wgsl` and `log_softmax_gather.wgsl`, which declare `const WG: u32`
// (their workgroup size, a power of two) and `var<workgroup> partial: array<f32, WG>`. Every invocation of the
// workgroup must call it (it has barriers); the last barrier lets the next call reuse `partial`.
fn workgroup_sum(value: f32, lid: u32) -> f32 {
    partial[lid] = value;
    workgroupBarrier();
    for (var stride = WG / 2u; stride > 0u; stride /= 2u) {
        if lid < stride {
            partial[lid] += partial[lid + stride];
        }
        workgroupBarrier();
    }
    let total = partial[0];
    workgroupBarrier();
    return total;
}

fn workgroup_max(value: f32, lid: u32) -> f32 {
    partial[lid] = value;
    workgroupBarrier();
    for (var stride = WG / 2u; stride > 0u; stride /= 2u) {
        if lid < stride {
            partial[lid] = max(partial[lid], partial[lid + stride]);
        }
        workgroupBarrier();
    }
    let largest = partial[0];
    workgroupBarrier();
    return largest;
}
