//! gpu-core on whatever adapter exists (lavapipe in CI): buffers, limits, dispatch through the
//! caches, copies, timing, memory accounting, and readbacks from several threads at once.

use std::sync::OnceLock;

use gpu_core::blocking::Block;
use gpu_core::{
    Access, Capability, Gpu, GpuError, GpuOptions, KernelSpec, KernelVariant, ParamsLayout, Recorder, Shader, Timing,
    pack_bf16, params_layout,
};

fn gpu() -> &'static Gpu {
    static GPU: OnceLock<Gpu> = OnceLock::new();
    GPU.get_or_init(|| Gpu::new().block().unwrap_or_else(|e| panic!("GPU tests need an adapter: {e}")))
}

/// `y[i] = x[i] * p.scale + p.offset`, enough to see parameters and bindings arrive.
static AXPB: Shader = Shader {
    name: "test_axpb",
    trusted: false,
    source: r#"
struct Params { n: u32, scale: f32, offset: f32 }
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
@group(1) @binding(0) var<uniform> p: Params;
override BIAS: f32 = 0.0;
@compute @workgroup_size(64)
fn axpb(@builtin(global_invocation_id) id: vec3<u32>) {
    if id.x < p.n { y[id.x] = x[id.x] * p.scale + p.offset + BIAS; }
}
"#,
};

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct Params {
    n: u32,
    scale: f32,
    offset: f32,
}

const PARAMS: &ParamsLayout = &params_layout!(Params { n, scale, offset });

const BINDINGS: &[Access] = &[Access::Read, Access::ReadWrite];

fn spec<'a>(bias: &'a [(&'static str, f64)]) -> KernelSpec<'a> {
    KernelSpec { shader: &AXPB, entry: "axpb", constants: bias, bindings: BINDINGS, params: PARAMS }
}

#[test]
fn uploads_round_trip_and_bf16_packs_even_elements_low() {
    let gpu = gpu();
    let values = [1.5f32, -2.25, f32::MAX, 0.0, 7.0];
    assert_eq!(gpu.read_f32(&gpu.upload_f32("v", &values).unwrap()).block().unwrap(), values);
    let bits = [0x3f80u16, 0x4000, 0xbf80];
    let packed = gpu.read_u32(&gpu.upload_bf16("b", &bits).unwrap()).block().unwrap();
    assert_eq!(packed, pack_bf16(&bits));
    assert_eq!(packed, vec![0x4000_3f80, 0x0000_bf80]);
    let buffer = gpu.zeros("z", 6).unwrap();
    gpu.write_f32(&buffer, 2, &[3.0, 4.0]).unwrap();
    assert_eq!(gpu.read_f32_range(&buffer, 1, 4).block().unwrap(), vec![0.0, 3.0, 4.0, 0.0]);
    assert!(matches!(gpu.write_f32(&buffer, 5, &[1.0, 2.0]), Err(GpuError::SizeMismatch { .. })));
}

#[test]
fn several_ranges_come_back_in_one_readback() {
    let gpu = gpu();
    let a = gpu.upload_f32("a", &[1.0, 2.0, 3.0, 4.0]).unwrap();
    let b = gpu.upload_f32("b", &[-1.0, -2.0, -3.0]).unwrap();
    let got = gpu.read_f32_ranges(&[(&a, 1, 2), (&b, 0, 0), (&b, 1, 2), (&a, 0, 1)]).block().unwrap();
    assert_eq!(got, vec![vec![2.0, 3.0], vec![], vec![-2.0, -3.0], vec![1.0]]);
    match gpu.read_f32_ranges(&[(&a, 0, 1), (&b, 2, 2)]).block() {
        Err(GpuError::SizeMismatch { what, .. }) => assert!(what.contains("`b`"), "{what}"),
        other => panic!("expected SizeMismatch naming b, got {other:?}"),
    }
}

/// Writes and readbacks larger than one 16 MiB staging piece: written through the staging belt in several chunks
/// (twice, the second write over part of the first), read back through several pieces that cut ranges in two.
#[test]
fn transfers_larger_than_a_staging_piece_arrive_whole_and_in_order() {
    let gpu = gpu();
    let words = 9_000_001; // 36 MB: three pieces, the last one short
    let first: Vec<f32> = (0..words).map(|i| i as f32).collect();
    let buffer = gpu.zeros("large", words + 5).unwrap();
    gpu.write_f32(&buffer, 3, &first).unwrap();
    let second: Vec<f32> = (0..5_000_000).map(|i| -(i as f32)).collect();
    gpu.write_f32(&buffer, 4_000_000, &second).unwrap();
    let mut expected = vec![0.0f32; words + 5];
    expected[3..3 + words].copy_from_slice(&first);
    expected[4_000_000..9_000_000].copy_from_slice(&second);
    // `assert!`, not `assert_eq!`: a failure must not print 36 MB.
    assert!(gpu.read_f32(&buffer).block().unwrap() == expected, "whole buffer");
    let small = gpu.upload_f32("small", &[7.0, 8.0, 9.0]).unwrap();
    let got = gpu
        .read_f32_ranges(&[(&small, 1, 2), (&buffer, 1, 8_388_607), (&small, 0, 1), (&buffer, 8_000_000, 1_000_006)])
        .block();
    let got = got.unwrap();
    assert_eq!(got[0], [8.0, 9.0]);
    assert!(got[1] == expected[1..8_388_608], "a range cut by the first piece's end");
    assert_eq!(got[2], [7.0]);
    assert!(got[3] == expected[8_000_000..], "the last range");
    // Into the caller's slices: two disjoint parts of one vector (in huge pages) and a small one.
    let mut into = gpu_core::host_vec::<f32>(6_000_000);
    let mut three = [0.0f32; 3];
    let (front, back) = into.split_at_mut(4_500_000);
    gpu.read_f32_into(&[(&buffer, 2), (&small, 0), (&buffer, 7_000_000)], &mut [front, &mut three, back])
        .block()
        .unwrap();
    assert!(into[..4_500_000] == expected[2..4_500_002] && into[4_500_000..] == expected[7_000_000..8_500_000]);
    assert_eq!(three, [7.0, 8.0, 9.0]);
    match gpu.read_f32_into(&[(&small, 0)], &mut []).block() {
        Err(GpuError::SizeMismatch { what, .. }) => assert!(what.contains("outputs"), "{what}"),
        other => panic!("expected SizeMismatch for one range and no output, got {other:?}"),
    }
}

#[test]
fn host_vectors_are_zeroed_at_every_size() {
    for len in [0, 1, 1000, (4 << 20) / 4 - 1, 3 << 20] {
        let v = gpu_core::host_vec::<f32>(len);
        assert_eq!(v.len(), len);
        assert!(v.iter().all(|&x| x == 0.0), "len {len}");
    }
}

#[test]
fn oversized_buffers_name_the_limit() {
    let gpu = gpu();
    let words = (gpu.limits().max_storage_buffer_binding_size / 4 + 1) as usize;
    match gpu.zeros("huge", words) {
        Err(GpuError::LimitExceeded { limit, requested, max, what }) => {
            assert!(limit.starts_with("max_"), "{limit}");
            assert!(requested > max && what.contains("huge"));
        }
        other => panic!("expected LimitExceeded, got {other:?}"),
    }
    // A word count whose byte size does not fit in u64 is refused the same way.
    match gpu.zeros("absurd", usize::MAX) {
        Err(GpuError::LimitExceeded { limit: "max_buffer_size", requested: u64::MAX, .. }) => {}
        other => panic!("expected LimitExceeded on max_buffer_size, got {other:?}"),
    }
}

#[test]
fn empty_readbacks_are_empty() {
    let gpu = gpu();
    let buffer = gpu.upload_f32("values", &[1.0, 2.0]).unwrap();
    assert_eq!(gpu.read_f32_range(&buffer, 2, 0).block().unwrap(), Vec::<f32>::new());
}

#[test]
fn a_smaller_binding_limit_can_be_asked_for() {
    let options = GpuOptions { max_storage_binding_size: Some((1 << 20) + 3), ..GpuOptions::default() };
    let small = Gpu::with_options(&options).block().unwrap();
    assert_eq!(small.limits().max_storage_buffer_binding_size, 1 << 20, "rounded down to whole words");
    small.zeros("fits", 1 << 18).unwrap();
    // Scratch keeps headroom for growth, but not past the binding.
    assert_eq!(small.scratch("scratch", 3 << 16).unwrap().len_words(), 1 << 18);
    match small.zeros("too big", (1 << 18) + 1) {
        Err(GpuError::LimitExceeded { limit: "max_storage_buffer_binding_size", max, .. }) => assert_eq!(max, 1 << 20),
        other => panic!("expected LimitExceeded, got {other:?}"),
    }
}

#[test]
fn a_smaller_workgroup_memory_limit_can_be_asked_for() {
    let options = GpuOptions { max_workgroup_storage_size: Some(8 << 10), ..GpuOptions::default() };
    let small = Gpu::with_options(&options).block().unwrap();
    assert_eq!(small.limits().max_compute_workgroup_storage_size, 8 << 10);
    assert_eq!(small.profile().limits.max_compute_workgroup_storage_size, 8 << 10, "launchers size tiles by it");
}

#[test]
fn a_lost_device_gives_device_lost_errors_not_panics() {
    // Its own context: the loss is permanent.
    let gpu = Gpu::new().block().unwrap();
    let kernel = gpu.kernel(&spec(&[])).unwrap();
    let x = gpu.upload_f32("x", &[1.0; 64]).unwrap();
    let y = gpu.zeros("y", 64).unwrap();
    gpu.device().destroy();
    let lost = |what: &str, result: Result<(), GpuError>| match result {
        Err(GpuError::DeviceLost(reason)) => assert!(reason.contains("Destroyed"), "{what}: {reason}"),
        other => panic!("{what}: expected DeviceLost, got {other:?}"),
    };
    let mut rec = Recorder::new(&gpu);
    rec.dispatch(&kernel, &[&x, &y], &Params { n: 64, scale: 2.0, offset: 0.0 }, [1, 1, 1]).unwrap();
    let submitted = rec.submit();
    lost("read after the submit", submitted.and_then(|()| gpu.read_f32(&y).block().map(|_| ())));
    lost("upload", gpu.upload_f32("u", &[1.0; 4]).map(|_| ()));
    lost("zeros", gpu.zeros("z", 4).map(|_| ()));
    lost("wait", gpu.wait().block());
}

#[test]
fn dispatches_use_params_constants_and_cached_pipelines() {
    let gpu = gpu();
    let n = 1000;
    let x: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let (xb, yb) = (gpu.upload_f32("x", &x).unwrap(), gpu.upload_f32("y", &vec![f32::NAN; n]).unwrap());
    let plain = gpu.kernel(&spec(&[])).unwrap();
    let biased = gpu.kernel(&spec(&[("BIAS", 0.5)])).unwrap();
    assert!(std::sync::Arc::ptr_eq(&plain, &gpu.kernel(&spec(&[])).unwrap()), "pipelines are cached");
    let mut rec = Recorder::new(gpu);
    let groups = [n.div_ceil(64) as u32, 1, 1];
    rec.dispatch(&plain, &[&xb, &yb], &Params { n: n as u32, scale: 2.0, offset: 1.0 }, groups).unwrap();
    rec.dispatch(&biased, &[&yb, &xb], &Params { n: n as u32, scale: 1.0, offset: 0.0 }, groups).unwrap();
    assert_eq!(rec.dispatches(), 2);
    let profile = rec.with_timing(Timing::PerDispatch).submit_profiled().block().unwrap();
    let got = gpu.read_f32(&xb).block().unwrap();
    assert!(got.iter().enumerate().all(|(i, &v)| v == 2.0 * i as f32 + 1.5), "{:?}", &got[..4]);
    if gpu.has(gpu_core::wgpu::Features::TIMESTAMP_QUERY) {
        assert_eq!(profile.entries.len(), 2);
        assert!(profile.report().contains("test_axpb:axpb[BIAS=0.5]"));
    }
    let err = Recorder::new(gpu).dispatch(&plain, &[&xb], &Params { n: 1, scale: 1.0, offset: 0.0 }, [1, 1, 1]);
    assert!(matches!(err, Err(GpuError::Validation(_))), "a missing binding is an error, not a panic");
}

/// A pipeline prepared ahead of time is the one a launch then takes: the context counts and names each pipeline once.
#[test]
fn prepared_pipelines_are_compiled_once_and_counted() {
    let gpu = Gpu::new().block().unwrap();
    assert_eq!(gpu.pipelines_compiled(), 0);
    let biased = KernelVariant::from(&spec(&[("BIAS", 0.5)]));
    gpu.prepare(&biased).unwrap();
    gpu.prepare(&biased).unwrap();
    assert_eq!(gpu.pipelines_compiled(), 1);
    assert_eq!(gpu.kernel(&spec(&[("BIAS", 0.5)])).unwrap().label(), biased.label());
    assert_eq!(gpu.pipelines_compiled(), 1, "the launch found the prepared pipeline");
    gpu.kernel(&spec(&[])).unwrap();
    assert_eq!(gpu.pipeline_labels(), ["test_axpb:axpb", "test_axpb:axpb[BIAS=0.5]"]);
}

#[test]
fn parameters_of_another_size_than_declared_are_refused() {
    let gpu = gpu();
    let (x, y) = (gpu.zeros("x", 4).unwrap(), gpu.zeros("y", 4).unwrap());
    let kernel = gpu.kernel(&spec(&[])).unwrap();
    match Recorder::new(gpu).dispatch(&kernel, &[&x, &y], &[4u32, 0], [1, 1, 1]) {
        Err(GpuError::Validation(message)) => assert!(message.contains("`Params` of 12 bytes, 8 given"), "{message}"),
        other => panic!("expected a validation error, got {other:?}"),
    }
}

#[test]
fn bad_wgsl_is_a_compile_error_naming_the_shader() {
    static BROKEN: Shader = Shader { name: "broken", source: "fn main( {", trusted: false };
    let spec = KernelSpec { shader: &BROKEN, entry: "main", constants: &[], bindings: &[], params: PARAMS };
    match gpu().kernel(&spec) {
        Err(GpuError::ShaderCompile { shader, .. }) => assert_eq!(shader, "broken"),
        other => panic!("expected ShaderCompile, got {:?}", other.map(|k| k.label().to_string())),
    }
}

/// A layout with one storage binding more than the device allows per stage is refused naming the limit, before the
/// driver sees it (the shader is never parsed: this one is not even WGSL).
#[test]
fn more_storage_bindings_than_a_stage_allows_are_refused_naming_the_limit() {
    static WIDE: Shader = Shader { name: "wide", source: "not parsed", trusted: false };
    let gpu = gpu();
    let most = gpu.limits().max_storage_buffers_per_shader_stage;
    let bindings: &'static [Access] = Vec::leak(vec![Access::Read; most as usize + 1]);
    let spec = KernelSpec { shader: &WIDE, entry: "main", constants: &[], bindings, params: PARAMS };
    match gpu.kernel(&spec) {
        Err(GpuError::LimitExceeded { limit: "max_storage_buffers_per_shader_stage", requested, max, what }) => {
            assert_eq!((requested, max), (u64::from(most) + 1, u64::from(most)));
            assert!(what.contains("wide:main"), "{what}");
        }
        other => panic!("expected the storage-binding limit, got {:?}", other.map(|k| k.label().to_string())),
    }
    gpu.check_faults().unwrap();
}

#[test]
fn masked_capabilities_are_absent_and_their_shaders_refused_before_compiling() {
    static SHUFFLE: Shader = Shader {
        name: "test_shuffle",
        trusted: false,
        source: r#"
struct Params { n: u32, scale: f32, offset: f32 }
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
@group(1) @binding(0) var<uniform> p: Params;
@compute @workgroup_size(64)
fn shuffle(@builtin(global_invocation_id) id: vec3<u32>) {
    if id.x < p.n { y[id.x] = subgroupShuffleXor(x[id.x], 1u); }
}
"#,
    };
    let options = GpuOptions { masked_capabilities: Capability::ALL.to_vec(), ..GpuOptions::default() };
    let masked = Gpu::with_options(&options).block().unwrap();
    for capability in Capability::ALL {
        assert!(!masked.has(capability.feature()) && !masked.profile().has(capability), "{capability:?}");
    }
    assert!(masked.cooperative_matrix_shapes().is_empty());
    assert!(masked.profile().compute_units.count >= 1);
    let shuffle = KernelSpec { shader: &SHUFFLE, entry: "shuffle", constants: &[], bindings: BINDINGS, params: PARAMS };
    match masked.kernel(&shuffle) {
        Err(GpuError::MissingCapability { kernel, capability: Capability::Subgroups }) => {
            assert_eq!(kernel, "test_shuffle:shuffle")
        }
        Err(e) => panic!("expected a missing capability, got {e}"),
        Ok(_) => panic!("a subgroup shader compiled on a device without subgroups"),
    }
    masked.check_faults().unwrap();
    // Kernels that need none of them still run.
    let x = masked.upload_f32("x", &[1.0, 2.0]).unwrap();
    let y = masked.zeros("y", 2).unwrap();
    let mut rec = Recorder::new(&masked);
    rec.dispatch(&masked.kernel(&spec(&[])).unwrap(), &[&x, &y], &Params { n: 2, scale: 2.0, offset: 1.0 }, [1, 1, 1])
        .unwrap();
    rec.submit().unwrap();
    assert_eq!(masked.read_f32(&y).block().unwrap(), [3.0, 5.0]);
}

#[test]
fn copies_and_span_timing() {
    let gpu = gpu();
    {
        let a = gpu.upload_f32("a", &[1.0, 2.0, 3.0, 4.0]).unwrap();
        let b = gpu.zeros("b", 4).unwrap();
        let plain = gpu.kernel(&spec(&[])).unwrap();
        let mut rec = Recorder::new(gpu).with_timing(Timing::Span);
        rec.copy(&a, 1, &b, 0, 3).unwrap();
        rec.dispatch(&plain, &[&b, &a], &Params { n: 4, scale: 10.0, offset: 0.0 }, [1, 1, 1]).unwrap();
        let profile = rec.submit_profiled().block().unwrap();
        assert_eq!(gpu.read_f32(&a).block().unwrap(), vec![20.0, 30.0, 40.0, 0.0]);
        if gpu.has(gpu_core::wgpu::Features::TIMESTAMP_QUERY) {
            assert_eq!(profile.entries.len(), 1);
            assert!(profile.total_ns() >= 0.0);
        }
        assert!(gpu.peak_memory() >= gpu.memory_in_use());
    }
}

#[test]
fn memory_accounting_follows_buffer_lifetimes() {
    // Its own context, so that concurrent tests do not move the numbers.
    let gpu = Gpu::new().block().unwrap();
    assert_eq!(gpu.memory_in_use(), 0);
    let a = gpu.zeros("a", 1000).unwrap();
    let b = a.clone();
    assert_eq!(gpu.memory_in_use(), 4000);
    drop(a);
    assert_eq!(gpu.memory_in_use(), 4000, "a clone keeps the buffer");
    drop(b);
    assert_eq!((gpu.memory_in_use(), gpu.peak_memory()), (0, 4000));
    gpu.reset_peak_memory();
    assert_eq!(gpu.peak_memory(), 0);
}

#[test]
fn readbacks_from_several_threads_all_arrive() {
    let gpu = gpu();
    std::thread::scope(|s| {
        for t in 0..4 {
            s.spawn(move || {
                for i in 0..25 {
                    let values: Vec<f32> = (0..257).map(|j| (t * 1000 + i * 10 + j) as f32).collect();
                    let buffer = gpu.upload_f32("threaded", &values).unwrap();
                    assert_eq!(gpu.read_f32(&buffer).block().unwrap(), values);
                }
            });
        }
    });
}

#[test]
fn describe_names_adapter_and_limits() {
    let text = gpu().describe();
    assert!(text.contains("adapter:") && text.contains("storage binding"), "{text}");
    let units = gpu().profile().compute_units.count;
    assert!(units >= 1 && text.contains(&format!("compute units: {units} (")), "{text}");
}

#[test]
fn buffers_dropped_after_recording_stay_alive_until_the_submit() {
    let gpu = gpu();
    let y = gpu.zeros("y", 4).unwrap();
    let kernel = gpu.kernel(&spec(&[])).unwrap();
    let mut rec = Recorder::new(gpu);
    {
        let x = gpu.upload_f32("temporary", &[1.0, 2.0, 3.0, 4.0]).unwrap();
        rec.dispatch(&kernel, &[&x, &y], &Params { n: 4, scale: 3.0, offset: 0.0 }, [1, 1, 1]).unwrap();
    }
    rec.submit().unwrap();
    assert_eq!(gpu.read_f32(&y).block().unwrap(), vec![3.0, 6.0, 9.0, 12.0]);
}

#[test]
fn work_submitted_in_parts_runs_in_order_beside_another_threads_work() {
    let gpu = gpu();
    let kernel = gpu.kernel(&spec(&[])).unwrap();
    let n: usize = 4099;
    let step = |rec: &mut Recorder<'_>, from: &gpu_core::GpuBuffer, to: &gpu_core::GpuBuffer, i: usize| {
        let params = Params { n: n as u32, scale: 1.0, offset: i as f32 };
        rec.dispatch(&kernel, &[from, to], &params, [n.div_ceil(64) as u32, 1, 1]).unwrap();
    };
    std::thread::scope(|s| {
        // A chain of dependent dispatches, cut into parts after every third, while another thread submits its own.
        let chained = s.spawn(|| {
            let (a, b) = (gpu.zeros("a", n).unwrap(), gpu.upload_f32("b", &vec![f32::NAN; n]).unwrap());
            let mut rec = Recorder::new(gpu);
            for i in 0..40 {
                let (from, to) = if i % 2 == 0 { (&a, &b) } else { (&b, &a) };
                step(&mut rec, from, to, i);
                if i % 3 == 2 {
                    rec.submit_part().unwrap();
                }
            }
            // Dropped buffers of submitted parts stay alive until their work is done.
            drop(b);
            rec.submit().unwrap();
            gpu.read_f32(&a).block().unwrap()
        });
        for t in 0..20 {
            let values: Vec<f32> = (0..n).map(|j| (t + j) as f32).collect();
            let (x, y) = (gpu.upload_f32("x", &values).unwrap(), gpu.zeros("y", n).unwrap());
            let mut rec = Recorder::new(gpu);
            step(&mut rec, &x, &y, 1);
            rec.submit().unwrap();
            assert_eq!(gpu.read_f32(&y).block().unwrap(), values.iter().map(|v| v + 1.0).collect::<Vec<_>>());
        }
        // 0 + 1 + … + 39 added one step at a time: exact in f32.
        let expected = (0..40).sum::<usize>() as f32;
        assert!(chained.join().unwrap().iter().all(|&v| v == expected));
    });
    // A timed recorder keeps its work for one submission (an untimed one, on a device without timestamps, submits).
    let (x, y) = (gpu.upload_f32("x", &vec![1.0; n]).unwrap(), gpu.zeros("y", n).unwrap());
    let mut rec = Recorder::new(gpu).with_timing(Timing::Span);
    step(&mut rec, &x, &y, 2);
    rec.submit_part().unwrap();
    let timed = gpu.has(gpu_core::wgpu::Features::TIMESTAMP_QUERY);
    assert_eq!(rec.dispatches(), usize::from(timed));
    rec.submit_profiled().block().unwrap();
    assert!(gpu.read_f32(&y).block().unwrap().iter().all(|&v| v == 3.0));
}
