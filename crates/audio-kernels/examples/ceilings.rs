//! What the kernels could reach on this adapter, measured with GPU timestamps, for docs/performance.md:
//! - the tensor-core rate through wgpu: a loop of cooperative-matrix products on registers only, and the same
//!   products with their operands loaded from workgroup memory as the GEMM's multiplying subgroups load them (one
//!   stage of its largest tiles, X split or rounded), with and without a barrier per stage;
//! - the cost of one dependent dispatch: a chain of trivial dispatches in one pass, each reading what the last wrote;
//! - the GEMM on the towers' exact shapes, on the f32 path and on the tensor cores with every tile configuration
//!   and with the product split along k into partial products;
//! - attention on the towers' shapes: the f32 kernel with its keys split among 1 or 2 workgroups per query block,
//!   the tensor-core kernel with 2 or 4 subgroups per workgroup and its keys split among 1 to 4 workgroups, with its
//!   products split (f32-accurate) or over rounded operands (the fast precision).
//!
//! - the split-k products and their consumer: each shape on the tensor cores in 1 to 8 slices of k and cut by
//!   stream-k, and the residual LayerNorm that adds them, against what `auto_slices` and `wave_slices` pick.
//!
//! `cargo run --release -p audio-kernels --example ceilings [coop|gemm|attention|slices]` (one sweep only; environment:
//! `WGPU_ADAPTER_NAME`, `WGPU_BACKEND`, as the tests read them). On an adapter without f16 16×16×16 cooperative
//! matrices only the rows that apply run.

use audio_kernels::attention::tensor_core::{self, Products};
use audio_kernels::attention::{KeySplits, attention_split};
use audio_kernels::gemm::{KSplit, auto_slices, gemm_partials, tensor_cores_available, wave_slices};
use audio_kernels::random::Rng;
use audio_kernels::{
    AttentionShape, Epilogue, GemmShape, LAYER_NORM_EPS, LayerNormParams, MatmulOptions, Precision, Residual,
    TensorCoreKernel, Tiles, Weight, gemm, residual_layer_norm,
};
use gpu_core::blocking::Block;
use gpu_core::{Access, Gpu, KernelSpec, ParamsLayout, Recorder, Shader, Timing, params_layout};

type Fallible<T> = Result<T, Box<dyn std::error::Error>>;

/// Products per timed submission (GPU time is divided by it).
const REPEATS: usize = 20;

fn main() -> Fallible<()> {
    let gpu = Gpu::with_options(&nemotron_testkit::test_gpu_options()).block()?;
    println!("{}", gpu.describe());
    let coop16 = gpu.cooperative_matrix_shapes().iter().any(|s| (s.m_size, s.n_size, s.k_size) == (16, 16, 16));
    match std::env::args().nth(1).as_deref() {
        Some("coop") => return if coop16 { coop_loops(&gpu) } else { Ok(()) },
        Some("attention") => return attention_sweep(&gpu),
        Some("slices") => return slice_sweep(&gpu),
        Some("gemm") => return gemm_sweep(&gpu),
        _ => {}
    }
    if coop16 {
        coop_loops(&gpu)?;
    }
    dispatch_chain(&gpu)?;
    gemm_sweep(&gpu)?;
    slice_sweep(&gpu)?;
    attention_sweep(&gpu)?;
    Ok(())
}

/// The parameters of both shaders here (the dispatch chain's kernel ignores them).
#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct Params {
    iterations: u32,
    /// The stage loop reads buffer `i & mask` at iteration i: 1 alternates like the GEMM, and the driver cannot
    /// hoist loads whose addresses it cannot predict out of the loop.
    mask: u32,
}

const PARAMS: &ParamsLayout = &params_layout!(Params { iterations, mask });

static COOP_LOOP: Shader = Shader {
    name: "ceiling_coop_loop",
    trusted: true,
    source: r#"
enable f16;
enable wgpu_cooperative_matrix;
@group(0) @binding(0) var<storage, read_write> out: array<f32>;
@group(0) @binding(1) var<storage, read> operands: array<f16>;
struct Params { iterations: u32, mask: u32 }
@group(1) @binding(0) var<uniform> p: Params;
// Eight independent accumulators per subgroup, so the products of one iteration do not wait on each other.
@compute @workgroup_size(128)
fn coop_loop(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) t: u32) {
    let a = coopLoad<coop_mat16x16<f16, A>>(&operands[0], 16u);
    let b = coopLoad<coop_mat16x16<f16, B>>(&operands[256], 16u);
    var c0 = coop_mat16x16<f32, C>();
    var c1 = coop_mat16x16<f32, C>();
    var c2 = coop_mat16x16<f32, C>();
    var c3 = coop_mat16x16<f32, C>();
    var c4 = coop_mat16x16<f32, C>();
    var c5 = coop_mat16x16<f32, C>();
    var c6 = coop_mat16x16<f32, C>();
    var c7 = coop_mat16x16<f32, C>();
    for (var i = 0u; i < p.iterations; i++) {
        c0 = coopMultiplyAdd(a, b, c0);
        c1 = coopMultiplyAdd(a, b, c1);
        c2 = coopMultiplyAdd(a, b, c2);
        c3 = coopMultiplyAdd(a, b, c3);
        c4 = coopMultiplyAdd(a, b, c4);
        c5 = coopMultiplyAdd(a, b, c5);
        c6 = coopMultiplyAdd(a, b, c6);
        c7 = coopMultiplyAdd(a, b, c7);
    }
    let sum = ((c0 + c1) + (c2 + c3)) + ((c4 + c5) + (c6 + c7));
    coopStore(sum, &out[(wid.x * 4u + t / 32u) * 256u], 16u);
}
"#,
};

/// The products of `gemm_coop`'s multiplying subgroups at its largest tiles without the staging: 8 subgroups, each
/// loading its 2 (X rounded) or 4 (X split) A operands and 4 B operands of one 16-deep step from a stage buffer in
/// workgroup memory (the same layout: rows of 16 + 8 f16) and accumulating 2×4 tiles, one or two products each.
static COOP_STAGE_LOOP: Shader = Shader {
    name: "ceiling_coop_stage_loop",
    trusted: true,
    source: r#"
enable f16;
enable wgpu_cooperative_matrix;
@group(0) @binding(0) var<storage, read_write> out: array<f32>;
@group(0) @binding(1) var<storage, read> operands: array<vec4<f16>>;
struct Params { iterations: u32, mask: u32 }
@group(1) @binding(0) var<uniform> p: Params;
override SPLIT: bool = true;
override BARRIER: bool = false;
alias MatA = coop_mat16x16<f16, A>;
alias MatB = coop_mat16x16<f16, B>;
alias MatC = coop_mat16x16<f32, C>;
// Two stage buffers of 384 rows (128 of X hi, 128 of X lo, 128 of W), 6 groups of 4 f16 each.
const STRIDE: u32 = 6u;
const STAGE: u32 = 384u * STRIDE;
var<workgroup> tiles: array<vec4<f16>, 4608>;
fn product(hi: MatA, lo: MatA, b: MatB, c: MatC) -> MatC {
    if SPLIT {
        return c + coopMultiplyAdd(lo, b, coopMultiplyAdd(hi, b, MatC()));
    }
    return coopMultiplyAdd(hi, b, c);
}
@compute @workgroup_size(256)
fn coop_stage_loop(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) t: u32) {
    for (var i = t; i < 4608u; i += 256u) {
        tiles[i] = operands[i % 64u];
    }
    workgroupBarrier();
    let sg = t / 32u;
    let hi = (sg / 2u) * 32u * STRIDE;
    let lo = hi + 128u * STRIDE;
    let w = (256u + (sg % 2u) * 64u) * STRIDE;
    var c00 = MatC(); var c01 = MatC(); var c02 = MatC(); var c03 = MatC();
    var c10 = MatC(); var c11 = MatC(); var c12 = MatC(); var c13 = MatC();
    for (var i = 0u; i < p.iterations; i++) {
        let at = (i & p.mask) * STAGE;
        let h0 = coopLoadT<MatA>(&tiles[at + hi], STRIDE);
        let h1 = coopLoadT<MatA>(&tiles[at + hi + 16u * STRIDE], STRIDE);
        var l0 = h0;
        var l1 = h1;
        if SPLIT {
            l0 = coopLoadT<MatA>(&tiles[at + lo], STRIDE);
            l1 = coopLoadT<MatA>(&tiles[at + lo + 16u * STRIDE], STRIDE);
        }
        let b0 = coopLoad<MatB>(&tiles[at + w], STRIDE);
        let b1 = coopLoad<MatB>(&tiles[at + w + 16u * STRIDE], STRIDE);
        let b2 = coopLoad<MatB>(&tiles[at + w + 32u * STRIDE], STRIDE);
        let b3 = coopLoad<MatB>(&tiles[at + w + 48u * STRIDE], STRIDE);
        c00 = product(h0, l0, b0, c00); c01 = product(h0, l0, b1, c01);
        c02 = product(h0, l0, b2, c02); c03 = product(h0, l0, b3, c03);
        c10 = product(h1, l1, b0, c10); c11 = product(h1, l1, b1, c11);
        c12 = product(h1, l1, b2, c12); c13 = product(h1, l1, b3, c13);
        if BARRIER {
            workgroupBarrier();
        }
    }
    let sum = ((c00 + c01) + (c02 + c03)) + ((c10 + c11) + (c12 + c13));
    coopStore(sum, &out[(wid.x * 8u + sg) * 256u], 16u);
}
"#,
};

/// The tensor-core rate of register-only products, then of products from workgroup memory ([`COOP_STAGE_LOOP`]).
fn coop_loops(gpu: &Gpu) -> Fallible<()> {
    coop_loop(gpu)?;
    let (workgroups, iterations) = (132, 4096u32);
    let out = gpu.zeros("coop stage loop out", workgroups * 8 * 256)?;
    // f16 0.5: 4096 steps of sums of 16 products of 0.25 stay exact.
    let operands = gpu.upload_bf16("coop stage loop operands", &[0x3800u16; 256])?;
    for (split, barrier) in [(true, false), (true, true), (false, false), (false, true)] {
        let constants = [("SPLIT", f64::from(u8::from(split))), ("BARRIER", f64::from(u8::from(barrier)))];
        let loop_kernel = LoopKernel { shader: &COOP_STAGE_LOOP, entry: "coop_stage_loop", constants: &constants };
        let ns = time_loop(gpu, loop_kernel, [&out, &operands], Params { iterations, mask: 1 }, workgroups)?;
        // The tile's products per step: 128 × 128 × 16, once or (X split) twice.
        let products = 2.0 * 128.0 * 128.0 * 16.0 * if split { 2.0 } else { 1.0 };
        let flops = products * iterations as f64 * workgroups as f64;
        println!(
            "coop-matrix stage loop (X {}, {}): {:.3} ms, {:.1} TFLOP/s of products, {:.0} ns per stage",
            if split { "split" } else { "rounded" },
            if barrier { "a barrier per stage" } else { "no barrier" },
            ns / 1e6,
            flops / ns / 1e3,
            ns / iterations as f64
        );
    }
    Ok(())
}

/// One of the loop shaders here, with its override constants.
#[derive(Clone, Copy)]
struct LoopKernel<'a> {
    shader: &'static Shader,
    entry: &'static str,
    constants: &'a [(&'static str, f64)],
}

/// Median GPU time of one dispatch of `workgroups` of a loop kernel (output, operands) over 5 submissions.
fn time_loop(
    gpu: &Gpu,
    LoopKernel { shader, entry, constants }: LoopKernel<'_>,
    buffers: [&gpu_core::GpuBuffer; 2],
    params: Params,
    workgroups: usize,
) -> Fallible<f64> {
    let bindings = &[Access::ReadWrite, Access::Read];
    let kernel = gpu.kernel(&KernelSpec { shader, entry, constants, bindings, params: PARAMS })?;
    let mut times = Vec::new();
    for _ in 0..5 {
        let mut rec = Recorder::new(gpu).with_timing(Timing::Span);
        rec.dispatch(&kernel, &buffers, &params, [workgroups as u32, 1, 1])?;
        times.push(rec.submit_profiled().block()?.total_ns());
    }
    Ok(median(times))
}

/// The f16 tensor-core rate of a register-only loop: 132 × 8 workgroups of 4 subgroups, 8 products per iteration.
fn coop_loop(gpu: &Gpu) -> Fallible<()> {
    let (workgroups, iterations) = (132 * 8, 4096u32);
    let subgroups = workgroups * 4;
    let out = gpu.zeros("coop loop out", subgroups * 256)?;
    // f16 0.5 and 0.25: the products stay exact and finite.
    let operands = gpu.upload_bf16("coop loop operands", &[[0x3800u16; 256], [0x3400u16; 256]].concat())?;
    let loop_kernel = LoopKernel { shader: &COOP_LOOP, entry: "coop_loop", constants: &[] };
    let ns = time_loop(gpu, loop_kernel, [&out, &operands], Params { iterations, mask: 0 }, workgroups)?;
    let flops = 2.0 * 16.0 * 16.0 * 16.0 * 8.0 * iterations as f64 * subgroups as f64;
    println!(
        "coop-matrix loop (16x16x16 f16->f32, registers only): {:.3} ms, {:.1} TFLOP/s",
        ns / 1e6,
        flops / ns / 1e3
    );
    Ok(())
}

static BUMP: Shader = Shader {
    name: "ceiling_dispatch_chain",
    trusted: true,
    source: r#"
@group(0) @binding(0) var<storage, read_write> counter: array<u32>;
struct Params { iterations: u32, mask: u32 }
@group(1) @binding(0) var<uniform> p: Params;
@compute @workgroup_size(1)
fn bump() {
    counter[0] += 1u;
}
"#,
};

/// GPU time of a chain of dependent dispatches in one pass, per dispatch (the difference between 301 and 1).
fn dispatch_chain(gpu: &Gpu) -> Fallible<()> {
    let counter = gpu.zeros("dispatch chain counter", 1)?;
    let kernel = gpu.kernel(&KernelSpec {
        shader: &BUMP,
        entry: "bump",
        constants: &[],
        bindings: &[Access::ReadWrite],
        params: PARAMS,
    })?;
    let time = |count: usize| -> Fallible<f64> {
        let mut times = Vec::new();
        for _ in 0..5 {
            let mut rec = Recorder::new(gpu).with_timing(Timing::Span);
            for _ in 0..count {
                rec.dispatch(&kernel, &[&counter], &Params { iterations: 0, mask: 0 }, [1, 1, 1])?;
            }
            times.push(rec.submit_profiled().block()?.total_ns());
        }
        Ok(median(times))
    };
    let (one, chain) = (time(1)?, time(301)?);
    println!(
        "dependent dispatch in one pass: {:.2} µs each (1: {:.1} µs, 301: {:.1} µs)",
        (chain - one) / 300e3,
        one / 1e3,
        chain / 1e3
    );
    Ok(())
}

/// The towers' products: (case, n, m, k). ASR chunk (600 rows, d 1280, MLP 5120), Sortformer step (828 rows, d 512,
/// MLP 2048), and an ASR batch of 8 chunks (4,800 rows) as the whole module runs it.
const SHAPES: &[(&str, usize, usize, usize)] = &[
    ("asr qkv", 600, 3840, 1280),
    ("asr out", 600, 1280, 1280),
    ("asr fc1", 600, 5120, 1280),
    ("asr fc2", 600, 1280, 5120),
    ("diar qkv", 828, 1536, 512),
    ("diar out", 828, 512, 512),
    ("diar fc1", 828, 2048, 512),
    ("diar fc2", 828, 512, 2048),
    ("asr8 qkv", 4800, 3840, 1280),
    ("asr8 fc2", 4800, 1280, 5120),
];

/// Tile configurations swept (those the device cannot run are skipped).
/// (subgroups_m, subgroups_n, stage_steps, producers).
const TILES: &[(u32, u32, u32, u32)] = &[
    (4, 2, 1, 8),
    (4, 2, 2, 8),
    (4, 2, 1, 4),
    (4, 2, 1, 0),
    (2, 2, 1, 4),
    (2, 2, 1, 0),
    (2, 2, 2, 8),
    (4, 1, 1, 0),
    (2, 1, 1, 0),
];

fn gemm_sweep(gpu: &Gpu) -> Fallible<()> {
    let mut rng = Rng::new(11);
    println!("{:<10} {:>5} {:>5} {:>5}  {:<22} {:>9} {:>8}", "product", "n", "m", "k", "kernel", "ms", "TFLOP/s");
    for &(case, n, m, k) in SHAPES {
        let x = gpu.upload_f32("x", &rng.f32s(n * k, 1.0))?;
        let bits = rng.bf16s(m * k, 0.05);
        let y = gpu.zeros("y", 8 * n * m)?;
        let flops = 2.0 * (n * m * k) as f64;
        let report = |kernel: String, ns: f64| {
            println!("{case:<10} {n:>5} {m:>5} {k:>5}  {kernel:<22} {:>9.4} {:>8.1}", ns / 1e6, flops / ns / 1e3)
        };
        let f32_weight =
            Weight::upload(gpu, "w", &bits, m, k, &MatmulOptions { precision: Precision::F32, ..Default::default() })?;
        report("f32".into(), time_gemm(gpu, &x, &f32_weight, &y, GemmShape { n, m, k }, None)?);
        let mut kernels = vec![TensorCoreKernel::Auto];
        kernels.extend(TILES.iter().map(|&(subgroups_m, subgroups_n, stage_steps, producers)| {
            TensorCoreKernel::Tiles(Tiles { subgroups_m, subgroups_n, stage_steps, producers })
        }));
        for (kernel, precision) in kernels.into_iter().flat_map(|k| [(k, Precision::Auto), (k, Precision::Fast)]) {
            let options = MatmulOptions { precision, tensor_core_kernel: kernel, k_split: KSplit::Slices };
            let weight = Weight::upload(gpu, "w", &bits, m, k, &options)?;
            if !weight.path().on_tensor_cores() {
                continue;
            }
            let tiles = match kernel {
                TensorCoreKernel::Auto => "auto".to_string(),
                TensorCoreKernel::Tiles(t) => t.to_string(),
            };
            let label = format!("{} {tiles}", if precision == Precision::Fast { "fast" } else { "tc" });
            report(label.clone(), time_gemm(gpu, &x, &weight, &y, GemmShape { n, m, k }, None)?);
            for slices in [2, 4, 8] {
                if k / slices >= 256 {
                    report(
                        format!("{label} /{slices}"),
                        time_gemm(gpu, &x, &weight, &y, GemmShape { n, m, k }, Some(slices))?,
                    );
                }
            }
        }
    }
    Ok(())
}

/// Each shape on the tensor cores (the device's tiles) in 1 to 8 slices of k (each at least 256 deep) and cut by
/// stream-k, each precision, then the residual LayerNorm adding 1 to 8 slices of an ASR chunk's `[600, 1280]`.
fn slice_sweep(gpu: &Gpu) -> Fallible<()> {
    let options = MatmulOptions { precision: Precision::Auto, k_split: KSplit::Slices, ..Default::default() };
    if !tensor_cores_available(gpu, options) {
        return Ok(());
    }
    let mut rng = Rng::new(13);
    println!("{:<10} {:>5} {:>5} {:>5}  {:>6} {:>9}  picks", "product", "n", "m", "k", "slices", "ms");
    for &(case, n, m, k) in SHAPES {
        let shape = GemmShape { n, m, k };
        let x = gpu.upload_f32("x", &rng.f32s(n * k, 1.0))?;
        let bits = rng.bf16s(m * k, 0.05);
        for precision in [Precision::Auto, Precision::Fast] {
            let options = MatmulOptions { precision, ..options };
            let weight = Weight::upload(gpu, "w", &bits, m, k, &options)?;
            let stream = Weight::upload(gpu, "w", &bits, m, k, &MatmulOptions { k_split: KSplit::Stream, ..options })?;
            let slots = auto_slices(gpu, &stream, n);
            let y = gpu.zeros("y", slots.max(8) * n * m)?;
            let default = Weight::upload(gpu, "w", &bits, m, k, &MatmulOptions { k_split: KSplit::Auto, ..options })?;
            let picks = format!(
                "auto {} wave {} (default split: {})",
                auto_slices(gpu, &weight, n),
                wave_slices(gpu, &weight, n, 8),
                auto_slices(gpu, &default, n)
            );
            let p = if precision == Precision::Fast { "fast" } else { "auto" };
            for slices in (1..=8).filter(|&s| s == 1 || k / s >= 256) {
                let ms = time_gemm(gpu, &x, &weight, &y, shape, (slices > 1).then_some(slices))? / 1e6;
                println!("{case:<10} {n:>5} {m:>5} {k:>5}  {p} {slices:>6} {ms:>9.4}  {picks}");
            }
            let ms = time_gemm(gpu, &x, &stream, &y, shape, Some(1))? / 1e6;
            println!("{case:<10} {n:>5} {m:>5} {k:>5}  {p} stream {slots} {ms:>9.4}");
        }
    }
    let (rows, width) = (600, 1280);
    let mut upload = |len: usize| gpu.upload_f32("input", &rng.f32s(len, 1.0));
    let (x, weight, bias, add_bias) = (upload(rows * width)?, upload(width)?, upload(width)?, upload(width)?);
    let partials = upload(8 * rows * width)?;
    let (y, scales) = (gpu.zeros("y", rows * width)?, gpu.zeros("s", 2 * rows)?);
    let norm = LayerNormParams { weight: &weight, bias: &bias, eps: LAYER_NORM_EPS };
    for slices in 1..=8 {
        let mut times = Vec::new();
        for round in 0..4 {
            let mut rec = Recorder::new(gpu).with_timing(Timing::Span);
            for _ in 0..REPEATS {
                let residual = Residual { stream: &x, partials: &partials, slices, bias: &add_bias };
                residual_layer_norm(&mut rec, &residual, &norm, &y, rows, width, Some(&scales))?;
            }
            let ns = rec.submit_profiled().block()?.total_ns() / REPEATS as f64;
            if round > 0 {
                times.push(ns);
            }
        }
        println!("residual layer_norm {rows} × {width}, {slices} slices: {:.4} ms", median(times) / 1e6);
    }
    Ok(())
}

/// Median GPU time of one product (with `slices`: split into partial products, as the weight cuts them), over
/// submissions of [`REPEATS`].
fn time_gemm(
    gpu: &Gpu,
    x: &gpu_core::GpuBuffer,
    w: &Weight,
    y: &gpu_core::GpuBuffer,
    shape: GemmShape,
    slices: Option<usize>,
) -> Fallible<f64> {
    let mut times = Vec::new();
    for round in 0..4 {
        let mut rec = Recorder::new(gpu).with_timing(Timing::Span);
        for _ in 0..REPEATS {
            match slices {
                Some(slices) => _ = gemm_partials(&mut rec, x, w, y, shape, slices)?,
                None => gemm(&mut rec, x, w, y, shape, &Epilogue::default())?,
            }
        }
        let ns = rec.submit_profiled().block()?.total_ns() / REPEATS as f64;
        if round > 0 {
            times.push(ns);
        }
    }
    Ok(median(times))
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

/// Attention shapes of the towers: (case, sequences, rows, heads, head_dim).
const ATTENTION_SHAPES: &[(&str, usize, usize, usize, usize)] = &[
    ("asr", 1, 600, 10, 128),
    ("asr8", 8, 600, 10, 128),
    ("diar", 1, 828, 8, 64),
    ("diar128", 128, 465, 8, 64),
    ("wts", 1, 1100, 16, 80),
];

/// An attention kernel of the sweep: the f32 one with its key splits, the tensor-core one with its subgroups per
/// workgroup, key splits and products.
#[derive(Clone, Copy)]
enum Kernel {
    F32(KeySplits),
    TensorCores(usize, KeySplits, Products),
}

fn attention_sweep(gpu: &Gpu) -> Fallible<()> {
    let mut rng = Rng::new(12);
    println!(
        "{:<7} {:>4} {:>5} {:>5} {:>5}  {:<9} {:>9} {:>8}",
        "case", "seqs", "rows", "heads", "dim", "kernel", "ms", "TFLOP/s"
    );
    for &(case, seqs, seq_len, heads, head_dim) in ATTENTION_SHAPES {
        let shape = AttentionShape { seqs, seq_len, heads, head_dim };
        let (rows, width) = (shape.rows(), shape.width());
        let qkv = gpu.upload_f32("qkv", &rng.f32s(rows * 3 * width, 2.0))?;
        let valid = gpu.upload_u32("valid", &vec![1; rows])?;
        let out = gpu.zeros("out", rows * width)?;
        let flops = 4.0 * (seqs * seq_len * seq_len * width) as f64;
        let coop = tensor_core::available(gpu, head_dim);
        let f32_kernels = [KeySplits::Auto, KeySplits::Fixed(1), KeySplits::Fixed(2)].map(Kernel::F32);
        let tensor_core_kernels = [Products::Split, Products::Rounded].into_iter().flat_map(|products| {
            let four =
                [KeySplits::Auto, KeySplits::Fixed(1), KeySplits::Fixed(2), KeySplits::Fixed(3), KeySplits::Fixed(4)];
            let two = [KeySplits::Auto, KeySplits::Fixed(1), KeySplits::Fixed(2)];
            let four = four.map(move |splits| Kernel::TensorCores(4, splits, products));
            four.into_iter().chain(two.map(move |splits| Kernel::TensorCores(2, splits, products)))
        });
        let kernels = f32_kernels.into_iter().chain(tensor_core_kernels.filter(|_| coop));
        for kernel in kernels {
            let mut times = Vec::new();
            for round in 0..4 {
                let mut rec = Recorder::new(gpu).with_timing(Timing::Span);
                for _ in 0..REPEATS {
                    match kernel {
                        Kernel::F32(splits) => attention_split(&mut rec, [&qkv, &valid, &out], shape, splits)?,
                        Kernel::TensorCores(n, splits, products) => tensor_core::attention_coop(
                            &mut rec,
                            [&qkv, &valid, &out],
                            shape,
                            None,
                            (Some(n), splits),
                            products,
                        )?,
                    }
                }
                let ns = rec.submit_profiled().block()?.total_ns() / REPEATS as f64;
                if round > 0 {
                    times.push(ns);
                }
            }
            let ns = median(times);
            let splits = |s: KeySplits| match s {
                KeySplits::Auto => "auto".to_string(),
                KeySplits::Fixed(n) => n.to_string(),
            };
            let label = match kernel {
                Kernel::F32(s) => splits(s),
                Kernel::TensorCores(n, s, Products::Split) => format!("tc{n}/{}", splits(s)),
                Kernel::TensorCores(n, s, Products::Rounded) => format!("fast{n}/{}", splits(s)),
            };
            println!(
                "{case:<7} {seqs:>4} {seq_len:>5} {heads:>5} {head_dim:>5}  {label:<9} {:>9.4} {:>8.1}",
                ns / 1e6,
                flops / ns / 1e3
            );
        }
    }
    Ok(())
}
