//! The tensor-core GEMM launcher (`shaders/gemm_coop.wgsl`): f32-accurate products on 16×16×16
//! f16→f32 cooperative matrices, with the weight scaled to an exact f16 form and each row of X
//! scaled and split into two f16 halves. [`crate::gemm`] picks it when [`usable`] says so.

use gpu_core::{Access, Gpu, GpuBuffer, KernelSpec, Recorder, Result, wgpu};

use crate::gemm::{Activation, Epilogue};
use crate::launch::grid;
use crate::shaders::{GEMM_COOP, Variant};
use crate::weight::Weight;

const TILE: usize = 64;
const STEP: usize = 32;
/// Workgroup memory of `gemm_coop`: x_hi, x_lo, w_tile (64 rows of 40 halves each) and the f32 staging.
const WORKGROUP_BYTES: u32 = 3 * 64 * 40 * 2 + 4 * 256 * 4;

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct Params {
    n: u32,
    m: u32,
    k: u32,
    w_scale: f32,
    w_unscale: f32,
}

const BINDINGS: &[Access] = &[Access::Read, Access::Read, Access::Read, Access::ReadWrite, Access::ReadWrite];

/// Whether the tensor-core path can compute `x[n×k] · wᵀ` on this device.
pub fn usable(gpu: &Gpu, w: &Weight, k: usize) -> bool {
    let info = gpu.adapter_info();
    let has_shape = gpu.cooperative_matrix_shapes().iter().any(|p| {
        (p.m_size, p.n_size, p.k_size) == (16, 16, 16)
            && p.ab_type == wgpu::CooperativeScalarType::F16
            && p.cr_type == wgpu::CooperativeScalarType::F32
    });
    has_shape
        && gpu.has(wgpu::Features::SHADER_F16)
        && info.subgroup_min_size == 32
        && info.subgroup_max_size == 32
        && gpu.limits().max_compute_workgroup_storage_size >= WORKGROUP_BYTES
        && k.is_multiple_of(STEP)
        && w.f16_exponent().is_some()
}

fn constants(epilogue: (bool, Activation, bool)) -> [(&'static str, f64); 3] {
    let flag = |on: bool| if on { 1.0 } else { 0.0 };
    let (has_bias, activation, accumulate) = epilogue;
    [("HAS_BIAS", flag(has_bias)), ("ACTIVATION", activation.code()), ("ACCUMULATE", flag(accumulate))]
}

fn spec<'a>(entry: &'static str, constants: &'a [(&'static str, f64)]) -> KernelSpec<'a> {
    KernelSpec { shader: &GEMM_COOP, entry, constants, bindings: BINDINGS }
}

/// Every pipeline this launcher can build, for shader validation.
pub fn variants() -> Vec<Variant> {
    let mut variants = vec![Variant::of(&spec("row_scales", &[]))];
    for has_bias in [false, true] {
        for activation in Activation::ALL {
            for accumulate in [false, true] {
                variants.push(Variant::of(&spec("gemm_coop", &constants((has_bias, activation, accumulate)))));
            }
        }
    }
    variants
}

/// Records the row-scale pass and the product. Sizes were checked by [`crate::gemm`], and
/// [`usable`] holds.
pub(crate) fn gemm_coop(
    rec: &mut Recorder<'_>,
    x: &GpuBuffer,
    w: &Weight,
    y: &GpuBuffer,
    n: usize,
    epilogue: &Epilogue<'_>,
) -> Result<()> {
    let (m, k) = (w.rows, w.cols);
    let exponent = w.f16_exponent().unwrap_or(0);
    let params =
        Params { n: n as u32, m: m as u32, k: k as u32, w_scale: 2f32.powi(exponent), w_unscale: 2f32.powi(-exponent) };
    let scales = rec.gpu().scratch("gemm row scales", 2 * n)?;
    let bias = epilogue.bias.unwrap_or(x);
    let row_scales = rec.gpu().kernel(&spec("row_scales", &[]))?;
    let workgroups = grid(rec, n);
    rec.dispatch(&row_scales, &[x, &w.buffer, bias, y, &scales], &params, workgroups)?;
    let constants = constants((epilogue.bias.is_some(), epilogue.activation, epilogue.accumulate));
    let kernel = rec.gpu().kernel(&spec("gemm_coop", &constants))?;
    let workgroups = [m.div_ceil(TILE) as u32, n.div_ceil(TILE) as u32, 1];
    rec.dispatch(&kernel, &[x, &w.buffer, bias, y, &scales], &params, workgroups)
}
