//! Masked multi-head attention on tensor cores (`shaders/attention_coop.wgsl`, built for 16×16×16 or 8×8×8
//! cooperative matrices), f32-accurate: q, k and v split row by row into f16 halves under power-of-two scales
//! (`shaders/attention_operands.wgsl`), three products per step (or, for the fast precision, one over the hi halves:
//! [`Products`]), keys staged in workgroup memory for several
//! subgroups of queries, two passes over the keys, keys split among workgroups where the grid is small. Same inputs,
//! output and masking as [`attention_split`](super::attention_split); head dims up to 8 matrix sides (128 with 16×16
//! matrices, 64 with 8×8). Its keys are split by the same plan as the f32 kernel's ([`KeySplits`]), and its slices
//! merged by the f32 kernel's `merge`.

use gpu_core::{
    Access, Capability, DeviceProfile, Gpu, GpuBuffer, GpuError, KernelSpec, KernelVariant, ParamsLayout, Recorder,
    Result, Shader, params_layout,
};

use super::f32_kernel::{MAX_HEAD_DIM, merge_slices, slice_words};
use super::key_splits::{KeyPlan, KeySplits, ROUNDED_TENSOR_CORE_GRID, TENSOR_CORE_GRID};
use crate::LAYER_NORM_EPS;
use crate::coop::Matrices;
use crate::gemm::Precision;
use crate::launch::{grid, require};
use crate::qk_norm_rope::QkPrologue;
use crate::shaders::{ATTENTION_COOP8, ATTENTION_COOP16, ATTENTION_OPERANDS};
use crate::shapes::AttentionShape;

/// Key tiles per block (`KEY_TILES` in the shader): blocks of 2·T keys.
const KEY_TILES: usize = 2;
/// Most head-dim tiles (`D_TILES`: the shader names up to 8 of them).
const MAX_D_TILES: usize = 8;
/// Subgroups per workgroup the launcher tries, most first (`SG_Q`: T queries each, sharing the staged keys); the
/// first that fits the device.
pub const SUBGROUP_CANDIDATES: [usize; 2] = [4, 2];
/// The capabilities this kernel needs: its operand pass and its rows' maxima and sums use subgroup operations, its
/// products f16 cooperative matrices.
const NEEDS: [Capability; 3] = [Capability::CooperativeMatrices, Capability::ShaderF16, Capability::Subgroups];
/// Most 8-byte groups of a key block one invocation stages (`MAX_STAGE` in the shader).
const MAX_STAGE: usize = 32;
/// [`attention`](super::attention) takes this kernel for head dims above this one. Measured on the H200
/// (2026-12-04, one kernel timed alone (docs/performance.md) and `ceilings attention`; the operand pass adds 18 µs per layer): head dim 128 (ASR layer)
/// 139 µs against the f32 kernel's 203; 80 (word-timestamp head) faster too; 64 (Sortformer layer) 115 µs against 92.
pub const MIN_HEAD_DIM: usize = 65;
/// The same for [`Products::Rounded`]: every head dim. Measured on the H100 (`ceilings attention`, 2026-12-07): a
/// Sortformer layer (head dim 64) 70.5 µs in the 2 key slices its grid gives against the f32 kernel's 88.6, 128
/// sequences × 465 rows 2.43 ms against 3.36; an ASR layer (128) 79.9 µs against the split products' 135.4.
pub const MIN_ROUNDED_HEAD_DIM: usize = 1;

/// How the kernel multiplies its operands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Products {
    /// f32-accurate: q, k, v and the probabilities as f16 halves hi + lo, three products per step
    /// ([`Precision::Auto`]).
    Split,
    /// Each product once over the hi halves (every operand rounded to f16 under its row's power-of-two scale),
    /// accumulated on the tensor cores ([`Precision::Fast`]): f16's rounding, as the fast GEMMs.
    Rounded,
}

impl Products {
    /// The products of `precision`; none for [`Precision::F32`] (the f32 kernel only).
    pub fn of(precision: Precision) -> Option<Self> {
        match precision {
            Precision::Auto => Some(Products::Split),
            Precision::Fast => Some(Products::Rounded),
            Precision::F32 => None,
        }
    }

    /// Halves of each operand row the kernel stages.
    fn halves(self) -> usize {
        match self {
            Products::Split => 2,
            Products::Rounded => 1,
        }
    }

    /// The head dims from which [`attention`](super::attention) takes this kernel over the f32 one.
    fn min_head_dim(self) -> usize {
        match self {
            Products::Split => MIN_HEAD_DIM,
            Products::Rounded => MIN_ROUNDED_HEAD_DIM,
        }
    }
}

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct OperandParams {
    seq_len: u32,
    heads: u32,
    head_dim: u32,
    padded_len: u32,
    workgroups: u32,
    rot: u32,
    eps: f32,
    slices: u32,
    slice_words: u32,
    first_pair: u32,
}

const OPERAND_PARAMS: &ParamsLayout = &params_layout!(OperandParams {
    seq_len,
    heads,
    head_dim,
    padded_len,
    workgroups,
    rot,
    eps,
    slices,
    slice_words,
    first_pair
});

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct Params {
    seq_len: u32,
    heads: u32,
    head_dim: u32,
    padded_len: u32,
    query_blocks: u32,
    workgroups: u32,
    scale: f32,
    splits: u32,
    split_blocks: u32,
    rows: u32,
    first_pair: u32,
}

const PARAMS: &ParamsLayout = &params_layout!(Params {
    seq_len,
    heads,
    head_dim,
    padded_len,
    query_blocks,
    workgroups,
    scale,
    splits,
    split_blocks,
    rows,
    first_pair
});

/// qkv, planes, unscales, the RoPE table, the q and k norms' weight and bias.
const OPERAND_BINDINGS: &[Access] = &[
    Access::Read,
    Access::ReadWrite,
    Access::ReadWrite,
    Access::Read,
    Access::Read,
    Access::Read,
    Access::Read,
    Access::Read,
];
/// planes, unscales, key_valid, out, partial slices.
const BINDINGS: &[Access] = &[Access::Read, Access::Read, Access::Read, Access::ReadWrite, Access::ReadWrite];

/// The kernel's shape on a device: its matrices, subgroups per workgroup, padded head dim and products.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Tiling {
    matrices: Matrices,
    subgroups: usize,
    /// head_dim rounded up to a multiple of T.
    head_dim: usize,
    products: Products,
}

impl Tiling {
    fn block_keys(self) -> usize {
        KEY_TILES * self.matrices.t
    }

    /// Queries per workgroup.
    fn block_queries(self) -> usize {
        self.subgroups * self.matrices.t
    }

    /// Rows of a plane: `seq_len` rounded up to whole blocks of keys and of queries (one divides the other).
    fn padded_len(self, seq_len: usize) -> usize {
        seq_len.next_multiple_of(self.block_keys().max(self.block_queries()))
    }

    /// Words of the operand planes of `heads` (sequence, head) pairs: q, k and v, hi and lo, f16.
    fn plane_words(self, heads: usize, seq_len: usize) -> usize {
        heads * 3 * 2 * self.padded_len(seq_len) * self.head_dim / 2
    }

    /// Workgroup memory: the staged key block (block_keys rows of head_dim + 8 f16 per staged half), per subgroup T
    /// rows of scores (block_keys + 4 f32) and T rows of probabilities per half (block_keys + 8 f16), and 8 bytes of
    /// key information per key.
    fn workgroup_bytes(self) -> usize {
        let (t, keys, halves) = (self.matrices.t, self.block_keys(), self.products.halves());
        halves * keys * (self.head_dim + 8) * 2
            + self.subgroups * t * ((keys + 4) * 4 + halves * (keys + 8) * 2)
            + keys * 8
    }

    fn threads(self) -> usize {
        self.subgroups * self.matrices.subgroup
    }

    fn fits(self, profile: &DeviceProfile) -> bool {
        let limits = &profile.limits;
        self.head_dim <= MAX_D_TILES * self.matrices.t
            && self.products.halves() * self.block_keys() * self.head_dim / 4 <= MAX_STAGE * self.threads()
            && self.workgroup_bytes() <= limits.max_compute_workgroup_storage_size as usize
            && self.threads() <= limits.max_compute_invocations_per_workgroup as usize
            && self.threads() <= limits.max_compute_workgroup_size_x as usize
    }

    fn shader(self) -> &'static Shader {
        if self.matrices.t == 16 { &ATTENTION_COOP16 } else { &ATTENTION_COOP8 }
    }

    fn constants(self) -> [(&'static str, f64); 4] {
        [
            ("SUBGROUP", self.matrices.subgroup as f64),
            ("SG_Q", self.subgroups as f64),
            ("D_TILES", (self.head_dim / self.matrices.t) as f64),
            ("EXACT", f64::from(u8::from(self.products == Products::Split))),
        ]
    }
}

fn operand_spec<'a>(constants: &'a [(&'static str, f64)]) -> KernelSpec<'a> {
    KernelSpec {
        shader: &ATTENTION_OPERANDS,
        entry: "attention_operands",
        constants,
        bindings: OPERAND_BINDINGS,
        params: OPERAND_PARAMS,
    }
}

fn operand_constants(tiling: Tiling, norm_rope: bool, has_norm: bool) -> [(&'static str, f64); 4] {
    [
        ("D", tiling.head_dim as f64),
        ("NORM_ROPE", f64::from(u8::from(norm_rope))),
        ("HAS_NORM", f64::from(u8::from(has_norm))),
        ("LO", f64::from(u8::from(tiling.products.halves() == 2))),
    ]
}

fn spec<'a>(tiling: Tiling, constants: &'a [(&'static str, f64)]) -> KernelSpec<'a> {
    KernelSpec { shader: tiling.shader(), entry: "attention_coop", constants, bindings: BINDINGS, params: PARAMS }
}

/// Every pipeline this launcher can build, for shader validation: the towers' head dims (64, 80, 128) and the
/// smallest, for both matrix sizes (up to 8 matrix sides), every subgroup count and both products.
pub(super) fn variants() -> Vec<KernelVariant> {
    let mut variants = Vec::new();
    for matrices in Matrices::USUAL {
        for head_dim in [8usize, 64, 80, 128] {
            let padded = head_dim.next_multiple_of(matrices.t);
            if padded > MAX_D_TILES * matrices.t {
                continue;
            }
            for products in [Products::Split, Products::Rounded] {
                for (norm_rope, has_norm) in [(false, false), (true, false), (true, true)] {
                    let tiling = Tiling { matrices, subgroups: SUBGROUP_CANDIDATES[0], head_dim: padded, products };
                    let constants = operand_constants(tiling, norm_rope, has_norm);
                    variants.push(KernelVariant::from(&operand_spec(&constants)));
                }
                for subgroups in SUBGROUP_CANDIDATES {
                    let tiling = Tiling { matrices, subgroups, head_dim: padded, products };
                    variants.push(KernelVariant::from(&spec(tiling, &tiling.constants())));
                }
            }
        }
    }
    variants
}

/// The tiling for `head_dim` and `products` on the device of `profile` (`subgroups`: that many per workgroup, or the
/// most that fit), if the device has the matrices, subgroup operations and the workgroup memory.
fn tiling(profile: &DeviceProfile, head_dim: usize, subgroups: Option<usize>, products: Products) -> Option<Tiling> {
    let matrices = Matrices::of(profile).filter(|_| profile.has(Capability::Subgroups))?;
    let padded = head_dim.max(1).next_multiple_of(matrices.t);
    let candidates = match subgroups {
        Some(n) => vec![n],
        None => SUBGROUP_CANDIDATES.to_vec(),
    };
    candidates
        .into_iter()
        .map(|subgroups| Tiling { matrices, subgroups, head_dim: padded, products })
        .find(|t| SUBGROUP_CANDIDATES.contains(&t.subgroups) && t.fits(profile))
}

/// Whether `gpu` runs the tensor-core attention at `head_dim` (with either products: rounded ones need less
/// workgroup memory than split ones).
pub fn available(gpu: &Gpu, head_dim: usize) -> bool {
    head_dim <= MAX_HEAD_DIM && tiling(gpu.profile(), head_dim, None, Products::Split).is_some()
}

/// Whether [`attention`](super::attention) takes the tensor-core kernel with `products` for `shape`: the device has
/// it, the head dim is at least the products' threshold ([`MIN_HEAD_DIM`], [`MIN_ROUNDED_HEAD_DIM`]) and the operand
/// planes of one (sequence, head) pair fit a storage binding. A batch does not change the choice: one whose planes
/// outgrow a binding runs as groups of pairs ([`attention_coop`]).
pub fn chosen(gpu: &Gpu, shape: AttentionShape, products: Products) -> bool {
    let profile = gpu.profile();
    shape.head_dim >= products.min_head_dim()
        && tiling(profile, shape.head_dim, None, products)
            .is_some_and(|t| launch_plan(profile, t, shape, KeySplits::Auto).is_some())
}

/// How the kernel runs `shape` under `tiling`: its query blocks per (sequence, head) pair, how it splits the keys
/// ([`key_plan`]) and how many pairs one dispatch takes. A batch whose operand planes outgrow one storage binding runs
/// as groups of pairs, each its own operand pass and attention over the same scratch planes, its keys not split (a
/// 128 MiB binding's worth of planes is over a thousand query blocks, more than any grid: splits would not pay, and
/// their slices would outgrow a binding too). `None` where one pair's planes outgrow a binding.
fn launch_plan(
    profile: &DeviceProfile,
    tiling: Tiling,
    shape: AttentionShape,
    splits: KeySplits,
) -> Option<LaunchPlan> {
    let max_words = profile.limits.max_storage_buffer_binding_size as usize / 4;
    let pairs = shape.seqs * shape.heads;
    // An empty sequence has no planes (and runs nothing).
    let group_pairs = (max_words / tiling.plane_words(1, shape.seq_len).max(1)).min(pairs);
    if group_pairs == 0 && pairs > 0 {
        return None;
    }
    let splits = if group_pairs < pairs { KeySplits::Fixed(1) } else { splits };
    let (query_blocks, plan) = key_plan(profile, tiling, shape, splits);
    Some(LaunchPlan { query_blocks, plan, group_pairs })
}

/// See [`launch_plan`].
struct LaunchPlan {
    query_blocks: usize,
    plan: KeyPlan,
    group_pairs: usize,
}

/// The key slices of each of the `blocks` query blocks of `shape` under `tiling`.
fn key_plan(profile: &DeviceProfile, tiling: Tiling, shape: AttentionShape, splits: KeySplits) -> (usize, KeyPlan) {
    let AttentionShape { seqs, seq_len, heads, .. } = shape;
    let query_blocks = tiling.padded_len(seq_len) / tiling.block_queries();
    let blocks = seqs * heads * query_blocks;
    let grid = match tiling.products {
        Products::Split => TENSOR_CORE_GRID,
        Products::Rounded => ROUNDED_TENSOR_CORE_GRID,
    };
    // At least one key tile: an empty sequence (which runs nothing) gets a plan of one slice.
    let tiles = seq_len.div_ceil(tiling.block_keys()).max(1);
    (query_blocks, splits.plan(blocks, tiles, grid.on(profile)))
}

/// The pipelines [`attention_coop`] records for `shape` with the most subgroups that fit and [`KeySplits::Auto`] on
/// the device of `profile` (its operand pass with the norm and rotation where `prologue` says, with the q/k norm
/// where `Some(true)`; then the attention), and whether it splits the keys (then `merge` follows); `None` where the
/// device cannot run it.
pub(super) fn kernels(
    profile: &DeviceProfile,
    shape: AttentionShape,
    prologue: Option<bool>,
    products: Products,
) -> Option<([KernelVariant; 2], bool)> {
    // The tiling exists only where the device has every capability of NEEDS.
    let tiling = tiling(profile, shape.head_dim, None, products)?;
    let LaunchPlan { plan, .. } = launch_plan(profile, tiling, shape, KeySplits::Auto)?;
    let operands = operand_constants(tiling, prologue.is_some(), prologue == Some(true));
    let kernels =
        [KernelVariant::from(&operand_spec(&operands)), KernelVariant::from(&spec(tiling, &tiling.constants()))];
    Some((kernels, plan.splits > 1))
}

/// [`attention`](super::attention) on tensor cores with `products`; `subgroups` per workgroup (one of
/// [`SUBGROUP_CANDIDATES`], for sweeps) or the most that fit, the keys split among `splits` workgroups per query
/// block (merged in order); with a `prologue`, q and k get its norm and RoPE on the way in (as
/// [`crate::rotary_attention`]; qkv is not written). Buffers: `[qkv, key_valid, out]`. A batch whose operand planes
/// outgrow a storage binding runs as groups of (sequence, head) pairs, with the same bits. Fails on a device without subgroups, f16 shaders or cooperative matrices
/// ([`GpuError::MissingCapability`] naming `attention_coop`), or where the head dim is over 8 of the matrices' sides
/// or the workgroup does not fit (see [`available`]).
pub fn attention_coop(
    rec: &mut Recorder<'_>,
    [qkv, key_valid, out]: [&GpuBuffer; 3],
    shape: AttentionShape,
    prologue: Option<&QkPrologue<'_>>,
    (subgroups, splits): (Option<usize>, KeySplits),
    products: Products,
) -> Result<()> {
    let AttentionShape { seqs, seq_len, heads, head_dim } = shape;
    let (rows, width) = (shape.rows(), shape.width());
    let slices = prologue.map_or(1, |p| p.slices.max(1));
    require(qkv, slices * rows * 3 * width, "attention qkv")?;
    require(key_valid, rows, "attention key_valid")?;
    require(out, rows * width, "attention output")?;
    if head_dim > MAX_HEAD_DIM {
        return Err(GpuError::LimitExceeded {
            what: "attention head_dim".into(),
            limit: "MAX_HEAD_DIM",
            requested: head_dim as u64,
            max: MAX_HEAD_DIM as u64,
        });
    }
    let stand_ins = match prologue {
        Some(prologue) => Some(prologue.buffers(seq_len, head_dim, "attention prologue")?),
        None => None,
    };
    if rows == 0 || width == 0 {
        return Ok(());
    }
    let gpu = rec.gpu();
    let profile = gpu.profile();
    profile.require("attention_coop", &NEEDS)?;
    let Some(tiling) = tiling(profile, head_dim, subgroups, products) else {
        return Err(GpuError::LimitExceeded {
            what: format!(
                "tensor-core attention (head_dim {head_dim}, {subgroups:?} subgroups per workgroup) on this device"
            ),
            limit: "f16 cooperative matrices of a fixed subgroup size, workgroup memory",
            requested: 1,
            max: 0,
        });
    };
    let Some(LaunchPlan { query_blocks, plan, group_pairs }) = launch_plan(profile, tiling, shape, splits) else {
        return Err(GpuError::LimitExceeded {
            what: format!("tensor-core attention operand planes of one sequence of {seq_len} rows"),
            limit: "max_storage_buffer_binding_size",
            requested: tiling.plane_words(1, seq_len) as u64 * 4,
            max: profile.limits.max_storage_buffer_binding_size,
        });
    };
    let padded_len = tiling.padded_len(seq_len);
    let planes = gpu.scratch("attention operand planes", tiling.plane_words(group_pairs, seq_len))?;
    let unscales = gpu.scratch("attention operand unscales", group_pairs * 3 * padded_len)?;
    let has_norm = prologue.is_some_and(|p| p.norm.is_some());
    let operand_kernel = gpu.kernel(&operand_spec(&operand_constants(tiling, prologue.is_some(), has_norm)))?;
    let kernel = gpu.kernel(&spec(tiling, &tiling.constants()))?;
    let splits = plan.splits;
    let partial = gpu.scratch("attention slices", slice_words(splits, rows, heads, head_dim))?;
    // Without a prologue its five slots are never read: qkv stands in (read-only, and at least one vec2 long).
    let [rope, q_weight, q_bias, k_weight, k_bias] = stand_ins.unwrap_or([qkv; 5]);
    let operand_buffers = [qkv, &planes, &unscales, rope, q_weight, q_bias, k_weight, k_bias];
    let buffers = [&planes, &unscales, key_valid, out, &partial];
    let pairs = seqs * heads;
    for first_pair in (0..pairs).step_by(group_pairs) {
        let group = group_pairs.min(pairs - first_pair);
        let operands = OperandParams {
            seq_len: seq_len as u32,
            heads: heads as u32,
            head_dim: head_dim as u32,
            padded_len: padded_len as u32,
            workgroups: (group * padded_len) as u32,
            rot: prologue.map_or(0, |p| p.rope.rot() as u32),
            eps: LAYER_NORM_EPS,
            slices: slices as u32,
            slice_words: (rows * 3 * width) as u32,
            first_pair: first_pair as u32,
        };
        rec.dispatch(&operand_kernel, &operand_buffers, &operands, grid(rec, group * padded_len))?;
        let blocks = group * query_blocks;
        let params = Params {
            seq_len: seq_len as u32,
            heads: heads as u32,
            head_dim: head_dim as u32,
            padded_len: padded_len as u32,
            query_blocks: query_blocks as u32,
            workgroups: (blocks * splits) as u32,
            scale: (1.0 / (head_dim as f64).sqrt()) as f32,
            splits: splits as u32,
            split_blocks: plan.tiles_per_split as u32,
            rows: rows as u32,
            first_pair: first_pair as u32,
        };
        rec.dispatch(&kernel, &buffers, &params, grid(rec, blocks * splits))?;
    }
    if splits > 1 {
        merge_slices(rec, out, &partial, (rows, heads, head_dim), splits)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::launch::profiles;

    #[test]
    fn planes_cover_whole_blocks_of_keys_and_queries() {
        for matrices in Matrices::USUAL {
            for subgroups in SUBGROUP_CANDIDATES {
                let tiling = Tiling { matrices, subgroups, head_dim: 128, products: Products::Split };
                for seq_len in [1, 7, 31, 32, 33, 64, 600, 828, 2001] {
                    let padded = tiling.padded_len(seq_len);
                    let block = tiling.block_keys().max(tiling.block_queries());
                    assert!(padded >= seq_len && padded < seq_len + block, "{tiling:?} {seq_len}");
                    assert!(padded.is_multiple_of(tiling.block_keys()), "{tiling:?} {seq_len}");
                    assert!(padded.is_multiple_of(tiling.block_queries()), "{tiling:?} {seq_len}");
                }
            }
        }
        let h200 = Tiling { matrices: Matrices::USUAL[0], subgroups: 4, head_dim: 128, products: Products::Split };
        assert!(h200.workgroup_bytes() <= 48 << 10, "{}", h200.workgroup_bytes());
        // Rounded operands stage no lo rows: k/v's block and the probabilities take half.
        let rounded = Tiling { products: Products::Rounded, ..h200 };
        assert_eq!(h200.workgroup_bytes() - rounded.workgroup_bytes(), 2 * 32 * 136 + 4 * 16 * 40 * 2);
    }

    /// The H200 keeps its tiling (16×16 matrices, 4 subgroups): an ASR layer (600 rows, 10 heads of 128: 100 query
    /// blocks of 64 over 19 key blocks of 32) stays unsplit on its grid of one workgroup per multiprocessor, as
    /// measured best (the plan's grids: `key_splits.rs`). Lavapipe runs 8×8 matrices.
    #[test]
    fn the_profile_sets_the_tiling_and_the_grid() {
        let h200 = profiles::h200();
        let chosen = tiling(&h200, 128, None, Products::Split).expect("the H200 runs the kernel");
        assert_eq!(
            chosen,
            Tiling { matrices: Matrices::USUAL[0], subgroups: 4, head_dim: 128, products: Products::Split }
        );
        let blocks = 10 * chosen.padded_len(600) / chosen.block_queries();
        let key_blocks = 600usize.div_ceil(chosen.block_keys());
        assert_eq!((blocks, key_blocks), (100, 19));
        assert_eq!(KeySplits::Auto.plan(blocks, key_blocks, TENSOR_CORE_GRID.on(&h200)).splits, 1);
        let cpu = profiles::lavapipe(4);
        assert_eq!(tiling(&cpu, 64, None, Products::Split).map(|t| t.matrices), Some(Matrices::USUAL[1]));
        assert_eq!(KeySplits::Auto.plan(1, key_blocks, TENSOR_CORE_GRID.on(&cpu)).splits, 4);
    }

    #[test]
    fn masked_capabilities_leave_no_tiling() {
        for capability in NEEDS {
            let mut profile = profiles::h200();
            profile.features.remove(capability.feature());
            for products in [Products::Split, Products::Rounded] {
                assert_eq!(tiling(&profile, 128, None, products), None, "{capability:?} {products:?}");
            }
            let error = profile.require("attention_coop", &NEEDS).unwrap_err();
            assert!(matches!(error, GpuError::MissingCapability { capability: c, .. } if c == capability));
        }
    }
}
