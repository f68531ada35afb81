use super::layer_norm;
use crate::LAYER_NORM_EPS;
use crate::qk_norm_rope::RopeTable;
use crate::shapes::QkShape;

/// LayerNorm parameters of the q and k heads: `(q_weight, q_bias, k_weight, k_bias)`, each `[head_dim]`.
pub type QkNormParams<'a> = (&'a [f64], &'a [f64], &'a [f64], &'a [f64]);

/// In place on `qkv` `[rows, 3·heads·head_dim]` (`shape`): each q and k head is LayerNormed with `norm` when given,
/// then its first `rot` dims are rotated (NeoX rotate-half) at position `row % seq_len`, with the same f32 angles the
/// GPU table holds (base `theta`). v is untouched.
pub fn qk_norm_rope(qkv: &mut [f64], norm: Option<QkNormParams<'_>>, shape: QkShape, rot: usize, theta: f64) {
    let QkShape { rows, seq_len, heads, head_dim } = shape;
    let (cos, sin) = RopeTable::host_angles(seq_len, rot, theta);
    let d = heads * head_dim;
    let half = rot / 2;
    for (r, row) in qkv.chunks_mut(3 * d).take(rows).enumerate() {
        let angles = (r % seq_len) * half;
        for (block, qk) in row[..2 * d].chunks_mut(d).enumerate() {
            for head in qk.chunks_mut(head_dim) {
                if let Some(params) = norm {
                    let (weight, bias) = if block == 0 { (params.0, params.1) } else { (params.2, params.3) };
                    let normed = layer_norm(head, weight, bias, head_dim, LAYER_NORM_EPS as f64);
                    head.copy_from_slice(&normed);
                }
                for i in 0..half {
                    let (c, s) = (cos[angles + i] as f64, sin[angles + i] as f64);
                    let (a, b) = (head[i], head[i + half]);
                    head[i] = a * c - b * s;
                    head[i + half] = b * c + a * s;
                }
            }
        }
    }
}
