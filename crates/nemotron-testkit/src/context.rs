//! The GPU context, matrix settings and seeds tests run with, and poisoned outputs.

use gpu_core::blocking::Block;
use std::sync::OnceLock;

use audio_kernels::gemm::KSplit;
use audio_kernels::{MatmulOptions, Precision};
use gpu_core::wgpu::Backends;
use gpu_core::{Gpu, GpuOptions};

/// The seed for a test: `TEST_SEED` when set (to replay a failure), otherwise fresh each run.
pub fn fresh_seed() -> u64 {
    if let Some(seed) = std::env::var("TEST_SEED").ok().and_then(|s| s.parse().ok()) {
        return seed;
    }
    let nanos =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos() as u64).unwrap_or(0);
    nanos ^ (std::process::id() as u64).rotate_left(32)
}

/// A variable of the environment (the libraries read none: the tests' settings are read here, the programs' by
/// `nemotron-engine`); empty or blank counts as unset.
fn variable(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

/// The adapter tests run on: `WGPU_ADAPTER_NAME` and `WGPU_BACKEND` steer the tests as they steer the programs (no
/// pipeline cache is kept).
pub fn test_gpu_options() -> GpuOptions {
    GpuOptions {
        adapter_name: variable("WGPU_ADAPTER_NAME"),
        backends: variable("WGPU_BACKEND").map_or(Backends::PRIMARY, |list| Backends::from_comma_list(&list)),
        ..GpuOptions::default()
    }
}

/// One context per test binary, on [`test_gpu_options`]'s adapter.
/// Panics when no adapter exists: a GPU test must fail, never skip.
pub fn test_gpu() -> &'static Gpu {
    static GPU: OnceLock<Gpu> = OnceLock::new();
    GPU.get_or_init(|| match Gpu::with_options(&test_gpu_options()).block() {
        Ok(gpu) => {
            eprintln!("{}", gpu.describe());
            gpu
        }
        Err(e) => panic!("GPU tests need an adapter (install mesa-vulkan-drivers for lavapipe): {e}"),
    })
}

/// The matrix settings tests run with: the defaults, with the precision of `NEMOTRON_PRECISION` as the programs read
/// it (`f32` tests the f32 path on an adapter with tensor cores), and the k split of `NEMOTRON_K_SPLIT` (`stream`
/// runs the split products by stream-k).
pub fn test_matmul() -> MatmulOptions {
    let precision = variable("NEMOTRON_PRECISION").map(|text| {
        let text = text.trim().to_ascii_lowercase();
        text.parse::<Precision>().unwrap_or_else(|e| panic!("NEMOTRON_PRECISION={e}"))
    });
    let k_split = variable("NEMOTRON_K_SPLIT").map(|text| {
        let text = text.trim().to_ascii_lowercase();
        text.parse::<KSplit>().unwrap_or_else(|e| panic!("NEMOTRON_K_SPLIT={e}"))
    });
    MatmulOptions {
        precision: precision.unwrap_or_default(),
        k_split: k_split.unwrap_or_default(),
        ..MatmulOptions::default()
    }
}

/// A buffer of `len` NaNs, so any element a kernel fails to write fails the comparison.
pub fn poisoned(gpu: &Gpu, label: &str, len: usize) -> gpu_core::GpuBuffer {
    match gpu.upload_f32(label, &vec![f32::NAN; len]) {
        Ok(buffer) => buffer,
        Err(e) => panic!("allocating poisoned `{label}`: {e}"),
    }
}
