// im2col for a kernel-3, zero-padding-1 Conv1d over one sequence (the Sortformer sub-pixel upsampler):
//   cols[t, ci·3 + tap] = h[t + tap − 1, ci]   (0 where t + tap − 1 is outside [0, n)),
// so the checkpoint's conv weight [out, c, 3], read as a [out, 3c] matrix, turns the conv into one GEMM.
//
// Layout: h [n, c] f32, cols [n, 3c] f32, both row-major.
// Tiling: one thread per output element, WG threads per workgroup, workgroups spread over x and y.

struct Params {
    n: u32,
    channels: u32,
}

@group(0) @binding(0) var<storage, read> h: array<f32>;
@group(0) @binding(1) var<storage, read_write> cols: array<f32>;
@group(1) @binding(0) var<uniform> p: Params;

const WG: u32 = 256u;

@compute @workgroup_size(WG)
fn conv_im2col(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>,
               @builtin(local_invocation_index) lid: u32) {
    let index = (wid.y * groups.x + wid.x) * WG + lid;
    let width = 3u * p.channels;
    if index >= p.n * width {
        return;
    }
    let t = index / width;
    let ci = (index % width) / 3u;
    let tap = index % 3u;
    // t + tap − 1 without going below zero in u32.
    let source = t + tap;
    var value = 0.0;
    if source >= 1u && source <= p.n {
        value = h[(source - 1u) * p.channels + ci];
    }
    cols[index] = value;
}
