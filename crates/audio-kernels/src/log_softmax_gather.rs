//! Log-softmax + gather launcher (`shaders/log_softmax_gather.wgsl`): each row's log-probabilities of a few classes,
//! so that a CTC alignment reads back `[rows, classes]` values instead of `[rows, vocab]` logits.

use gpu_core::{Access, GpuBuffer, GpuError, KernelSpec, KernelVariant, ParamsLayout, Recorder, Result, params_layout};

use crate::launch::{grid, require};
use crate::shaders::LOG_SOFTMAX_GATHER;

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct Params {
    rows: u32,
    vocab: u32,
    classes: u32,
}

const PARAMS: &ParamsLayout = &params_layout!(Params { rows, vocab, classes });

const BINDINGS: &[Access] = &[Access::Read, Access::Read, Access::ReadWrite];

fn spec() -> KernelSpec<'static> {
    KernelSpec {
        shader: &LOG_SOFTMAX_GATHER,
        entry: "log_softmax_gather",
        constants: &[],
        bindings: BINDINGS,
        params: PARAMS,
    }
}

/// Every pipeline this launcher can build, for shader validation.
pub fn variants() -> Vec<KernelVariant> {
    vec![KernelVariant::from(&spec())]
}

/// `out[r, j] = logits[r, classes[j]] − log Σ_c exp(logits[r, c])` for `logits` f32 `[rows, vocab]`, `classes`
/// u32 `[n]` (each below `vocab`: the launcher cannot see the values, the caller checks them) and `out` f32
/// `[rows, n]`.
pub fn log_softmax_gather(
    rec: &mut Recorder<'_>,
    logits: &GpuBuffer,
    classes: &GpuBuffer,
    out: &GpuBuffer,
    rows: usize,
    vocab: usize,
    n: usize,
) -> Result<()> {
    require(logits, rows * vocab, "log_softmax_gather logits")?;
    require(classes, n, "log_softmax_gather classes")?;
    require(out, rows * n, "log_softmax_gather output")?;
    if rows == 0 || n == 0 {
        return Ok(());
    }
    if vocab == 0 {
        return Err(GpuError::SizeMismatch { what: "log_softmax_gather vocab".into(), expected: 1, got: 0 });
    }
    let kernel = rec.gpu().kernel(&spec())?;
    let params = Params { rows: rows as u32, vocab: vocab as u32, classes: n as u32 };
    rec.dispatch(&kernel, &[logits, classes, out], &params, grid(rec, rows))
}
