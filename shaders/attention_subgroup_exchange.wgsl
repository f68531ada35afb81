// The f32 attention of `attention.wgsl`, its query groups exchanging through subgroup shuffles: the 8 invocations
// of a group are 8 consecutive lanes of one subgroup (the launcher takes this file only where subgroups have at
// least 8 lanes). Three shuffles per value, no workgroup memory and no barrier.

// #include "attention.wgsl"

fn group_max(v: vec4<f32>, t: u32) -> vec4<f32> {
    var m = max(v, subgroupShuffleXor(v, 1u));
    m = max(m, subgroupShuffleXor(m, 2u));
    return max(m, subgroupShuffleXor(m, 4u));
}

fn group_sum(v: vec4<f32>, t: u32) -> vec4<f32> {
    var s = v + subgroupShuffleXor(v, 1u);
    s += subgroupShuffleXor(s, 2u);
    return s + subgroupShuffleXor(s, 4u);
}
