//! Masked multi-head attention launcher (`shaders/attention.wgsl`), flash style.

use gpu_core::{
    Access, GpuBuffer, GpuError, KernelSpec, KernelVariant, ParamsLayout, Recorder, Result, params_layout, wgpu,
};

use crate::launch::{grid, require};
use crate::shaders::ATTENTION;

/// Largest head dimension the kernel handles.
pub const MAX_HEAD_DIM: usize = 128;

/// Query rows per workgroup (`BLOCK_QUERIES` in the shader).
const BLOCK_QUERIES: usize = 32;

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct Params {
    seq_len: u32,
    heads: u32,
    head_dim: u32,
    query_blocks: u32,
    workgroups: u32,
    scale: f32,
}

const PARAMS: &ParamsLayout = &params_layout!(Params { seq_len, heads, head_dim, query_blocks, workgroups, scale });

const BINDINGS: &[Access] = &[Access::Read, Access::Read, Access::ReadWrite];

/// The specialisation: head dimension padded to 32, 64 or 128 (the shader then runs head_dim/16
/// lanes per query, which must share a subgroup), and the key tile: 32, or 16 where the staged
/// tiles would not fit the device's workgroup memory.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Tiling {
    head_dim: usize,
    block_keys: usize,
}

const HEAD_DIMS: [usize; 3] = [32, 64, 128];

impl Tiling {
    fn choose(head_dim: usize, subgroup_min: u32, workgroup_bytes: u32) -> Result<Self> {
        let padded = HEAD_DIMS.into_iter().find(|&d| head_dim <= d).ok_or_else(|| GpuError::LimitExceeded {
            what: "attention head_dim".into(),
            limit: "MAX_HEAD_DIM",
            requested: head_dim as u64,
            max: MAX_HEAD_DIM as u64,
        })?;
        let wide = Tiling { head_dim: padded, block_keys: 32 };
        if (subgroup_min as usize) < wide.lanes() {
            return Err(GpuError::LimitExceeded {
                what: format!("attention with head_dim {head_dim} needs subgroups of {} lanes", wide.lanes()),
                limit: "subgroup_min_size",
                requested: wide.lanes() as u64,
                max: subgroup_min as u64,
            });
        }
        let tiling =
            if wide.workgroup_bytes() <= workgroup_bytes as u64 { wide } else { Tiling { block_keys: 16, ..wide } };
        if tiling.workgroup_bytes() > workgroup_bytes as u64 {
            return Err(GpuError::LimitExceeded {
                what: format!("attention workgroup memory (head_dim {head_dim})"),
                limit: "max_compute_workgroup_storage_size",
                requested: tiling.workgroup_bytes(),
                max: workgroup_bytes as u64,
            });
        }
        Ok(tiling)
    }

    /// Invocations per query (`LANES` in the shader).
    fn lanes(self) -> usize {
        self.head_dim / 16
    }

    /// Bytes of `var<workgroup>` the shader declares: K and V tiles, key states, staged scores.
    fn workgroup_bytes(self) -> u64 {
        (2 * self.block_keys * self.head_dim * 4 + self.block_keys * 4 + BLOCK_QUERIES * (self.block_keys + 1) * 4)
            as u64
    }

    fn constants(self) -> [(&'static str, f64); 2] {
        [("HEAD_DIM", self.head_dim as f64), ("BLOCK_KEYS", self.block_keys as f64)]
    }
}

fn spec<'a>(constants: &'a [(&'static str, f64)]) -> KernelSpec<'a> {
    KernelSpec { shader: &ATTENTION, entry: "attention", constants, bindings: BINDINGS, params: PARAMS }
}

/// Every pipeline this launcher can build, for shader validation.
pub fn variants() -> Vec<KernelVariant> {
    let mut variants = Vec::new();
    for head_dim in HEAD_DIMS {
        for block_keys in [16, 32] {
            variants.push(KernelVariant::from(&spec(&Tiling { head_dim, block_keys }.constants())));
        }
    }
    variants
}

/// `out[r, head h] = softmax(q·kᵀ/√head_dim + mask)·v` over the keys of row r's sequence, for
/// `seqs` independent sequences of `seq_len` rows (row `r = s·seq_len + i`).
///
/// `qkv` is f32 `[seqs·seq_len, 3·d]` (q, k, v column blocks, head h at columns
/// `[h·head_dim, (h+1)·head_dim)` of each), `d = heads·head_dim`; `key_valid` one u32 per row
/// (0 = padding key, excluded); `out` f32 `[seqs·seq_len, d]`. A sequence without any valid key
/// attends uniformly to all its keys, as Transformers' eager attention does. `head_dim` ≤ 128;
/// `seq_len` has no limit. Needs subgroup operations (head_dim/16 lanes, rounded up to 2, 4 or 8).
#[allow(clippy::too_many_arguments)]
pub fn attention(
    rec: &mut Recorder<'_>,
    qkv: &GpuBuffer,
    key_valid: &GpuBuffer,
    out: &GpuBuffer,
    seqs: usize,
    seq_len: usize,
    heads: usize,
    head_dim: usize,
) -> Result<()> {
    let rows = seqs * seq_len;
    let width = heads * head_dim;
    require(qkv, rows * 3 * width, "attention qkv")?;
    require(key_valid, rows, "attention key_valid")?;
    require(out, rows * width, "attention output")?;
    if rows == 0 || width == 0 {
        return Ok(());
    }
    let gpu = rec.gpu();
    if !gpu.has(wgpu::Features::SUBGROUP) {
        return Err(GpuError::LimitExceeded {
            what: "attention needs subgroup operations (wgpu feature SUBGROUP)".into(),
            limit: "features",
            requested: 1,
            max: 0,
        });
    }
    let subgroup_min = gpu.adapter_info().subgroup_min_size;
    let tiling = Tiling::choose(head_dim, subgroup_min, gpu.limits().max_compute_workgroup_storage_size)?;
    let query_blocks = seq_len.div_ceil(BLOCK_QUERIES);
    let workgroups = seqs * heads * query_blocks;
    let params = Params {
        seq_len: seq_len as u32,
        heads: heads as u32,
        head_dim: head_dim as u32,
        query_blocks: query_blocks as u32,
        workgroups: workgroups as u32,
        scale: (1.0 / (head_dim as f64).sqrt()) as f32,
    };
    let kernel = rec.gpu().kernel(&spec(&tiling.constants()))?;
    let dispatch = grid(rec, workgroups);
    rec.dispatch(&kernel, &[qkv, key_valid, out], &params, dispatch)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_head_dim_gets_the_smallest_tiling_that_fits() {
        for head_dim in 1..=MAX_HEAD_DIM {
            for (subgroup, bytes) in [(8, 32 << 10), (32, 48 << 10)] {
                let tiling = Tiling::choose(head_dim, subgroup, bytes).unwrap();
                assert!(head_dim <= tiling.head_dim && (tiling.head_dim == 32 || 2 * head_dim > tiling.head_dim));
                assert!(tiling.workgroup_bytes() <= bytes as u64, "{tiling:?}");
            }
        }
        assert_eq!(Tiling::choose(128, 32, 48 << 10).unwrap().block_keys, 32);
        assert_eq!(Tiling::choose(128, 8, 32 << 10).unwrap().block_keys, 16);
        assert!(Tiling::choose(MAX_HEAD_DIM + 1, 32, 48 << 10).is_err());
        assert!(Tiling::choose(128, 4, 48 << 10).is_err(), "8 lanes per query need 8-lane subgroups");
    }
}
