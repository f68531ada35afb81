//! Masked multi-head attention launcher (`shaders/attention.wgsl`), flash style.

use gpu_core::{Access, GpuBuffer, GpuError, KernelSpec, Recorder, Result};

use crate::launch::{grid, require};
use crate::shaders::{ATTENTION, Variant};

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

const BINDINGS: &[Access] = &[Access::Read, Access::Read, Access::ReadWrite];

/// The specialisation for one head dimension: the padded head dimension the loops unroll over,
/// and the key tile, halved at 128 so the staged tiles fit 32 KiB of workgroup memory.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Tiling {
    head_dim: usize,
    block_keys: usize,
}

const TILINGS: [Tiling; 3] = [
    Tiling { head_dim: 32, block_keys: 32 },
    Tiling { head_dim: 64, block_keys: 32 },
    Tiling { head_dim: 128, block_keys: 16 },
];

impl Tiling {
    fn for_head_dim(head_dim: usize) -> Result<Self> {
        TILINGS.into_iter().find(|t| head_dim <= t.head_dim).ok_or_else(|| GpuError::LimitExceeded {
            what: "attention head_dim".into(),
            limit: "MAX_HEAD_DIM",
            requested: head_dim as u64,
            max: MAX_HEAD_DIM as u64,
        })
    }

    /// Bytes of `var<workgroup>` the shader declares for this tiling (query block, K/V tile and
    /// probabilities with their padding, row factors).
    fn workgroup_bytes(self) -> u64 {
        let vec_dim = self.head_dim / 4;
        let vec4s = BLOCK_QUERIES * vec_dim + self.block_keys * (vec_dim + 1);
        let floats = BLOCK_QUERIES * (self.block_keys + 1) + BLOCK_QUERIES;
        (16 * vec4s + 4 * floats) as u64
    }

    fn constants(self) -> [(&'static str, f64); 2] {
        [("HEAD_DIM", self.head_dim as f64), ("BLOCK_KEYS", self.block_keys as f64)]
    }
}

fn spec<'a>(constants: &'a [(&'static str, f64)]) -> KernelSpec<'a> {
    KernelSpec { shader: &ATTENTION, entry: "attention", constants, bindings: BINDINGS }
}

/// Every pipeline this launcher can build, for shader validation.
pub fn variants() -> Vec<Variant> {
    TILINGS.iter().map(|t| Variant::of(&spec(&t.constants()))).collect()
}

/// `out[r, head h] = softmax(q·kᵀ/√head_dim + mask)·v` over the keys of row r's sequence, for
/// `seqs` independent sequences of `seq_len` rows (row `r = s·seq_len + i`).
///
/// `qkv` is f32 `[seqs·seq_len, 3·d]` (q, k, v column blocks, head h at columns
/// `[h·head_dim, (h+1)·head_dim)` of each), `d = heads·head_dim`; `key_valid` one u32 per row
/// (0 = padding key, excluded); `out` f32 `[seqs·seq_len, d]`. A sequence without any valid key
/// attends uniformly to all its keys, as Transformers' eager attention does. `head_dim` ≤ 128;
/// `seq_len` has no limit.
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
    let tiling = Tiling::for_head_dim(head_dim)?;
    let rows = seqs * seq_len;
    let width = heads * head_dim;
    require(qkv, rows * 3 * width, "attention qkv")?;
    require(key_valid, rows, "attention key_valid")?;
    require(out, rows * width, "attention output")?;
    if rows == 0 || width == 0 {
        return Ok(());
    }
    let limits = rec.gpu().limits();
    let bytes = tiling.workgroup_bytes();
    if bytes > limits.max_compute_workgroup_storage_size as u64 {
        return Err(GpuError::LimitExceeded {
            what: format!("attention workgroup memory (head_dim {head_dim})"),
            limit: "max_compute_workgroup_storage_size",
            requested: bytes,
            max: limits.max_compute_workgroup_storage_size as u64,
        });
    }
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
    fn every_head_dim_gets_the_smallest_tiling_that_fits_32_kib() {
        for head_dim in 1..=MAX_HEAD_DIM {
            let tiling = Tiling::for_head_dim(head_dim).unwrap();
            assert!(head_dim <= tiling.head_dim && (tiling.head_dim == 32 || 2 * head_dim > tiling.head_dim));
            assert!(tiling.workgroup_bytes() <= 32 << 10, "{tiling:?}: {} bytes", tiling.workgroup_bytes());
        }
        assert!(Tiling::for_head_dim(MAX_HEAD_DIM + 1).is_err());
    }
}
