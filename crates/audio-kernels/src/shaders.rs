//! The WGSL sources (one file per kernel family under `shaders/`) and the variant list that
//! `cargo xtask validate-shaders` checks.

use gpu_core::{KernelSpec, Shader};

/// `shader!(IDENT, "name", "part", …)`: `shaders/name.wgsl` followed by the shared `shaders/part.wgsl` files
/// (WGSL declarations may come in any order, so appended parts can serve the code above them).
macro_rules! shader {
    ($ident:ident, $name:literal $(, $part:literal)*) => {
        #[doc = concat!("`shaders/", $name, ".wgsl`")]
        pub static $ident: Shader = Shader {
            name: $name,
            // Every kernel here loops over uniform bounds and divides only by constants or by
            // sizes its launcher has checked are non-zero (empty shapes dispatch nothing).
            trusted: true,
            source: concat!(
                include_str!(concat!("../../../shaders/", $name, ".wgsl"))
                $(, "\n", include_str!(concat!("../../../shaders/", $part, ".wgsl")))*
            ),
        };
    };
}

/// Files under `shaders/` that are not kernels on their own but appended to some (see `shader!`).
pub const SHARED_PARTS: &[&str] = &["gemm_epilogue"];

shader!(ATTENTION, "attention");
shader!(CONV_IM2COL, "conv_im2col");
shader!(GEMM, "gemm", "gemm_epilogue");
shader!(GEMM_COOP, "gemm_coop", "gemm_epilogue");
shader!(LAYER_NORM, "layer_norm");
shader!(QK_NORM_ROPE, "qk_norm_rope");
shader!(SPEAKER_FUSION, "speaker_fusion");

/// One pipeline a launcher can build: shader, entry point and override constants.
#[derive(Clone, Debug)]
pub struct Variant {
    pub shader: &'static Shader,
    pub entry: &'static str,
    pub constants: Vec<(&'static str, f64)>,
}

impl Variant {
    /// The variant a kernel spec describes.
    pub fn of(spec: &KernelSpec<'_>) -> Self {
        Self { shader: spec.shader, entry: spec.entry, constants: spec.constants.to_vec() }
    }
}

/// Every pipeline variant of every launcher in this crate.
pub fn all_variants() -> Vec<Variant> {
    [
        crate::attention::variants(),
        crate::conv_im2col::variants(),
        crate::gemm::variants(),
        crate::gemm_coop::variants(),
        crate::layer_norm::variants(),
        crate::qk_norm_rope::variants(),
        crate::speaker_fusion::variants(),
    ]
    .concat()
}
