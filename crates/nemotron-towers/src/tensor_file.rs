//! Writing safetensors files (CLI outputs, golden data) and reading features files.

use std::collections::HashMap;
use std::path::Path;

use safetensors::tensor::TensorView;
use safetensors::{Dtype, SafeTensorError};

use crate::checkpoint::Checkpoint;
use crate::error::{Error, Result};
use crate::frontend::Features;

/// An owned tensor to serialize.
pub struct Tensor {
    /// Element type.
    pub dtype: Dtype,
    /// Dimensions, outermost first.
    pub shape: Vec<usize>,
    /// Little-endian element bytes.
    pub bytes: Vec<u8>,
}

impl Tensor {
    /// An f32 tensor.
    pub fn f32(shape: Vec<usize>, values: &[f32]) -> Self {
        Self { dtype: Dtype::F32, shape, bytes: bytemuck::cast_slice(values).to_vec() }
    }

    /// An f64 tensor.
    pub fn f64(shape: Vec<usize>, values: &[f64]) -> Self {
        Self { dtype: Dtype::F64, shape, bytes: bytemuck::cast_slice(values).to_vec() }
    }

    /// A bf16 tensor from bit patterns.
    pub fn bf16(shape: Vec<usize>, bits: &[u16]) -> Self {
        Self { dtype: Dtype::BF16, shape, bytes: bytemuck::cast_slice(bits).to_vec() }
    }
}

/// A safetensors buffer of `tensors` with `metadata`.
pub fn serialize(tensors: &[(String, Tensor)], metadata: HashMap<String, String>) -> Result<Vec<u8>> {
    let views: Vec<(&str, TensorView<'_>)> = tensors
        .iter()
        .map(|(name, t)| {
            TensorView::new(t.dtype, t.shape.clone(), &t.bytes)
                .map(|view| (name.as_str(), view))
                .map_err(|e| Error::Internal(format!("tensor `{name}`: {e}")))
        })
        .collect::<Result<_>>()?;
    let metadata = if metadata.is_empty() { None } else { Some(metadata) };
    safetensors::serialize(views, metadata).map_err(|e| Error::Internal(format!("serializing tensors: {e}")))
}

/// Writes `tensors` to `path`.
pub fn write(path: &Path, tensors: &[(String, Tensor)]) -> Result<()> {
    write_views(path, tensors.iter().map(|(name, t)| (name.as_str(), t.dtype, t.shape.clone(), t.bytes.as_slice())))
}

/// Writes f32 tensors to `path` straight from their values: no copy of them is made in memory
/// (a long recording's outputs are gigabytes).
pub fn write_f32(path: &Path, tensors: &[(&str, Vec<usize>, &[f32])]) -> Result<()> {
    write_views(
        path,
        tensors.iter().map(|(name, shape, values)| (*name, Dtype::F32, shape.clone(), bytemuck::cast_slice(values))),
    )
}

/// Streams (name, dtype, shape, bytes) to `path` through a file buffer.
fn write_views<'a>(path: &Path, tensors: impl Iterator<Item = (&'a str, Dtype, Vec<usize>, &'a [u8])>) -> Result<()> {
    let views: Vec<(&str, TensorView<'_>)> = tensors
        .map(|(name, dtype, shape, bytes)| {
            TensorView::new(dtype, shape, bytes)
                .map(|view| (name, view))
                .map_err(|e| Error::Internal(format!("tensor `{name}`: {e}")))
        })
        .collect::<Result<_>>()?;
    safetensors::serialize_to_file(views, None, path).map_err(|e| Error::Output {
        path: path.to_path_buf(),
        source: match e {
            SafeTensorError::IoError(source) => source,
            other => std::io::Error::other(other.to_string()),
        },
    })
}

/// Reads `input_features [F, mel]` and `input_features_mask [F]` (any integer, bool or float
/// dtype; ones then zeros) from a safetensors file, as the reference cases store them.
pub fn read_features(path: &Path, mel_bins: usize, subsampling: usize) -> Result<Features> {
    let file = Checkpoint::open(path)?;
    let bad = |problem: String| Error::Features { origin: path.display().to_string(), problem };
    let features = file.tensor("input_features")?;
    let frames = match features.shape {
        [frames, bins] if *bins == mel_bins => *frames,
        shape => return Err(bad(format!("input_features has shape {shape:?}, expected [frames, {mel_bins}]"))),
    };
    if frames == 0 || !frames.is_multiple_of(subsampling) {
        return Err(bad(format!("{frames} frames; the model needs a positive multiple of {subsampling}")));
    }
    let data = file.f32("input_features")?;
    if let Some(i) = data.iter().position(|v| !v.is_finite()) {
        return Err(bad(format!("input_features value {i} is not finite")));
    }
    let mask = file.tensor("input_features_mask")?;
    if mask.shape != [frames] {
        return Err(bad(format!("input_features_mask has shape {:?}, expected [{frames}]", mask.shape)));
    }
    // Whole-byte dtypes only: a sub-byte one (F4, F6) has no per-element byte width.
    if !matches!(mask.dtype, Dtype::BOOL | Dtype::U8 | Dtype::I8 | Dtype::I16 | Dtype::I32 | Dtype::I64 | Dtype::F32) {
        return Err(bad(format!("input_features_mask has dtype {:?}", mask.dtype)));
    }
    let width = mask.bytes.len() / frames;
    let ones: Vec<bool> = mask.bytes.chunks_exact(width).map(|b| b.iter().any(|&x| x != 0)).collect();
    let valid = ones.iter().take_while(|&&m| m).count();
    if ones[valid..].iter().any(|&m| m) {
        return Err(bad("input_features_mask is not a run of ones followed by zeros".into()));
    }
    Ok(Features { data, frames, valid })
}
