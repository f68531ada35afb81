//! The towers in f64 on the CPU, composed from the kernel references of `audio-kernels`. Slow
//! and plain: the standard the GPU towers are tested against.

use audio_kernels::reference as k;
use audio_kernels::{AttentionShape, QkShape};

use nemotron_towers::checkpoint::Checkpoint;
use nemotron_towers::config::{ChunkConfig, DiarizationConfig, EncoderConfig, TowerKind, WordTimestampConfig};
use nemotron_towers::internals::chunks::{schedule, window_keys};
use nemotron_towers::internals::names::ModelNames;
use nemotron_towers::internals::weights::{self, HostStore};
pub use nemotron_towers::internals::weights::{
    EncoderWeights, HeadWeights, HostMatrix, Layer, Linear, Norm, WordTimestampWeights,
};
use nemotron_towers::{Error, Result};

/// f64 encoder weights.
pub type HostEncoder = EncoderWeights<HostMatrix, Vec<f64>>;
/// f64 Sortformer head weights.
pub type HostHead = HeadWeights<HostMatrix, Vec<f64>>;

/// f64 word-timestamp head weights (the upsampler already as its `[f·d, d]` matrix).
pub type HostWordTimestamps = WordTimestampWeights<HostMatrix, Vec<f64>>;

/// f64 copies of the word-timestamp head's weights in `checkpoint` (either Transcribe name set).
pub fn load_word_timestamps(checkpoint: &Checkpoint, config: &WordTimestampConfig) -> Result<HostWordTimestamps> {
    let names = ModelNames::detect(checkpoint)?;
    weights::word_timestamps(&mut HostStore(checkpoint), names.word_timestamp_names(checkpoint)?, config)
}

/// f64 copies of the `kind` encoder's weights in `checkpoint` (any of the three name sets).
pub fn load_encoder(checkpoint: &Checkpoint, kind: TowerKind, config: &EncoderConfig) -> Result<HostEncoder> {
    let names = ModelNames::detect(checkpoint)?;
    weights::encoder(&mut HostStore(checkpoint), names.encoder(kind, checkpoint)?, config)
}

/// f64 copies of the Sortformer head's weights in `checkpoint`.
pub fn load_head(checkpoint: &Checkpoint, config: &DiarizationConfig) -> Result<HostHead> {
    let names = ModelNames::detect(checkpoint)?;
    weights::head(&mut HostStore(checkpoint), &names.head, config)
}

const EPS: f64 = audio_kernels::LAYER_NORM_EPS as f64;

/// What enters the tower: stacked features `[n, subsampling·mel]` or embedded rows `[n, d]`.
#[derive(Clone, Copy, Debug)]
pub enum TowerInput<'a, T> {
    /// Stacked log-mel rows, projected by the tower's input projection.
    Features(&'a [T]),
    /// Already projected rows.
    Embeddings(&'a [T]),
}

fn apply(linear: &Linear<HostMatrix, Vec<f64>>, x: &[f64], rows: usize) -> Vec<f64> {
    let w = &linear.weight;
    k::linear(x, &w.data, linear.bias.as_deref(), rows, w.rows, w.cols)
}

fn layer_norm(norm: &Norm<Vec<f64>>, x: &[f64]) -> Vec<f64> {
    k::layer_norm(x, &norm.weight, &norm.bias, norm.weight.len(), EPS)
}

/// The input projection alone: stacked features → `[n, d]` (the Sortformer's cached embeddings). A tower without
/// one (the word-timestamp encoder) is refused.
pub fn embed(w: &HostEncoder, features: &[f64], rows: usize) -> Result<Vec<f64>> {
    let p = w.input_projection.as_ref().ok_or(Error::NoInputProjection)?;
    Ok(k::linear(features, &p.data, None, rows, p.rows, p.cols))
}

/// One sequence of `valid.len()` rows through the encoder; `valid[i]` marks row i as a real key. Features into a
/// tower without an input projection are refused.
pub fn encoder(w: &HostEncoder, c: &EncoderConfig, input: TowerInput<'_, f64>, valid: &[bool]) -> Result<Vec<f64>> {
    let n = valid.len();
    let x = match input {
        TowerInput::Features(f) => embed(w, f, n)?,
        TowerInput::Embeddings(e) => e.to_vec(),
    };
    let mut h = layer_norm(&w.embed_norm, &x);
    let shape = AttentionShape { seqs: 1, seq_len: n, heads: c.heads, head_dim: c.head_dim };
    for layer in &w.layers {
        let a = layer_norm(&layer.norm1, &h);
        let mut qkv = k::linear(&a, &layer.qkv.data, None, n, layer.qkv.rows, layer.qkv.cols);
        let norms = layer.qk_norm.as_ref().map(|(q, kn)| (&q.weight[..], &q.bias[..], &kn.weight[..], &kn.bias[..]));
        k::qk_norm_rope(&mut qkv, norms, QkShape::from(shape), c.rotary_dims, c.rope_theta);
        let attended = k::attention(&qkv, valid, shape);
        add(&mut h, &apply(&layer.out, &attended, n));
        let m = layer_norm(&layer.norm2, &h);
        let inner: Vec<f64> = apply(&layer.fc1, &m, n).into_iter().map(k::gelu).collect();
        add(&mut h, &apply(&layer.fc2, &inner, n));
    }
    Ok(layer_norm(&w.final_norm, &h))
}

/// Encoder output `[n, d]` → speaker logits `[n·subsampling, speakers]` (docs/model.md §6.1).
pub fn head(w: &HostHead, c: &DiarizationConfig, encoded: &[f64], n: usize) -> Vec<f64> {
    let h = c.head_hidden;
    let projected = apply(&w.proj, encoded, n);
    let up = &w.upsample;
    let bias = up.bias.as_deref().unwrap_or(&[]);
    let upsampled = k::conv1d_k3(&projected, &up.weight.data, bias, n, h, up.weight.rows);
    // Each frame's channels are `subsampling` consecutive sub-frames of `h` values.
    let sub_rows = n * c.encoder.subsampling;
    let relu = |v: Vec<f64>| v.into_iter().map(k::relu).collect::<Vec<f64>>();
    let hidden = relu(apply(&w.dense, &relu(upsampled), sub_rows));
    apply(&w.out, &hidden, sub_rows)
}

fn add(h: &mut [f64], delta: &[f64]) {
    h.iter_mut().zip(delta).for_each(|(a, b)| *a += b);
}

/// One independent sequence of the word-timestamp encoder: ASR states `[n, d]` with their key flags → `[f·n, d]`
/// hidden states. The upsampler's `[n, f·d]` product read as `[f·n, d]` is in time order; positions restart at 0;
/// `y = x + residual_scale·LN_final(h)` with x the upsampled rows.
pub fn word_timestamp_sequence(
    w: &HostWordTimestamps,
    c: &WordTimestampConfig,
    states: &[f64],
    valid: &[bool],
) -> Result<Vec<f64>> {
    let (n, f) = (valid.len(), c.upsampling_factor);
    let up = &w.upsampler;
    let bias: Vec<f64> = match up.bias.as_deref() {
        Some(b) => (0..f).flat_map(|_| b.iter().copied()).collect(),
        None => vec![0.0; up.weight.rows],
    };
    let x = k::linear(states, &up.weight.data, Some(&bias), n, up.weight.rows, up.weight.cols);
    let keys: Vec<bool> = valid.iter().flat_map(|&v| std::iter::repeat_n(v, f)).collect();
    let normed = encoder(&w.encoder, &c.encoder, TowerInput::Embeddings(&x), &keys)?;
    Ok(x.iter().zip(&normed).map(|(x, h)| x + c.residual_scale * h).collect())
}

/// ASR states `[T, d]` with the first `valid_frames` encoder frames valid → `[f·T, d]` hidden states, each chunk of
/// the ASR schedule run as its own sequence and its own frames kept (`get_word_timestamp_hidden_states`; a window
/// without valid frames runs unmasked, where upstream gives NaN).
pub fn word_timestamp_hidden_states(
    w: &HostWordTimestamps,
    c: &WordTimestampConfig,
    chunks: &ChunkConfig,
    states: &[f64],
    valid_frames: usize,
) -> Result<Vec<f64>> {
    let (d, f) = (c.encoder.hidden, c.upsampling_factor);
    let frames = states.len() / d;
    let mut out = vec![0.0; frames * f * d];
    for k in schedule(frames, chunks) {
        let keys = window_keys(&k, valid_frames);
        let y = word_timestamp_sequence(w, c, &states[k.context_start * d..k.context_end * d], &keys)?;
        let rows = f * (k.end - k.start);
        out[f * k.start * d..][..rows * d].copy_from_slice(&y[f * k.lookback() * d..][..rows * d]);
    }
    Ok(out)
}

/// Hidden states `[rows, d]` → raw CTC logits `[rows, vocab]` (the k=1 classifier), the blank last.
pub fn word_timestamp_logits(w: &HostWordTimestamps, hidden: &[f64], rows: usize) -> Vec<f64> {
    apply(&w.classifier, hidden, rows)
}
