//! `audio-kernels`: the WGSL kernels of a pre-norm transformer audio encoder, each a `.wgsl` file
//! under `shaders/`, a launcher here that records onto a [`gpu_core::Recorder`] with
//! caller-provided buffers, and an f64 CPU reference in [`reference`].
//!
//! Launchers take element counts, check every buffer against them, and never allocate.

pub mod gemm;
mod launch;
pub mod layer_norm;
pub mod reference;
pub mod shaders;
pub mod testing;

pub use gemm::{Activation, Epilogue, gemm};
pub use layer_norm::{LAYER_NORM_EPS, layer_norm};
