//! The f32 attention kernel (`shaders/attention.wgsl`, flash style, in the two variants of [`Exchange`]), any
//! device: [`attention_split`], and `merge`, which adds the key slices of either kernel in order.

use gpu_core::{
    Access, Capability, DeviceProfile, GpuBuffer, GpuError, KernelSpec, KernelVariant, ParamsLayout, Recorder, Result,
    Shader, params_layout,
};

use super::key_splits::{F32_GRID, KeyPlan, KeySplits};
use crate::launch::{grid, require};
use crate::shaders::{ATTENTION_SUBGROUP_EXCHANGE, ATTENTION_WORKGROUP_EXCHANGE};
use crate::shapes::AttentionShape;

/// Largest head dimension the kernel handles.
pub const MAX_HEAD_DIM: usize = 128;

/// Query rows per workgroup (`BLOCK_QUERIES` in the shader): the first whose workgroup memory fits the device.
const BLOCK_QUERIES: [usize; 2] = [32, 16];
/// Keys per staged tile (`BLOCK_KEYS`); the keys are split among workgroups in whole tiles.
const BLOCK_KEYS: usize = 32;
/// Invocations of a query group (the subgroup variant's shuffles span 8 lanes).
const GROUP_LANES: u32 = 8;
/// Invocations per workgroup of `merge`.
const MERGE_THREADS: usize = 64;

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct Params {
    seq_len: u32,
    heads: u32,
    head_dim: u32,
    query_blocks: u32,
    workgroups: u32,
    scale: f32,
    splits: u32,
    split_tiles: u32,
    rows: u32,
}

const PARAMS: &ParamsLayout =
    &params_layout!(Params { seq_len, heads, head_dim, query_blocks, workgroups, scale, splits, split_tiles, rows });

/// q/k/v (scalar), q/k/v (16-byte groups: the same buffer), key_valid, out, partial slices.
const BINDINGS: &[Access] = &[Access::Read, Access::Read, Access::Read, Access::ReadWrite, Access::ReadWrite];

/// Head dimensions the shader is specialised for (head_dim is padded up to the next).
const HEAD_DIMS: [usize; 4] = [32, 64, 96, 128];

/// How the 8 invocations of a query group exchange their score maxima and sums: the two variants of the f32 kernel,
/// which give the same results bit for bit (the same reduction tree).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exchange {
    /// Subgroup shuffles (`shaders/attention_subgroup_exchange.wgsl`): no workgroup memory, no barrier; the variant
    /// tuned on the H200.
    Subgroups,
    /// Workgroup memory (`shaders/attention_workgroup_exchange.wgsl`): 16 bytes per invocation and a barrier per
    /// exchange, on devices without subgroup operations (WebGPU without `subgroups`, wgpu's GL backend) or with
    /// subgroups of fewer than 8 lanes.
    WorkgroupMemory,
}

impl Exchange {
    /// The variant for the device of `profile`: subgroup shuffles where it has [`Capability::Subgroups`] with at
    /// least 8 lanes, workgroup memory otherwise.
    pub fn of(profile: &DeviceProfile) -> Self {
        if profile.has(Capability::Subgroups) && profile.subgroup_min_size >= GROUP_LANES {
            Exchange::Subgroups
        } else {
            Exchange::WorkgroupMemory
        }
    }

    fn shader(self) -> &'static Shader {
        match self {
            Exchange::Subgroups => &ATTENTION_SUBGROUP_EXCHANGE,
            Exchange::WorkgroupMemory => &ATTENTION_WORKGROUP_EXCHANGE,
        }
    }
}

/// The specialisation: how query groups exchange values, the head dimension padded to a multiple of 32, whether its
/// rows start on 16-byte groups, and the queries per workgroup.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Tiling {
    exchange: Exchange,
    head_dim: usize,
    aligned: bool,
    block_queries: usize,
}

impl Tiling {
    fn choose(head_dim: usize, exchange: Exchange, workgroup_bytes: u32) -> Result<Self> {
        let padded = HEAD_DIMS.into_iter().find(|&d| head_dim <= d).ok_or_else(|| GpuError::LimitExceeded {
            what: "attention head_dim".into(),
            limit: "MAX_HEAD_DIM",
            requested: head_dim as u64,
            max: MAX_HEAD_DIM as u64,
        })?;
        let tiling =
            |block_queries| Tiling { exchange, head_dim: padded, aligned: head_dim.is_multiple_of(4), block_queries };
        let fitting = BLOCK_QUERIES.into_iter().map(tiling).find(|t| t.workgroup_bytes() <= workgroup_bytes as u64);
        let Some(tiling) = fitting else {
            let tiling = tiling(BLOCK_QUERIES[1]);
            return Err(GpuError::LimitExceeded {
                what: format!("attention workgroup memory (head_dim {head_dim})"),
                limit: "max_compute_workgroup_storage_size",
                requested: tiling.workgroup_bytes(),
                max: workgroup_bytes as u64,
            });
        };
        Ok(tiling)
    }

    /// Bytes of `var<workgroup>` the shader declares: the Q tile (block_queries rows of head_dim + 4 floats), the
    /// K/V tile (32 such rows), the probabilities (block_queries rows of 40 floats) and the key tile's mask (32
    /// words); with [`Exchange::WorkgroupMemory`], 4 floats per invocation (2 invocations per query) besides.
    fn workgroup_bytes(self) -> u64 {
        let exchange = match self.exchange {
            Exchange::Subgroups => 0,
            Exchange::WorkgroupMemory => 2 * self.block_queries * 4 * 4,
        };
        let mask = BLOCK_KEYS * 4;
        ((self.block_queries + BLOCK_KEYS) * (self.head_dim + 4) * 4 + self.block_queries * 40 * 4 + mask + exchange)
            as u64
    }

    fn spec<'a>(self, constants: &'a [(&'static str, f64)]) -> KernelSpec<'a> {
        KernelSpec { shader: self.exchange.shader(), entry: "attention", constants, bindings: BINDINGS, params: PARAMS }
    }

    fn constants(self) -> [(&'static str, f64); 3] {
        [
            ("HEAD_DIM", self.head_dim as f64),
            ("ALIGNED", if self.aligned { 1.0 } else { 0.0 }),
            ("BLOCK_QUERIES", self.block_queries as f64),
        ]
    }
}

/// `merge` needs no exchange: it is built from the workgroup-memory file, which every device compiles.
const MERGE: KernelSpec<'static> = KernelSpec {
    shader: &ATTENTION_WORKGROUP_EXCHANGE,
    entry: "merge",
    constants: &[],
    bindings: BINDINGS,
    params: PARAMS,
};

/// Every pipeline this launcher can build, for shader validation.
pub(super) fn variants() -> Vec<KernelVariant> {
    let mut variants = vec![KernelVariant::from(&MERGE)];
    for exchange in [Exchange::Subgroups, Exchange::WorkgroupMemory] {
        for head_dim in HEAD_DIMS {
            for aligned in [false, true] {
                for block_queries in BLOCK_QUERIES {
                    let tiling = Tiling { exchange, head_dim, aligned, block_queries };
                    variants.push(KernelVariant::from(&tiling.spec(&tiling.constants())));
                }
            }
        }
    }
    variants
}

/// What [`attention_split`] runs for one shape: the specialisation, the query blocks of a (sequence, head), all
/// query blocks, and the key slices of each.
struct Choice {
    tiling: Tiling,
    query_blocks: usize,
    blocks: usize,
    plan: KeyPlan,
}

impl Choice {
    fn of(profile: &DeviceProfile, shape: AttentionShape, splits: KeySplits) -> Result<Self> {
        let AttentionShape { seqs, seq_len, heads, head_dim } = shape;
        let tiling =
            Tiling::choose(head_dim, Exchange::of(profile), profile.limits.max_compute_workgroup_storage_size)?;
        let query_blocks = seq_len.div_ceil(tiling.block_queries);
        let blocks = seqs * heads * query_blocks;
        let plan = splits.plan(blocks, seq_len.div_ceil(BLOCK_KEYS), F32_GRID.on(profile));
        Ok(Self { tiling, query_blocks, blocks, plan })
    }
}

/// The pipeline [`attention_split`] records for `shape` with [`KeySplits::Auto`] on the device of `profile`, and
/// whether it splits the keys (then `merge` follows); `None` where the launch is refused (a head dim over
/// [`MAX_HEAD_DIM`], too little workgroup memory).
pub(super) fn kernel(profile: &DeviceProfile, shape: AttentionShape) -> Option<(KernelVariant, bool)> {
    let Choice { tiling, plan, .. } = Choice::of(profile, shape, KeySplits::Auto).ok()?;
    Some((KernelVariant::from(&tiling.spec(&tiling.constants())), plan.splits > 1))
}

/// The pipeline that adds key slices in order, after either kernel.
pub(super) fn merge_kernel() -> KernelVariant {
    KernelVariant::from(&MERGE)
}

/// [`attention`](super::attention) on the f32 kernel, the keys of each query block split among `splits` workgroups
/// (their partial outputs merged in order by a second pass): for measuring the split; [`attention`](super::attention)
/// chooses it. Buffers: `[qkv, key_valid, out]`.
pub fn attention_split(
    rec: &mut Recorder<'_>,
    [qkv, key_valid, out]: [&GpuBuffer; 3],
    shape: AttentionShape,
    splits: KeySplits,
) -> Result<()> {
    let AttentionShape { seq_len, heads, head_dim, .. } = shape;
    let (rows, width) = (shape.rows(), shape.width());
    require(qkv, rows * 3 * width, "attention qkv")?;
    require(key_valid, rows, "attention key_valid")?;
    require(out, rows * width, "attention output")?;
    if rows == 0 || width == 0 {
        return Ok(());
    }
    let gpu = rec.gpu();
    let Choice { tiling, query_blocks, blocks, plan } = Choice::of(gpu.profile(), shape, splits)?;
    let splits = plan.splits;
    let params = Params {
        seq_len: seq_len as u32,
        heads: heads as u32,
        head_dim: head_dim as u32,
        query_blocks: query_blocks as u32,
        workgroups: (blocks * splits) as u32,
        scale: (1.0 / (head_dim as f64).sqrt()) as f32,
        splits: splits as u32,
        split_tiles: plan.tiles_per_split as u32,
        rows: rows as u32,
    };
    // Slices' outputs, then a maximum and a sum per row and head (bound but unused without a split).
    let partial = gpu.scratch("attention slices", slice_words(splits, rows, heads, head_dim))?;
    // The shader reads q/k/v by 16-byte groups only where head_dim % 4 == 0 (then the buffer holds whole groups);
    // otherwise a small stand-in fills that binding.
    let groups = if tiling.aligned { qkv.clone() } else { gpu.scratch("attention unaligned stand-in", 4)? };
    let buffers = [qkv, &groups, key_valid, out, &partial];
    let kernel = gpu.kernel(&tiling.spec(&tiling.constants()))?;
    rec.dispatch(&kernel, &buffers, &params, grid(rec, blocks * splits))?;
    if splits > 1 {
        merge_slices(rec, out, &partial, (rows, heads, head_dim), splits)?;
    }
    Ok(())
}

/// Words of the slices' part of `partial` for `splits` slices (the unnormalised outputs, then a maximum and a sum per
/// row and head), at least one (the binding).
pub(crate) fn slice_words(splits: usize, rows: usize, heads: usize, head_dim: usize) -> usize {
    if splits > 1 { splits * rows * (heads * head_dim + 2 * heads) } else { 1 }
}

/// `out` from the `splits` key slices in `partial` (the layout of `attention.wgsl`'s slices, which the tensor-core
/// kernel writes too): `merge`, in slice order.
pub(crate) fn merge_slices(
    rec: &mut Recorder<'_>,
    out: &GpuBuffer,
    partial: &GpuBuffer,
    (rows, heads, head_dim): (usize, usize, usize),
    splits: usize,
) -> Result<()> {
    let gpu = rec.gpu();
    let width = heads * head_dim;
    let params = Params {
        seq_len: 0,
        heads: heads as u32,
        head_dim: head_dim as u32,
        query_blocks: 0,
        workgroups: (rows * width) as u32,
        scale: 0.0,
        splits: splits as u32,
        split_tiles: 0,
        rows: rows as u32,
    };
    // `merge` reads only the slices: small stand-ins fill the input bindings.
    let stand_in = gpu.scratch("attention unaligned stand-in", 4)?;
    let merge = gpu.kernel(&MERGE)?;
    let buffers = [&stand_in, &stand_in, &stand_in, out, partial];
    rec.dispatch(&merge, &buffers, &params, grid(rec, (rows * width).div_ceil(MERGE_THREADS)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::launch::profiles::{h200, lavapipe};

    const EXCHANGES: [Exchange; 2] = [Exchange::Subgroups, Exchange::WorkgroupMemory];

    /// 32 KiB is WebGPU's `maxComputeWorkgroupStorageSize` as browsers report it on most adapters (SwiftShader
    /// included), 48 KiB the H200's.
    #[test]
    fn every_head_dim_gets_the_smallest_tiling_that_fits() {
        for exchange in EXCHANGES {
            for head_dim in 1..=MAX_HEAD_DIM {
                for bytes in [32 << 10, 48 << 10] {
                    let tiling = Tiling::choose(head_dim, exchange, bytes).unwrap();
                    assert!(head_dim <= tiling.head_dim && tiling.head_dim < head_dim + 32, "{tiling:?}");
                    assert_eq!(tiling.aligned, head_dim % 4 == 0);
                    assert_eq!(tiling.exchange, exchange);
                    assert!(tiling.workgroup_bytes() <= bytes as u64, "{tiling:?}");
                }
            }
        }
        assert_eq!(Tiling::choose(128, Exchange::Subgroups, 48 << 10).unwrap().block_queries, 32);
        assert_eq!(Tiling::choose(128, Exchange::WorkgroupMemory, 48 << 10).unwrap().block_queries, 32);
        assert_eq!(Tiling::choose(128, Exchange::WorkgroupMemory, 32 << 10).unwrap().block_queries, 16);
        assert!(Tiling::choose(MAX_HEAD_DIM + 1, Exchange::Subgroups, 48 << 10).is_err());
    }

    /// wgpu's default limits (16 KiB of workgroup memory) hold head dims up to 64 and refuse 128 naming the limit.
    #[test]
    fn a_small_workgroup_memory_is_refused_naming_the_limit() {
        let bytes = gpu_core::wgpu::Limits::default().max_compute_workgroup_storage_size;
        assert_eq!(Tiling::choose(64, Exchange::WorkgroupMemory, bytes).unwrap().block_queries, 16);
        let error = Tiling::choose(128, Exchange::WorkgroupMemory, bytes).unwrap_err();
        assert!(
            matches!(error, GpuError::LimitExceeded { limit: "max_compute_workgroup_storage_size", requested, max, .. }
                if requested == 28544 && max == u64::from(bytes)),
            "{error}"
        );
    }

    /// The H200 keeps its shuffles; a device without subgroups, or with subgroups too narrow for a query group
    /// (lavapipe on a host without AVX: 4 lanes), exchanges through workgroup memory.
    #[test]
    fn the_profile_picks_the_exchange() {
        assert_eq!(Exchange::of(&h200()), Exchange::Subgroups);
        assert_eq!(Exchange::of(&lavapipe(2)), Exchange::Subgroups);
        let mut no_subgroups = h200();
        no_subgroups.features.remove(gpu_core::wgpu::Features::SUBGROUP);
        assert_eq!(Exchange::of(&no_subgroups), Exchange::WorkgroupMemory);
        let mut narrow = lavapipe(2);
        narrow.subgroup_min_size = 4;
        assert_eq!(Exchange::of(&narrow), Exchange::WorkgroupMemory);
        let webgpu = gpu_core::DeviceProfile::described("SwiftShader", gpu_core::wgpu::DeviceType::Cpu, 2);
        assert_eq!(Exchange::of(&webgpu), Exchange::WorkgroupMemory);
    }

    /// The limit checks are only honest if they use the shader's real footprint: every variant's `var<workgroup>`
    /// bytes, as naga lays them out with the variant's constants, against [`Tiling::workgroup_bytes`].
    #[test]
    fn workgroup_bytes_match_the_shaders() {
        for exchange in EXCHANGES {
            for head_dim in HEAD_DIMS {
                for block_queries in BLOCK_QUERIES {
                    let tiling = Tiling { exchange, head_dim, aligned: true, block_queries };
                    let source = exchange.shader().source;
                    let module = naga::front::wgsl::parse_str(source).expect("attention parses");
                    let info = naga::valid::Validator::new(Default::default(), naga::valid::Capabilities::all())
                        .validate(&module)
                        .expect("attention validates");
                    let constants = tiling.constants().iter().map(|&(n, v)| (n.to_string(), v)).collect();
                    let stage = Some((naga::ShaderStage::Compute, "attention"));
                    let (module, _) =
                        naga::back::pipeline_constants::process_overrides(&module, &info, stage, &constants).unwrap();
                    let mut layouter = naga::proc::Layouter::default();
                    layouter.update(module.to_ctx()).expect("layout");
                    let bytes: u64 = module
                        .global_variables
                        .iter()
                        .filter(|(_, var)| var.space == naga::AddressSpace::WorkGroup)
                        .map(|(_, var)| u64::from(layouter[var.ty].size))
                        .sum();
                    assert_eq!(bytes, tiling.workgroup_bytes(), "{tiling:?}");
                }
            }
        }
    }
}
