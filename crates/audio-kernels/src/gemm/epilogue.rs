//! What happens to `X · Wᵀ` before it lands in `Y` (`shaders/gemm_epilogue.wgsl` holds the activations).

use gpu_core::GpuBuffer;

/// The nonlinearity applied after the bias.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Activation {
    /// The identity.
    None,
    /// Exact erf form `0.5·x·(1 + erf(x/√2))`.
    Gelu,
    /// `max(x, 0)`.
    Relu,
}

impl Activation {
    pub(crate) const ALL: [Activation; 3] = [Activation::None, Activation::Gelu, Activation::Relu];

    /// The shaders' `ACTIVATION` code.
    pub(crate) fn code(self) -> f64 {
        match self {
            Activation::None => 0.0,
            Activation::Gelu => 1.0,
            Activation::Relu => 2.0,
        }
    }
}

/// What happens to `X · Wᵀ` before it lands in `Y`: `+ bias` (f32, `m` values), the activation, and whether the
/// result overwrites `Y` or is added to it (a residual connection).
#[derive(Clone, Copy, Debug)]
pub struct Epilogue<'a> {
    /// Added to every row of the product.
    pub bias: Option<&'a GpuBuffer>,
    /// Applied after the bias.
    pub activation: Activation,
    /// `Y += …` instead of `Y = …`.
    pub accumulate: bool,
}

impl Default for Epilogue<'_> {
    /// No bias, no activation, overwrite.
    fn default() -> Self {
        Self { bias: None, activation: Activation::None, accumulate: false }
    }
}

/// The shape of an [`Epilogue`], which is what the shaders are specialised for.
#[derive(Clone, Copy, Debug)]
pub(crate) struct EpilogueKind {
    has_bias: bool,
    activation: Activation,
    accumulate: bool,
}

impl EpilogueKind {
    pub(crate) fn of(epilogue: &Epilogue<'_>) -> Self {
        Self { has_bias: epilogue.bias.is_some(), activation: epilogue.activation, accumulate: epilogue.accumulate }
    }

    /// Every kind, for the variant list.
    pub(crate) fn all() -> Vec<Self> {
        let mut all = Vec::new();
        for has_bias in [false, true] {
            for activation in Activation::ALL {
                for accumulate in [false, true] {
                    all.push(Self { has_bias, activation, accumulate });
                }
            }
        }
        all
    }

    /// The override constants both GEMM shaders read: `HAS_BIAS`, `ACTIVATION`, `ACCUMULATE`.
    pub(crate) fn constants(self) -> [(&'static str, f64); 3] {
        let flag = |on: bool| if on { 1.0 } else { 0.0 };
        [
            ("HAS_BIAS", flag(self.has_bias)),
            ("ACTIVATION", self.activation.code()),
            ("ACCUMULATE", flag(self.accumulate)),
        ]
    }
}
