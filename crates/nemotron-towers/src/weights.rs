//! The weights of the towers, generic over where they live: a [`WeightStore`] turns checkpoint
//! tensors into matrices and vectors of its own kind. The same traversal lists the expected
//! tensors ([`Expectations`]), loads f64 copies for the CPU reference ([`HostStore`]) and uploads
//! bf16/f32 buffers for the GPU ([`GpuStore`]), or makes random ones ([`RandomStore`]).
//!
//! One load path, after candle's `VarBuilder`: a source of weights is checked once against the
//! config (a checkpoint by [`GpuStore::checked`], every tensor's name, shape and dtype with all
//! problems reported at once), then each GPU layer is built from a [`GpuWeights`] store and the
//! names of its tensors (`names.rs`, which plays the part of the builder's prefix: the two layouts
//! differ by more than a prefix), and its config. The random model is built the same way from a
//! [`RandomStore`].

use audio_kernels::random::Rng;
use audio_kernels::{LAYER_NORM_EPS, LayerNormParams, MatmulOptions, Weight};
use gpu_core::{Gpu, GpuBuffer, GpuError};

use crate::checkpoint::Checkpoint;
use crate::config::{DiarizationConfig, EncoderConfig, WordTimestampConfig};
use crate::error::Result;
use crate::names::{EncoderNames, FusionNames, HeadNames, WordTimestampNames};
use crate::tensor_file::Tensor;

/// LayerNorm parameters.
#[derive(Clone, Debug)]
pub struct Norm<V> {
    /// Per-feature scale γ (`….weight`).
    pub weight: V,
    /// Per-feature shift β (`….bias`).
    pub bias: V,
}

impl Norm<GpuBuffer> {
    /// The launchers' view of it, with the model's ε.
    pub fn params(&self) -> LayerNormParams<'_> {
        LayerNormParams { weight: &self.weight, bias: &self.bias, eps: LAYER_NORM_EPS }
    }
}

/// A `[out, in]` weight and an optional bias.
#[derive(Clone, Debug)]
pub struct Linear<M, V> {
    /// The `[out, in]` matrix, as PyTorch stores it (`….weight`).
    pub weight: M,
    /// The `[out]` bias (`….bias`); `None` for the bias-free projections.
    pub bias: Option<V>,
}

/// One pre-norm transformer block.
#[derive(Clone, Debug)]
pub struct Layer<M, V> {
    /// `[d]` LayerNorm before attention (`norm1`).
    pub norm1: Norm<V>,
    /// Fused q/k/v `[3d, d]`, rows q then k then v, head-major inside each block.
    pub qkv: M,
    /// Per-head q and k LayerNorms (`[head_dim]` each), when the tower has them.
    pub qk_norm: Option<(Norm<V>, Norm<V>)>,
    /// Attention output projection `[d, d]` + bias (`attn.out_proj`).
    pub out: Linear<M, V>,
    /// `[d]` LayerNorm before the MLP (`norm2`).
    pub norm2: Norm<V>,
    /// MLP expansion `[intermediate, d]` + bias (`ffn.net.0`), followed by exact-erf GELU.
    pub fc1: Linear<M, V>,
    /// MLP contraction `[d, intermediate]` + bias (`ffn.net.3`).
    pub fc2: Linear<M, V>,
}

/// A whole encoder tower.
#[derive(Clone, Debug)]
pub struct EncoderWeights<M, V> {
    /// Stacked-features projection `[d, subsampling·mel]`, no bias; `None` for a tower fed embedded rows only
    /// (the word-timestamp encoder).
    pub input_projection: Option<M>,
    /// `[d]` LayerNorm after the input projection (`embed_norm`).
    pub embed_norm: Norm<V>,
    /// The transformer blocks, in order (`layers.0` …).
    pub layers: Vec<Layer<M, V>>,
    /// `[d]` LayerNorm on the tower's output (`final_norm`).
    pub final_norm: Norm<V>,
}

/// The Sortformer head after the encoder.
#[derive(Clone, Debug)]
pub struct HeadWeights<M, V> {
    /// `[head, d]` + bias.
    pub proj: Linear<M, V>,
    /// Conv1d `[head·subsampling, head, 3]` read as a `[head·subsampling, 3·head]` matrix + bias.
    pub upsample: Linear<M, V>,
    /// Classifier hidden layer `[head, head]` + bias, between two ReLUs (`first_hidden_to_hidden`).
    pub dense: Linear<M, V>,
    /// `[speakers, head]` + bias.
    pub out: Linear<M, V>,
    /// Embedding `[d]` of the silence slots of the speaker cache.
    pub silence: V,
}

/// The word-timestamp head: upsampler, encoder, classifier.
#[derive(Clone, Debug)]
pub struct WordTimestampWeights<M, V> {
    /// The ConvTranspose1d (kernel = stride = f, weight `[d, d, f]` as `[in, out, k]`) as one `[f·d, d]` matrix:
    /// row `j·d + o` is output channel `o` of phase `j`, so `x·Wᵀ` read row-major as `[f·n, d]` is in time order.
    /// Bias `[d]`, the same for every phase.
    pub upsampler: Linear<M, V>,
    /// The transformer (no input projection).
    pub encoder: EncoderWeights<M, V>,
    /// The k=1 Conv1d `[vocab, d, 1]` as a `[vocab, d]` matrix + bias: the CTC logits, blank last.
    pub classifier: Linear<M, V>,
}

/// Speaker fusion and the projector of a Transcribe checkpoint.
#[derive(Clone, Debug)]
pub struct FusionWeights<M, V> {
    pub asr_norm: Norm<V>,
    pub speaker_norm: Norm<V>,
    pub projector: Linear<M, V>,
}

/// Where weights go.
pub trait WeightStore {
    type Matrix;
    type Vector;
    /// The `[rows, cols]` matrix formed by stacking `parts` (each stored with `part_shape`) by rows.
    fn matrix(&mut self, parts: &[String], part_shape: &[usize], rows: usize, cols: usize) -> Result<Self::Matrix>;
    /// A vector of `len` values.
    fn vector(&mut self, name: &str, len: usize) -> Result<Self::Vector>;
    /// The `[k·out, in]` matrix of a ConvTranspose1d weight `[in, out, k]` stored under `name`: element
    /// `(j·out + o, c)` is `W[c, o, j]` (see [`WordTimestampWeights::upsampler`]).
    fn transposed_conv(&mut self, name: &str, shape: [usize; 3]) -> Result<Self::Matrix>;
}

/// `[in, out, k]` → `[k·out, in]` (see [`WeightStore::transposed_conv`]).
pub fn transposed_conv_rows<T: Copy + Default>(values: &[T], [inp, out, k]: [usize; 3]) -> Vec<T> {
    let mut rows = vec![T::default(); values.len()];
    for c in 0..inp {
        for o in 0..out {
            for j in 0..k {
                rows[(j * out + o) * inp + c] = values[(c * out + o) * k + j];
            }
        }
    }
    rows
}

fn norm<S: WeightStore>(s: &mut S, module: &str, width: usize) -> Result<Norm<S::Vector>> {
    Ok(Norm {
        weight: s.vector(&format!("{module}.weight"), width)?,
        bias: s.vector(&format!("{module}.bias"), width)?,
    })
}

fn linear<S: WeightStore>(s: &mut S, module: &str, out: usize, inp: usize) -> Result<Linear<S::Matrix, S::Vector>> {
    Ok(Linear {
        weight: s.matrix(&[format!("{module}.weight")], &[out, inp], out, inp)?,
        bias: Some(s.vector(&format!("{module}.bias"), out)?),
    })
}

/// Loads (or lists) an encoder's weights.
pub fn encoder<S: WeightStore>(
    s: &mut S,
    names: &EncoderNames,
    c: &EncoderConfig,
) -> Result<EncoderWeights<S::Matrix, S::Vector>> {
    let d = c.hidden;
    let input_projection = match names.input_projection() {
        Some(name) => Some(s.matrix(&[name], &[d, c.stacked_features()], d, c.stacked_features())?),
        None => None,
    };
    let embed_norm = norm(s, &names.embed_norm(), d)?;
    let mut layers = Vec::with_capacity(c.layers);
    for l in 0..c.layers {
        let qkv_parts = names.qkv(l);
        let part_rows = 3 * d / qkv_parts.len();
        let qk_norm = if c.qk_norm {
            Some((norm(s, &names.q_norm(l), c.head_dim)?, norm(s, &names.k_norm(l), c.head_dim)?))
        } else {
            None
        };
        layers.push(Layer {
            norm1: norm(s, &names.norm1(l), d)?,
            qkv: s.matrix(&qkv_parts, &[part_rows, d], 3 * d, d)?,
            qk_norm,
            out: linear(s, &names.out_proj(l), d, d)?,
            norm2: norm(s, &names.norm2(l), d)?,
            fc1: linear(s, &names.fc1(l), c.intermediate, d)?,
            fc2: linear(s, &names.fc2(l), d, c.intermediate)?,
        });
    }
    let final_norm = norm(s, &names.final_norm(), d)?;
    Ok(EncoderWeights { input_projection, embed_norm, layers, final_norm })
}

/// Loads (or lists) the Sortformer head.
pub fn head<S: WeightStore>(
    s: &mut S,
    names: &HeadNames,
    c: &DiarizationConfig,
) -> Result<HeadWeights<S::Matrix, S::Vector>> {
    let (d, h, up) = (c.encoder.hidden, c.head_hidden, c.head_hidden * c.encoder.subsampling);
    Ok(HeadWeights {
        proj: linear(s, &names.proj, h, d)?,
        upsample: Linear {
            weight: s.matrix(&[format!("{}.weight", names.upsample)], &[up, h, 3], up, 3 * h)?,
            bias: Some(s.vector(&format!("{}.bias", names.upsample), up)?),
        },
        dense: linear(s, &names.dense, h, h)?,
        out: linear(s, &names.out, c.speakers, h)?,
        silence: s.vector(&names.silence, d)?,
    })
}

/// Loads (or lists) the word-timestamp head.
pub fn word_timestamps<S: WeightStore>(
    s: &mut S,
    names: &WordTimestampNames,
    c: &WordTimestampConfig,
) -> Result<WordTimestampWeights<S::Matrix, S::Vector>> {
    let d = c.encoder.hidden;
    let upsampler = Linear {
        weight: s.transposed_conv(&format!("{}.weight", names.upsampler), [d, d, c.upsampling_factor])?,
        bias: Some(s.vector(&format!("{}.bias", names.upsampler), d)?),
    };
    let encoder = encoder(s, &names.encoder, &c.encoder)?;
    let classifier = Linear {
        weight: s.matrix(&[format!("{}.weight", names.classifier)], &[c.vocab_size, d, 1], c.vocab_size, d)?,
        bias: Some(s.vector(&format!("{}.bias", names.classifier), c.vocab_size)?),
    };
    Ok(WordTimestampWeights { upsampler, encoder, classifier })
}

/// Loads (or lists) the fusion norms and the projector.
pub fn fusion<S: WeightStore>(
    s: &mut S,
    names: &FusionNames,
    asr_hidden: usize,
    speakers: usize,
    text_hidden: usize,
) -> Result<FusionWeights<S::Matrix, S::Vector>> {
    Ok(FusionWeights {
        asr_norm: norm(s, &names.asr_norm, asr_hidden)?,
        speaker_norm: norm(s, &names.speaker_norm, speakers)?,
        projector: linear(s, &names.projector, text_hidden, asr_hidden)?,
    })
}

/// Lists every `(name, shape)` a traversal asks for, so a checkpoint can be checked in one pass.
#[derive(Default)]
pub struct Expectations(pub Vec<(String, Vec<usize>)>);

impl WeightStore for Expectations {
    type Matrix = ();
    type Vector = ();
    fn matrix(&mut self, parts: &[String], part_shape: &[usize], _: usize, _: usize) -> Result<()> {
        self.0.extend(parts.iter().map(|p| (p.clone(), part_shape.to_vec())));
        Ok(())
    }
    fn vector(&mut self, name: &str, len: usize) -> Result<()> {
        self.0.push((name.to_string(), vec![len]));
        Ok(())
    }
    fn transposed_conv(&mut self, name: &str, shape: [usize; 3]) -> Result<()> {
        self.0.push((name.to_string(), shape.to_vec()));
        Ok(())
    }
}

/// A row-major f64 matrix (bf16 weights widened exactly), for the CPU reference.
#[cfg(feature = "test-support")]
#[derive(Clone, Debug)]
pub struct HostMatrix {
    /// Output features (`out` of `[out, in]`).
    pub rows: usize,
    /// Input features (`in` of `[out, in]`).
    pub cols: usize,
    /// `rows · cols` values, row-major.
    pub data: Vec<f64>,
}

/// Loads f64 copies of the weights.
#[cfg(feature = "test-support")]
pub struct HostStore<'a>(pub &'a Checkpoint);

#[cfg(feature = "test-support")]
impl WeightStore for HostStore<'_> {
    type Matrix = HostMatrix;
    type Vector = Vec<f64>;
    fn matrix(&mut self, parts: &[String], _: &[usize], rows: usize, cols: usize) -> Result<HostMatrix> {
        let mut data = Vec::with_capacity(rows * cols);
        for part in parts {
            data.extend(self.0.bf16(part)?.iter().map(|&b| half::bf16::from_bits(b).to_f64()));
        }
        Ok(HostMatrix { rows, cols, data })
    }
    fn vector(&mut self, name: &str, _: usize) -> Result<Vec<f64>> {
        Ok(self.0.f32(name)?.iter().map(|&v| v as f64).collect())
    }
    fn transposed_conv(&mut self, name: &str, shape: [usize; 3]) -> Result<HostMatrix> {
        let values: Vec<f64> = self.0.bf16(name)?.iter().map(|&b| half::bf16::from_bits(b).to_f64()).collect();
        Ok(HostMatrix { rows: shape[2] * shape[1], cols: shape[0], data: transposed_conv_rows(&values, shape) })
    }
}

/// A store that uploads to a GPU: what the GPU layers (towers, heads, fusion) are built from.
pub trait GpuWeights: WeightStore<Matrix = Weight, Vector = GpuBuffer> {
    /// The GPU the weights go to.
    fn gpu(&self) -> &Gpu;
}

/// Uploads bf16 matrices (packed two per word, see [`Weight`]) and f32 vectors of a checked checkpoint.
pub struct GpuStore<'a> {
    checkpoint: &'a Checkpoint,
    gpu: &'a Gpu,
    matmul: &'a MatmulOptions,
}

impl<'a> GpuStore<'a> {
    /// Checks every `(name, shape)` of `expected` (what a traversal with [`Expectations`] listed) for presence,
    /// shape and a supported dtype, all problems at once: the one check of a load. The tensors are then uploaded
    /// as the layers ask for them, without another check.
    pub fn checked(
        gpu: &'a Gpu,
        checkpoint: &'a Checkpoint,
        matmul: &'a MatmulOptions,
        expected: &[(String, Vec<usize>)],
    ) -> Result<Self> {
        checkpoint.check(expected)?;
        Ok(Self { checkpoint, gpu, matmul })
    }
}

impl GpuWeights for GpuStore<'_> {
    fn gpu(&self) -> &Gpu {
        self.gpu
    }
}

impl WeightStore for GpuStore<'_> {
    type Matrix = Weight;
    type Vector = GpuBuffer;
    fn matrix(&mut self, parts: &[String], _: &[usize], rows: usize, cols: usize) -> Result<Weight> {
        let label = &parts[0];
        if let [single] = parts {
            return Ok(Weight::upload(self.gpu, label, &self.checkpoint.bf16(single)?, rows, cols, self.matmul)?);
        }
        let mut bits = Vec::new();
        for part in parts {
            bits.extend_from_slice(&self.checkpoint.bf16(part)?);
        }
        Ok(Weight::upload(self.gpu, label, &bits, rows, cols, self.matmul)?)
    }
    fn vector(&mut self, name: &str, _: usize) -> Result<GpuBuffer> {
        Ok(self.gpu.upload_f32(name, &self.checkpoint.f32(name)?)?)
    }
    fn transposed_conv(&mut self, name: &str, shape: [usize; 3]) -> Result<Weight> {
        let bits = transposed_conv_rows(&self.checkpoint.bf16(name)?, shape);
        Ok(Weight::upload(self.gpu, name, &bits, shape[2] * shape[1], shape[0], self.matmul)?)
    }
}

/// A random stand-in for the checkpoint tensor `name`: matrices (2-D and up) bf16 with a
/// 1/√fan-in scale, norm weights near 1, biases and embeddings small.
pub fn random_tensor(name: &str, shape: &[usize], rng: &mut Rng) -> Tensor {
    let count: usize = shape.iter().product();
    if shape.len() >= 2 {
        let fan_in: usize = shape[1..].iter().product();
        Tensor::bf16(shape.to_vec(), &rng.bf16s(count, (3.0 / fan_in as f64).sqrt()))
    } else if name.ends_with(".weight") {
        Tensor::f32(shape.to_vec(), &rng.f32s(count, 0.2).iter().map(|v| 1.0 + v).collect::<Vec<_>>())
    } else {
        Tensor::f32(shape.to_vec(), &rng.f32s(count, 0.2))
    }
}

/// Uploads random weights of the right shapes (for benchmarks without a checkpoint).
pub struct RandomStore<'a> {
    pub gpu: &'a Gpu,
    pub rng: Rng,
    pub matmul: &'a MatmulOptions,
}

impl GpuWeights for RandomStore<'_> {
    fn gpu(&self) -> &Gpu {
        self.gpu
    }
}

impl WeightStore for RandomStore<'_> {
    type Matrix = Weight;
    type Vector = GpuBuffer;
    fn matrix(&mut self, parts: &[String], _: &[usize], rows: usize, cols: usize) -> Result<Weight> {
        fits_one_binding(self.gpu, &parts[0], rows as u64 * cols as u64 * 2)?;
        let t = random_tensor(&parts[0], &[rows, cols], &mut self.rng);
        Ok(Weight::upload(self.gpu, &parts[0], bytemuck::cast_slice(&t.bytes), rows, cols, self.matmul)?)
    }
    fn vector(&mut self, name: &str, len: usize) -> Result<GpuBuffer> {
        fits_one_binding(self.gpu, name, len as u64 * 4)?;
        let t = random_tensor(name, &[len], &mut self.rng);
        Ok(self.gpu.upload_f32(name, bytemuck::cast_slice(&t.bytes))?)
    }
    fn transposed_conv(&mut self, name: &str, [inp, out, k]: [usize; 3]) -> Result<Weight> {
        self.matrix(&[name.to_string()], &[], k * out, inp)
    }
}

/// Refuses a random tensor the GPU could not hold before generating it: a config of absurd (but
/// valid) sizes would otherwise fill the host's memory with random numbers first.
fn fits_one_binding(gpu: &Gpu, name: &str, bytes: u64) -> Result<()> {
    let max = gpu.limits().max_storage_buffer_binding_size;
    if bytes > max {
        return Err(GpuError::LimitExceeded {
            what: format!("random weight `{name}` ({bytes} bytes)"),
            limit: "max_storage_buffer_binding_size",
            requested: bytes,
            max,
        }
        .into());
    }
    Ok(())
}
