//! Linear layer with bf16 weights and a fused epilogue (`shaders/gemm.wgsl`):
//! `Y = act(X · Wᵀ + bias)`, or `Y += act(X · Wᵀ + bias)`. On adapters with f16 cooperative
//! matrices, eligible products go to the tensor-core path ([`crate::gemm_coop`]) instead.

use gpu_core::{Access, GpuBuffer, GpuError, KernelSpec, Recorder, Result};

use crate::gemm_coop;
use crate::weight::Weight;

use crate::launch::{bf16_words, require};
use crate::shaders::{GEMM, Variant};

/// Output tile of one workgroup (rows of Y, columns of Y); must match `BM`, `BN` in the shader.
const TILE_ROWS: usize = 128;
const TILE_COLS: usize = 64;
/// Workgroup memory the shader declares (double-buffered, padded X and W staging); must match `xs` + `ws`.
const WORKGROUP_BYTES: u64 = 2 * 16 * (128 / 4 + 1) * 16 + 2 * 16 * (64 / 4 + 1) * 16;
const THREADS: u32 = 256;

/// The nonlinearity applied after the bias.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Activation {
    None,
    /// Exact erf form `0.5·x·(1 + erf(x/√2))`.
    Gelu,
    Relu,
}

impl Activation {
    pub(crate) const ALL: [Activation; 3] = [Activation::None, Activation::Gelu, Activation::Relu];

    /// The shaders' `ACTIVATION` code.
    pub(crate) fn code(self) -> f64 {
        match self {
            Activation::None => 0.0,
            Activation::Gelu => 1.0,
            Activation::Relu => 2.0,
        }
    }
}

/// What happens to `X · Wᵀ` before it lands in `Y`: `+ bias` (f32, `m` values), the activation, and whether the
/// result overwrites `Y` or is added to it (a residual connection).
#[derive(Clone, Copy, Debug)]
pub struct Epilogue<'a> {
    pub bias: Option<&'a GpuBuffer>,
    pub activation: Activation,
    pub accumulate: bool,
}

impl Default for Epilogue<'_> {
    /// No bias, no activation, overwrite.
    fn default() -> Self {
        Self { bias: None, activation: Activation::None, accumulate: false }
    }
}

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct Params {
    n: u32,
    m: u32,
    k: u32,
}

const BINDINGS: &[Access] = &[Access::Read, Access::Read, Access::Read, Access::ReadWrite];

/// The pipeline's specialisation: one override constant per choice.
#[derive(Clone, Copy)]
struct Specialisation {
    even_k: bool,
    has_bias: bool,
    activation: Activation,
    accumulate: bool,
}

impl Specialisation {
    fn constants(self) -> [(&'static str, f64); 4] {
        let flag = |on: bool| if on { 1.0 } else { 0.0 };
        [
            ("EVEN_K", flag(self.even_k)),
            ("HAS_BIAS", flag(self.has_bias)),
            ("ACTIVATION", self.activation.code()),
            ("ACCUMULATE", flag(self.accumulate)),
        ]
    }
}

fn spec<'a>(constants: &'a [(&'static str, f64)]) -> KernelSpec<'a> {
    KernelSpec { shader: &GEMM, entry: "gemm", constants, bindings: BINDINGS }
}

/// Every pipeline this launcher can build, for shader validation.
pub fn variants() -> Vec<Variant> {
    let mut variants = Vec::new();
    for even_k in [true, false] {
        for has_bias in [false, true] {
            for activation in Activation::ALL {
                for accumulate in [false, true] {
                    let constants = Specialisation { even_k, has_bias, activation, accumulate }.constants();
                    variants.push(Variant::of(&spec(&constants)));
                }
            }
        }
    }
    variants
}

/// `y[n×m] = act(x[n×k] · wᵀ + bias)`, or `y += …` with `epilogue.accumulate`. `x`, `y` and the bias are f32
/// row-major; `w` is the `[m×k]` weight (PyTorch `[out, in]`) in bf16, packed two per word in flat row-major order.
/// Accumulation is f32. `y` may not alias `x`, `w` or the bias.
#[allow(clippy::too_many_arguments)]
pub fn gemm(
    rec: &mut Recorder<'_>,
    x: &GpuBuffer,
    w: &Weight,
    y: &GpuBuffer,
    n: usize,
    m: usize,
    k: usize,
    epilogue: &Epilogue<'_>,
) -> Result<()> {
    if (w.rows, w.cols) != (m, k) {
        return Err(GpuError::SizeMismatch {
            what: format!(
                "gemm weight `{}` is [{}, {}], the product needs [{m}, {k}]",
                w.buffer.label(),
                w.rows,
                w.cols
            ),
            expected: (m * k) as u64,
            got: (w.rows * w.cols) as u64,
        });
    }
    require(x, n * k, "gemm input")?;
    require(&w.buffer, bf16_words(m * k), "gemm weight")?;
    require(y, n * m, "gemm output")?;
    if let Some(bias) = epilogue.bias {
        require(bias, m, "gemm bias")?;
    }
    if n == 0 || m == 0 {
        return Ok(());
    }
    if gemm_coop::usable(w) {
        return gemm_coop::gemm_coop(rec, x, w, y, n, epilogue);
    }
    check_workgroup_limits(rec)?;
    let params = Params { n: dimension(n, "n")?, m: dimension(m, "m")?, k: dimension(k, "k")? };
    let specialisation = Specialisation {
        even_k: k.is_multiple_of(2),
        has_bias: epilogue.bias.is_some(),
        activation: epilogue.activation,
        accumulate: epilogue.accumulate,
    };
    let kernel = rec.gpu().kernel(&spec(&specialisation.constants()))?;
    // Without a bias the shader never reads binding 2, but a buffer must be bound there.
    let bias = epilogue.bias.unwrap_or(x);
    let workgroups = [m.div_ceil(TILE_COLS) as u32, n.div_ceil(TILE_ROWS) as u32, 1];
    rec.dispatch(&kernel, &[x, &w.buffer, bias, y], &params, workgroups)
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
