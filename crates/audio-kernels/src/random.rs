//! A seeded generator for random weights and inputs (benchmarks, generated test data, tests).

/// SplitMix64: tiny, seedable, and stable across crate versions (goldens depend on it).
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// A generator whose sequence is fixed by `seed`.
    pub fn new(seed: u64) -> Self {
        Self(seed)
    }

    /// The next 64 random bits.
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
