//! The tensor-core GEMM (`shaders/gemm_coop.wgsl`): f32-accurate products on 16×16×16 f16→f32 cooperative matrices,
//! with the weight stored as its exact f16 image (see [`super::Weight`]) and each row of X scaled and split into two
//! f16 halves by `split_rows`. Two kernels ([`TensorCoreKernel`]), which share the products, the block accumulation
//! and the epilogue: operands staged through workgroup memory (the default), or loaded straight from memory (a slower
//! fallback). On the H200 the staged kernel takes an ASR chunk from 54 to 44 ms; 64-row tiles with 32-deep stages
//! were slower than either (57 ms).

use gpu_core::{Access, Gpu, GpuBuffer, KernelSpec, KernelVariant, Recorder, Result, wgpu};

use super::epilogue::{Epilogue, EpilogueKind};
use super::options::TensorCoreKernel;
use crate::launch::grid;
use crate::shaders::GEMM_COOP;

/// Columns of Y per workgroup (both configurations); stored f16 weights have their rows padded to it.
pub(super) const TILE_COLS: usize = 128;
/// k must be a multiple of this (one cooperative-matrix step).
pub(super) const K_STEP: usize = 16;
/// Rows the split X is padded to (zeros past n).
const SPLIT_ROWS: usize = 64;
/// Lanes per subgroup the kernel is written for (`supported` requires exactly this).
const SUBGROUP: usize = 32;

/// The entry point and tiling of each kernel choice.
#[derive(Clone, Copy, Debug)]
enum Tiling {
    /// `gemm_coop`: operands loaded straight from memory, 64×128 tiles.
    Direct,
    /// `gemm_coop_staged`: operands staged through workgroup memory, `tile_rows`×128 tiles, stages `stage_k` deep.
    Staged { tile_rows: usize, stage_k: usize },
}

impl Tiling {
    fn of(kernel: TensorCoreKernel) -> Self {
        match kernel {
            TensorCoreKernel::Staged => Tiling::Staged { tile_rows: 128, stage_k: 16 },
            TensorCoreKernel::Direct => Tiling::Direct,
        }
    }

    fn entry(self) -> &'static str {
        match self {
            Tiling::Direct => "gemm_coop",
            Tiling::Staged { .. } => "gemm_coop_staged",
        }
    }

    /// Rows of Y per workgroup; the split X is padded to a multiple of 64 only (see `record`).
    fn tile_rows(self) -> usize {
        match self {
            Tiling::Direct => 64,
            Tiling::Staged { tile_rows, .. } => tile_rows,
        }
    }

    /// Invocations per workgroup: one subgroup per 16 rows of the tile.
    fn threads(self) -> u32 {
        (self.tile_rows() / 16 * SUBGROUP) as u32
    }

    /// Workgroup memory: one 16×16 f32 epilogue tile per subgroup, and for the staged kernel two stage buffers of
    /// (2·tile_rows + 128) rows of `stage_k` + 8 f16 (`tiles`, scalar f16): 45056 bytes staged (36864 + 8192), 4096
    /// direct.
    fn workgroup_bytes(self) -> u32 {
        let epilogue = self.tile_rows() / 16 * 256 * 4;
        let stages = match self {
            Tiling::Direct => 0,
            Tiling::Staged { tile_rows, stage_k } => 2 * (2 * tile_rows + TILE_COLS) * (stage_k + 8) * 2,
        };
        (epilogue + stages) as u32
    }

    /// Override constants beyond the epilogue's.
    fn constants(self) -> Vec<(&'static str, f64)> {
        match self {
            Tiling::Direct => Vec::new(),
            Tiling::Staged { tile_rows, stage_k } => {
                // Each invocation stages a whole number of 4-f16 groups per stage, at most MAX_STAGE_LOADS (16).
                // (`TILES_LEN`, the length of `tiles`, follows from these two.)
                let groups = (2 * tile_rows + TILE_COLS) * stage_k / 4;
                let threads = self.threads() as usize;
                debug_assert!(
                    groups.is_multiple_of(threads) && groups / threads <= 16 && stage_k.is_multiple_of(K_STEP)
                );
                vec![("TILE_M", tile_rows as f64), ("STAGE_K", stage_k as f64)]
            }
        }
    }
}

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

/// Whether this device runs `kernel` (weights uploaded for it are then stored as f16 where exact).
pub(super) fn supported(gpu: &Gpu, kernel: TensorCoreKernel) -> bool {
    let info = gpu.adapter_info();
    let tiling = Tiling::of(kernel);
    let has_shape = gpu.cooperative_matrix_shapes().iter().any(|p| {
        (p.m_size, p.n_size, p.k_size) == (16, 16, 16)
            && p.ab_type == wgpu::CooperativeScalarType::F16
            && p.cr_type == wgpu::CooperativeScalarType::F32
    });
    has_shape
        && gpu.has(wgpu::Features::SHADER_F16)
        && info.subgroup_min_size == SUBGROUP as u32
        && info.subgroup_max_size == SUBGROUP as u32
        && gpu.limits().max_compute_workgroup_storage_size >= tiling.workgroup_bytes()
        && gpu.limits().max_compute_invocations_per_workgroup >= tiling.threads()
}

fn constants(kernel: TensorCoreKernel, epilogue: EpilogueKind) -> Vec<(&'static str, f64)> {
    let mut constants = epilogue.constants().to_vec();
    constants.extend(Tiling::of(kernel).constants());
    constants
}

fn spec<'a>(entry: &'static str, constants: &'a [(&'static str, f64)]) -> KernelSpec<'a> {
    KernelSpec { shader: &GEMM_COOP, entry, constants, bindings: BINDINGS }
}

/// Every pipeline this launcher can build.
pub(super) fn variants() -> Vec<KernelVariant> {
    let mut variants = vec![KernelVariant::from(&spec("split_rows", &[]))];
    for kernel in [TensorCoreKernel::Staged, TensorCoreKernel::Direct] {
        for epilogue in EpilogueKind::all() {
            variants.push(KernelVariant::from(&spec(Tiling::of(kernel).entry(), &constants(kernel, epilogue))));
        }
    }
    variants
}

/// Records the split of X and the product with the f16 image in `w` (`[m, k]`, rows padded to [`TILE_COLS`], values
/// scaled by `2^w_exponent`). Sizes were checked by [`super::gemm`].
#[allow(clippy::too_many_arguments)]
pub(super) fn record(
    rec: &mut Recorder<'_>,
    x: &GpuBuffer,
    (w, w_exponent, kernel): (&GpuBuffer, i32, TensorCoreKernel),
    y: &GpuBuffer,
    (n, m, k): (usize, usize, usize),
    epilogue: &Epilogue<'_>,
) -> Result<()> {
    let tiling = Tiling::of(kernel);
    // The split is padded to 64 rows whatever the kernel's tile: a tower's row cap is a multiple of 64, and a split
    // padded further could outgrow a storage binding that X fits. A 128-row tile past the split's rows reads other
    // rows (or clamped ones), which only feed output rows ≥ n: those are never written.
    let padded_n = n.next_multiple_of(SPLIT_ROWS);
    let params =
        Params { n: n as u32, m: m as u32, k: k as u32, padded_n: padded_n as u32, w_unscale: 2f32.powi(-w_exponent) };
    let gpu = rec.gpu();
    let split = gpu.scratch("gemm split activations", padded_n * k)?;
    let scales = gpu.scratch("gemm row scales", 2 * padded_n)?;
    let bias = epilogue.bias.unwrap_or(x);
    let buffers = [x, w, bias, y, &split, &scales];
    let split_rows = gpu.kernel(&spec("split_rows", &[]))?;
    let workgroups = grid(rec, padded_n);
    rec.dispatch(&split_rows, &buffers, &params, workgroups)?;
    let pipeline = rec.gpu().kernel(&spec(tiling.entry(), &constants(kernel, EpilogueKind::of(epilogue))))?;
    let workgroups = [m.div_ceil(TILE_COLS) as u32, padded_n.div_ceil(tiling.tile_rows()) as u32, 1];
    rec.dispatch(&pipeline, &buffers, &params, workgroups)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `supported` is only honest if each configuration's footprint is the shader's, with its override constants
    /// applied; and each fits the 48 KiB most devices give.
    #[test]
    fn workgroup_bytes_match_the_shader() {
        let module = naga::front::wgsl::parse_str(GEMM_COOP.source).expect("gemm_coop.wgsl parses");
        let mut validator =
            naga::valid::Validator::new(naga::valid::ValidationFlags::all(), naga::valid::Capabilities::all());
        let info = validator.validate(&module).expect("gemm_coop.wgsl validates");
        for kernel in [TensorCoreKernel::Staged, TensorCoreKernel::Direct] {
            let tiling = Tiling::of(kernel);
            let constants: naga::back::PipelineConstants =
                tiling.constants().into_iter().map(|(name, value)| (name.to_string(), value)).collect();
            let entry = (naga::ShaderStage::Compute, tiling.entry());
            let (module, info) =
                naga::back::pipeline_constants::process_overrides(&module, &info, Some(entry), &constants)
                    .expect("overrides");
            let index = module.entry_points.iter().position(|ep| ep.name == tiling.entry()).expect("entry point");
            let used = info.get_entry_point(index);
            let mut layouter = naga::proc::Layouter::default();
            layouter.update(module.to_ctx()).expect("layout");
            let bytes: u32 = module
                .global_variables
                .iter()
                .filter(|&(handle, var)| var.space == naga::AddressSpace::WorkGroup && !used[handle].is_empty())
                .map(|(_, var)| layouter[var.ty].size)
                .sum();
            assert_eq!(bytes, tiling.workgroup_bytes(), "{kernel:?}");
            assert!(bytes <= 48 << 10, "{kernel:?}: {bytes} bytes");
        }
    }
}
