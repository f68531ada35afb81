// Speaker fusion, in place: x[t, c] += Σ_s z[t, s] · table[s, c] for t < rows, c < width, s < speakers.
// z is the normalized speaker activity of each frame and table the fixed sinusoid speaker table.
//
// Layout: x [rows, width], z [rows, speakers], table [speakers, width], all f32 row-major.
// Tiling: one thread per element of x, WG threads per workgroup, workgroups spread over x and y. The
// table is small (8 × 1280 in the model) and stays in cache, so no staging in workgroup memory.

struct Params {
    rows: u32,
    width: u32,
    speakers: u32,
}

@group(0) @binding(0) var<storage, read_write> x: array<f32>;
@group(0) @binding(1) var<storage, read> z: array<f32>;
@group(0) @binding(2) var<storage, read> table: array<f32>;
@group(1) @binding(0) var<uniform> p: Params;

const WG: u32 = 256u;

@compute @workgroup_size(WG)
fn speaker_fusion(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>,
                  @builtin(local_invocation_index) lid: u32) {
    let index = (wid.y * groups.x + wid.x) * WG + lid;
    if index >= p.rows * p.width {
        return;
    }
    let t = index / p.width;
    let c = index % p.width;
    var sum = 0.0;
    for (var s = 0u; s < p.speakers; s++) {
        sum += z[t * p.speakers + s] * table[s * p.width + c];
    }
    x[index] += sum;
}
