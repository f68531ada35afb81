//! Nothing but its test (`tests/gemm.rs`): a crate that depends on `audio-kernels` alone, as a program outside this
//! repository would, and runs one of its kernels.

#![forbid(unsafe_code)]
