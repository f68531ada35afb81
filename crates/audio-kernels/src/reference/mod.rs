//! f64 CPU references, one per kernel, written for clarity rather than speed: each kernel's documented standard,
//! which its tests compare the GPU against. Inputs and outputs are row-major f64 slices; the towers in f64
//! (`nemotron-testkit`) compose them. No production code calls them (the LayerNorm reference is the host LayerNorm
//! the speaker fusion runs, [`crate::layer_norm_f64`]).

mod attention;
mod conv_im2col;
mod gather_rows;
mod gemm;
mod log_softmax_gather;
mod qk_norm_rope;
mod speaker_fusion;

pub use crate::layer_norm::layer_norm_f64 as layer_norm;
pub use attention::attention;
pub use conv_im2col::{conv_im2col, conv1d_k3};
pub use gather_rows::gather_rows;
pub use gemm::{gelu, linear, relu};
pub use log_softmax_gather::log_softmax_gather;
pub use qk_norm_rope::{QkNormParams, qk_norm_rope};
pub use speaker_fusion::speaker_fusion;
