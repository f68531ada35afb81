//! Weight matrices on the GPU, 16 bits per value: bf16 as in the checkpoint, or — where the tensor-core GEMM runs —
//! the exact f16 image `w·2^s` of those bf16 values when one exists (same size, same numbers; the tensor cores take
//! f16, not bf16). Which of the two a weight holds is decided once, at upload, from [`MatmulOptions`].

use gpu_core::{Gpu, GpuBuffer, Result};

use super::options::{KSplit, MatmulOptions, MatmulPath, TensorCoreKernel};
use super::tensor_core::{self, Operands};

/// A `[rows, cols]` weight matrix (PyTorch `[out, in]`) on the GPU.
#[derive(Clone, Debug)]
pub struct Weight {
    /// bf16 packed two per word (flat row-major), or on the tensor-core path the f16 image, two per word, rows
    /// padded with zeros to a multiple of the tensor-core tile.
    pub buffer: GpuBuffer,
    /// Output features.
    pub rows: usize,
    /// Input features.
    pub cols: usize,
    storage: Storage,
}

#[derive(Clone, Copy, Debug)]
pub(super) enum Storage {
    Bf16,
    /// The f16 image under the scale 2^exponent, for `kernel` taking X as `operands`, split products cut as
    /// `k_split` says.
    F16Image {
        exponent: i32,
        kernel: TensorCoreKernel,
        operands: Operands,
        k_split: KSplit,
    },
}

impl Weight {
    /// Uploads bf16 bit patterns. With [`Precision::Auto`](super::Precision::Auto), where the adapter runs the
    /// tensor-core kernel `options` names and `cols` is a multiple of its k step, a matrix whose values all have an
    /// exact f16 form under one power-of-two scale (see [`f16_exponent`]) is stored in that form; otherwise it stays
    /// bf16 on the f32 path, with a logged note saying how many values were inexact. With
    /// [`Precision::Fast`](super::Precision::Fast), on the same condition of device and shape, the f16 image is stored
    /// whether exact or rounded (the note says how many values were).
    pub fn upload(
        gpu: &Gpu,
        label: &str,
        bits: &[u16],
        rows: usize,
        cols: usize,
        options: &MatmulOptions,
    ) -> Result<Self> {
        let kernel = options.tensor_core_kernel;
        if let Some(operands) = options.operands()
            && tensor_core::supported(gpu, kernel, operands)
            && cols.is_multiple_of(tensor_core::K_STEP)
        {
            let (exponent, inexact) = f16_exponent(bits);
            let exponent = match (exponent, operands) {
                (Some(exponent), _) => Some(exponent),
                (None, Operands::Rounded) => {
                    log::info!("`{label}`: {inexact} of {} values are rounded to f16", bits.len());
                    Some(largest_exponent(bits))
                }
                (None, Operands::Split) => {
                    log::info!(
                        "`{label}`: {inexact} of {} values have no exact f16 form; it stays bf16 on the f32 path",
                        bits.len()
                    );
                    None
                }
            };
            if let Some(exponent) = exponent {
                let padded = rows.next_multiple_of(tensor_core::TILE_COLS) * cols;
                let buffer = gpu.upload_bf16(label, &f16_image(bits, exponent, padded))?;
                return Ok(Self {
                    buffer,
                    rows,
                    cols,
                    storage: Storage::F16Image { exponent, kernel, operands, k_split: options.k_split },
                });
            }
        }
        Ok(Self { buffer: gpu.upload_bf16(label, bits)?, rows, cols, storage: Storage::Bf16 })
    }

    /// A weight over an already uploaded bf16 buffer, kept on the f32 path.
    pub fn from_buffer(buffer: GpuBuffer, rows: usize, cols: usize) -> Self {
        Self { buffer, rows, cols, storage: Storage::Bf16 }
    }

    /// The kernel this weight's products run on.
    pub fn path(&self) -> MatmulPath {
        match self.storage {
            Storage::Bf16 => MatmulPath::F32,
            Storage::F16Image { kernel, operands: Operands::Split, .. } => MatmulPath::TensorCores(kernel),
            Storage::F16Image { kernel, operands: Operands::Rounded, .. } => MatmulPath::FastTensorCores(kernel),
        }
    }

    pub(super) fn storage(&self) -> Storage {
        self.storage
    }
}

/// The exponent `s` that puts the largest magnitude of `bits` in [2^14, 2^15) (0 for an all-zero
/// matrix) when every value · 2^s is then exactly an f16, and the number of values that are not.
pub fn f16_exponent(bits: &[u16]) -> (Option<i32>, usize) {
    let widen = |b: u16| half::bf16::from_bits(b).to_f32();
    if bits.iter().any(|&b| !widen(b).is_finite()) {
        return (None, bits.iter().filter(|&&b| !widen(b).is_finite()).count());
    }
    let exponent = largest_exponent(bits);
    let scale = 2f32.powi(exponent);
    let inexact = count_parallel(bits, |&b| {
        let v = widen(b) * scale;
        half::f16::from_f32(v).to_f32() != v
    });
    ((inexact == 0).then_some(exponent), inexact)
}

/// The exponent `s` that puts the largest finite magnitude of `bits` in [2^14, 2^15) (0 for an all-zero matrix):
/// the largest value then keeps f16's full precision and none overflows.
fn largest_exponent(bits: &[u16]) -> i32 {
    let largest =
        bits.iter().map(|&b| half::bf16::from_bits(b).to_f32().abs()).filter(|v| v.is_finite()).fold(0.0f32, f32::max);
    if largest == 0.0 { 0 } else { 14 - largest.log2().floor() as i32 }
}

/// f16 bit patterns of `bits`·2^`exponent` (exact where [`f16_exponent`] says so, rounded to nearest otherwise),
/// zero-padded to `len`.
fn f16_image(bits: &[u16], exponent: i32, len: usize) -> Vec<u16> {
    let scale = 2f32.powi(exponent);
    let mut image: Vec<u16> =
        bits.iter().map(|&b| half::f16::from_f32(half::bf16::from_bits(b).to_f32() * scale).to_bits()).collect();
    image.resize(len.max(bits.len()), 0);
    image
}

/// Counts matches of `pred` over `items`, on all cores for big matrices.
fn count_parallel(items: &[u16], pred: impl Fn(&u16) -> bool + Sync) -> usize {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let chunk = items.len().div_ceil(threads).max(1 << 16);
    std::thread::scope(|s| {
        let handles: Vec<_> =
            items.chunks(chunk).map(|part| s.spawn(|| part.iter().filter(|b| pred(b)).count())).collect();
        handles.into_iter().map(|h| h.join().unwrap_or(usize::MAX)).sum()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bf16(v: f32) -> u16 {
        half::bf16::from_f32(v).to_bits()
    }

    #[test]
    fn typical_weights_convert_exactly() {
        let bits: Vec<u16> = [0.02f32, -0.75, 1.5e-6, 0.0, -3.0e-3].iter().map(|&v| bf16(v)).collect();
        let (exponent, inexact) = f16_exponent(&bits);
        assert_eq!((exponent, inexact), (Some(15), 0), "0.75·2^15 lands in [2^14, 2^15)");
    }

    #[test]
    fn a_range_too_wide_for_f16_is_refused_and_counted() {
        // 2^-40 next to 1: after scaling 1 to 2^14, 2^-26 is below f16's smallest subnormal.
        let bits: Vec<u16> = [1.0f32, 2f32.powi(-40), 2f32.powi(-41), 0.5].iter().map(|&v| bf16(v)).collect();
        assert_eq!(f16_exponent(&bits), (None, 2));
        assert_eq!(f16_exponent(&[bf16(f32::INFINITY), bf16(1.0)]), (None, 1));
        assert_eq!(f16_exponent(&[0, 0]), (Some(0), 0));
    }
}
