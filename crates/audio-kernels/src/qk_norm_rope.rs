//! Per-head q/k LayerNorm + rotate-half RoPE launcher (`shaders/qk_norm_rope.wgsl`) and its host-built
//! cos/sin table.

use gpu_core::{
    Access, Gpu, GpuBuffer, GpuError, KernelSpec, KernelVariant, ParamsLayout, Recorder, Result, params_layout,
};

use crate::LAYER_NORM_EPS;
use crate::launch::{grid, require};
use crate::shaders::QK_NORM_ROPE;
use crate::shapes::QkShape;

/// Largest head_dim the kernel handles (one thread per dim of a head).
pub const QK_NORM_ROPE_MAX_HEAD_DIM: usize = 128;

/// RoPE cos/sin of every (position, frequency) pair, computed on the host with the reference's f32 recipe
/// and stored as interleaved `(cos, sin)` f32 pairs, `[positions, rot/2]`.
pub struct RopeTable {
    buffer: GpuBuffer,
    positions: usize,
    rot: usize,
}

impl RopeTable {
    /// The table for positions `0..positions` rotating `rot` dims (even, nonzero) with base `theta`.
    pub fn new(gpu: &Gpu, positions: usize, rot: usize, theta: f64) -> Result<Self> {
        if rot == 0 || rot % 2 == 1 {
            return Err(GpuError::Validation(format!(
                "RoPE rotates pairs of dims: rot must be even and nonzero, got {rot}"
            )));
        }
        let (cos, sin) = Self::host_angles(positions, rot, theta);
        let pairs: Vec<f32> = cos.iter().zip(&sin).flat_map(|(&c, &s)| [c, s]).collect();
        let buffer = gpu.upload_f32("rope cos/sin", &pairs)?;
        Ok(Self { buffer, positions, rot })
    }

    /// `(cos, sin)`, each `[positions, rot/2]` row-major. As upstream: `inv_freq_i = 1 / theta^(2i/rot)` and
    /// `angle = pos · inv_freq_i` are f32 values (the pow evaluated in f64 then rounded), and cos/sin of that f32
    /// angle are rounded from f64.
    pub fn host_angles(positions: usize, rot: usize, theta: f64) -> (Vec<f32>, Vec<f32>) {
        let half = rot / 2;
        let inv_freq: Vec<f32> = (0..half)
            .map(|i| {
                let exponent = (2 * i) as f32 / rot as f32;
                1.0 / theta.powf(exponent as f64) as f32
            })
            .collect();
        let angles: Vec<f32> = (0..positions).flat_map(|pos| inv_freq.iter().map(move |&f| pos as f32 * f)).collect();
        let cos = angles.iter().map(|&a| (a as f64).cos() as f32).collect();
        let sin = angles.iter().map(|&a| (a as f64).sin() as f32).collect();
        (cos, sin)
    }

    /// Number of positions covered (the longest sequence it serves).
    pub fn positions(&self) -> usize {
        self.positions
    }

    /// Number of rotated dims per head.
    pub fn rot(&self) -> usize {
        self.rot
    }
}

/// LayerNorm parameters of the q and k heads, each `[head_dim]` f32 shared by all heads.
pub struct QkNorm<'a> {
    /// γ of the q LayerNorm (`attn.q_norm.weight`).
    pub q_weight: &'a GpuBuffer,
    /// β of the q LayerNorm (`attn.q_norm.bias`).
    pub q_bias: &'a GpuBuffer,
    /// γ of the k LayerNorm (`attn.k_norm.weight`).
    pub k_weight: &'a GpuBuffer,
    /// β of the k LayerNorm (`attn.k_norm.bias`).
    pub k_bias: &'a GpuBuffer,
}

/// The per-head q/k LayerNorm (where the tower has one) and the RoPE table: what [`qk_norm_rope`] applies in place,
/// or [`crate::rotary_attention`] on the way into the tensor-core attention.
#[derive(Clone, Copy)]
pub struct QkPrologue<'a> {
    /// The cos/sin table of the rotation.
    pub rope: &'a RopeTable,
    /// The q and k LayerNorms, where the tower has them (the ASR tower and the word-timestamp head; not the Sortformer).
    pub norm: Option<&'a QkNorm<'a>>,
    /// qkv holds the q/k/v product in this many partial products of k (`[slices, rows, 3·d]`,
    /// [`crate::gemm::gemm_partials`]), added in order on the way in; more than 1 only where the tensor-core
    /// attention reads them ([`crate::rotary_attention`] says which).
    pub slices: usize,
}

impl<'a> QkPrologue<'a> {
    /// Checks the table and the norm against the shape; returns the table's buffer and the norm's four (the table's
    /// buffer stands in for them without a norm: the kernels then never read those slots).
    pub(crate) fn buffers(&self, seq_len: usize, head_dim: usize, what: &str) -> Result<[&'a GpuBuffer; 5]> {
        let table = self.rope;
        let too_large = |what: String, limit, requested: usize, max: usize| GpuError::LimitExceeded {
            what,
            limit,
            requested: requested as u64,
            max: max as u64,
        };
        if seq_len > table.positions() {
            let what = format!("{what} seq_len {seq_len} over a RoPE table of {} positions", table.positions());
            return Err(too_large(what, "RopeTable::positions", seq_len, table.positions()));
        }
        if head_dim > QK_NORM_ROPE_MAX_HEAD_DIM {
            let what = format!("{what} head_dim");
            return Err(too_large(what, "QK_NORM_ROPE_MAX_HEAD_DIM", head_dim, QK_NORM_ROPE_MAX_HEAD_DIM));
        }
        if table.rot() > head_dim {
            let what = format!("{what} rotated dims {} of a head of {head_dim}", table.rot());
            return Err(too_large(what, "head_dim", table.rot(), head_dim));
        }
        let norm = match self.norm {
            Some(n) => {
                for (buffer, part) in [
                    (n.q_weight, "q_norm weight"),
                    (n.q_bias, "q_norm bias"),
                    (n.k_weight, "k_norm weight"),
                    (n.k_bias, "k_norm bias"),
                ] {
                    require(buffer, head_dim, &format!("{what} {part}"))?;
                }
                [n.q_weight, n.q_bias, n.k_weight, n.k_bias]
            }
            None => [&table.buffer; 4],
        };
        Ok([&table.buffer, norm[0], norm[1], norm[2], norm[3]])
    }
}

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct Params {
    rows: u32,
    seq_len: u32,
    heads: u32,
    head_dim: u32,
    rot: u32,
    eps: f32,
}

const PARAMS: &ParamsLayout = &params_layout!(Params { rows, seq_len, heads, head_dim, rot, eps });

const BINDINGS: &[Access] = &[Access::ReadWrite, Access::Read, Access::Read, Access::Read, Access::Read, Access::Read];

/// (row, q or k, head) units per workgroup (`UNITS`), each thread's loads of all of them in flight at once. Without a
/// norm 8: one head a workgroup left a batch of 128 Sortformer steps (952,320 workgroups of one 64-dim head) waiting
/// out each load alone, 0.81 against 0.51 ms per layer (H100, 2026-12-06). With a norm 1: its three workgroup
/// reductions per head run one head after another, 18.5 against 30.9 µs for an ASR chunk's layer in 8.
const PLAIN_UNITS: usize = 8;
const NORM_UNITS: usize = 1;
/// The most units the shader holds per thread (its `MAX_UNITS`).
const MAX_UNITS: usize = 8;
const _: () = assert!(PLAIN_UNITS <= MAX_UNITS && NORM_UNITS <= MAX_UNITS);

fn units(has_norm: bool) -> usize {
    if has_norm { NORM_UNITS } else { PLAIN_UNITS }
}

fn spec(has_norm: bool) -> KernelSpec<'static> {
    let constants: &'static [(&'static str, f64)] = if has_norm {
        &[("HAS_NORM", 1.0), ("UNITS", NORM_UNITS as f64)]
    } else {
        &[("HAS_NORM", 0.0), ("UNITS", PLAIN_UNITS as f64)]
    };
    KernelSpec { shader: &QK_NORM_ROPE, entry: "qk_norm_rope", constants, bindings: BINDINGS, params: PARAMS }
}

/// Every pipeline this launcher can build, for shader validation.
pub fn variants() -> Vec<KernelVariant> {
    [false, true].map(kernel).to_vec()
}

/// The pipeline [`qk_norm_rope`] records with a q/k norm (`has_norm`) or without.
pub fn kernel(has_norm: bool) -> KernelVariant {
    KernelVariant::from(&spec(has_norm))
}

/// In place on `qkv` `[rows, 3·heads·head_dim]` (`shape`): q and k heads are LayerNormed (when `norm` is given,
/// eps [`LAYER_NORM_EPS`]) and then rotated by RoPE on their first `table.rot()` dims at position `row % seq_len`;
/// v is untouched.
pub fn qk_norm_rope(
    rec: &mut Recorder<'_>,
    qkv: &GpuBuffer,
    table: &RopeTable,
    norm: Option<&QkNorm<'_>>,
    shape: QkShape,
) -> Result<()> {
    let QkShape { rows, seq_len, heads, head_dim } = shape;
    let buffers = QkPrologue { rope: table, norm, slices: 1 }.buffers(seq_len, head_dim, "qk_norm_rope")?;
    if rows > 0 && seq_len == 0 {
        return Err(GpuError::Validation("qk_norm_rope: rows need a positive seq_len to get positions".into()));
    }
    require(qkv, rows * 3 * heads * head_dim, "qk_norm_rope qkv")?;
    let kernel = rec.gpu().kernel(&spec(norm.is_some()))?;
    let params = Params {
        rows: rows as u32,
        seq_len: seq_len as u32,
        heads: heads as u32,
        head_dim: head_dim as u32,
        rot: table.rot() as u32,
        eps: LAYER_NORM_EPS,
    };
    let [rope, q_weight, q_bias, k_weight, k_bias] = buffers;
    let workgroups = grid(rec, (rows * 2 * heads).div_ceil(units(norm.is_some())));
    rec.dispatch(&kernel, &[qkv, rope, q_weight, q_bias, k_weight, k_bias], &params, workgroups)
}
