//! Linear layers with 16-bit weights and a fused epilogue: `Y = act(X · Wᵀ + bias)`, or `Y += act(X · Wᵀ + bias)`,
//! f32-accurate on either of two kernels. Each [`Weight`] is bound to one at upload ([`MatmulOptions`]):
//! - `register_tiled` (`shaders/gemm.wgsl`): f32 arithmetic over the bf16 weight, any shape, any adapter.
//! - `tensor_core` (`shaders/gemm_coop.wgsl`): 16×16×16 f16→f32 cooperative matrices over the weight's exact f16
//!   image, with X split into f16 hi + lo halves (≈ 3e-7 relative error against f64, the same as the f32 kernel);
//!   or, with [`Precision::Fast`], X rounded to f16 and each product run once (f16's precision, twice the speed).

mod epilogue;
mod options;
mod register_tiled;
mod tensor_core;
mod weight;

use epilogue::EpilogueKind;
pub use epilogue::{Activation, Epilogue};
pub use options::{KSplit, MatmulOptions, MatmulPath, Precision, TensorCoreKernel, Tiles, UnknownValue};
pub use tensor_core::TILE_CANDIDATES;
pub use weight::{Weight, f16_exponent};

use gpu_core::{GpuBuffer, GpuError, KernelVariant, Recorder, Result};

use crate::launch::{bf16_words, require};
use crate::shapes::GemmShape;
use tensor_core::Output;
use weight::Storage;

/// Whether weights uploaded with `options` on `gpu` take the tensor-core kernel: the precision is not
/// [`Precision::F32`] and the device runs `options.tensor_core_kernel` with X split ([`Precision::Auto`]) or rounded
/// ([`Precision::Fast`]): f16 cooperative matrices, f16 shaders, a fixed subgroup size, enough workgroup memory. With
/// `Auto`, a weight with no exact f16 image still stays on the f32 path.
pub fn tensor_cores_available(gpu: &gpu_core::Gpu, options: MatmulOptions) -> bool {
    options.operands().is_some_and(|operands| tensor_core::supported(gpu, options.tensor_core_kernel, operands))
}

/// Every pipeline either kernel can build.
pub(crate) fn variants() -> Vec<KernelVariant> {
    [register_tiled::variants(), tensor_core::variants()].concat()
}

/// The pipelines [`gemm_scaled`] (and [`gemm`], without `scales_given`) records on `gpu` for products with `w` and
/// `epilogue`, given X's row scales or not: what a model compiles ahead of its first call.
pub fn gemm_kernels(
    gpu: &gpu_core::Gpu,
    w: &Weight,
    epilogue: &Epilogue<'_>,
    scales_given: bool,
) -> Vec<KernelVariant> {
    kernels(gpu, w, (EpilogueKind::of(epilogue), Output::Product), scales_given)
}

/// The pipelines [`gemm_partials_scaled`] (and [`gemm_partials`], without `scales_given`) records on `gpu` for
/// products with `w` of at most `rows` rows, whatever the slices: the equal slices' and, where some of those
/// products are cut by stream-k ([`KSplit`]), stream-k's.
pub fn gemm_partials_kernels(gpu: &gpu_core::Gpu, w: &Weight, scales_given: bool, rows: usize) -> Vec<KernelVariant> {
    let outputs = match w.storage() {
        Storage::F16Image { kernel, operands, k_split, .. } => {
            tensor_core::partial_outputs(gpu.profile(), (kernel, operands), (w.rows, w.cols), rows, k_split)
        }
        Storage::Bf16 => vec![Output::Slices],
    };
    let plain = EpilogueKind::of(&Epilogue::default());
    outputs.into_iter().flat_map(|output| kernels(gpu, w, (plain, output), scales_given)).collect()
}

fn kernels(
    gpu: &gpu_core::Gpu,
    w: &Weight,
    (epilogue, output): (EpilogueKind, Output),
    scales_given: bool,
) -> Vec<KernelVariant> {
    match w.storage() {
        // The f32 path's partial products are the whole product, plain (see `gemm_partials_scaled`).
        Storage::Bf16 => vec![register_tiled::kernel(w.cols, epilogue)],
        Storage::F16Image { kernel, operands, .. } => {
            tensor_core::kernels(gpu.profile(), (kernel, operands), (epilogue, output), scales_given)
        }
    }
}

/// `y[n×m] = act(x[n×k] · wᵀ + bias)`, or `y += …` with `epilogue.accumulate`, for `shape` `{ n, m, k }`. `x`, `y`
/// and the bias are f32 row-major; `w` is the `[m×k]` weight (PyTorch `[out, in]`). Accumulation is f32. `y` may not
/// alias `x`, `w` or the bias.
pub fn gemm(
    rec: &mut Recorder<'_>,
    x: &GpuBuffer,
    w: &Weight,
    y: &GpuBuffer,
    shape: GemmShape,
    epilogue: &Epilogue<'_>,
) -> Result<()> {
    record(rec, (x, None), w, y, shape, epilogue)
}

/// [`gemm`] of an X whose tensor-core row scales, where given, are already in `scales` (`[n]` pairs 2^r, 2^-r,
/// written with X by [`crate::layer_norm()`] or [`crate::residual_layer_norm`]): the product skips its own pass over
/// X's rows and gives the same bits. The f32 path does not read them.
pub fn gemm_scaled(
    rec: &mut Recorder<'_>,
    (x, scales): (&GpuBuffer, Option<&GpuBuffer>),
    w: &Weight,
    y: &GpuBuffer,
    shape: GemmShape,
    epilogue: &Epilogue<'_>,
) -> Result<()> {
    if let Some(scales) = scales {
        require(scales, 2 * shape.n, "gemm row scales")?;
    }
    record(rec, (x, scales), w, y, shape, epilogue)
}

fn record(
    rec: &mut Recorder<'_>,
    (x, scales): (&GpuBuffer, Option<&GpuBuffer>),
    w: &Weight,
    y: &GpuBuffer,
    shape: GemmShape,
    epilogue: &Epilogue<'_>,
) -> Result<()> {
    check(x, w, y, shape, 1)?;
    if let Some(bias) = epilogue.bias {
        require(bias, shape.m, "gemm bias")?;
    }
    if shape.n == 0 || shape.m == 0 {
        return Ok(());
    }
    match w.storage() {
        Storage::Bf16 => register_tiled::record(rec, x, &w.buffer, y, shape, epilogue),
        Storage::F16Image { exponent, kernel, operands, .. } => {
            let weight = tensor_core::F16Weight { buffer: &w.buffer, exponent, kernel, operands };
            tensor_core::record(rec, (x, scales), &weight, y, shape, epilogue)
        }
    }
}

/// The slices of k [`gemm_partials`] should split an `n`-row product with `w` into so that it fills the GPU (1 on
/// the f32 path, and where the product's tiles already fill it); for a weight cut by stream-k ([`KSplit::Stream`]),
/// the slices that cut writes, which [`gemm_partials`] then takes whatever it is asked.
pub fn auto_slices(gpu: &gpu_core::Gpu, w: &Weight, n: usize) -> usize {
    let shape = GemmShape { n, m: w.rows, k: w.cols };
    match w.storage() {
        Storage::Bf16 => 1,
        Storage::F16Image { kernel, operands, k_split, .. } => stream_slots(gpu, (kernel, operands, k_split), shape)
            .unwrap_or_else(|| tensor_core::auto_slices(gpu, (kernel, operands), shape)),
    }
}

/// The slices a weight's products write where they are cut by stream-k (none where they are cut in equal slices).
fn stream_slots(
    gpu: &gpu_core::Gpu,
    (kernel, operands, k_split): (TensorCoreKernel, tensor_core::Operands, KSplit),
    shape: GemmShape,
) -> Option<usize> {
    tensor_core::stream_cut(gpu.profile(), (kernel, operands), shape, k_split).map(|cut| cut.slots)
}

/// `x · wᵀ` split along k into at most `splits` slices whose raw products land in `partials[s·n·m..(s+1)·n·m]`,
/// for a consumer that adds them in order (deterministic, unlike atomics) together with whatever else it adds, so
/// that a narrow product still fills the GPU. Returns the number of slices written: `splits` on the tensor-core
/// path, 1 (the whole product) on the f32 path, and for a stream-k weight the slices of its cut ([`auto_slices`]
/// says how many beforehand).
pub fn gemm_partials(
    rec: &mut Recorder<'_>,
    x: &GpuBuffer,
    w: &Weight,
    partials: &GpuBuffer,
    shape: GemmShape,
    splits: usize,
) -> Result<usize> {
    gemm_partials_scaled(rec, (x, None), w, partials, shape, splits)
}

/// [`gemm_partials`] of an X whose row scales, where given, are already in `scales` (as [`gemm_scaled`]).
pub fn gemm_partials_scaled(
    rec: &mut Recorder<'_>,
    (x, scales): (&GpuBuffer, Option<&GpuBuffer>),
    w: &Weight,
    partials: &GpuBuffer,
    shape: GemmShape,
    splits: usize,
) -> Result<usize> {
    let stream = match w.storage() {
        Storage::F16Image { kernel, operands, k_split, .. } => {
            tensor_core::stream_cut(rec.gpu().profile(), (kernel, operands), shape, k_split)
        }
        Storage::Bf16 => None,
    };

    let splits = match (w.storage(), stream) {
        (Storage::Bf16, _) => 1,
        (_, Some(cut)) => cut.slots,
        (Storage::F16Image { .. }, None) => splits.max(1),
    };
    check(x, w, partials, shape, splits)?;
    if let Some(scales) = scales {
        require(scales, 2 * shape.n, "gemm row scales")?;
    }
    if shape.n == 0 || shape.m == 0 {
        return Ok(splits);
    }
    match w.storage() {
        Storage::Bf16 => register_tiled::record(rec, x, &w.buffer, partials, shape, &Epilogue::default())?,
        Storage::F16Image { exponent, kernel, operands, .. } => {
            let weight = tensor_core::F16Weight { buffer: &w.buffer, exponent, kernel, operands };
            match stream {
                Some(cut) => tensor_core::record_stream(rec, (x, scales), &weight, partials, shape, cut)?,
                None => tensor_core::record_partials(rec, (x, scales), &weight, partials, shape, splits)?,
            }
        }
    }
    Ok(splits)
}

/// The slices (at most `max`, best kept at 2: measured, see `tensor_core::wave_slices`) an `n`-row product with `w`
/// runs fastest in by whole waves of workgroups, for a consumer that can add them (1 on the f32 path): where the
/// tiles fill most of a wave and then a sliver of the next, slices of less k each fill the waves better.
pub fn wave_slices(gpu: &gpu_core::Gpu, w: &Weight, n: usize, max: usize) -> usize {
    let shape = GemmShape { n, m: w.rows, k: w.cols };
    match w.storage() {
        Storage::Bf16 => 1,
        Storage::F16Image { kernel, operands, k_split, .. } => stream_slots(gpu, (kernel, operands, k_split), shape)
            .unwrap_or_else(|| tensor_core::wave_slices(gpu, (kernel, operands), shape, max)),
    }
}

/// Checks the weight's shape and every buffer's size against the product (`slices` outputs of `n × m`).
fn check(x: &GpuBuffer, w: &Weight, y: &GpuBuffer, shape: GemmShape, slices: usize) -> Result<()> {
    let GemmShape { n, m, k } = shape;
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
    require(y, slices * n * m, "gemm output")
}
