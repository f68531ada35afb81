//! im2col launcher for the kernel-3, padding-1 Conv1d (`shaders/conv_im2col.wgsl`).

use gpu_core::{Access, GpuBuffer, KernelSpec, KernelVariant, ParamsLayout, Recorder, Result, params_layout};

use crate::launch::{grid, require};
use crate::shaders::CONV_IM2COL;

/// Threads per workgroup in the shader.
const WG: usize = 256;

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct Params {
    n: u32,
    channels: u32,
}

const PARAMS: &ParamsLayout = &params_layout!(Params { n, channels });

const BINDINGS: &[Access] = &[Access::Read, Access::ReadWrite];

fn spec() -> KernelSpec<'static> {
    KernelSpec { shader: &CONV_IM2COL, entry: "conv_im2col", constants: &[], bindings: BINDINGS, params: PARAMS }
}

/// Every pipeline this launcher can build, for shader validation.
pub fn variants() -> Vec<KernelVariant> {
    vec![KernelVariant::from(&spec())]
}

/// `cols[t, ci·3 + tap] = h[t + tap − 1, ci]` (zero outside the sequence) for `h` `[n, channels]` and `cols`
/// `[n, 3·channels]`: multiplied by a conv weight `[out, channels, 3]` read as `[out, 3·channels]`, it gives
/// the kernel-3, padding-1 Conv1d.
pub fn conv_im2col(rec: &mut Recorder<'_>, h: &GpuBuffer, cols: &GpuBuffer, n: usize, channels: usize) -> Result<()> {
    require(h, n * channels, "conv_im2col input")?;
    require(cols, n * 3 * channels, "conv_im2col output")?;
    let kernel = rec.gpu().kernel(&spec())?;
    let params = Params { n: n as u32, channels: channels as u32 };
    let workgroups = grid(rec, (n * 3 * channels).div_ceil(WG));
    rec.dispatch(&kernel, &[h, cols], &params, workgroups)
}
