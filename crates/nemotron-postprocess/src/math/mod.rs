//! The arithmetic the diarization and the alignment share: the logistic sigmoid in the two precisions their
//! upstreams compute it in, scipy's assignment solver, and ([`torch_top_k`]) which indices torch's CPU `topk`
//! picks (the speaker cache's ranking).

mod assignment;
pub mod torch_top_k;

pub use assignment::linear_sum_assignment;

/// `1 / (1 + exp(−x))` in f64: the diarizer's logits as probabilities, for upstream's `extract_speaker_dict` and the
/// encoder-rate probabilities (both compare or average in f64).
pub fn sigmoid(x: f64) -> f64 {
    1.0 / (1.0 + (-x).exp())
}

/// torch's f32 sigmoid, `1 / (1 + exp(−x))` with the exponential rounded to f32: the alignment reproduces
/// Transformers' f32 arithmetic, whose ties decide which speaker a word gets.
pub fn sigmoid_f32(x: f32) -> f32 {
    let e = (-(x as f64)).exp() as f32;
    1.0 / (1.0 + e)
}
