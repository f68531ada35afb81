//! The tensor-core GEMM launcher (`shaders/gemm_coop.wgsl`): f32-accurate products on 16×16×16
//! f16→f32 cooperative matrices, with the weight stored as its exact f16 image (see
//! [`crate::Weight`]) and each row of X scaled and split into two f16 halves. [`crate::gemm`]
//! takes this path for every weight stored that way. Two kernels compute the product (see `Kernel`):
//! `gemm_coop_staged`, which stages the operands through workgroup memory (the default), and `gemm_coop`, which
//! loads them straight from memory (`NEMOTRON_COOP_KERNEL=direct`: slower, kept for drivers that reject the staged
//! pipeline).

use gpu_core::{Access, Gpu, GpuBuffer, KernelSpec, Recorder, Result, wgpu};

use crate::gemm::{Activation, Epilogue};
use crate::launch::grid;
use crate::shaders::{GEMM_COOP, Variant};
use crate::weight::Weight;

/// Columns of Y per workgroup (every kernel below); stored f16 weights have their rows padded to it.
pub(crate) const TILE_COLS: usize = 128;
/// k must be a multiple of this (one cooperative-matrix step).
pub(crate) const K_STEP: usize = 16;
/// Rows the split X is padded to (zeros past n).
const SPLIT_ROWS: usize = 64;
/// Lanes per subgroup the kernels are written for (`supported` requires exactly this).
const SUBGROUP: usize = 32;

/// Which kernel computes the product: `gemm_coop_staged` with 128-row tiles and 16-deep stages unless
/// `NEMOTRON_COOP_KERNEL=direct` asks for `gemm_coop`. Read once per process. (On the H200 the staged kernel takes an
/// ASR chunk from 54 to 44 ms; 64-row tiles with 32-deep stages were slower than either, 57 ms.)
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kernel {
    /// `gemm_coop`: operands loaded straight from memory, 64×128 tiles.
    Direct,
    /// `gemm_coop_staged`: operands staged through workgroup memory, `tile_rows`×128 tiles, stages `stage_k` deep.
    Staged { tile_rows: usize, stage_k: usize },
}

impl Kernel {
    const STAGED: Kernel = Kernel::Staged { tile_rows: 128, stage_k: 16 };
    const ALL: [Kernel; 2] = [Kernel::STAGED, Kernel::Direct];

    fn selected() -> Self {
        static SELECTED: std::sync::OnceLock<Kernel> = std::sync::OnceLock::new();
        *SELECTED.get_or_init(|| match std::env::var("NEMOTRON_COOP_KERNEL").as_deref() {
            Err(_) | Ok("" | "staged") => Kernel::STAGED,
            Ok("direct") => Kernel::Direct,
            Ok(other) => {
                log::warn!("NEMOTRON_COOP_KERNEL={other:?} is not `staged` or `direct`; using `staged`");
                Kernel::STAGED
            }
        })
    }

    fn entry(self) -> &'static str {
        match self {
            Kernel::Direct => "gemm_coop",
            Kernel::Staged { .. } => "gemm_coop_staged",
        }
    }

    /// Rows of Y per workgroup; the split X is padded to a multiple of it.
    fn tile_rows(self) -> usize {
        match self {
            Kernel::Direct => 64,
            Kernel::Staged { tile_rows, .. } => tile_rows,
        }
    }

    /// Invocations per workgroup: one subgroup per 16 rows of the tile.
    fn threads(self) -> u32 {
        (self.tile_rows() / 16 * SUBGROUP) as u32
    }

    /// Workgroup memory: one 16×16 f32 epilogue tile per subgroup, and for the staged kernel two stage buffers of
    /// (2·tile_rows + 128) rows of `stage_k` + 8 f16 (`tiles` in the shader, an array of scalar f16): 45056 bytes
    /// for the staged kernel (36864 + 8192), 4096 for `Direct`.
    fn workgroup_bytes(self) -> u32 {
        let epilogue = self.tile_rows() / 16 * 256 * 4;
        let stages = match self {
            Kernel::Direct => 0,
            Kernel::Staged { tile_rows, stage_k } => 2 * (2 * tile_rows + TILE_COLS) * (stage_k + 8) * 2,
        };
        (epilogue + stages) as u32
    }

    /// Override constants beyond the epilogue's.
    fn constants(self) -> Vec<(&'static str, f64)> {
        match self {
            Kernel::Direct => Vec::new(),
            Kernel::Staged { tile_rows, stage_k } => {
                // The shader's `tiles` copy: each invocation stages a whole number of 4-f16 groups per stage, at
                // most MAX_STAGE_LOADS (16) of them. (`TILES_LEN`, the length of `tiles`, follows from these two.)
                let elements = (2 * tile_rows + TILE_COLS) * stage_k / 4;
                let threads = self.threads() as usize;
                assert!(elements.is_multiple_of(threads) && elements / threads <= 16 && stage_k.is_multiple_of(K_STEP));
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
        && info.subgroup_min_size == SUBGROUP as u32
        && info.subgroup_max_size == SUBGROUP as u32
        && gpu.limits().max_compute_workgroup_storage_size >= Kernel::selected().workgroup_bytes()
        && gpu.limits().max_compute_invocations_per_workgroup >= Kernel::selected().threads()
}

/// The kernel `NEMOTRON_COOP_KERNEL` selected, as its entry point and override constants (for test and bench labels).
pub fn selected_kernel() -> String {
    let kernel = Kernel::selected();
    let constants: Vec<String> = kernel.constants().iter().map(|(name, value)| format!("{name}={value}")).collect();
    format!("{}[{}]", kernel.entry(), constants.join(","))
}

/// Whether `gemm` takes the tensor-core path for `w`.
pub fn usable(w: &Weight) -> bool {
    w.f16_exponent().is_some()
}

fn constants(kernel: Kernel, epilogue: (bool, Activation, bool)) -> Vec<(&'static str, f64)> {
    let flag = |on: bool| if on { 1.0 } else { 0.0 };
    let (has_bias, activation, accumulate) = epilogue;
    let mut constants =
        vec![("HAS_BIAS", flag(has_bias)), ("ACTIVATION", activation.code()), ("ACCUMULATE", flag(accumulate))];
    constants.extend(kernel.constants());
    constants
}

fn spec<'a>(entry: &'static str, constants: &'a [(&'static str, f64)]) -> KernelSpec<'a> {
    KernelSpec { shader: &GEMM_COOP, entry, constants, bindings: BINDINGS }
}

/// Every pipeline this launcher can build, for shader validation.
pub fn variants() -> Vec<Variant> {
    let mut variants = vec![Variant::of(&spec("split_rows", &[]))];
    for kernel in Kernel::ALL {
        for has_bias in [false, true] {
            for activation in Activation::ALL {
                for accumulate in [false, true] {
                    let constants = constants(kernel, (has_bias, activation, accumulate));
                    variants.push(Variant::of(&spec(kernel.entry(), &constants)));
                }
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
    let kernel = Kernel::selected();
    // The split is padded to 64 rows whatever the kernel's tile: a tower's row cap is a multiple of 64, and a split
    // padded further could outgrow a storage binding that X fits. A 128-row tile past the split's rows reads other
    // rows (or clamped ones), which only feed output rows ≥ n: those are never written.
    let padded_n = n.next_multiple_of(SPLIT_ROWS);
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
    let constants = constants(kernel, (epilogue.bias.is_some(), epilogue.activation, epilogue.accumulate));
    let pipeline = rec.gpu().kernel(&spec(kernel.entry(), &constants))?;
    let workgroups = [m.div_ceil(TILE_COLS) as u32, padded_n.div_ceil(kernel.tile_rows()) as u32, 1];
    rec.dispatch(&pipeline, &buffers, &params, workgroups)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `supported` is only honest if each kernel's footprint is the shader's, with its override constants applied
    /// and counting the workgroup variables its entry point uses; and each fits the 48 KiB most devices give.
    #[test]
    fn workgroup_bytes_match_the_shader() {
        let module = naga::front::wgsl::parse_str(GEMM_COOP.source).expect("gemm_coop.wgsl parses");
        let mut validator =
            naga::valid::Validator::new(naga::valid::ValidationFlags::all(), naga::valid::Capabilities::all());
        let info = validator.validate(&module).expect("gemm_coop.wgsl validates");
        for kernel in Kernel::ALL {
            let constants: naga::back::PipelineConstants =
                kernel.constants().into_iter().map(|(name, value)| (name.to_string(), value)).collect();
            let entry = (naga::ShaderStage::Compute, kernel.entry());
            let (module, info) =
                naga::back::pipeline_constants::process_overrides(&module, &info, Some(entry), &constants)
                    .expect("overrides");
            let index = module.entry_points.iter().position(|ep| ep.name == kernel.entry()).expect("entry point");
            let used = info.get_entry_point(index);
            let mut layouter = naga::proc::Layouter::default();
            layouter.update(module.to_ctx()).expect("layout");
            let bytes: u32 = module
                .global_variables
                .iter()
                .filter(|&(handle, var)| var.space == naga::AddressSpace::WorkGroup && !used[handle].is_empty())
                .map(|(_, var)| layouter[var.ty].size)
                .sum();
            assert_eq!(bytes, kernel.workgroup_bytes(), "{kernel:?}");
            assert!(bytes <= 48 << 10, "{kernel:?}: {bytes} bytes");
        }
    }
}
