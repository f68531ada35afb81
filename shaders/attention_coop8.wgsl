// The tensor-core attention of `attention_coop.wgsl` on 8×8×8 f16→f32 cooperative matrices.

enable f16;
enable wgpu_cooperative_matrix;

alias MatA = coop_mat8x8<f16, A>;
alias MatB = coop_mat8x8<f16, B>;
alias MatC = coop_mat8x8<f32, C>;
const T: u32 = 8u;

// #include "attention_coop.wgsl"
