// Row LayerNorm: y = (x - mean) / sqrt(var + eps) * weight + bias, biased variance, any width.
// One workgroup per row. Values are shifted by the row's first element before summing, and the
// variance is taken around the mean (a second pass over the row, which stays in cache) rather
// than as E[x²] - mean²: both keep f32 precision for rows whose mean is large next to their spread.
//
// With WRITE_SCALES, each row's tensor-core scale (`row_scale.wgsl`) is written too, from the f32 values stored: the
// GEMM that reads the output then needs no `row_scales` pass of its own, and its bits do not change.
//
// `residual_layer_norm` first adds a split product to the residual stream in place,
// x += (partials[0] + partials[1] + … + partials[slices − 1]) + add_bias, the slices in order so that the
// result never depends on scheduling, then normalises the updated row.

struct Params {
    rows: u32,
    width: u32,
    eps: f32,
    // Slices of `partials` (residual_layer_norm).
    slices: u32,
}

@group(0) @binding(0) var<storage, read_write> x: array<f32>;
@group(0) @binding(1) var<storage, read> weight: array<f32>;
@group(0) @binding(2) var<storage, read> bias: array<f32>;
@group(0) @binding(3) var<storage, read_write> y: array<f32>;
// residual_layer_norm only: [slices, rows, width] and [width].
@group(0) @binding(4) var<storage, read> partials: array<f32>;
@group(0) @binding(5) var<storage, read> add_bias: array<f32>;
// WRITE_SCALES only: per row, 2^r and 2^-r. Every binding is bound for both entries (stand-ins where unused).
@group(0) @binding(6) var<storage, read_write> scales: array<vec2<f32>>;
@group(1) @binding(0) var<uniform> p: Params;

override WRITE_SCALES: bool = false;
// Invocations per row: 128 for rows of up to 512 values, 256 above (`layer_norm.rs` says why).
override WG: u32 = 256u;
var<workgroup> partial: array<f32, WG>;

// #include "row_sum.wgsl"

@compute @workgroup_size(WG)
fn layer_norm(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>,
              @builtin(local_invocation_index) lid: u32) {
    let row = wid.y * groups.x + wid.x;
    // Uniform across the workgroup, so the barriers below stay in uniform control flow.
    if row >= p.rows {
        return;
    }
    normalize_row(row, lid);
}

@compute @workgroup_size(WG)
fn residual_layer_norm(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>,
                       @builtin(local_invocation_index) lid: u32) {
    let row = wid.y * groups.x + wid.x;
    if row >= p.rows {
        return;
    }
    let base = row * p.width;
    let slice = p.rows * p.width;
    for (var c = lid; c < p.width; c += WG) {
        var sum = partials[base + c];
        for (var s = 1u; s < p.slices; s++) {
            sum += partials[s * slice + base + c];
        }
        x[base + c] += sum + add_bias[c];
    }
    // The row's new values, written by every invocation, are read by every invocation below.
    storageBarrier();
    normalize_row(row, lid);
}

// y[row, :] = LayerNorm(x[row, :]) (and the row's scale); every invocation of the workgroup calls it.
fn normalize_row(row: u32, lid: u32) {
    let base = row * p.width;
    let shift = x[base];
    var sum = 0.0;
    for (var c = lid; c < p.width; c += WG) {
        sum += x[base + c] - shift;
    }
    let mean = workgroup_sum(sum, lid) / f32(p.width);
    var squares = 0.0;
    for (var c = lid; c < p.width; c += WG) {
        let d = (x[base + c] - shift) - mean;
        squares += d * d;
    }
    let inv_std = 1.0 / sqrt(workgroup_sum(squares, lid) / f32(p.width) + p.eps);
    var largest = 0.0;
    for (var c = lid; c < p.width; c += WG) {
        let value = ((x[base + c] - shift) - mean) * inv_std * weight[c] + bias[c];
        y[base + c] = value;
        largest = max(largest, abs(value));
    }
    if WRITE_SCALES {
        let row_largest = workgroup_max(largest, lid);
        if lid == 0u {
            scales[row] = row_scale(row_largest);
        }
    }
}

// #include "row_scale.wgsl"
