//! Masked multi-head attention, on either of two kernels:
//! - `f32_kernel` (`shaders/attention.wgsl`, flash style, in the two variants of [`Exchange`]): any device;
//!   [`attention_split`]. Its `merge` adds the key slices of both kernels.
//! - [`tensor_core`] (`shaders/attention_coop.wgsl`): cooperative matrices, f32-accurate, or each product once over
//!   operands rounded to f16 for [`Precision::Fast`].
//!
//! Both split the keys by one plan (`key_splits`: [`KeySplits`]). The entry points here, [`attention`] and
//! [`rotary_attention`], choose the kernel. Imports run one way: `key_splits` ← `f32_kernel` ← `tensor_core` ← this
//! file.

mod f32_kernel;
mod key_splits;
pub mod tensor_core;

pub use f32_kernel::{Exchange, MAX_HEAD_DIM, attention_split};
pub use key_splits::KeySplits;

use std::collections::BTreeMap;

use gpu_core::{GpuBuffer, GpuError, KernelVariant, Recorder, Result};

use crate::gemm::Precision;
use crate::qk_norm_rope::{QkPrologue, qk_norm_rope};
use crate::shapes::{AttentionShape, QkShape};
use tensor_core::{Products, attention_coop};

/// Every pipeline either kernel can build.
pub(crate) fn variants() -> Vec<KernelVariant> {
    [f32_kernel::variants(), tensor_core::variants()].concat()
}

/// `out[r, head h] = softmax(q·kᵀ/√head_dim + mask)·v` over the keys of row r's sequence, for the `shape.seqs`
/// independent sequences of `shape.seq_len` rows (row `r = s·seq_len + i`).
///
/// Buffers `[qkv, key_valid, out]`: `qkv` is f32 `[rows, 3·d]` (q, k, v column blocks, head h at columns
/// `[h·head_dim, (h+1)·head_dim)` of each), `d = heads·head_dim`; `key_valid` one u32 per row
/// (0 = padding key, excluded); `out` f32 `[rows, d]`. A sequence without any valid key
/// attends uniformly to all its keys, as Transformers' eager attention does. `head_dim` ≤ 128;
/// `seq_len` has no limit. Runs with or without subgroup operations ([`Exchange::of`] picks the variant); fails
/// with [`GpuError::LimitExceeded`] naming `max_compute_workgroup_storage_size` where the device's workgroup memory
/// cannot hold the smallest tiling (16 queries: 27.75 KiB at head_dim 128 without subgroups, 15.75 KiB at 64). With
/// [`Precision::Auto`] (f32-accurate) or [`Precision::Fast`] (each product once, operands rounded to f16) it runs on
/// tensor cores where the device has them and they were measured faster ([`tensor_core::chosen`]), else on the f32
/// kernel.
pub fn attention(
    rec: &mut Recorder<'_>,
    buffers: [&GpuBuffer; 3],
    shape: AttentionShape,
    precision: Precision,
) -> Result<()> {
    if let Some(products) = tensor_core_products(rec.gpu(), shape, precision) {
        return attention_coop(rec, buffers, shape, None, (None, KeySplits::Auto), products);
    }
    attention_split(rec, buffers, shape, KeySplits::Auto)
}

/// [`qk_norm_rope`] then [`attention`], as the towers run them, over `qkv` as the q/k/v product wrote it: buffers
/// `[qkv, key_valid, out]` (every sequence's positions start at 0). Where
/// the attention runs on tensor cores ([`rotary_attention_on_tensor_cores`]), its operand pass adds the product's
/// slices (`prologue.slices`), applies the norm and the rotation as it splits q, k and v, and qkv is left as it was;
/// on the f32 kernel, `qk_norm_rope` rewrites q and k in place first, and qkv must hold one slice.
pub fn rotary_attention(
    rec: &mut Recorder<'_>,
    [qkv, key_valid, out]: [&GpuBuffer; 3],
    prologue: &QkPrologue<'_>,
    shape: AttentionShape,
    precision: Precision,
) -> Result<()> {
    if let Some(products) = tensor_core_products(rec.gpu(), shape, precision) {
        return attention_coop(rec, [qkv, key_valid, out], shape, Some(prologue), (None, KeySplits::Auto), products);
    }
    if prologue.slices > 1 {
        return Err(GpuError::Validation(format!(
            "the f32 attention reads q/k/v whole, not in {} slices",
            prologue.slices
        )));
    }
    qk_norm_rope(rec, qkv, prologue.rope, prologue.norm, QkShape::from(shape))?;
    attention_split(rec, [qkv, key_valid, out], shape, KeySplits::Auto)
}

/// Whether [`rotary_attention`] (and [`attention`]) take the tensor-core kernel for this shape and precision: then
/// the q/k/v product may come in slices.
pub fn rotary_attention_on_tensor_cores(gpu: &gpu_core::Gpu, shape: AttentionShape, precision: Precision) -> bool {
    tensor_core_products(gpu, shape, precision).is_some()
}

/// The products the tensor-core kernel runs `shape` with at `precision`, where [`attention`] takes it.
fn tensor_core_products(gpu: &gpu_core::Gpu, shape: AttentionShape, precision: Precision) -> Option<Products> {
    Products::of(precision).filter(|&products| tensor_core::chosen(gpu, shape, products))
}

/// The pipelines [`rotary_attention`] can record in one tower, and on which kernels.
#[derive(Clone, Debug, Default)]
pub struct AttentionKernels {
    /// Some batch runs on the tensor-core kernel (then the q/k/v product may come in slices).
    pub tensor_cores: bool,
    /// Some batch runs on the f32 kernel (after `qk_norm_rope`).
    pub f32: bool,
    /// The pipelines, each once, by label.
    pub kernels: Vec<KernelVariant>,
}

/// The heads of a tower's attention, and the batches it runs: sequences of up to `longest` rows, at most `max_rows`
/// rows in all.
#[derive(Clone, Copy, Debug)]
pub struct AttentionRange {
    /// Heads.
    pub heads: usize,
    /// Values per head.
    pub head_dim: usize,
    /// q and k are LayerNormed per head before the rotation.
    pub has_norm: bool,
    /// The longest sequence.
    pub longest: usize,
    /// Most rows of a batch.
    pub max_rows: usize,
}

/// Every pipeline [`rotary_attention`] records at `precision` over the batches of `range` on `gpu`: each length up to
/// the longest, with one sequence and more. The kernel follows the length alone (a batch whose operand planes outgrow
/// a binding runs in groups on the same pipelines); more sequences make more query blocks, so fewer key slices on
/// either kernel, and the batches after the first that neither kernel splits record the same pipelines.
pub fn rotary_attention_kernels(gpu: &gpu_core::Gpu, range: AttentionRange, precision: Precision) -> AttentionKernels {
    let AttentionRange { heads, head_dim, has_norm, longest, max_rows } = range;
    let profile = gpu.profile();
    let mut found = AttentionKernels::default();
    let mut kernels = BTreeMap::new();
    let mut add = |variant: KernelVariant| {
        kernels.entry(variant.label()).or_insert(variant);
    };
    // Records the kernels `shape` takes; answers whether either kernel would split its keys.
    let mut take = |seqs: usize, seq_len: usize| {
        let shape = AttentionShape { seqs, seq_len, heads, head_dim };
        let f32_kernel = f32_kernel::kernel(profile, shape);
        let products = Products::of(precision).unwrap_or(Products::Split);
        let coop = tensor_core::kernels(profile, shape, Some(has_norm), products);
        let on_tensor_cores = rotary_attention_on_tensor_cores(gpu, shape, precision);
        let runs = if on_tensor_cores {
            coop.clone().map(|(pair, split)| (pair.to_vec(), split))
        } else {
            f32_kernel.clone().map(|(kernel, split)| (vec![crate::qk_norm_rope::kernel(has_norm), kernel], split))
        };
        if let Some((pipelines, split)) = runs {
            found.tensor_cores |= on_tensor_cores;
            found.f32 |= !on_tensor_cores;
            pipelines.into_iter().for_each(&mut add);
            if split {
                add(f32_kernel::merge_kernel());
            }
        }
        f32_kernel.is_some_and(|(_, split)| split) || coop.is_some_and(|(_, split)| split)
    };
    for seq_len in 1..=longest.min(max_rows) {
        let most = max_rows / seq_len;
        let mut seqs = 1;
        while take(seqs, seq_len) && seqs < most {
            seqs += 1;
        }
        take(most, seq_len);
    }
    found.kernels = kernels.into_values().collect();
    found
}
