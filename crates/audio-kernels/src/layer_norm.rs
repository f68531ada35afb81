//! Row LayerNorm launchers (`shaders/layer_norm.wgsl`): plain, and after adding a split product to the residual
//! stream.

use gpu_core::{Access, GpuBuffer, KernelSpec, KernelVariant, ParamsLayout, Recorder, Result, params_layout};

use crate::launch::{grid, require};
use crate::shaders::LAYER_NORM;

/// Epsilon used by every LayerNorm of the model.
pub const LAYER_NORM_EPS: f32 = 1e-5;

/// A LayerNorm's parameters: γ (`weight`) and β (`bias`), `[width]` f32 each, and ε.
#[derive(Clone, Copy)]
pub struct LayerNormParams<'a> {
    /// γ.
    pub weight: &'a GpuBuffer,
    /// β.
    pub bias: &'a GpuBuffer,
    /// ε, added to the variance.
    pub eps: f32,
}

/// The residual stream of a pre-norm block and what [`residual_layer_norm`] adds to it in place: the `slices` slices
/// of a split product in `partials` (`[slices, rows, width]`, [`crate::gemm::gemm_partials`]), added in order, and
/// `bias` (`[width]`).
#[derive(Clone, Copy)]
pub struct Residual<'a> {
    /// The stream, `[rows, width]`, updated in place.
    pub stream: &'a GpuBuffer,
    /// The product's slices.
    pub partials: &'a GpuBuffer,
    /// How many slices `partials` holds (0 counts as 1).
    pub slices: usize,
    /// The product's bias.
    pub bias: &'a GpuBuffer,
}

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct Params {
    rows: u32,
    width: u32,
    eps: f32,
    slices: u32,
}

const PARAMS: &ParamsLayout = &params_layout!(Params { rows, width, eps, slices });

/// Both entries bind all seven (naga keeps a binding that an override turns off): x, weight, bias, y, the residual
/// entry's partials and bias, the row scales. The launchers bind stand-ins for those an entry does not read.
const BINDINGS: &[Access] =
    &[Access::ReadWrite, Access::Read, Access::Read, Access::ReadWrite, Access::Read, Access::Read, Access::ReadWrite];

/// Rows of up to this many values take 128 invocations (the shader's `WG`), wider ones 256. Measured on the H100
/// with `vkprobe` (2026-12-06, the residual entry with row scales): the Sortformer's 828 × 512 in 4 slices 7.62 µs
/// with 256 against 7.38 with 128, 128 sessions' 59,520 × 512 410.7 against 350.6 µs; the ASR's 600 × 1280 8.60 µs
/// with 256 against 10.39 with 128.
const NARROW_ROW: usize = 512;

fn spec(entry: &'static str, scales: bool, width: usize) -> KernelSpec<'static> {
    let constants: &'static [(&'static str, f64)] = match (scales, width <= NARROW_ROW) {
        (false, true) => &[("WG", 128.0)],
        (true, true) => &[("WRITE_SCALES", 1.0), ("WG", 128.0)],
        (false, false) => &[("WG", 256.0)],
        (true, false) => &[("WRITE_SCALES", 1.0), ("WG", 256.0)],
    };
    KernelSpec { shader: &LAYER_NORM, entry, constants, bindings: BINDINGS, params: PARAMS }
}

/// The row scales to write, or a stand-in that the kernel does not touch.
fn scales_or_stand_in(rec: &Recorder<'_>, scales: Option<&GpuBuffer>, rows: usize, what: &str) -> Result<GpuBuffer> {
    match scales {
        Some(scales) => {
            require(scales, 2 * rows, what)?;
            Ok(scales.clone())
        }
        None => rec.gpu().scratch("layer_norm unused row scales", 2),
    }
}

/// Every pipeline these launchers can build, for shader validation.
pub fn variants() -> Vec<KernelVariant> {
    let mut variants = Vec::new();
    for residual in [false, true] {
        for scales in [false, true] {
            variants.extend([NARROW_ROW, NARROW_ROW + 1].map(|width| kernel(residual, scales, width)));
        }
    }
    variants
}

/// The pipeline of [`residual_layer_norm`] (`residual`) or [`layer_norm`] for rows of `width`, writing row scales or
/// not (`scales`).
pub fn kernel(residual: bool, scales: bool, width: usize) -> KernelVariant {
    let entry = if residual { "residual_layer_norm" } else { "layer_norm" };
    KernelVariant::from(&spec(entry, scales, width))
}

/// `y[r, :] = LayerNorm(x[r, :]) · weight + bias` (`norm`) for `rows` rows of `width` f32 values; with `scales`,
/// also each output row's tensor-core scale (`[rows]` pairs 2^r, 2^-r: [`crate::gemm_scaled`] reads them). `x` and
/// `y` may not alias.
pub fn layer_norm(
    rec: &mut Recorder<'_>,
    x: &GpuBuffer,
    norm: &LayerNormParams<'_>,
    y: &GpuBuffer,
    rows: usize,
    width: usize,
    scales: Option<&GpuBuffer>,
) -> Result<()> {
    let LayerNormParams { weight, bias, eps } = *norm;
    require(x, rows * width, "layer_norm input")?;
    require(y, rows * width, "layer_norm output")?;
    require(weight, width, "layer_norm weight")?;
    require(bias, width, "layer_norm bias")?;
    let kernel = rec.gpu().kernel(&spec("layer_norm", scales.is_some(), width))?;
    let params = Params { rows: rows as u32, width: width as u32, eps, slices: 0 };
    let workgroups = grid(rec, rows);
    let scales = scales_or_stand_in(rec, scales, rows, "layer_norm row scales")?;
    // The residual entry's two inputs are not read here: the norm's own stand in for them.
    rec.dispatch(&kernel, &[x, weight, bias, y, weight, bias, &scales], &params, workgroups)
}

/// The residual step of a pre-norm block fused with the next LayerNorm: `x += Σ_s partials[s] + bias` in place
/// (`residual`: x is its stream), then `y = LayerNorm(x)` (`norm`), for `rows` rows of `width`, and with `scales`
/// each row's tensor-core scale (as [`layer_norm`]). `x` and `y` may not alias.
pub fn residual_layer_norm(
    rec: &mut Recorder<'_>,
    residual: &Residual<'_>,
    norm: &LayerNormParams<'_>,
    y: &GpuBuffer,
    rows: usize,
    width: usize,
    scales: Option<&GpuBuffer>,
) -> Result<()> {
    let Residual { stream: x, partials, slices, bias: add_bias } = *residual;
    let LayerNormParams { weight, bias, eps } = *norm;
    require(partials, slices.max(1) * rows * width, "residual_layer_norm partial products")?;
    require(add_bias, width, "residual_layer_norm bias")?;
    require(x, rows * width, "residual_layer_norm residual")?;
    require(y, rows * width, "residual_layer_norm output")?;
    require(weight, width, "residual_layer_norm weight")?;
    require(bias, width, "residual_layer_norm norm bias")?;
    let kernel = rec.gpu().kernel(&spec("residual_layer_norm", scales.is_some(), width))?;
    let params = Params { rows: rows as u32, width: width as u32, eps, slices: slices.max(1) as u32 };
    let workgroups = grid(rec, rows);
    let scales = scales_or_stand_in(rec, scales, rows, "residual_layer_norm row scales")?;
    rec.dispatch(&kernel, &[x, weight, bias, y, partials, add_bias, &scales], &params, workgroups)
}

/// Row LayerNorm on the host in f64, with biased variance: `(x − mean)/sqrt(var + eps) · weight + bias`. The speaker
/// fusion normalises its few activity values with it, and the kernel's tests take it as their f64 reference
/// ([`crate::reference::layer_norm`]).
pub fn layer_norm_f64(x: &[f64], weight: &[f64], bias: &[f64], width: usize, eps: f64) -> Vec<f64> {
    let mut y = Vec::with_capacity(x.len());
    for row in x.chunks(width) {
        let mean = row.iter().sum::<f64>() / width as f64;
        let var = row.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / width as f64;
        let inv_std = 1.0 / (var + eps).sqrt();
        y.extend(row.iter().enumerate().map(|(c, v)| (v - mean) * inv_std * weight[c] + bias[c]));
    }
    y
}
