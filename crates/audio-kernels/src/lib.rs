//! `audio-kernels`: the WGSL kernels of a pre-norm transformer audio encoder, each a `.wgsl` file
//! under `shaders/`, a launcher here that records onto a [`gpu_core::Recorder`] with
//! caller-provided buffers, and an f64 CPU reference in [`reference`](mod@reference).
//!
//! Launchers take element counts (as typed shapes: [`GemmShape`], [`AttentionShape`], [`QkShape`]), check every
//! buffer against them, and never allocate.

#![warn(missing_docs)]

pub mod attention;
pub mod conv_im2col;
mod coop;
pub mod gather_rows;
pub mod gemm;
mod launch;
pub mod layer_norm;
pub mod log_softmax_gather;
pub mod qk_norm_rope;
pub mod random;
pub mod reference;
pub mod shaders;
mod shapes;
pub mod speaker_fusion;
pub mod variants;

/// The GPU layer the launchers record onto (its context, buffers and `Recorder`), for a crate that takes this one
/// alone.
pub use gpu_core;

pub use attention::{
    AttentionKernels, AttentionRange, attention, rotary_attention, rotary_attention_kernels,
    rotary_attention_on_tensor_cores,
};
pub use conv_im2col::{ConvBatch, conv_im2col};
pub use gather_rows::{RowPairs, gather_rows};
pub use gemm::{
    Activation, Epilogue, MatmulOptions, MatmulPath, Precision, TensorCoreKernel, Tiles, Weight, gemm, gemm_scaled,
};
pub use layer_norm::{LAYER_NORM_EPS, LayerNormParams, Residual, layer_norm, layer_norm_f64, residual_layer_norm};
pub use log_softmax_gather::log_softmax_gather;
pub use qk_norm_rope::{QK_NORM_ROPE_MAX_HEAD_DIM, QkNorm, QkPrologue, RopeTable, qk_norm_rope};
pub use shapes::{AttentionShape, GemmShape, QkShape};
pub use speaker_fusion::{speaker_fusion, speaker_table};
