//! The key-split plan of both attention kernels: where the grid of query blocks is too small to fill the device, the
//! keys of each query block are cut into slices of whole key tiles (the f32 kernel's tiles of 32 keys, the tensor-core
//! kernel's blocks of 2·T), one workgroup each, whose outputs the f32 kernel's `merge` adds in order. Each kernel aims
//! at its own grid, measured on the H200 and scaled to the device's compute units.

use crate::launch::MeasuredGrid;

/// How many workgroups share one query block's keys.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeySplits {
    /// Enough slices for about the kernel's grid of workgroups (on the H200, 400 for the f32 kernel and one per
    /// multiprocessor for the tensor-core one, in proportion to the compute units elsewhere), each slice at least two
    /// key tiles.
    Auto,
    /// This many slices (at most one per key tile).
    Fixed(usize),
}

/// The f32 kernel's grid: 400 workgroups on the H200, which holds four of them on each of its 132 multiprocessors (208
/// registers per invocation at head dim 128); measured there (one kernel timed alone, 2026-12-03): an ASR layer (190
/// query blocks) 236 µs unsplit, 192 in 2 slices, 210 in the 5 that 1024 gave; a Sortformer layer (208 blocks) 93 µs
/// unsplit against 95 in 4 slices plus their merge pass.
pub(crate) const F32_GRID: MeasuredGrid = MeasuredGrid { workgroups: 400, compute_units: 132 };

/// The tensor-core kernel's grid: one workgroup per compute unit. On the H200 (132 multiprocessors; `ceilings
/// attention`, 2026-12-04), an ASR layer's 100 workgroups ran 121 µs unsplit and 136 µs in 2 slices (with their
/// merge).
pub(crate) const TENSOR_CORE_GRID: MeasuredGrid = MeasuredGrid { workgroups: 132, compute_units: 132 };
/// The tensor-core kernel's grid over rounded operands, which stage half the workgroup memory: two workgroups per
/// compute unit. On the H100 (`ceilings attention`, 2026-12-07): an ASR layer's 100 query blocks 94.6 µs unsplit and
/// 79.9 in 2 slices, a Sortformer layer's 104 blocks 97.5 and 70.5; 8 ASR chunks' 800 blocks 0.460 ms unsplit
/// against 0.526 in 2.
pub(crate) const ROUNDED_TENSOR_CORE_GRID: MeasuredGrid = MeasuredGrid { workgroups: 264, compute_units: 132 };

/// Each query block's keys in `splits` slices of `tiles_per_split` key tiles (the last slice may have fewer, none is
/// empty), one workgroup per slice.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct KeyPlan {
    /// Slices per query block.
    pub(crate) splits: usize,
    /// Key tiles in every slice but the last.
    pub(crate) tiles_per_split: usize,
}

impl KeySplits {
    /// The slices of `tiles` key tiles (at least one) for `blocks` query blocks, `Auto` aiming at `grid` workgroups.
    pub(crate) fn plan(self, blocks: usize, tiles: usize, grid: usize) -> KeyPlan {
        let tiles_per_split = tiles.div_ceil(self.slices(blocks, tiles, grid));
        KeyPlan { splits: tiles.div_ceil(tiles_per_split), tiles_per_split }
    }

    /// The slices asked for, before whole tiles round them: at least 1, at most one per tile.
    fn slices(self, blocks: usize, tiles: usize, grid: usize) -> usize {
        let wanted = match self {
            KeySplits::Auto => (grid / blocks.max(1)).min(tiles / 2),
            KeySplits::Fixed(splits) => splits,
        };
        wanted.clamp(1, tiles.max(1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::launch::profiles::{h200, lavapipe, unknown};

    #[test]
    fn key_splits_fill_the_grid_without_empty_slices() {
        let full = F32_GRID.on(&h200());
        assert_eq!(full, 400, "the H200 keeps the measured grid");
        // ASR chunk: 19 blocks of queries × 10 heads, 19 key tiles.
        assert_eq!(KeySplits::Auto.slices(190, 19, full), 2);
        assert_eq!(KeySplits::Auto.slices(208, 26, full), 1);
        assert_eq!(KeySplits::Auto.slices(40, 19, full), 9);
        assert_eq!(KeySplits::Auto.slices(4000, 19, full), 1);
        assert_eq!(KeySplits::Auto.slices(1, 1, full), 1);
        assert_eq!(KeySplits::Fixed(64).slices(10, 19, full), 19);
        assert_eq!(KeySplits::Fixed(0).slices(10, 19, full), 1);
        // Whole tiles per slice: 9 slices of 19 tiles are 3 tiles each, so 7 slices, the last of one tile.
        assert_eq!(KeySplits::Auto.plan(40, 19, full), KeyPlan { splits: 7, tiles_per_split: 3 });
        assert_eq!(KeySplits::Auto.plan(190, 19, full), KeyPlan { splits: 2, tiles_per_split: 10 });
        for tiles in 1..=64 {
            for wanted in 0..=tiles + 1 {
                let plan = KeySplits::Fixed(wanted).plan(10, tiles, full);
                assert!((plan.splits - 1) * plan.tiles_per_split < tiles, "{tiles} tiles: {plan:?}");
                assert!(plan.splits * plan.tiles_per_split >= tiles, "{tiles} tiles: {plan:?}");
            }
        }
    }

    /// A device with fewer compute units fills with fewer workgroups, so it splits the keys less: four CPU threads
    /// want 12 workgroups, an unknown GPU (16 units assumed) 48; the key tiles still bound the slices.
    #[test]
    fn smaller_devices_split_the_keys_less() {
        let (cpu, other) = (F32_GRID.on(&lavapipe(4)), F32_GRID.on(&unknown()));
        assert_eq!((cpu, other), (12, 48));
        assert_eq!(KeySplits::Auto.slices(190, 19, cpu), 1);
        assert_eq!(KeySplits::Auto.slices(40, 19, cpu), 1);
        assert_eq!(KeySplits::Auto.slices(2, 19, cpu), 6);
        assert_eq!(KeySplits::Auto.slices(40, 19, other), 1);
        assert_eq!(KeySplits::Auto.slices(8, 19, other), 6);
        assert_eq!(KeySplits::Auto.slices(1, 4, other), 2);
        assert_eq!(F32_GRID.on(&lavapipe(1)), 3);
    }

    /// The tensor-core kernel fills with one workgroup per compute unit: the H200's 132, four CPU threads' 4, an
    /// unknown GPU's 16. An ASR layer on the H200 (100 query blocks over 19 key blocks) stays unsplit, as measured
    /// best; four CPU threads split only grids under 4 workgroups.
    #[test]
    fn the_tensor_core_grid_is_one_workgroup_per_compute_unit() {
        for profile in [h200(), lavapipe(4), lavapipe(1), unknown()] {
            assert_eq!(TENSOR_CORE_GRID.on(&profile), profile.compute_units.count, "{}", profile.name);
        }
        let (h200, cpu) = (TENSOR_CORE_GRID.on(&h200()), TENSOR_CORE_GRID.on(&lavapipe(4)));
        assert_eq!((h200, cpu, TENSOR_CORE_GRID.on(&unknown())), (132, 4, 16));
        assert_eq!(KeySplits::Auto.slices(100, 19, h200), 1);
        assert_eq!(KeySplits::Auto.slices(20, 19, h200), 6);
        assert_eq!(KeySplits::Auto.slices(20, 19, cpu), 1);
        assert_eq!(KeySplits::Auto.slices(1, 19, cpu), 4);
    }

    /// Over rounded operands the tensor-core kernel fills with two workgroups per compute unit: on the H200 an ASR
    /// layer (100 query blocks, 19 key blocks) and a Sortformer layer (104, 26) split in 2, as measured best; 8 ASR
    /// chunks (800) and the word-timestamp head (288 blocks over 1,100 rows) stay whole.
    #[test]
    fn rounded_operands_fill_two_workgroups_per_compute_unit() {
        let grid = ROUNDED_TENSOR_CORE_GRID.on(&h200());
        assert_eq!(grid, 264);
        assert_eq!(KeySplits::Auto.slices(100, 19, grid), 2);
        assert_eq!(KeySplits::Auto.slices(104, 26, grid), 2);
        assert_eq!(KeySplits::Auto.slices(800, 19, grid), 1);
        assert_eq!(KeySplits::Auto.slices(288, 35, grid), 1);
    }
}
