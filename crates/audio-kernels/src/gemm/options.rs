//! How matrix products are computed: typed settings, passed down explicitly to every weight upload.

use std::fmt;

/// Which arithmetic the matrix products may use. Both are f32-accurate (see [`crate::gemm`](mod@crate::gemm)).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Precision {
    /// Tensor cores (f16 cooperative matrices with an exact split of the operands) where the adapter has them and a
    /// weight has an exact f16 image; the register-tiled f32 kernel otherwise.
    #[default]
    Auto,
    /// The register-tiled f32 kernel everywhere.
    F32,
}

/// Which tensor-core kernel computes the products on that path.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum TensorCoreKernel {
    /// Operands staged through workgroup memory, double-buffered, 128×128 tiles (the faster one).
    #[default]
    Staged,
    /// Operands loaded straight from memory, 64×128 tiles: slower, for drivers that reject the staged pipeline.
    Direct,
}

/// The matrix-product settings of a model or of one weight.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct MatmulOptions {
    /// Tensor cores allowed or not.
    pub precision: Precision,
    /// The tensor-core kernel, where that path runs.
    pub tensor_core_kernel: TensorCoreKernel,
}

/// A setting read from the environment that is not one of its documented values.
#[derive(Debug, thiserror::Error)]
#[error("{variable}={value:?} is not one of {expected}")]
pub struct UnknownSetting {
    /// The variable.
    pub variable: &'static str,
    /// What it held.
    pub value: String,
    /// The values it may hold.
    pub expected: &'static str,
}

impl MatmulOptions {
    /// The defaults, overridden by `NEMOTRON_PRECISION` (`auto` or `f32`) and `NEMOTRON_COOP_KERNEL` (`staged` or
    /// `direct`); unset or empty variables keep the default. The only place this crate reads the environment.
    pub fn from_env() -> Result<Self, UnknownSetting> {
        let var =
            |name: &str| std::env::var(name).ok().map(|v| v.trim().to_ascii_lowercase()).filter(|v| !v.is_empty());
        let mut options = Self::default();
        if let Some(value) = var("NEMOTRON_PRECISION") {
            options.precision = value.parse()?;
        }
        if let Some(value) = var("NEMOTRON_COOP_KERNEL") {
            options.tensor_core_kernel = value.parse()?;
        }
        Ok(options)
    }
}

impl std::str::FromStr for Precision {
    type Err = UnknownSetting;
    fn from_str(text: &str) -> Result<Self, UnknownSetting> {
        match text {
            "auto" => Ok(Precision::Auto),
            "f32" => Ok(Precision::F32),
            _ => Err(UnknownSetting { variable: "NEMOTRON_PRECISION", value: text.into(), expected: "auto, f32" }),
        }
    }
}

impl std::str::FromStr for TensorCoreKernel {
    type Err = UnknownSetting;
    fn from_str(text: &str) -> Result<Self, UnknownSetting> {
        match text {
            "staged" => Ok(TensorCoreKernel::Staged),
            "direct" => Ok(TensorCoreKernel::Direct),
            _ => {
                Err(UnknownSetting { variable: "NEMOTRON_COOP_KERNEL", value: text.into(), expected: "staged, direct" })
            }
        }
    }
}

/// The kernel a weight's products run on, decided when it was uploaded.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MatmulPath {
    /// The register-tiled f32 kernel over the bf16 weight.
    F32,
    /// Tensor cores over the weight's exact f16 image.
    TensorCores(TensorCoreKernel),
}

impl fmt::Display for MatmulPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MatmulPath::F32 => write!(f, "f32"),
            MatmulPath::TensorCores(TensorCoreKernel::Staged) => write!(f, "tensor cores (staged)"),
            MatmulPath::TensorCores(TensorCoreKernel::Direct) => write!(f, "tensor cores (direct)"),
        }
    }
}
