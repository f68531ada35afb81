//! The WGSL sources: one file per kernel family under `shaders/`, composed at build time (see `build.rs`: a line
//! `// #include "part.wgsl"` is replaced by that part's text).

use gpu_core::Shader;

/// `shader!(IDENT, "name")`: the composed `shaders/name.wgsl`.
macro_rules! shader {
    ($ident:ident, $name:literal) => {
        #[doc = concat!("`shaders/", $name, ".wgsl`, its includes expanded.")]
        pub static $ident: Shader = Shader {
            name: $name,
            // Every kernel here loops over uniform bounds and divides only by constants or by
            // sizes its launcher has checked are non-zero (empty shapes dispatch nothing).
            trusted: true,
            source: include_str!(concat!(env!("OUT_DIR"), "/", $name, ".wgsl")),
        };
    };
}

shader!(ATTENTION_COOP16, "attention_coop16");
shader!(ATTENTION_COOP8, "attention_coop8");
shader!(ATTENTION_OPERANDS, "attention_operands");
shader!(ATTENTION_SUBGROUP_EXCHANGE, "attention_subgroup_exchange");
shader!(ATTENTION_WORKGROUP_EXCHANGE, "attention_workgroup_exchange");
shader!(CONV_IM2COL, "conv_im2col");
shader!(GATHER_ROWS, "gather_rows");
shader!(GEMM, "gemm");
shader!(GEMM_COOP16, "gemm_coop16");
shader!(GEMM_COOP8, "gemm_coop8");
shader!(LAYER_NORM, "layer_norm");
shader!(LOG_SOFTMAX_GATHER, "log_softmax_gather");
shader!(QK_NORM_ROPE, "qk_norm_rope");
shader!(SPEAKER_FUSION, "speaker_fusion");

/// For every file under `shaders/` (by stem), the parts its composition includes.
pub const INCLUDES: &[(&str, &[&str])] = include!(concat!(env!("OUT_DIR"), "/includes.rs"));
