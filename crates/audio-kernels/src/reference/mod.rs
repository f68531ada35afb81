//! f64 CPU references, one per kernel, written for clarity rather than speed. Inputs and outputs
//! are row-major f64 slices; the tower reference in `nemotron-towers` composes them.

mod gemm;
mod layer_norm;

pub use gemm::{gelu, linear, relu};
pub use layer_norm::layer_norm;
