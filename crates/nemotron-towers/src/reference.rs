//! The towers in f64 on the CPU, composed from the kernel references of `audio-kernels`. Slow
//! and plain: the standard the GPU towers are tested against.

use audio_kernels::reference as k;

use crate::checkpoint::Checkpoint;
use crate::config::{DiarizationConfig, EncoderConfig};
use crate::error::Result;
use crate::names::ModelNames;
use crate::tower::TowerKind;
use crate::weights::{self, HostStore};
pub use crate::weights::{EncoderWeights, HeadWeights, HostMatrix, Layer, Linear, Norm};

/// f64 encoder weights.
pub type HostEncoder = EncoderWeights<HostMatrix, Vec<f64>>;
/// f64 Sortformer head weights.
pub type HostHead = HeadWeights<HostMatrix, Vec<f64>>;

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

/// The input projection alone: stacked features → `[n, d]` (the Sortformer's cached embeddings).
pub fn embed(w: &HostEncoder, features: &[f64], rows: usize) -> Vec<f64> {
    let p = &w.input_projection;
    k::linear(features, &p.data, None, rows, p.rows, p.cols)
}

/// One sequence of `valid.len()` rows through the encoder; `valid[i]` marks row i as a real key.
pub fn encoder(w: &HostEncoder, c: &EncoderConfig, input: TowerInput<'_, f64>, valid: &[bool]) -> Vec<f64> {
    let n = valid.len();
    let x = match input {
        TowerInput::Features(f) => embed(w, f, n),
        TowerInput::Embeddings(e) => e.to_vec(),
    };
    let mut h = layer_norm(&w.embed_norm, &x);
    for layer in &w.layers {
        let a = layer_norm(&layer.norm1, &h);
        let mut qkv = k::linear(&a, &layer.qkv.data, None, n, layer.qkv.rows, layer.qkv.cols);
        let norms = layer.qk_norm.as_ref().map(|(q, kn)| (&q.weight[..], &q.bias[..], &kn.weight[..], &kn.bias[..]));
        k::qk_norm_rope(&mut qkv, norms, n, n, c.heads, c.head_dim, c.rotary_dims, c.rope_theta);
        let attended = k::attention(&qkv, valid, 1, n, c.heads, c.head_dim);
        add(&mut h, &apply(&layer.out, &attended, n));
        let m = layer_norm(&layer.norm2, &h);
        let inner: Vec<f64> = apply(&layer.fc1, &m, n).into_iter().map(k::gelu).collect();
        add(&mut h, &apply(&layer.fc2, &inner, n));
    }
    layer_norm(&w.final_norm, &h)
}

/// Encoder output `[n, d]` → speaker logits `[n·subsampling, speakers]` (spec §1.2 head).
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
