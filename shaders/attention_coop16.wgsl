// The tensor-core attention of `attention_coop.wgsl` on 16×16×16 f16→f32 cooperative matrices.

enable f16;
enable wgpu_cooperative_matrix;

alias MatA = coop_mat16x16<f16, A>;
alias MatB = coop_mat16x16<f16, B>;
alias MatC = coop_mat16x16<f32, C>;
const T: u32 = 16u;

// #include "attention_coop.wgsl"
