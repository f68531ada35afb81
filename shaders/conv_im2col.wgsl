// im2col for a kernel-3, zero-padding-1 Conv1d over a batch of sequences (the Sortformer sub-pixel upsampler):
//   cols[s·L + t, ci·3 + tap] = h[s·L + t + tap − 1, ci]   (0 where t + tap − 1 is outside [0, lengths[s])),
// so the checkpoint's conv weight [out, c, 3], read as a [out, 3c] matrix, turns the conv into one GEMM. Each
// sequence s holds L rows of which its first lengths[s] exist: the rows past them pad the batch to one length and
// are zeros to the conv, as they would be past the end of the sequence run alone.
//
// Layout: h [sequences·L, c] f32, cols [sequences·L, 3c] f32, both row-major; lengths [sequences] u32.
// Tiling: one thread per output element, WG threads per workgroup, workgroups spread over x and y.

struct Params {
    rows: u32,
    seq_len: u32,
    channels: u32,
}

@group(0) @binding(0) var<storage, read> h: array<f32>;
@group(0) @binding(1) var<storage, read> lengths: array<u32>;
@group(0) @binding(2) var<storage, read_write> cols: array<f32>;
@group(1) @binding(0) var<uniform> p: Params;

const WG: u32 = 256u;

@compute @workgroup_size(WG)
fn conv_im2col(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>,
               @builtin(local_invocation_index) lid: u32) {
    let index = (wid.y * groups.x + wid.x) * WG + lid;
    let width = 3u * p.channels;
    if index >= p.rows * width {
        return;
    }
    let row = index / width;
    let t = row % p.seq_len;
    let ci = (index % width) / 3u;
    let tap = index % 3u;
    // t + tap − 1 without going below zero in u32.
    let source = t + tap;
    var value = 0.0;
    // A length past L would reach into the next sequence: capped, so every read stays in h by construction.
    if source >= 1u && source <= min(lengths[row / p.seq_len], p.seq_len) {
        value = h[(row + tap - 1u) * p.channels + ci];
    }
    cols[index] = value;
}
