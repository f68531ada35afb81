//! Row LayerNorm launcher (`shaders/layer_norm.wgsl`).

use gpu_core::{Access, GpuBuffer, KernelSpec, KernelVariant, Recorder, Result};

use crate::launch::{grid, require};
use crate::shaders::LAYER_NORM;

/// Epsilon used by every LayerNorm of the model.
pub const LAYER_NORM_EPS: f32 = 1e-5;

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct Params {
    rows: u32,
    width: u32,
    eps: f32,
}

const BINDINGS: &[Access] = &[Access::Read, Access::Read, Access::Read, Access::ReadWrite];

fn spec() -> KernelSpec<'static> {
    KernelSpec { shader: &LAYER_NORM, entry: "layer_norm", constants: &[], bindings: BINDINGS }
}

/// Every pipeline this launcher can build, for shader validation.
pub fn variants() -> Vec<KernelVariant> {
    vec![KernelVariant::from(&spec())]
}

/// `y[r, :] = LayerNorm(x[r, :]) · weight + bias` for `rows` rows of `width` f32 values.
/// `x` and `y` may not alias.
#[allow(clippy::too_many_arguments)]
pub fn layer_norm(
    rec: &mut Recorder<'_>,
    x: &GpuBuffer,
    weight: &GpuBuffer,
    bias: &GpuBuffer,
    y: &GpuBuffer,
    rows: usize,
    width: usize,
    eps: f32,
) -> Result<()> {
    require(x, rows * width, "layer_norm input")?;
    require(y, rows * width, "layer_norm output")?;
    require(weight, width, "layer_norm weight")?;
    require(bias, width, "layer_norm bias")?;
    let kernel = rec.gpu().kernel(&spec())?;
    let params = Params { rows: rows as u32, width: width as u32, eps };
    let workgroups = grid(rec, rows);
    rec.dispatch(&kernel, &[x, weight, bias, y], &params, workgroups)
}
