//! The f32 GEMM (`shaders/gemm.wgsl`): register-tiled, bf16 weights widened on their way into workgroup memory, f32
//! accumulation; any shape.

use gpu_core::{Access, GpuBuffer, GpuError, KernelSpec, KernelVariant, ParamsLayout, Recorder, Result, params_layout};

use super::epilogue::{Epilogue, EpilogueKind};
use crate::shaders::GEMM;
use crate::shapes::GemmShape;

/// Output tile of one workgroup (rows of Y, columns of Y); must match `BM`, `BN` in the shader.
const TILE_ROWS: usize = 128;
const TILE_COLS: usize = 64;
/// Workgroup memory the shader declares (double-buffered, padded X and W staging); must match `xs` + `ws`.
const WORKGROUP_BYTES: u64 = 2 * 16 * (128 / 4 + 1) * 16 + 2 * 16 * (64 / 4 + 1) * 16;
const THREADS: u32 = 256;

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct Params {
    n: u32,
    m: u32,
    k: u32,
}

const PARAMS: &ParamsLayout = &params_layout!(Params { n, m, k });

const BINDINGS: &[Access] = &[Access::Read, Access::Read, Access::Read, Access::ReadWrite];

/// `EVEN_K` (every row of W starts on a word boundary) and the epilogue's constants.
fn constants(even_k: bool, epilogue: EpilogueKind) -> Vec<(&'static str, f64)> {
    let mut constants = vec![("EVEN_K", if even_k { 1.0 } else { 0.0 })];
    constants.extend(epilogue.constants());
    constants
}

fn spec<'a>(constants: &'a [(&'static str, f64)]) -> KernelSpec<'a> {
    KernelSpec { shader: &GEMM, entry: "gemm", constants, bindings: BINDINGS, params: PARAMS }
}

/// Every pipeline this launcher can build.
pub(super) fn variants() -> Vec<KernelVariant> {
    let mut variants = Vec::new();
    for even_k in [true, false] {
        for epilogue in EpilogueKind::all() {
            variants.push(KernelVariant::from(&spec(&constants(even_k, epilogue))));
        }
    }
    variants
}

/// The pipeline [`record`] takes for a product of depth `k` with `epilogue`.
pub(super) fn kernel(k: usize, epilogue: EpilogueKind) -> KernelVariant {
    KernelVariant::from(&spec(&constants(k.is_multiple_of(2), epilogue)))
}

/// Records the product over the bf16 weight in `w` (`[m, k]`, packed two per word). Sizes were checked by
/// [`super::gemm`].
pub(super) fn record(
    rec: &mut Recorder<'_>,
    x: &GpuBuffer,
    w: &GpuBuffer,
    y: &GpuBuffer,
    GemmShape { n, m, k }: GemmShape,
    epilogue: &Epilogue<'_>,
) -> Result<()> {
    check_workgroup_limits(rec)?;
    let params = Params { n: dimension(n, "n")?, m: dimension(m, "m")?, k: dimension(k, "k")? };
    let kernel = rec.gpu().kernel(&kernel(k, EpilogueKind::of(epilogue)).spec())?;
    // Without a bias the shader never reads binding 2, but a buffer must be bound there.
    let bias = epilogue.bias.unwrap_or(x);
    let workgroups = [m.div_ceil(TILE_COLS) as u32, n.div_ceil(TILE_ROWS) as u32, 1];
    rec.dispatch(&kernel, &[x, w, bias, y], &params, workgroups)
}

fn check_workgroup_limits(rec: &Recorder<'_>) -> Result<()> {
    let limits = rec.gpu().limits();
    let checks = [
        ("max_compute_workgroup_storage_size", WORKGROUP_BYTES, limits.max_compute_workgroup_storage_size),
        ("max_compute_invocations_per_workgroup", THREADS as u64, limits.max_compute_invocations_per_workgroup),
        ("max_compute_workgroup_size_x", THREADS as u64, limits.max_compute_workgroup_size_x),
    ];
    for (limit, requested, max) in checks {
        if requested > max as u64 {
            return Err(GpuError::LimitExceeded { what: "gemm workgroup".into(), limit, requested, max: max as u64 });
        }
    }
    Ok(())
}

/// Shapes are passed to the shader as u32.
fn dimension(value: usize, name: &str) -> Result<u32> {
    u32::try_from(value).map_err(|_| GpuError::LimitExceeded {
        what: format!("gemm dimension {name}"),
        limit: "u32::MAX",
        requested: value as u64,
        max: u32::MAX as u64,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The launcher's limit check is only honest if it uses the shader's real footprint.
    #[test]
    fn workgroup_bytes_match_the_shader() {
        let module = naga::front::wgsl::parse_str(GEMM.source).expect("gemm.wgsl parses");
        let mut layouter = naga::proc::Layouter::default();
        layouter.update(module.to_ctx()).expect("layout");
        let bytes: u64 = module
            .global_variables
            .iter()
            .filter(|(_, var)| var.space == naga::AddressSpace::WorkGroup)
            .map(|(_, var)| layouter[var.ty].size as u64)
            .sum();
        assert_eq!(bytes, WORKGROUP_BYTES);
    }
}
