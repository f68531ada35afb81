//! Memory on long recordings. The samples and the outputs grow with the recording by necessity;
//! the working memory beyond them and the GPU buffers must not. Minutes on lavapipe, so ignored
//! by default:
//!
//! `cargo test -p nemotron-towers --test long_audio -- --ignored --nocapture`
//!
//! `NEMOTRON_LONG_AUDIO_SECONDS` sets the long run's length (default 7200, two hours).
//!
//! Two host measures, each compared with a 10-minute run: the working heap, exactly (a counting
//! allocator): the peak of the bytes Rust code holds during the call, minus those held before it
//! (the samples) and minus the outputs; and the process's peak resident set (`VmHWM`, which on
//! lavapipe includes the GPU buffers and the driver) minus the samples and the outputs. The
//! working heap subtracts all outputs although its peak may come before the last of them exist,
//! so growth smaller than the late outputs (speaker logits, fused states, embeddings) could hide
//! there; growth with the recording's features or hidden states cannot.

mod common;

use common::test_options;
use nemotron_towers::blocking::Block;

use std::alloc::{GlobalAlloc, Layout, System};
use std::ops::ControlFlow;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use gpu_core::Gpu;
use nemotron_testkit::Rng;
use nemotron_towers::synthetic::synthetic_audio;
use nemotron_towers::{AudioModel, AudioOutputs, Model};

/// The system allocator, counting the bytes held now and at the peak.
struct Counting;

static HELD: AtomicU64 = AtomicU64::new(0);
static PEAK: AtomicU64 = AtomicU64::new(0);

fn held(change: i64) {
    let now = HELD.fetch_add(change as u64, Ordering::Relaxed).wrapping_add(change as u64);
    PEAK.fetch_max(now, Ordering::Relaxed);
}

// SAFETY: every call goes to `System` unchanged; only counters are updated around it.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's layout contract is passed on to `System` unchanged.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            held(layout.size() as i64);
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's layout contract is passed on to `System` unchanged.
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            held(layout.size() as i64);
        }
        p
    }

    unsafe fn dealloc(&self, p: *mut u8, layout: Layout) {
        // SAFETY: `p` came from `System` with this layout (every allocation above goes there).
        unsafe { System.dealloc(p, layout) };
        held(-(layout.size() as i64));
    }

    unsafe fn realloc(&self, p: *mut u8, layout: Layout, size: usize) -> *mut u8 {
        // SAFETY: `p` came from `System` with this layout; the new size is the caller's, passed on unchanged.
        let moved = unsafe { System.realloc(p, layout, size) };
        if !moved.is_null() {
            held(size as i64 - layout.size() as i64);
        }
        moved
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

const SHORT_SECONDS: f64 = 600.0;
const MIB: f64 = (1 << 20) as f64;

/// A `kB` field of `/proc/self/status`, in bytes.
fn status_bytes(field: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status (Linux)");
    let line = status.lines().find(|l| l.starts_with(field)).unwrap_or_else(|| panic!("no {field} in status"));
    let kb: u64 = line.split_whitespace().nth(1).and_then(|v| v.parse().ok()).expect("a kB value");
    kb * 1024
}

/// Starts a new peak-RSS (`VmHWM`) measurement from the current RSS (Linux ≥ 4.0), after handing
/// the allocator's free pages back, so that what an earlier run left resident does not count.
fn reset_peak_rss() {
    #[cfg(target_env = "gnu")]
    {
        unsafe extern "C" {
            fn malloc_trim(pad: usize) -> i32;
        }
        // SAFETY: glibc's malloc_trim only returns free memory to the system.
        unsafe { malloc_trim(0) };
    }
    std::fs::write("/proc/self/clear_refs", "5").expect("writing /proc/self/clear_refs");
}

fn output_bytes(o: &AudioOutputs) -> u64 {
    let values = o.features.data.len()
        + o.asr_hidden.len()
        + o.speaker_logits.len()
        + o.speaker_probabilities.len()
        + o.fused.len()
        + o.audio_embeds.len();
    values as u64 * 4
}

struct Usage {
    seconds: f64,
    wall_seconds: f64,
    samples_bytes: u64,
    output_bytes: u64,
    /// Peak bytes held by Rust code during the call minus those held before it (the samples).
    heap_growth: u64,
    /// The process's peak RSS during the call.
    rss_peak: u64,
    /// Most bytes in GPU buffers seen at any chunk, and the peak over the call.
    gpu_in_use_max: u64,
    gpu_peak: u64,
}

impl Usage {
    /// Peak heap beyond the outputs: what the call needed to work.
    fn heap_working(&self) -> u64 {
        self.heap_growth.saturating_sub(self.output_bytes)
    }

    /// The process's peak RSS beyond the samples and the outputs: the model, the driver, the
    /// workspaces and the call's working memory.
    fn rss_beyond_data(&self) -> u64 {
        self.rss_peak.saturating_sub(self.samples_bytes + self.output_bytes)
    }

    fn line(&self) -> String {
        let mib = |bytes: u64| bytes as f64 / MIB;
        format!(
            "{:5.0} s audio in {:5.1} s: samples {:6.1} MiB, outputs {:6.1} MiB; working heap {:5.1} MiB; \
             peak RSS {:6.1} MiB, {:5.1} MiB beyond samples and outputs; GPU buffers max {:4.1} MiB, peak {:4.1} MiB",
            self.seconds,
            self.wall_seconds,
            mib(self.samples_bytes),
            mib(self.output_bytes),
            mib(self.heap_working()),
            mib(self.rss_peak),
            mib(self.rss_beyond_data()),
            mib(self.gpu_in_use_max),
            mib(self.gpu_peak),
        )
    }
}

fn measure(gpu: &Gpu, model: &AudioModel, seconds: f64) -> Usage {
    let samples = synthetic_audio(seconds, &mut Rng::new(seconds as u64));
    reset_peak_rss();
    gpu.reset_peak_memory();
    let heap_before = HELD.load(Ordering::Relaxed);
    PEAK.store(heap_before, Ordering::Relaxed);
    let mut gpu_in_use_max = gpu.memory_in_use();
    let started = Instant::now();
    let outputs = model
        .encode_audio(&samples, &mut |_, _, _| {
            gpu_in_use_max = gpu_in_use_max.max(gpu.memory_in_use());
            ControlFlow::Continue(())
        })
        .block()
        .expect("encoding the synthetic recording");
    let usage = Usage {
        seconds,
        wall_seconds: started.elapsed().as_secs_f64(),
        samples_bytes: samples.len() as u64 * 4,
        output_bytes: output_bytes(&outputs),
        heap_growth: PEAK.load(Ordering::Relaxed) - heap_before,
        rss_peak: status_bytes("VmHWM:"),
        gpu_in_use_max: gpu_in_use_max.max(gpu.memory_in_use()),
        gpu_peak: gpu.peak_memory(),
    };
    eprintln!("{}", usage.line());
    usage
}

#[test]
#[ignore = "minutes on lavapipe: run with --ignored"]
fn long_recordings_need_no_more_memory_than_ten_minutes() {
    let long_seconds: f64 =
        std::env::var("NEMOTRON_LONG_AUDIO_SECONDS").ok().and_then(|s| s.parse().ok()).unwrap_or(7200.0);
    // Its own context, so the buffer counters see this test alone.
    let gpu = Gpu::new().block().expect("a GPU adapter");
    let bundled = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/reference/tiny-release-chunks");
    let Model::Transcribe(model) = Model::load(&gpu, &bundled, &test_options()).block().expect("the bundled model")
    else {
        panic!("the bundled model is a Transcribe checkpoint")
    };
    // A first run grows the workspaces and the allocator's pools to their steady state.
    measure(&gpu, &model, SHORT_SECONDS);
    let short = measure(&gpu, &model, SHORT_SECONDS);
    let long = measure(&gpu, &model, long_seconds);
    for (what, short_bytes, long_bytes) in [
        ("working heap", short.heap_working(), long.heap_working()),
        ("resident set beyond samples and outputs", short.rss_beyond_data(), long.rss_beyond_data()),
    ] {
        assert!(
            long_bytes as f64 <= 1.1 * short_bytes as f64,
            "{what} grew from {:.1} MiB ({} s) to {:.1} MiB ({} s)",
            short_bytes as f64 / MIB,
            short.seconds,
            long_bytes as f64 / MIB,
            long.seconds
        );
    }
    assert!(
        long.gpu_in_use_max <= short.gpu_in_use_max && long.gpu_peak <= short.gpu_peak,
        "GPU buffers grew with the recording: in use {} → {} bytes, peak {} → {} bytes",
        short.gpu_in_use_max,
        long.gpu_in_use_max,
        short.gpu_peak,
        long.gpu_peak
    );
}
