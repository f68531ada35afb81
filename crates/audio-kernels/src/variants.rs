//! Every pipeline variant the launchers can build, in one list (`cargo xtask validate-shaders` checks each).

use gpu_core::KernelVariant;

/// Every pipeline variant of every launcher in this crate.
pub fn all_variants() -> Vec<KernelVariant> {
    [
        crate::attention::variants(),
        crate::conv_im2col::variants(),
        crate::gather_rows::variants(),
        crate::gemm::variants(),
        crate::layer_norm::variants(),
        crate::log_softmax_gather::variants(),
        crate::qk_norm_rope::variants(),
        crate::speaker_fusion::variants(),
    ]
    .concat()
}
