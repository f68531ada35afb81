//! Linear layers with 16-bit weights and a fused epilogue: `Y = act(X · Wᵀ + bias)`, or `Y += act(X · Wᵀ + bias)`,
//! f32-accurate on either of two kernels. Each [`Weight`] is bound to one at upload ([`MatmulOptions`]):
//! - `register_tiled` (`shaders/gemm.wgsl`): f32 arithmetic over the bf16 weight, any shape, any adapter.
//! - `tensor_core` (`shaders/gemm_coop.wgsl`): 16×16×16 f16→f32 cooperative matrices over the weight's exact f16
//!   image, with X split into f16 hi + lo halves (≈ 3e-7 relative error against f64, the same as the f32 kernel).

mod epilogue;
mod options;
mod register_tiled;
mod tensor_core;
mod weight;

pub use epilogue::{Activation, Epilogue};
pub use options::{MatmulOptions, MatmulPath, Precision, TensorCoreKernel, UnknownSetting};
pub use weight::{Weight, f16_exponent};

use gpu_core::{GpuBuffer, GpuError, KernelVariant, Recorder, Result};

use crate::launch::{bf16_words, require};
use weight::Storage;

/// Whether `gpu` runs the tensor-core `kernel` (f16 16×16×16 cooperative matrices, f16 shaders, 32-lane subgroups,
/// enough workgroup memory). Weights uploaded with [`Precision::Auto`] then take that path where exact.
pub fn tensor_cores_available(gpu: &gpu_core::Gpu, kernel: TensorCoreKernel) -> bool {
    tensor_core::supported(gpu, kernel)
}

/// Every pipeline either kernel can build.
pub(crate) fn variants() -> Vec<KernelVariant> {
    [register_tiled::variants(), tensor_core::variants()].concat()
}

/// `y[n×m] = act(x[n×k] · wᵀ + bias)`, or `y += …` with `epilogue.accumulate`. `x`, `y` and the bias are f32
/// row-major; `w` is the `[m×k]` weight (PyTorch `[out, in]`). Accumulation is f32. `y` may not alias `x`, `w` or
/// the bias.
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
    match w.storage() {
        Storage::Bf16 => register_tiled::record(rec, x, &w.buffer, y, (n, m, k), epilogue),
        Storage::F16Image { exponent, kernel } => {
            tensor_core::record(rec, x, (&w.buffer, exponent, kernel), y, (n, m, k), epilogue)
        }
    }
}
