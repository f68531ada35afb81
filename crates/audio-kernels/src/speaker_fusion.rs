//! Speaker fusion launcher (`shaders/speaker_fusion.wgsl`): adds each frame's speaker embedding.

use gpu_core::{Access, GpuBuffer, KernelSpec, KernelVariant, ParamsLayout, Recorder, Result, params_layout};

use crate::launch::{grid, require};
use crate::shaders::SPEAKER_FUSION;

/// Threads per workgroup in the shader.
const WG: usize = 256;

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct Params {
    rows: u32,
    width: u32,
    speakers: u32,
}

const PARAMS: &ParamsLayout = &params_layout!(Params { rows, width, speakers });

const BINDINGS: &[Access] = &[Access::ReadWrite, Access::Read, Access::Read];

fn spec() -> KernelSpec<'static> {
    KernelSpec { shader: &SPEAKER_FUSION, entry: "speaker_fusion", constants: &[], bindings: BINDINGS, params: PARAMS }
}

/// Every pipeline this launcher can build, for shader validation.
pub fn variants() -> Vec<KernelVariant> {
    vec![KernelVariant::from(&spec())]
}

/// In place `x[t, c] += Σ_s z[t, s] · table[s, c]` for `x` `[rows, width]`, `z` `[rows, speakers]` and `table`
/// `[speakers, width]` (see [`speaker_table`]).
pub fn speaker_fusion(
    rec: &mut Recorder<'_>,
    x: &GpuBuffer,
    z: &GpuBuffer,
    table: &GpuBuffer,
    rows: usize,
    width: usize,
    speakers: usize,
) -> Result<()> {
    require(x, rows * width, "speaker_fusion x")?;
    require(z, rows * speakers, "speaker_fusion z")?;
    require(table, speakers * width, "speaker_fusion table")?;
    let kernel = rec.gpu().kernel(&spec())?;
    let params = Params { rows: rows as u32, width: width as u32, speakers: speakers as u32 };
    let workgroups = grid(rec, (rows * width).div_ceil(WG));
    rec.dispatch(&kernel, &[x, z, table], &params, workgroups)
}

/// The fixed sinusoid speaker table `[speakers, width]`: `Tab[s, 2i] = sin(s·ω_i)`, `Tab[s, 2i+1] = cos(s·ω_i)`,
/// `ω_i = exp(−2i·ln(10000)/width)`. Upstream evaluates it in f32; here it is evaluated in f64 and rounded, which
/// differs from the f32 recipe by a few f32 ulps (angles stay below `speakers` radians).
pub fn speaker_table(speakers: usize, width: usize) -> Vec<f32> {
    let mut table = Vec::with_capacity(speakers * width);
    for s in 0..speakers {
        for c in 0..width {
            let i = c / 2;
            let angle = s as f64 * (-((2 * i) as f64) * 10000f64.ln() / width as f64).exp();
            table.push(if c % 2 == 0 { angle.sin() } else { angle.cos() } as f32);
        }
    }
    table
}
