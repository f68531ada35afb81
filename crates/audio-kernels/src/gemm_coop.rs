//! The tensor-core GEMM launcher (`shaders/gemm_coop.wgsl`): f32-accurate products on 16×16×16
//! f16→f32 cooperative matrices, with the weight stored as its exact f16 image (see
//! [`crate::Weight`]) and each row of X scaled and split into two f16 halves. [`crate::gemm`]
//! takes this path for every weight stored that way.

use gpu_core::{Access, Gpu, GpuBuffer, KernelSpec, Recorder, Result, wgpu};

use crate::gemm::{Activation, Epilogue};
use crate::launch::grid;
use crate::shaders::{GEMM_COOP, Variant};
use crate::weight::Weight;

/// Rows and columns of Y per workgroup.
const TILE_ROWS: usize = 64;
pub(crate) const TILE_COLS: usize = 128;
/// k must be a multiple of this (one cooperative-matrix step).
pub(crate) const K_STEP: usize = 16;
/// Workgroup memory of `gemm_coop`: one 16×16 f32 staging tile per subgroup.
const WORKGROUP_BYTES: u32 = 4 * 256 * 4;

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct Params {
    n: u32,
    m: u32,
    k: u32,
    padded_n: u32,
    w_unscale: f32,
}

const BINDINGS: &[Access] =
    &[Access::Read, Access::Read, Access::Read, Access::ReadWrite, Access::ReadWrite, Access::ReadWrite];

/// Whether this device runs the tensor-core path (weights uploaded to it are then stored as f16
/// where exact).
pub fn supported(gpu: &Gpu) -> bool {
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
}

/// Whether `gemm` takes the tensor-core path for `w`.
pub fn usable(w: &Weight) -> bool {
    w.f16_exponent().is_some()
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
    let mut variants = vec![Variant::of(&spec("split_rows", &[]))];
    for has_bias in [false, true] {
        for activation in Activation::ALL {
            for accumulate in [false, true] {
                variants.push(Variant::of(&spec("gemm_coop", &constants((has_bias, activation, accumulate)))));
            }
        }
    }
    variants
}

/// Records the split of X and the product. Sizes were checked by [`crate::gemm`], and `w` is
/// stored as f16 ([`usable`]).
pub(crate) fn gemm_coop(
    rec: &mut Recorder<'_>,
    x: &GpuBuffer,
    w: &Weight,
    y: &GpuBuffer,
    n: usize,
    epilogue: &Epilogue<'_>,
) -> Result<()> {
    let (m, k) = (w.rows, w.cols);
    let padded_n = n.next_multiple_of(TILE_ROWS);
    let params = Params {
        n: n as u32,
        m: m as u32,
        k: k as u32,
        padded_n: padded_n as u32,
        w_unscale: 2f32.powi(-w.f16_exponent().unwrap_or(0)),
    };
    let gpu = rec.gpu();
    let split = gpu.scratch("gemm split activations", padded_n * k)?;
    let scales = gpu.scratch("gemm row scales", 2 * padded_n)?;
    let bias = epilogue.bias.unwrap_or(x);
    let buffers = [x, &w.buffer, bias, y, &split, &scales];
    let split_rows = gpu.kernel(&spec("split_rows", &[]))?;
    let workgroups = grid(rec, padded_n);
    rec.dispatch(&split_rows, &buffers, &params, workgroups)?;
    let constants = constants((epilogue.bias.is_some(), epilogue.activation, epilogue.accumulate));
    let kernel = rec.gpu().kernel(&spec("gemm_coop", &constants))?;
    let workgroups = [m.div_ceil(TILE_COLS) as u32, (padded_n / TILE_ROWS) as u32, 1];
    rec.dispatch(&kernel, &buffers, &params, workgroups)
}
