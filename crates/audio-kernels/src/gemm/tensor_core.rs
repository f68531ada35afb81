//! The tensor-core GEMM (`shaders/gemm_coop.wgsl`, built for 16×16×16 or 8×8×8 cooperative matrices): f32-accurate
//! products with the weight stored as its exact f16 image (see [`super::Weight`]) and each row of X scaled (by
//! `row_scales`) and split into two f16 halves while it is staged — or, for [`Precision::Fast`](super::Precision),
//! rounded to one f16 value, each product run once ([`Operands`]). Tiles are the largest that fit the device
//! ([`TensorCoreKernel::Auto`]) or fixed ([`TensorCoreKernel::Tiles`]); a product can also be split along k into
//! partial sums that its consumer adds in order ([`record_partials`]).

use gpu_core::{
    Access, DeviceProfile, Gpu, GpuBuffer, GpuError, KernelSpec, KernelVariant, ParamsLayout, Recorder, Result, Shader,
    params_layout,
};

use super::epilogue::{Epilogue, EpilogueKind};
use super::options::{KSplit, TensorCoreKernel, Tiles};
use crate::coop::Matrices;
use crate::launch::{MeasuredGrid, grid};
use crate::shaders::{GEMM_COOP8, GEMM_COOP16};
use crate::shapes::GemmShape;

/// Columns of Y per workgroup divide this; stored f16 weights have their rows padded to it.
pub(super) const TILE_COLS: usize = 128;
/// k must be a multiple of this (one step of the larger matrices).
pub(super) const K_STEP: usize = 16;
/// Most 4-value groups of X, and of W, one staging invocation copies per stage (`MAX_STAGE_LOADS` in the shader).
const MAX_STAGE_LOADS: usize = 8;

/// The GEMM shader built for a device's matrices.
fn shader(matrices: Matrices) -> &'static Shader {
    if matrices.t == 16 { &GEMM_COOP16 } else { &GEMM_COOP8 }
}

/// Tile configurations `Auto` chooses from: the first that fits the device with the weight's operands. On the H200
/// the largest tiles were the fastest for every product shape of the towers once split-k fills the grid
/// ([`auto_slices`](crate::gemm::auto_slices)); smaller tiles with the same grid ran 1.2–2× slower
/// (`examples/ceilings.rs`, see docs/performance.md), so those are not candidates. Two 16-steps per stage halve the
/// stages, each of which waits on its loads' latency: at the largest tiles two such stage buffers fit 48 KiB of
/// workgroup memory with X rounded, and there they made every product of the towers 1.3–1.8× faster (H200). With X
/// split only one fits: the next stage then waits in the staging invocations' registers, and the large products ran
/// 1.1–1.3× faster than with two 16-deep buffers, the ASR chunk 4 % (H100). Eight staging subgroups beside the
/// eight multiplying ones made every GEMM of the towers 8–24 % faster than the multiplying subgroups staging
/// themselves (one kernel timed alone, docs/performance.md); the tiles without them are for devices that allow fewer
/// than 512 invocations per workgroup.
pub const TILE_CANDIDATES: [Tiles; 5] = [
    Tiles { subgroups_m: 4, subgroups_n: 2, stage_steps: 2, producers: 8 },
    Tiles { subgroups_m: 4, subgroups_n: 2, stage_steps: 1, producers: 8 },
    Tiles { subgroups_m: 4, subgroups_n: 2, stage_steps: 1, producers: 0 },
    Tiles { subgroups_m: 2, subgroups_n: 2, stage_steps: 1, producers: 0 },
    Tiles { subgroups_m: 2, subgroups_n: 1, stage_steps: 1, producers: 0 },
];

/// About one workgroup per compute unit: products whose tiles give fewer are split along k. Measured on the H200 as
/// 128 for its 132 multiprocessors.
const FULL_GRID: MeasuredGrid = MeasuredGrid { workgroups: 128, compute_units: 132 };

/// What the product writes: Y through its epilogue, or raw partial products of k for a consumer that adds them, cut
/// into equal slices or by stream-k ([`stream_cut`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Output {
    Product,
    Slices,
    Stream,
}

/// How X's rows enter the products (a weight's choice, made at upload from its precision).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(super) enum Operands {
    /// Split into f16 hi and lo halves, two products per step started from zero: f32-accurate.
    Split,
    /// Rounded to f16, one product per step accumulated on the tensor cores: f16's precision, half the products
    /// and half the staging.
    Rounded,
}

impl Operands {
    /// X's staged rows per row of the tile.
    fn x_rows(self) -> usize {
        match self {
            Operands::Split => 2,
            Operands::Rounded => 1,
        }
    }
}

/// A tile configuration on a device, for X taken as `operands`, with `buffers` stage buffers in workgroup memory
/// (two where they fit, else one).
#[derive(Clone, Copy, Debug)]
struct Tiling {
    tiles: Tiles,
    matrices: Matrices,
    operands: Operands,
    buffers: usize,
}

impl Tiling {
    fn rows(self) -> usize {
        self.tiles.subgroups_m as usize * 2 * self.matrices.t
    }

    fn cols(self) -> usize {
        self.tiles.subgroups_n as usize * 4 * self.matrices.t
    }

    fn stage_k(self) -> usize {
        self.tiles.stage_steps as usize * self.matrices.t
    }

    fn multipliers(self) -> usize {
        (self.tiles.subgroups_m * self.tiles.subgroups_n) as usize * self.matrices.subgroup
    }

    /// Invocations that stage: the staging subgroups', or else the multiplying ones'.
    fn stagers(self) -> usize {
        match self.tiles.producers {
            0 => self.multipliers(),
            producers => producers as usize * self.matrices.subgroup,
        }
    }

    fn threads(self) -> usize {
        self.multipliers() + self.tiles.producers as usize * self.matrices.subgroup
    }

    /// Workgroup memory: the stage buffers, each (2·rows + cols) rows (rows + cols where X is rounded) of stage_k + 8
    /// f16, and one T×T f32 epilogue tile per subgroup.
    fn workgroup_bytes(self) -> usize {
        let t = self.matrices.t;
        self.buffers * (self.operands.x_rows() * self.rows() + self.cols()) * (self.stage_k() + 8) * 2
            + (self.tiles.subgroups_m * self.tiles.subgroups_n) as usize * t * t * 4
    }

    /// Whether the device of `profile` can run this configuration: X's and W's share of a stage each divide evenly
    /// among the staging invocations, in at most [`MAX_STAGE_LOADS`] groups each, the tile divides the weight's row
    /// padding, and the limits hold.
    fn fits(self, profile: &DeviceProfile) -> bool {
        let limits = &profile.limits;
        let evenly = |rows: usize| {
            let groups = rows * self.stage_k() / 4;
            groups.is_multiple_of(self.stagers()) && groups / self.stagers() <= MAX_STAGE_LOADS
        };
        evenly(self.rows())
            && evenly(self.cols())
            && TILE_COLS.is_multiple_of(self.cols())
            && self.workgroup_bytes() <= limits.max_compute_workgroup_storage_size as usize
            && self.threads() <= limits.max_compute_invocations_per_workgroup as usize
            && self.threads() <= limits.max_compute_workgroup_size_x as usize
    }

    /// The pipelines of a product: `row_scales` (not run where X's scales are given), then the product with
    /// `epilogue` or its partial sums, as `output` says.
    fn kernels(self, epilogue: EpilogueKind, output: Output) -> [KernelVariant; 2] {
        let shader = shader(self.matrices);
        [
            KernelVariant::from(&spec(shader, "row_scales", &[])),
            KernelVariant::from(&spec(shader, "gemm_coop", &self.constants(epilogue, output))),
        ]
    }

    fn constants(self, epilogue: EpilogueKind, output: Output) -> Vec<(&'static str, f64)> {
        let flag = |on: bool| if on { 1.0 } else { 0.0 };
        let mut constants = epilogue.constants().to_vec();
        constants.extend([
            ("PARTIALS", flag(output != Output::Product)),
            ("STREAM", flag(output == Output::Stream)),
            ("SUBGROUP", self.matrices.subgroup as f64),
            ("SG_M", self.tiles.subgroups_m as f64),
            ("SG_N", self.tiles.subgroups_n as f64),
            ("STAGE_K", self.stage_k() as f64),
            ("PRODUCERS", self.tiles.producers as f64),
            ("SPLIT", if self.operands == Operands::Split { 1.0 } else { 0.0 }),
            ("BUFFERS", self.buffers as f64),
        ]);
        constants
    }
}

/// The tiling `kernel` gives products with X taken as `operands` on the device of `profile`, if the device runs the
/// kernel at all.
fn tiling(profile: &DeviceProfile, (kernel, operands): (TensorCoreKernel, Operands)) -> Option<Tiling> {
    let matrices = Matrices::of(profile)?;
    let on_device = |tiles| {
        [2, 1].into_iter().map(|buffers| Tiling { tiles, matrices, operands, buffers }).find(|t| t.fits(profile))
    };
    match kernel {
        TensorCoreKernel::Tiles(tiles) => on_device(tiles),
        TensorCoreKernel::Auto => TILE_CANDIDATES.into_iter().find_map(on_device),
    }
}

/// Slices of k that let an `n × m × k` product fill the GPU without passing [`FULL_GRID`] workgroups (the fewest
/// that the tiles give, times the slices, stays at or under it; measured on the H200, going over cost more in
/// partial sums than the extra workgroups gained), each slice at least [`MIN_SLICE_K`] deep, at most
/// [`MAX_SLICES`].
pub(super) fn auto_slices(gpu: &Gpu, kernel: (TensorCoreKernel, Operands), GemmShape { n, m, k }: GemmShape) -> usize {
    let Some(tiling) = tiling(gpu.profile(), kernel) else { return 1 };
    let grid = n.div_ceil(tiling.rows()) * m.div_ceil(tiling.cols());
    slices_to_fill(grid, k, FULL_GRID.on(gpu.profile()))
}

/// [`auto_slices`] for a product of `grid` tiles and depth `k` on a device filled by `full_grid` workgroups.
fn slices_to_fill(grid: usize, k: usize, full_grid: usize) -> usize {
    (full_grid / grid.max(1)).min(k / MIN_SLICE_K).clamp(1, MAX_SLICES)
}

/// The slices (at most `max`) that waste least of a partly filled last wave of workgroups, for a product the GPU
/// already fills: time taken as whole waves of one workgroup per compute unit of the device, each slice's
/// workgroups taking its share of k; ties go to fewer slices. The model holds for 2 slices, not for more (measured
/// on the H200 with `ceilings slices`, 2026-12-04: the ASR q/k/v, 150 tiles, 118.8 µs whole, 105.9 in 2 slices,
/// 115.9–132.7 in 3–5, where the model wants 5): callers keep `max` at 2.
pub(super) fn wave_slices(
    gpu: &Gpu,
    kernel: (TensorCoreKernel, Operands),
    GemmShape { n, m, k }: GemmShape,
    max: usize,
) -> usize {
    let profile = gpu.profile();
    let Some(tiling) = tiling(profile, kernel) else { return 1 };
    fewest_waves(n.div_ceil(tiling.rows()) * m.div_ceil(tiling.cols()), k, max, profile.compute_units.count)
}

/// [`wave_slices`] for a product of `grid` tiles and depth `k`, with `wave` workgroups to a wave.
fn fewest_waves(grid: usize, k: usize, max: usize, wave: usize) -> usize {
    let work = |slices: usize| (grid * slices).div_ceil(wave.max(1)) as f64 / slices as f64;
    let candidates = (1..=max.max(1)).filter(|&s| s == 1 || k / s >= MIN_SLICE_K);
    candidates.min_by(|&a, &b| work(a).total_cmp(&work(b))).unwrap_or(1)
}

/// A stream-k cut of a product: `units` workgroups, each an even share of every tile's stages, and the most pieces
/// (`slots`) a tile is cut into — the slices its consumer adds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct StreamCut {
    pub units: usize,
    pub slots: usize,
}

/// The stream-k cut of an `n × m × k` product on the device of `profile` as `k_split` asks: one workgroup per compute
/// unit, fewer where a share would be shallower than [`MIN_SLICE_K`]. With [`KSplit::Auto`] only where it pays:
/// measured on the H100 (`ceilings slices`, 2026-12-06), stream-k made the ASR chunk 4.6 % faster (its q/k/v, 150
/// tiles, and fc2, 50 tiles 5120 deep) but was slower than equal slices where each workgroup's share was shallow
/// (the Sortformer's products, 10 to 14 stages a share against about 7 stages' worth of prologue and epilogue per
/// piece) and where the tiles fill many waves (8 ASR chunks' q/k/v, 1,140 tiles: 0.609 against 0.558 ms whole,
/// the concurrent shares far apart in the matrix). None where the device cannot run the tiles, where the shader's
/// 32-bit share arithmetic (stages × workgroups) would overflow, or for [`KSplit::Slices`].
pub(super) fn stream_cut(
    profile: &DeviceProfile,
    kernel: (TensorCoreKernel, Operands),
    GemmShape { n, m, k }: GemmShape,
    k_split: KSplit,
) -> Option<StreamCut> {
    let tiling = tiling(profile, kernel)?;
    let per_tile = k.div_ceil(tiling.stage_k()).max(1);
    let tiles = n.div_ceil(tiling.rows()) * m.div_ceil(tiling.cols());
    let total = tiles * per_tile;
    let units = profile.compute_units.count.max(1);
    let pays = tiles < 2 * units && total * tiling.stage_k() >= MIN_STREAM_SHARE_K * units;
    let min_stages = (MIN_SLICE_K / tiling.stage_k()).max(1);
    let units = units.min(total / min_stages).max(1);
    let overflows = (total as u64 + 1) * units as u64 > u32::MAX as u64;
    match k_split {
        KSplit::Slices => None,
        KSplit::Auto if !pays => None,
        _ if overflows => None,
        KSplit::Auto | KSplit::Stream => Some(StreamCut { units, slots: stream_slots(tiles, per_tile, units) }),
    }
}

/// The outputs split products of `m × k` with up to `max_rows` rows take as `k_split` cuts them: equal slices, stream-k
/// or both, each as some number of rows has it ([`stream_cut`] depends on the rows through the tiles alone).
pub(super) fn partial_outputs(
    profile: &DeviceProfile,
    kernel: (TensorCoreKernel, Operands),
    (m, k): (usize, usize),
    max_rows: usize,
    k_split: KSplit,
) -> Vec<Output> {
    let Some(tiling) = tiling(profile, kernel) else { return Vec::new() };
    let (mut slices, mut stream) = (false, false);
    for row_tiles in 1..=max_rows.div_ceil(tiling.rows()).max(1) {
        let n = (row_tiles * tiling.rows()).min(max_rows.max(1));
        match stream_cut(profile, kernel, GemmShape { n, m, k }, k_split) {
            Some(_) => stream = true,
            None => slices = true,
        }
        if slices && stream {
            break;
        }
    }
    [(slices, Output::Slices), (stream, Output::Stream)]
        .into_iter()
        .filter_map(|(taken, o)| taken.then_some(o))
        .collect()
}

/// Depth of k each workgroup's share must reach for [`KSplit::Auto`] to cut a product by stream-k (see
/// [`stream_cut`]).
const MIN_STREAM_SHARE_K: usize = 1024;

/// The most pieces a tile of `per_tile` stages is cut into when `tiles` such tiles are shared evenly among `units`
/// workgroups, share u starting at stage ⌊u·total/units⌋ (as the shader cuts them).
fn stream_slots(tiles: usize, per_tile: usize, units: usize) -> usize {
    let total = tiles * per_tile;
    // The share holding stage g: the largest u with ⌊u·total/units⌋ ≤ g.
    let share = |g: usize| ((g + 1) * units - 1) / total;
    (0..tiles).map(|t| share(t * per_tile + per_tile - 1) - share(t * per_tile) + 1).max().unwrap_or(1)
}

/// Shallowest slice of k worth a workgroup of its own.
const MIN_SLICE_K: usize = 256;
/// Most slices a product is split into.
const MAX_SLICES: usize = 8;

/// The pipelines [`record`] (`partials`: [`record_partials`]) takes for products with `epilogue` on the device of
/// `profile` for `kernel`'s tiles: `row_scales` unless X's scales are given, and the product; none where the device
/// cannot run the tiles (the launch is refused).
pub(super) fn kernels(
    profile: &DeviceProfile,
    kernel: (TensorCoreKernel, Operands),
    (epilogue, output): (EpilogueKind, Output),
    scales_given: bool,
) -> Vec<KernelVariant> {
    let Some(tiling) = tiling(profile, kernel) else { return Vec::new() };
    let [row_scales, product] = tiling.kernels(epilogue, output);
    if scales_given { vec![product] } else { vec![row_scales, product] }
}

/// Whether this device runs `kernel` with X taken as `operands` (weights uploaded for it are then stored as f16). The
/// split operands need the more workgroup memory: a device that runs a tiling with them runs it with the rounded ones,
/// and some tilings (two steps per stage at the largest tiles) fit with the rounded ones only.
pub(super) fn supported(gpu: &Gpu, kernel: TensorCoreKernel, operands: Operands) -> bool {
    tiling(gpu.profile(), (kernel, operands)).is_some()
}

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct Params {
    n: u32,
    m: u32,
    k: u32,
    k_split: u32,
    w_unscale: f32,
    slots: u32,
}

const PARAMS: &ParamsLayout = &params_layout!(Params { n, m, k, k_split, w_unscale, slots });

const BINDINGS: &[Access] = &[Access::Read, Access::Read, Access::Read, Access::ReadWrite, Access::ReadWrite];

fn spec<'a>(shader: &'static Shader, entry: &'static str, constants: &'a [(&'static str, f64)]) -> KernelSpec<'a> {
    KernelSpec { shader, entry, constants, bindings: BINDINGS, params: PARAMS }
}

/// Every pipeline this launcher can build: both matrix sizes (at their usual subgroup sizes), every candidate tiling,
/// both ways of taking X, every epilogue, and the partial-sum outputs.
pub(super) fn variants() -> Vec<KernelVariant> {
    let mut variants = Vec::new();
    for matrices in Matrices::USUAL {
        let shader = shader(matrices);
        variants.push(KernelVariant::from(&spec(shader, "row_scales", &[])));
        for tiling in every_tiling(matrices) {
            for epilogue in EpilogueKind::all() {
                let constants = tiling.constants(epilogue, Output::Product);
                variants.push(KernelVariant::from(&spec(shader, "gemm_coop", &constants)));
            }
            let plain = EpilogueKind::of(&Epilogue::default());
            for output in [Output::Slices, Output::Stream] {
                variants.push(KernelVariant::from(&spec(shader, "gemm_coop", &tiling.constants(plain, output))));
            }
        }
    }
    variants
}

/// Every tiling the launcher can take on `matrices`: each candidate, X split or rounded, two stage buffers or one.
fn every_tiling(matrices: Matrices) -> impl Iterator<Item = Tiling> {
    TILE_CANDIDATES
        .into_iter()
        .flat_map(|tiles| [(tiles, Operands::Split), (tiles, Operands::Rounded)])
        .flat_map(move |(tiles, operands)| [2, 1].map(|buffers| Tiling { tiles, matrices, operands, buffers }))
}

/// The product's weight: the f16 image in `buffer` (`[m, k]`, rows padded to [`TILE_COLS`], values scaled by
/// `2^exponent`), and the kernel and operands it was uploaded for.
pub(super) struct F16Weight<'a> {
    pub buffer: &'a GpuBuffer,
    pub exponent: i32,
    pub kernel: TensorCoreKernel,
    pub operands: Operands,
}

/// Records the row scales of X (unless given) and the product. Sizes were checked by [`super::gemm`].
pub(super) fn record(
    rec: &mut Recorder<'_>,
    (x, scales): (&GpuBuffer, Option<&GpuBuffer>),
    w: &F16Weight<'_>,
    y: &GpuBuffer,
    shape: GemmShape,
    epilogue: &Epilogue<'_>,
) -> Result<()> {
    launch(rec, (x, scales), w, y, shape, (epilogue, Cut::Whole))
}

/// How a launch cuts the product along k.
#[derive(Clone, Copy)]
enum Cut {
    Whole,
    Slices(usize),
    Stream(StreamCut),
}

/// Records the product split into `splits` slices of k, each slice's raw product (no bias, activation or
/// accumulation) written to `partials[s·n·m..]`; the consumer sums the slices in order.
pub(super) fn record_partials(
    rec: &mut Recorder<'_>,
    (x, scales): (&GpuBuffer, Option<&GpuBuffer>),
    w: &F16Weight<'_>,
    partials: &GpuBuffer,
    shape: GemmShape,
    splits: usize,
) -> Result<()> {
    launch(rec, (x, scales), w, partials, shape, (&Epilogue::default(), Cut::Slices(splits.max(1))))
}

/// Records the product cut by stream-k as `cut` ([`stream_cut`]) into `cut.slots` slices of raw partial products in
/// `partials[s·n·m..]`, which the consumer sums in order as it sums [`record_partials`]'.
pub(super) fn record_stream(
    rec: &mut Recorder<'_>,
    (x, scales): (&GpuBuffer, Option<&GpuBuffer>),
    w: &F16Weight<'_>,
    partials: &GpuBuffer,
    shape: GemmShape,
    cut: StreamCut,
) -> Result<()> {
    launch(rec, (x, scales), w, partials, shape, (&Epilogue::default(), Cut::Stream(cut)))
}

/// Runs `row_scales` first unless `scales` holds X's row scales already (written by the LayerNorm that wrote X).
fn launch(
    rec: &mut Recorder<'_>,
    (x, given_scales): (&GpuBuffer, Option<&GpuBuffer>),
    w: &F16Weight<'_>,
    y: &GpuBuffer,
    GemmShape { n, m, k }: GemmShape,
    (epilogue, cut): (&Epilogue<'_>, Cut),
) -> Result<()> {
    let gpu = rec.gpu();
    gpu.profile().require("gemm_coop", &Matrices::NEEDS)?;
    let Some(tiling) = tiling(gpu.profile(), (w.kernel, w.operands)) else {
        return Err(GpuError::Validation(format!(
            "gemm weight `{}` was stored for tensor-core tiles this device cannot run",
            w.buffer.label()
        )));
    };
    let (output, splits, slots) = match cut {
        Cut::Whole => (Output::Product, 1, 1),
        Cut::Slices(splits) => (Output::Slices, splits, splits),
        Cut::Stream(StreamCut { slots, .. }) => (Output::Stream, 1, slots),
    };
    let k_split = k.div_ceil(splits).next_multiple_of(tiling.stage_k());
    let params = Params {
        n: n as u32,
        m: m as u32,
        k: k as u32,
        k_split: k_split as u32,
        w_unscale: 2f32.powi(-w.exponent),
        slots: slots as u32,
    };
    let bias = epilogue.bias.unwrap_or(x);
    let scales = match given_scales {
        Some(scales) => scales.clone(),
        None => gpu.scratch("gemm row scales", 2 * n)?,
    };
    let buffers = [x, w.buffer, bias, y, &scales];
    let [row_scales, product] = tiling.kernels(EpilogueKind::of(epilogue), output);
    if given_scales.is_none() {
        let row_scales = gpu.kernel(&row_scales.spec())?;
        rec.dispatch(&row_scales, &buffers, &params, grid(rec, n))?;
    }
    let pipeline = rec.gpu().kernel(&product.spec())?;
    let workgroups = match cut {
        Cut::Stream(StreamCut { units, .. }) => [units as u32, 1, 1],
        _ => [m.div_ceil(tiling.cols()) as u32, n.div_ceil(tiling.rows()) as u32, splits as u32],
    };
    rec.dispatch(&pipeline, &buffers, &params, workgroups)
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::launch::profiles::{h200, lavapipe, unknown};

    #[test]
    fn slices_fill_the_last_wave() {
        let wave = h200().compute_units.count;
        assert_eq!(wave, 132, "the H200's wave is its 132 multiprocessors");
        // The ASR q/k/v (150 tiles) in 2; the same for 8 chunks (1,140 tiles: 9 waves either way) whole.
        assert_eq!(fewest_waves(150, 1280, 2, wave), 2);
        assert_eq!(fewest_waves(1140, 1280, 2, wave), 1);
        // A full wave stays whole; a half wave splits; k too shallow for two slices does not.
        assert_eq!(fewest_waves(132, 1280, 4, wave), 1);
        assert_eq!(fewest_waves(66, 1280, 4, wave), 2);
        assert_eq!(fewest_waves(66, 300, 4, wave), 1);
        assert_eq!(fewest_waves(1, 1280, 0, wave), 1);
        // Four CPU threads: the ASR q/k/v's 150 tiles are 37.5 waves, and 2 slices make 75 whole ones.
        assert_eq!(fewest_waves(150, 1280, 2, lavapipe(4).compute_units.count), 2);
        assert_eq!(fewest_waves(152, 1280, 2, lavapipe(4).compute_units.count), 1);
    }

    /// The H200 keeps the measured choices: the largest tiles on 16×16 matrices with two steps per stage, double
    /// buffered with X rounded and single with X split, 128 workgroups filling it, and the towers' products split as
    /// before; a CPU adapter (8×8 matrices: two buffers fit with X split too) and an unknown GPU, with far fewer
    /// units, split less.
    #[test]
    fn the_profile_sets_the_tiles_and_the_grid() {
        let tiles = |profile: &DeviceProfile, operands| {
            tiling(profile, (TensorCoreKernel::Auto, operands)).map(|t| (t.tiles, t.matrices, t.buffers))
        };
        assert_eq!(tiles(&h200(), Operands::Split), Some((TILE_CANDIDATES[0], Matrices::USUAL[0], 1)));
        assert_eq!(tiles(&h200(), Operands::Rounded), Some((TILE_CANDIDATES[0], Matrices::USUAL[0], 2)));
        for operands in [Operands::Split, Operands::Rounded] {
            assert_eq!(tiles(&lavapipe(4), operands), Some((TILE_CANDIDATES[0], Matrices::USUAL[1], 2)));
        }
        // Less workgroup memory (8×8 matrices): one stage buffer where two do not fit, then smaller tiles.
        let capped = |bytes: u32| {
            let mut profile = lavapipe(4);
            profile.limits.max_compute_workgroup_storage_size = bytes;
            profile
        };
        assert_eq!(tiles(&capped(16 << 10), Operands::Split), Some((TILE_CANDIDATES[0], Matrices::USUAL[1], 1)));
        assert_eq!(tiles(&capped(16 << 10), Operands::Rounded), Some((TILE_CANDIDATES[0], Matrices::USUAL[1], 2)));
        assert_eq!(tiles(&capped(8 << 10), Operands::Split), Some((TILE_CANDIDATES[1], Matrices::USUAL[1], 1)));
        assert_eq!(tiles(&capped(8 << 10), Operands::Rounded), Some((TILE_CANDIDATES[0], Matrices::USUAL[1], 1)));
        assert_eq!(FULL_GRID.on(&h200()), 128);
        assert_eq!(FULL_GRID.on(&lavapipe(4)), 4);
        assert_eq!(FULL_GRID.on(&unknown()), 16);
        // ASR products on 600 rows (5 row tiles of 128): out-proj and fc2 (1280 columns: 50 tiles), q/k/v (150).
        let full = FULL_GRID.on(&h200());
        assert_eq!(slices_to_fill(50, 1280, full), 2);
        assert_eq!(slices_to_fill(50, 5120, full), 2);
        assert_eq!(slices_to_fill(150, 1280, full), 1);
        assert_eq!(slices_to_fill(10, 5120, full), 8, "at most MAX_SLICES");
        assert_eq!(slices_to_fill(10, 1280, full), 5, "slices at least MIN_SLICE_K deep");
        for grid in 1..300 {
            for k in [256, 1280, 5120] {
                assert_eq!(slices_to_fill(grid, k, full), (128 / grid).min(k / MIN_SLICE_K).clamp(1, MAX_SLICES));
            }
        }
        assert_eq!(slices_to_fill(10, 5120, FULL_GRID.on(&lavapipe(4))), 1);
        assert_eq!(slices_to_fill(5, 5120, FULL_GRID.on(&unknown())), 3);
    }

    /// The shader's stream-k loop, run here: every stage of every tile lands in exactly one piece, each tile's pieces
    /// in slots 0, 1, … in order of k, and no tile needs more slots than `stream_slots` says (some tile needs that
    /// many).
    #[test]
    fn stream_k_shares_cover_every_stage_once_in_the_announced_slots() {
        for (tiles, per_tile, units) in [(1, 80, 4), (12, 33, 4), (15, 5, 4), (150, 40, 132), (84, 16, 132), (3, 1, 1)]
        {
            let total = tiles * per_tile;
            let slots = stream_slots(tiles, per_tile, units);
            // (tile, slot) → the stages it covers, in the order the workgroups write them.
            let mut pieces: Vec<Vec<(usize, usize)>> = vec![Vec::new(); tiles];
            for u in 0..units {
                let end = (u + 1) * total / units;
                let mut g = u * total / units;
                while g < end {
                    let (tile, s0) = (g / per_tile, g % per_tile);
                    let s1 = per_tile.min(s0 + end - g);
                    let first = ((tile * per_tile + 1) * units - 1) / total;
                    assert_eq!(u - first, pieces[tile].len(), "tile {tile}'s pieces come in slot order");
                    pieces[tile].push((s0, s1));
                    g += s1 - s0;
                }
            }
            for (tile, pieces) in pieces.iter().enumerate() {
                let covered: Vec<usize> = pieces.iter().flat_map(|&(s0, s1)| s0..s1).collect();
                assert_eq!(covered, (0..per_tile).collect::<Vec<_>>(), "tile {tile} of {tiles}×{per_tile} on {units}");
            }
            assert_eq!(pieces.iter().map(Vec::len).max(), Some(slots), "{tiles}×{per_tile} on {units}");
        }
        // The ASR q/k/v on the H200 (150 tiles of 40 stages): 45.5 stages a workgroup, at most 2 pieces a tile.
        let cut = |(n, m, k), k_split| {
            stream_cut(&h200(), (TensorCoreKernel::Auto, Operands::Split), GemmShape { n, m, k }, k_split)
        };
        assert_eq!(cut((600, 3840, 1280), KSplit::Auto), Some(StreamCut { units: 132, slots: 2 }));
        assert_eq!(cut((600, 3840, 1280), KSplit::Slices), None);
        // Where it does not pay: 8 chunks' q/k/v (many waves), the Sortformer's out-projection (shallow shares).
        assert_eq!(cut((4800, 3840, 1280), KSplit::Auto), None);
        for sortformer in [(828, 1536, 512), (828, 512, 512), (828, 512, 2048)] {
            assert_eq!(cut(sortformer, KSplit::Auto), None, "{sortformer:?}");
        }
        // What a model compiles: the ASR q/k/v takes stream-k at some rows (600) and slices at others (4800, or
        // under 129); the Sortformer's q/k/v and out-projection never take stream-k (k = 512: under two waves of
        // tiles a share stays under 1024 deep), its fc2 (k = 2048) does from 2,176 rows (17 row tiles) to 8,320.
        let outputs = |(m, k), max_rows| {
            partial_outputs(&h200(), (TensorCoreKernel::Auto, Operands::Split), (m, k), max_rows, KSplit::Auto)
        };
        assert_eq!(outputs((3840, 1280), 4800), [Output::Slices, Output::Stream]);
        assert_eq!(outputs((3840, 1280), 128), [Output::Slices]);
        for sortformer in [(1536, 512), (512, 512)] {
            assert_eq!(outputs(sortformer, 100_000), [Output::Slices], "{sortformer:?}");
        }
        assert_eq!(outputs((512, 2048), 2048), [Output::Slices]);
        assert_eq!(outputs((512, 2048), 2176), [Output::Slices, Output::Stream]);
        // Forced: 28 tiles of 16 stages in shares at least 8 deep (256 of k): 56 shares, each half a tile.
        assert_eq!(cut((828, 512, 512), KSplit::Stream), Some(StreamCut { units: 56, slots: 2 }));
    }

    /// `fits` is only honest if each configuration's footprint is the shader's, with its override constants applied;
    /// and each candidate fits the 48 KiB most devices give, with X rounded at least (two steps per stage at the
    /// largest 16×16 tiles do not with X split).
    #[test]
    fn workgroup_bytes_match_the_shader() {
        for matrices in Matrices::USUAL {
            let source = shader(matrices).source;
            let module = naga::front::wgsl::parse_str(source).expect("gemm_coop parses");
            let mut validator =
                naga::valid::Validator::new(naga::valid::ValidationFlags::all(), naga::valid::Capabilities::all());
            let info = validator.validate(&module).expect("gemm_coop validates");
            for tiling in every_tiling(matrices) {
                let Tiling { tiles, operands, buffers, .. } = tiling;
                let constants: naga::back::PipelineConstants = tiling
                    .constants(EpilogueKind::of(&Epilogue::default()), Output::Product)
                    .into_iter()
                    .map(|(name, value)| (name.to_string(), value))
                    .collect();
                let entry = (naga::ShaderStage::Compute, "gemm_coop");
                let (module, info) =
                    naga::back::pipeline_constants::process_overrides(&module, &info, Some(entry), &constants)
                        .expect("overrides");
                let index = module.entry_points.iter().position(|ep| ep.name == "gemm_coop").expect("entry point");
                let used = info.get_entry_point(index);
                let mut layouter = naga::proc::Layouter::default();
                layouter.update(module.to_ctx()).expect("layout");
                let bytes: usize = module
                    .global_variables
                    .iter()
                    .filter(|&(handle, var)| var.space == naga::AddressSpace::WorkGroup && !used[handle].is_empty())
                    .map(|(_, var)| layouter[var.ty].size as usize)
                    .sum();
                assert_eq!(bytes, tiling.workgroup_bytes(), "{tiling:?}");
                let split_misses =
                    buffers == 2 && operands == Operands::Split && tiles == TILE_CANDIDATES[0] && matrices.t == 16;
                assert_eq!(bytes <= 48 << 10, !split_misses, "{tiling:?}: {bytes} bytes");
            }
        }
    }
}
