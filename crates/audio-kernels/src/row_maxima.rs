//! Row maxima: the largest magnitude of each row of a matrix, handed from the kernel that writes the matrix to the
//! tensor-core product that reads it. That product scales each row of its input by a power of two chosen from the
//! row's largest magnitude (`shaders/gemm_coop.wgsl`, "Row maxima"); given the maxima it needs no pass of its own over
//! the rows, and its bits are the same.

use gpu_core::{GpuBuffer, GpuError, Result};

use crate::launch::require;

/// Where a matrix's row maxima are: `parts` partial maxima per row, part-major (`[parts][rows]` f32), the largest of
/// a row's parts being the row's largest magnitude. Written by [`crate::layer_norm()`] and
/// [`crate::residual_layer_norm`] (one part, [`RowMaxima::whole`]), by [`crate::gemm_scaled`] (one part per column
/// tile of a tensor-core product) and by [`crate::rotary_attention`] (one part per head, on tensor cores); read by
/// [`crate::gemm_scaled`] and [`crate::gemm::gemm_partials_scaled`].
#[derive(Clone, Copy, Debug)]
pub struct RowMaxima<'a> {
    /// `[parts][rows]` f32.
    pub buffer: &'a GpuBuffer,
    /// Partial maxima per row (at least 1).
    pub parts: usize,
}

impl<'a> RowMaxima<'a> {
    /// One maximum per row, as a LayerNorm writes them.
    pub fn whole(buffer: &'a GpuBuffer) -> Self {
        Self { buffer, parts: 1 }
    }

    /// Fails unless the parts are at least one and the buffer holds them for `rows` rows.
    pub(crate) fn check(&self, rows: usize, what: &str) -> Result<()> {
        if self.parts == 0 {
            return Err(GpuError::Validation(format!(
                "{what}: row maxima in 0 parts (buffer `{}`)",
                self.buffer.label()
            )));
        }
        require(self.buffer, self.parts * rows, what)
    }
}
