//! How matrix products are computed: typed settings, passed down explicitly to every weight upload.

use std::fmt;

use super::tensor_core::Operands;

/// Which arithmetic the matrix products may use. `Auto` and `F32` are f32-accurate (see
/// [`crate::gemm`](mod@crate::gemm)); `Fast` trades that for throughput.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Precision {
    /// Tensor cores (f16 cooperative matrices with an exact split of the operands) where the adapter has them and a
    /// weight has an exact f16 image; the register-tiled f32 kernel otherwise.
    #[default]
    Auto,
    /// The register-tiled f32 kernel everywhere.
    F32,
    /// Tensor cores with each product once: X rounded to f16 under its row's power-of-two scale, W's f16 image
    /// (rounded where a value has no exact one), f32 accumulation — about f16's 11 significant bits per operand
    /// (bf16, which serving stacks run this model in, keeps 8); [`crate::attention()`] at this precision rounds q, k, v
    /// and the probabilities likewise, as the towers' attention does at this precision. Where the adapter has no
    /// tensor cores, as `Auto`.
    Fast,
}

/// How the tensor-core kernel tiles a product.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum TensorCoreKernel {
    /// The largest tiles the device fits (the default); narrow products fill the GPU by splitting k where their
    /// consumer adds partial sums.
    #[default]
    Auto,
    /// One tile configuration for every product (benchmarks and sweeps).
    Tiles(Tiles),
}

/// A tile configuration of the tensor-core kernel: a workgroup of `subgroups_m` × `subgroups_n` multiplying subgroups,
/// each computing 2×4 cooperative-matrix tiles of Y (32 × 64 values with 16×16 matrices), stepping through k in
/// stages of `stage_steps` matrix steps staged through workgroup memory — by `producers` further subgroups that only
/// stage, or, with none, by the multiplying subgroups themselves.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Tiles {
    /// Subgroups along the rows of Y.
    pub subgroups_m: u32,
    /// Subgroups along the columns of Y.
    pub subgroups_n: u32,
    /// Matrix steps (of k = 16, or 8) per stage.
    pub stage_steps: u32,
    /// Subgroups that only stage operands.
    pub producers: u32,
}

impl fmt::Display for Tiles {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}x{}x{}", self.subgroups_m, self.subgroups_n, self.stage_steps)?;
        if self.producers > 0 {
            write!(f, "p{}", self.producers)?;
        }
        Ok(())
    }
}

/// How the tensor-core kernel splits a product along k for a consumer that adds the partial products
/// ([`crate::gemm::gemm_partials`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum KSplit {
    /// Stream-k where it pays (a product whose tiles fill less than two waves of workgroups, each workgroup's share
    /// at least 1024 deep in k), equal slices elsewhere.
    #[default]
    Auto,
    /// Each tile in the same number of equal slices of k (the number the caller asks for).
    Slices,
    /// Stream-k for every split product (measurements and tests): one workgroup per compute unit, each an even share
    /// of all the tiles' stages, a tile cut between two shares leaving its pieces in successive slices, so no wave
    /// runs part-full.
    Stream,
}

/// The matrix-product settings of a model or of one weight.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct MatmulOptions {
    /// Tensor cores allowed or not.
    pub precision: Precision,
    /// The tensor-core kernel, where that path runs.
    pub tensor_core_kernel: TensorCoreKernel,
    /// How split products are cut along k, where the tensor-core path runs.
    pub k_split: KSplit,
}

impl MatmulOptions {
    /// How the tensor-core kernel takes X under this precision; none on the f32 path.
    pub(super) fn operands(self) -> Option<Operands> {
        match self.precision {
            Precision::F32 => None,
            Precision::Auto => Some(Operands::Split),
            Precision::Fast => Some(Operands::Rounded),
        }
    }
}

/// Text that names none of a setting's values.
#[derive(Debug, thiserror::Error)]
#[error("{value:?} is not one of {expected}")]
pub struct UnknownValue {
    /// The text.
    pub value: String,
    /// The values it may name.
    pub expected: &'static str,
}

impl std::str::FromStr for Precision {
    type Err = UnknownValue;
    fn from_str(text: &str) -> Result<Self, UnknownValue> {
        match text {
            "auto" => Ok(Precision::Auto),
            "f32" => Ok(Precision::F32),
            "fast" => Ok(Precision::Fast),
            _ => Err(UnknownValue { value: text.into(), expected: "auto, f32, fast" }),
        }
    }
}

impl std::str::FromStr for KSplit {
    type Err = UnknownValue;
    fn from_str(text: &str) -> Result<Self, UnknownValue> {
        match text {
            "auto" => Ok(KSplit::Auto),
            "slices" => Ok(KSplit::Slices),
            "stream" => Ok(KSplit::Stream),
            _ => Err(UnknownValue { value: text.into(), expected: "auto, slices, stream" }),
        }
    }
}

impl std::str::FromStr for TensorCoreKernel {
    type Err = UnknownValue;
    fn from_str(text: &str) -> Result<Self, UnknownValue> {
        let unknown = || UnknownValue { value: text.into(), expected: "auto, or MxNxS[pP] tiles (e.g. 4x2x1p8)" };
        if text == "auto" {
            return Ok(TensorCoreKernel::Auto);
        }
        let (tiles, producers) = match text.split_once('p') {
            Some((tiles, producers)) => (tiles, producers.parse::<u32>().map_err(|_| unknown())?),
            None => (text, 0),
        };
        let parts: Vec<u32> = tiles.split('x').map(str::parse).collect::<Result<_, _>>().map_err(|_| unknown())?;
        match parts[..] {
            [subgroups_m, subgroups_n, stage_steps]
                if [subgroups_m, subgroups_n, stage_steps].iter().all(|&v| (1..=8).contains(&v)) && producers <= 16 =>
            {
                Ok(TensorCoreKernel::Tiles(Tiles { subgroups_m, subgroups_n, stage_steps, producers }))
            }
            _ => Err(unknown()),
        }
    }
}

/// The kernel a weight's products run on, decided when it was uploaded.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MatmulPath {
    /// The register-tiled f32 kernel over the bf16 weight.
    F32,
    /// Tensor cores over the weight's exact f16 image, X split into two f16 halves (f32-accurate).
    TensorCores(TensorCoreKernel),
    /// Tensor cores over the weight's f16 image, X rounded to f16: each product once ([`Precision::Fast`]).
    FastTensorCores(TensorCoreKernel),
}

impl MatmulPath {
    /// Whether the products run on the tensor cores (and take X's row scales).
    pub fn on_tensor_cores(self) -> bool {
        !matches!(self, MatmulPath::F32)
    }

    /// The precision this path runs at, for the work around the product (the towers' attention takes it).
    pub fn precision(self) -> Precision {
        match self {
            MatmulPath::F32 => Precision::F32,
            MatmulPath::TensorCores(_) => Precision::Auto,
            MatmulPath::FastTensorCores(_) => Precision::Fast,
        }
    }
}

impl fmt::Display for MatmulPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MatmulPath::F32 => write!(f, "f32"),
            MatmulPath::TensorCores(TensorCoreKernel::Auto) => write!(f, "tensor cores"),
            MatmulPath::TensorCores(TensorCoreKernel::Tiles(tiles)) => write!(f, "tensor cores ({tiles} tiles)"),
            MatmulPath::FastTensorCores(TensorCoreKernel::Auto) => write!(f, "tensor cores, f16 operands"),
            MatmulPath::FastTensorCores(TensorCoreKernel::Tiles(tiles)) => {
                write!(f, "tensor cores, f16 operands ({tiles} tiles)")
            }
        }
    }
}
