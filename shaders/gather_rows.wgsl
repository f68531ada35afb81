// Row copies between two buffers, one launch for many rows: the live diarization sessions' speaker cache and FIFO,
// which stay on the GPU between steps, gathered into a batched step's rows and, after it, written back.
//   dst[pairs[first + j].y, c] = src[pairs[first + j].x, c]   for j < count, c < width.
// Each destination row appears at most once in a launch, so no two threads write one value.
//
// Layout: src [*, width] f32, dst [*, width] f32, both row-major; pairs [*] vec2<u32> (source row, destination row).
// Tiling: one thread per copied value, WG threads per workgroup, workgroups spread over x and y.

struct Params {
    first: u32,
    count: u32,
    width: u32,
}

@group(0) @binding(0) var<storage, read> src: array<f32>;
@group(0) @binding(1) var<storage, read> pairs: array<vec2<u32>>;
@group(0) @binding(2) var<storage, read_write> dst: array<f32>;
@group(1) @binding(0) var<uniform> p: Params;

const WG: u32 = 256u;

@compute @workgroup_size(WG)
fn gather_rows(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>,
               @builtin(local_invocation_index) lid: u32) {
    let index = (wid.y * groups.x + wid.x) * WG + lid;
    if index >= p.count * p.width {
        return;
    }
    let pair = pairs[p.first + index / p.width];
    let c = index % p.width;
    dst[pair.y * p.width + c] = src[pair.x * p.width + c];
}
