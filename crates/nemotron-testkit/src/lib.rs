//! `nemotron-testkit`: what the workspace's tests, benches and `cargo xtask` share, kept out of the libraries'
//! public API (`publish = false`; the crates list it as a dev-dependency, xtask as a dependency):
//! - [`compare`]: the relative Frobenius error gates every GPU result is held to;
//! - [`context`]: one GPU context per test binary on the adapter the environment names, the matrix settings,
//!   fresh seeds, poisoned outputs;
//! - [`reference`](mod@reference): the towers in f64 on the CPU, composed from the kernels' f64 references in
//!   `audio_kernels::reference`: the standard the GPU towers are tested against;
//! - [`golden`]: the recipes of the generated test data under `testdata/golden/` (`cargo xtask golden`);
//! - [`wav`]: the test recordings (16 kHz mono WAV) as samples, for the tests below the engine's audio readers.

#![warn(missing_docs)]
#![forbid(unsafe_code)]

pub mod compare;
pub mod context;
pub mod golden;
pub mod reference;
pub mod wav;

pub use audio_kernels::random::Rng;
pub use compare::{
    assert_close, assert_close_to_scale, bf16_to_f64, error_against, f32_to_f64, frobenius, rel_frobenius,
};
pub use context::{fresh_seed, poisoned, test_gpu, test_gpu_options, test_matmul};
/// The model crate and the post-processing crate, for the tests of front ends that check their outputs against the
/// libraries' own functions (checkpoints, tensor files, segment rules, RTTM and subtitle writers): a front end's
/// manifest names only the engine it is built on.
pub use nemotron_postprocess as postprocess;
pub use nemotron_towers as towers;
pub use wav::read_wav;
