//! im2col launcher for the kernel-3, padding-1 Conv1d (`shaders/conv_im2col.wgsl`).

use gpu_core::{Access, GpuBuffer, KernelSpec, KernelVariant, ParamsLayout, Recorder, Result, params_layout};

use crate::launch::{grid, require};
use crate::shaders::CONV_IM2COL;

/// Threads per workgroup in the shader.
const WG: usize = 256;

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct Params {
    rows: u32,
    seq_len: u32,
    channels: u32,
}

const PARAMS: &ParamsLayout = &params_layout!(Params { rows, seq_len, channels });

const BINDINGS: &[Access] = &[Access::Read, Access::Read, Access::ReadWrite];

fn spec() -> KernelSpec<'static> {
    KernelSpec { shader: &CONV_IM2COL, entry: "conv_im2col", constants: &[], bindings: BINDINGS, params: PARAMS }
}

/// Every pipeline this launcher can build, for shader validation.
pub fn variants() -> Vec<KernelVariant> {
    vec![KernelVariant::from(&spec())]
}

/// A batch of `sequences` sequences of `seq_len` rows each, of which sequence `s` has its first `lengths[s]` rows
/// (a `[sequences]` u32 buffer; a length past `seq_len` counts as `seq_len`): the rows after them pad the batch and
/// are zeros to the conv.
#[derive(Clone, Copy, Debug)]
pub struct ConvBatch<'a> {
    /// Sequences in the batch.
    pub sequences: usize,
    /// Rows of every sequence, padding included.
    pub seq_len: usize,
    /// Rows each sequence really has.
    pub lengths: &'a GpuBuffer,
}

/// Per sequence `s` of `batch`, `cols[s·L + t, ci·3 + tap] = h[s·L + t + tap − 1, ci]` (zero outside the sequence's
/// rows) for `h` `[sequences·L, channels]` and `cols` `[sequences·L, 3·channels]`: multiplied by a conv weight
/// `[out, channels, 3]` read as `[out, 3·channels]`, it gives the kernel-3, padding-1 Conv1d of every sequence.
pub fn conv_im2col(
    rec: &mut Recorder<'_>,
    h: &GpuBuffer,
    cols: &GpuBuffer,
    batch: ConvBatch<'_>,
    channels: usize,
) -> Result<()> {
    let rows = batch.sequences * batch.seq_len;
    require(h, rows * channels, "conv_im2col input")?;
    require(batch.lengths, batch.sequences, "conv_im2col sequence lengths")?;
    require(cols, rows * 3 * channels, "conv_im2col output")?;
    let kernel = rec.gpu().kernel(&spec())?;
    let params = Params { rows: rows as u32, seq_len: batch.seq_len as u32, channels: channels as u32 };
    let workgroups = grid(rec, (rows * 3 * channels).div_ceil(WG));
    rec.dispatch(&kernel, &[h, batch.lengths, cols], &params, workgroups)
}
