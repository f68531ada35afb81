//! Row gather launcher (`shaders/gather_rows.wgsl`): many row copies between two buffers in one launch.

use gpu_core::{Access, GpuBuffer, GpuError, KernelSpec, KernelVariant, ParamsLayout, Recorder, Result, params_layout};

use crate::launch::{grid, require};
use crate::shaders::GATHER_ROWS;

/// Threads per workgroup in the shader.
const WG: usize = 256;

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct Params {
    first: u32,
    count: u32,
    width: u32,
}

const PARAMS: &ParamsLayout = &params_layout!(Params { first, count, width });

const BINDINGS: &[Access] = &[Access::Read, Access::Read, Access::ReadWrite];

fn spec() -> KernelSpec<'static> {
    KernelSpec { shader: &GATHER_ROWS, entry: "gather_rows", constants: &[], bindings: BINDINGS, params: PARAMS }
}

/// Every pipeline this launcher can build, for shader validation.
pub fn variants() -> Vec<KernelVariant> {
    vec![KernelVariant::from(&spec())]
}

/// Rows to copy: `pairs` is a u32 buffer of `(source row, destination row)` pairs, of which a launch reads
/// `count` from pair `first` on. No destination row may appear twice in one launch (its value would be either
/// source's).
#[derive(Clone, Copy, Debug)]
pub struct RowPairs<'a> {
    /// `[*, 2]` u32 pairs.
    pub pairs: &'a GpuBuffer,
    /// First pair of the launch.
    pub first: usize,
    /// Pairs of the launch.
    pub count: usize,
    /// Rows `src` holds: every source row must be below it.
    pub src_rows: usize,
    /// Rows `dst` holds: every destination row must be below it.
    pub dst_rows: usize,
}

/// `dst[pair.1, ..] = src[pair.0, ..]` for each pair of `rows`, rows of `width` values. The pairs' rows are not
/// read on the host: the bounds checked here are the buffers' (`rows.src_rows`, `rows.dst_rows`), and the caller
/// vouches that the pairs stay below them (an index past a buffer's end is kept inside that buffer by WGSL's bounds
/// rules, so a wrong pair corrupts only the buffers of the launch).
pub fn gather_rows(
    rec: &mut Recorder<'_>,
    src: &GpuBuffer,
    dst: &GpuBuffer,
    rows: RowPairs<'_>,
    width: usize,
) -> Result<()> {
    require(src, rows.src_rows * width, "gather_rows source")?;
    require(dst, rows.dst_rows * width, "gather_rows destination")?;
    require(rows.pairs, 2 * (rows.first + rows.count), "gather_rows pairs")?;
    let elements = rows.count * width;
    if elements > u32::MAX as usize || 2 * (rows.first + rows.count) > u32::MAX as usize {
        return Err(GpuError::LimitExceeded {
            what: format!("gather_rows of {} rows of {width} values", rows.count),
            limit: "u32 indices",
            requested: elements as u64,
            max: u32::MAX as u64,
        });
    }
    let kernel = rec.gpu().kernel(&spec())?;
    let params = Params { first: rows.first as u32, count: rows.count as u32, width: width as u32 };
    let workgroups = grid(rec, elements.div_ceil(WG));
    rec.dispatch(&kernel, &[src, rows.pairs, dst], &params, workgroups)
}
