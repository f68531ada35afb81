// The sum (or the largest) of one f32 per invocation over the workgroup, in two levels through workgroup memory:
// WG / FAN invocations each combine FAN values (strided, so consecutive invocations read consecutive words), then
// every invocation combines those WG / FAN. Three barriers where a tree takes log2(WG) + 2 (the residual LayerNorm
// of 828 × 512 went 8.94 → 7.62 µs on an H100, docs/performance.md). The order of the additions is fixed, so the
// result does not depend on scheduling.
// Included by `layer_norm.wgsl`, `qk_norm_rope.wgsl` and `log_softmax_gather.wgsl`, which declare `WG` (their
// workgroup size, a multiple of FAN; a const or an override) and `var<workgroup> partial: array<f32, WG>`. Every
// invocation of the workgroup must call it (it has barriers); the last barrier lets the next call reuse `partial`.
const FAN: u32 = 16u;

fn workgroup_sum(value: f32, lid: u32) -> f32 {
    partial[lid] = value;
    workgroupBarrier();
    let groups = WG / FAN;
    if lid < groups {
        var group = partial[lid];
        for (var i = 1u; i < FAN; i++) {
            group += partial[i * groups + lid];
        }
        partial[lid] = group;
    }
    workgroupBarrier();
    var total = partial[0];
    for (var g = 1u; g < groups; g++) {
        total += partial[g];
    }
    workgroupBarrier();
    return total;
}

fn workgroup_max(value: f32, lid: u32) -> f32 {
    partial[lid] = value;
    workgroupBarrier();
    let groups = WG / FAN;
    if lid < groups {
        var group = partial[lid];
        for (var i = 1u; i < FAN; i++) {
            group = max(group, partial[i * groups + lid]);
        }
        partial[lid] = group;
    }
    workgroupBarrier();
    var largest = partial[0];
    for (var g = 1u; g < groups; g++) {
        largest = max(largest, partial[g]);
    }
    workgroupBarrier();
    return largest;
}
