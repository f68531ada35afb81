//! Small helpers shared by the launchers: size checks and workgroup grids.

use gpu_core::{GpuBuffer, GpuError, Recorder, Result};

/// Fails unless `buffer` holds at least `words` 4-byte words.
pub(crate) fn require(buffer: &GpuBuffer, words: usize, what: &str) -> Result<()> {
    if buffer.len_words() < words {
        return Err(GpuError::SizeMismatch {
            what: format!("{what} (buffer `{}`)", buffer.label()),
            expected: words as u64,
            got: buffer.len_words() as u64,
        });
    }
    Ok(())
}

/// Words a bf16 matrix of `elements` values occupies when packed two per word.
pub(crate) fn bf16_words(elements: usize) -> usize {
    elements.div_ceil(2)
}

/// Spreads `groups` workgroups over x and y so neither exceeds the per-dimension limit; shaders
/// recover the linear index as `wid.y * num_workgroups.x + wid.x` and skip indices past the end.
pub(crate) fn grid(rec: &Recorder<'_>, groups: usize) -> [u32; 3] {
    let max = rec.gpu().limits().max_compute_workgroups_per_dimension as usize;
    let x = groups.clamp(1, max);
    [x as u32, groups.div_ceil(x) as u32, 1]
}
