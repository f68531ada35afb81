// The f32 attention of `attention.wgsl`, its query groups exchanging through workgroup memory: for devices without
// subgroup operations (WebGPU without its `subgroups` feature, wgpu's GL backend). Each exchange is one store, one
// barrier and eight loads; the values are combined in the butterfly's order, so the results are the subgroup
// file's, bit for bit. The body passes a barrier between one exchange's loads and the next one's stores, so one
// barrier per exchange suffices.

// #include "attention.wgsl"

// One value per invocation.
var<workgroup> exchange: array<vec4<f32>, THREADS>;

// The values of invocation t's query group, e[i] from invocation (t & ~7) + i.
fn group_values(v: vec4<f32>, t: u32) -> array<vec4<f32>, 8> {
    exchange[t] = v;
    workgroupBarrier();
    var e: array<vec4<f32>, 8>;
    for (var i = 0u; i < 8u; i++) {
        e[i] = exchange[(t & ~7u) + i];
    }
    return e;
}

fn group_max(v: vec4<f32>, t: u32) -> vec4<f32> {
    let e = group_values(v, t);
    return max(max(max(e[0], e[1]), max(e[2], e[3])), max(max(e[4], e[5]), max(e[6], e[7])));
}

fn group_sum(v: vec4<f32>, t: u32) -> vec4<f32> {
    let e = group_values(v, t);
    return ((e[0] + e[1]) + (e[2] + e[3])) + ((e[4] + e[5]) + (e[6] + e[7]));
}
