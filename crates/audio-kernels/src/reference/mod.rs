//! f64 CPU references, one per kernel, written for clarity rather than speed. Inputs and outputs
//! are row-major f64 slices; the tower reference in `nemotron-towers` composes them.

mod attention;
mod layer_norm;

pub use attention::attention;
pub use layer_norm::layer_norm;
