//! f64 CPU references, one per kernel, written for clarity rather than speed. Inputs and outputs
//! are row-major f64 slices; the tower reference in `nemotron-towers` composes them.

mod attention;
mod conv_im2col;
mod gemm;
mod qk_norm_rope;
mod speaker_fusion;

pub use attention::attention;
pub use conv_im2col::{conv_im2col, conv1d_k3};
pub use gemm::{gelu, linear, relu};
// LayerNorm's reference is production code too (the fusion's 8-wide speaker norm runs on the host), so it lives
// with its kernel.
pub use crate::layer_norm::host_layer_norm as layer_norm;
pub use qk_norm_rope::{QkNormParams, qk_norm_rope};
pub use speaker_fusion::speaker_fusion;
