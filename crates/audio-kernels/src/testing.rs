//! Test support shared by this crate's tests and its dependants': a seeded generator, bf16
//! helpers, the relative Frobenius error gate, and one GPU context per test binary.

use std::sync::OnceLock;

use gpu_core::Gpu;

/// SplitMix64: tiny, seedable, and stable across crate versions (goldens depend on it).
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Self(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in [-1, 1).
    pub fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 52) as f64 - 1.0
    }

    /// Uniform integer in `0..n`.
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n.max(1) as u64) as usize
    }

    /// `n` f32 values uniform in [-scale, scale).
    pub fn f32s(&mut self, n: usize, scale: f64) -> Vec<f32> {
        (0..n).map(|_| (self.uniform() * scale) as f32).collect()
    }

    /// `n` bf16 bit patterns of values uniform in [-scale, scale).
    pub fn bf16s(&mut self, n: usize, scale: f64) -> Vec<u16> {
        (0..n).map(|_| half::bf16::from_f64(self.uniform() * scale).to_bits()).collect()
    }
}

/// The seed for a test: `TEST_SEED` when set (to replay a failure), otherwise fresh each run.
pub fn fresh_seed() -> u64 {
    if let Some(seed) = std::env::var("TEST_SEED").ok().and_then(|s| s.parse().ok()) {
        return seed;
    }
    let nanos =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos() as u64).unwrap_or(0);
    nanos ^ (std::process::id() as u64).rotate_left(32)
}

/// bf16 bit patterns widened to f64.
pub fn bf16_to_f64(bits: &[u16]) -> Vec<f64> {
    bits.iter().map(|&b| half::bf16::from_bits(b).to_f64()).collect()
}

/// f32 values widened to f64.
pub fn f32_to_f64(values: &[f32]) -> Vec<f64> {
    values.iter().map(|&v| v as f64).collect()
}

/// ‖got − want‖_F / ‖want‖_F, or +∞ when `got` holds a non-finite value or the lengths differ.
pub fn rel_frobenius(got: &[f32], want: &[f64]) -> f64 {
    if got.len() != want.len() || got.iter().any(|v| !v.is_finite()) {
        return f64::INFINITY;
    }
    let (mut diff, mut norm) = (0.0f64, 0.0f64);
    for (&g, &w) in got.iter().zip(want) {
        diff += (g as f64 - w) * (g as f64 - w);
        norm += w * w;
    }
    (diff / norm.max(f64::MIN_POSITIVE)).sqrt()
}

/// Asserts `rel_frobenius(got, want) <= tolerance`, printing the error either way.
pub fn assert_close(what: &str, got: &[f32], want: &[f64], tolerance: f64) {
    let error = rel_frobenius(got, want);
    eprintln!("{what}: relative Frobenius error {error:.3e} (tolerance {tolerance:.0e})");
    assert!(
        error <= tolerance,
        "{what}: relative Frobenius error {error:.3e} exceeds {tolerance:.0e} (len {} vs {}, first got {:?})",
        got.len(),
        want.len(),
        &got[..got.len().min(4)]
    );
}

/// One context per test binary, from the environment (`WGPU_ADAPTER_NAME`, `WGPU_BACKEND`).
/// Panics when no adapter exists: a GPU test must fail, never skip.
pub fn test_gpu() -> &'static Gpu {
    static GPU: OnceLock<Gpu> = OnceLock::new();
    GPU.get_or_init(|| match Gpu::new() {
        Ok(gpu) => {
            eprintln!("{}", gpu.describe());
            gpu
        }
        Err(e) => panic!("GPU tests need an adapter (install mesa-vulkan-drivers for lavapipe): {e}"),
    })
}

/// A buffer of `len` NaNs, so any element a kernel fails to write fails the comparison.
pub fn poisoned(gpu: &Gpu, label: &str, len: usize) -> gpu_core::GpuBuffer {
    match gpu.upload_f32(label, &vec![f32::NAN; len]) {
        Ok(buffer) => buffer,
        Err(e) => panic!("allocating poisoned `{label}`: {e}"),
    }
}
