// Log-softmax of each row of `logits`, kept for a few classes only: out[r, j] = logits[r, classes[j]] − lse_r, with
// lse_r = max_r + log Σ_c exp(logits[r, c] − max_r) over the row's `vocab` classes. The word-timestamp head's CTC
// alignment reads only its transcript's classes (and the blank): this reads those back instead of every class.
//
// One workgroup per row: the maximum, then the sum of exponentials (each invocation a compensated sum over its
// strided share, then a tree through workgroup memory in a fixed order, so the result never depends on scheduling),
// then the gather. The row (95 KB at the release vocabulary) is read twice; the second read hits the cache.

struct Params {
    rows: u32,
    vocab: u32,
    classes: u32,
}

@group(0) @binding(0) var<storage, read> logits: array<f32>;
@group(0) @binding(1) var<storage, read> classes: array<u32>;
@group(0) @binding(2) var<storage, read_write> out: array<f32>;
@group(1) @binding(0) var<uniform> p: Params;

const WG: u32 = 256u;
var<workgroup> partial: array<f32, WG>;

// #include "row_sum.wgsl"

@compute @workgroup_size(WG)
fn log_softmax_gather(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>,
                      @builtin(local_invocation_index) lid: u32) {
    let row = wid.y * groups.x + wid.x;
    // Uniform across the workgroup, so the barriers below stay in uniform control flow.
    if row >= p.rows {
        return;
    }
    let base = row * p.vocab;
    var m = -0x1.fffffep+127f;
    for (var c = lid; c < p.vocab; c += WG) {
        m = max(m, logits[base + c]);
    }
    let row_max = workgroup_max(m, lid);
    // Kahan: the shares are ~100 terms at the release vocabulary, each below 1.
    var sum = 0.0;
    var carry = 0.0;
    for (var c = lid; c < p.vocab; c += WG) {
        let term = exp(logits[base + c] - row_max) - carry;
        let next = sum + term;
        carry = (next - sum) - term;
        sum = next;
    }
    let lse = row_max + log(workgroup_sum(sum, lid));
    for (var j = lid; j < p.classes; j += WG) {
        out[row * p.classes + j] = logits[base + classes[j]] - lse;
    }
}
