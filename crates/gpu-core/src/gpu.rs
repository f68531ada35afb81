//! The GPU context: adapter choice, device creation with the adapter's real limits, optional
//! features, and the shared caches every launch goes through.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use crate::bind_cache::BindGroupCache;
use crate::error::{GpuError, Result};
use crate::faults::FaultLog;
use crate::memory::MemoryCounter;
use crate::params::ArenaPool;
use crate::pipeline::PipelineStore;
use crate::profile::{Capability, DeviceProfile};
use crate::transfer::Staging;

/// Held while a device is created (see [`Gpu::with_options`]).
static CREATION: async_lock::Mutex<()> = async_lock::Mutex::new(());

/// Features used when the adapter has them; none is required.
const OPTIONAL_FEATURES: wgpu::Features = wgpu::Features::SUBGROUP
    .union(wgpu::Features::SHADER_F16)
    .union(wgpu::Features::TIMESTAMP_QUERY)
    .union(wgpu::Features::TIMESTAMP_QUERY_INSIDE_PASSES)
    .union(wgpu::Features::PIPELINE_CACHE)
    .union(wgpu::Features::EXPERIMENTAL_COOPERATIVE_MATRIX);

/// How to choose and configure the device: typed settings, none read from the environment (a program that wants
/// environment variables reads them itself and fills these fields).
#[derive(Clone, Debug)]
pub struct GpuOptions {
    /// Case-insensitive substring of the adapter name.
    pub adapter_name: Option<String>,
    /// The backends tried (`WGPU_BACKEND`, a comma list such as `vulkan,metal`); default: the native ones
    /// (Vulkan, Metal, DX12). GL has to be asked for: its compute support is too limited.
    pub backends: wgpu::Backends,
    /// Accept a software (CPU) adapter when no hardware one exists; a warning is logged.
    pub allow_software: bool,
    /// Where wgpu's driver pipeline cache is persisted; `None` keeps it in memory only.
    pub pipeline_cache_dir: Option<PathBuf>,
    /// The label of the device and of its pipeline cache, as driver tools and validation messages show them.
    pub label: String,
    /// Capabilities the device is created without even when the adapter has them, so that it behaves like an
    /// adapter that lacks them: [`Gpu::has`] and [`Gpu::profile`] report them absent, launchers choose variants
    /// without them or refuse with [`GpuError::MissingCapability`], and no shader using them is compiled.
    pub masked_capabilities: Vec<Capability>,
    /// Caps `max_storage_buffer_binding_size` below the adapter's (rounded down to whole words):
    /// the device then behaves like a smaller one, e.g. to check that work is split to fit.
    pub max_storage_binding_size: Option<u64>,
    /// Caps `max_compute_workgroup_storage_size` below the adapter's: kernels that size their tiles by the workgroup
    /// memory choose as on a device with less, e.g. to run a smaller device's variants on this one.
    pub max_workgroup_storage_size: Option<u32>,
}

impl Default for GpuOptions {
    /// Any adapter (hardware first), native backends, no persisted pipeline cache, the label `gpu-core`.
    fn default() -> Self {
        Self {
            adapter_name: None,
            backends: wgpu::Backends::PRIMARY,
            allow_software: true,
            pipeline_cache_dir: None,
            label: "gpu-core".to_string(),
            masked_capabilities: Vec::new(),
            max_storage_binding_size: None,
            max_workgroup_storage_size: None,
        }
    }
}

/// A device and queue with the caches that make repeated launches cheap. Cloning is cheap and
/// shares everything; the context is `Send + Sync`.
#[derive(Clone)]
pub struct Gpu {
    pub(crate) inner: Arc<GpuInner>,
}

pub(crate) struct GpuInner {
    pub(crate) device: wgpu::Device,
    pub(crate) queue: wgpu::Queue,
    pub(crate) info: wgpu::AdapterInfo,
    pub(crate) features: wgpu::Features,
    pub(crate) limits: wgpu::Limits,
    pub(crate) pipelines: PipelineStore,
    pub(crate) bind_groups: Mutex<BindGroupCache>,
    pub(crate) arenas: ArenaPool,
    pub(crate) faults: Arc<FaultLog>,
    pub(crate) memory: Arc<MemoryCounter>,
    pub(crate) staging: Staging,
    pub(crate) profile: DeviceProfile,
    scratch: Mutex<std::collections::HashMap<&'static str, crate::GpuBuffer>>,
}

impl Gpu {
    /// Opens an adapter with [`GpuOptions::default`].
    pub async fn new() -> Result<Self> {
        Self::with_options(&GpuOptions::default()).await
    }

    /// Opens an adapter: hardware before software, discrete before integrated, native backends
    /// before GL; a name filter narrows the candidates first.
    pub async fn with_options(options: &GpuOptions) -> Result<Self> {
        // Native backends unless asked: probing GL as well logs driver errors (EGL) on machines
        // without a GL stack, even though it would never be chosen over Vulkan.
        let backends = options.backends;
        // Devices are made one at a time: on the NVIDIA driver (580, an H100) the GPU tests' threads creating
        // devices at once deadlocked every device of the process now and then (4 of 50 runs of gpu-core's tests on 4
        // threads, none on 1), as wgpu reports of concurrent device creation on NVIDIA (gfx-rs/wgpu 152, 10234).
        let _one_at_a_time = CREATION.lock().await;
        let mut descriptor = wgpu::InstanceDescriptor::new_without_display_handle();
        descriptor.backends = backends;
        let instance = wgpu::Instance::new(descriptor);
        let adapter = choose_adapter(&instance, backends, options).await?;
        let info = adapter.get_info();
        if info.device_type == wgpu::DeviceType::Cpu {
            log::warn!("using the software adapter `{}` ({:?}): results are exact but slow", info.name, info.backend);
        }
        let masked = options.masked_capabilities.iter().fold(wgpu::Features::empty(), |f, c| f | c.feature());
        let features = adapter.features() & OPTIONAL_FEATURES & !masked;
        let mut limits = adapter.limits();
        if let Some(cap) = options.max_storage_binding_size {
            limits.max_storage_buffer_binding_size = limits.max_storage_buffer_binding_size.min(cap / 4 * 4);
        }
        if let Some(cap) = options.max_workgroup_storage_size {
            limits.max_compute_workgroup_storage_size = limits.max_compute_workgroup_storage_size.min(cap);
        }
        let experimental = if features.contains(wgpu::Features::EXPERIMENTAL_COOPERATIVE_MATRIX) {
            // SAFETY: the experimental feature is only used by kernels that are validated against
            // the f32 path in their tests; nothing else depends on it.
            unsafe { wgpu::ExperimentalFeatures::enabled() }
        } else {
            wgpu::ExperimentalFeatures::disabled()
        };
        let request = wgpu::DeviceDescriptor {
            label: Some(&options.label),
            required_features: features,
            required_limits: limits.clone(),
            experimental_features: experimental,
            memory_hints: wgpu::MemoryHints::Performance,
            trace: wgpu::Trace::Off,
        };
        let (device, queue) = adapter
            .request_device(&request)
            .await
            .map_err(|e| GpuError::RequestDevice { adapter: info.name.clone(), message: e.to_string() })?;
        let faults = FaultLog::install(&device);
        let cooperative_matrices = if features.contains(wgpu::Features::EXPERIMENTAL_COOPERATIVE_MATRIX) {
            adapter.cooperative_matrix_properties()
        } else {
            Vec::new()
        };
        let profile = DeviceProfile::new(&info, features, limits.clone(), cooperative_matrices);
        let pipelines = PipelineStore::new(&device, &info, features, options);
        let staging = Staging::new(&device);
        Ok(Self {
            inner: Arc::new(GpuInner {
                staging,
                device,
                queue,
                info,
                features,
                limits,
                pipelines,
                bind_groups: Mutex::new(BindGroupCache::default()),
                arenas: ArenaPool::default(),
                faults,
                memory: Arc::default(),
                profile,
                scratch: Mutex::default(),
            }),
        })
    }

    /// The wgpu device, for code in this layer's dependants that needs raw access.
    pub fn device(&self) -> &wgpu::Device {
        &self.inner.device
    }

    /// The queue work is submitted to.
    pub fn queue(&self) -> &wgpu::Queue {
        &self.inner.queue
    }

    /// Adapter name, backend, driver and device type.
    pub fn adapter_info(&self) -> &wgpu::AdapterInfo {
        &self.inner.info
    }

    /// The optional features that were enabled on the device.
    pub fn features(&self) -> wgpu::Features {
        self.inner.features
    }

    /// The device limits (the adapter's own, not the WebGPU defaults).
    pub fn limits(&self) -> &wgpu::Limits {
        &self.inner.limits
    }

    /// True when `feature` was enabled on the device.
    pub fn has(&self, feature: wgpu::Features) -> bool {
        self.inner.features.contains(feature)
    }

    /// True for CPU (software) adapters such as lavapipe.
    pub fn is_software(&self) -> bool {
        self.inner.info.device_type == wgpu::DeviceType::Cpu
    }

    /// Cooperative-matrix shapes the adapter reports (empty without the feature).
    pub fn cooperative_matrix_shapes(&self) -> &[wgpu::CooperativeMatrixProperties] {
        &self.inner.profile.cooperative_matrices
    }

    /// What launchers tune for: the device's compute units, subgroup sizes, features, limits and matrix shapes,
    /// built once when the context was created.
    pub fn profile(&self) -> &DeviceProfile {
        &self.inner.profile
    }

    /// A device-side scratch buffer of at least `words` words, shared by every caller that uses
    /// `key` and grown as needed until [`Gpu::release_scratch`]. Sharing is safe because the queue
    /// runs submissions one after another: a kernel pair that writes then reads the scratch within
    /// one submission cannot be interleaved with another submission's pair.
    pub fn scratch(&self, key: &'static str, words: usize) -> Result<crate::GpuBuffer> {
        let mut scratch = self.inner.scratch.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(buffer) = scratch.get(key).filter(|b| b.len_words() >= words) {
            return Ok(buffer.clone());
        }
        // Headroom for the next, larger request, but never past what one binding can hold.
        let max_words = (self.inner.limits.max_storage_buffer_binding_size / 4) as usize;
        let buffer = self.zeros(key, (words.max(64) + words / 2).min(max_words).max(words))?;
        scratch.insert(key, buffer.clone());
        Ok(buffer)
    }

    /// Frees every scratch buffer, for when the calls that grew them are over: the next request of a key makes one of
    /// its size. A recording keeps the buffers it binds until its submission, so work recorded now is unaffected.
    pub fn release_scratch(&self) {
        self.inner.scratch.lock().unwrap_or_else(|p| p.into_inner()).clear();
    }

    /// Persists the driver pipeline cache now (it is also saved when the last clone drops).
    pub fn save_pipeline_cache(&self) {
        self.inner.pipelines.save();
    }

    /// Turns a fault reported asynchronously by wgpu (device lost, uncaptured error) into an error.
    pub fn check_faults(&self) -> Result<()> {
        self.inner.faults.check().map_err(|error| match error {
            // Work on a lost device fails validation before the loss itself is reported.
            GpuError::Validation(_) => self.lost_or(error),
            other => other,
        })
    }

    /// A multi-line human-readable summary: adapter, backend, driver, features, key limits, compute units.
    pub fn describe(&self) -> String {
        let info = &self.inner.info;
        let limits = &self.inner.limits;
        let mut features: Vec<&str> = Vec::new();
        for (flag, name) in [
            (wgpu::Features::SUBGROUP, "subgroup"),
            (wgpu::Features::SHADER_F16, "shader-f16"),
            (wgpu::Features::TIMESTAMP_QUERY, "timestamp-query"),
            (wgpu::Features::TIMESTAMP_QUERY_INSIDE_PASSES, "timestamp-query-inside-passes"),
            (wgpu::Features::PIPELINE_CACHE, "pipeline-cache"),
            (wgpu::Features::EXPERIMENTAL_COOPERATIVE_MATRIX, "cooperative-matrix"),
        ] {
            if self.has(flag) {
                features.push(name);
            }
        }
        let shapes: Vec<String> = self
            .cooperative_matrix_shapes()
            .iter()
            .map(|p| format!("{}x{}x{} {:?}->{:?}", p.m_size, p.n_size, p.k_size, p.ab_type, p.cr_type))
            .collect();
        format!(
            "adapter: {} ({:?}, {:?})\ndriver: {} {}\nfeatures: {}\ncooperative matrices: {}\n\
             limits: storage binding {} MiB, buffer {} MiB, workgroup memory {} KiB, \
             invocations/workgroup {}, storage buffers/stage {}, subgroup size {}..{}\ncompute units: {} ({:?})",
            info.name,
            info.backend,
            info.device_type,
            info.driver,
            info.driver_info,
            if features.is_empty() { "none".to_string() } else { features.join(", ") },
            if shapes.is_empty() { "none".to_string() } else { shapes.join(", ") },
            limits.max_storage_buffer_binding_size >> 20,
            limits.max_buffer_size >> 20,
            limits.max_compute_workgroup_storage_size >> 10,
            limits.max_compute_invocations_per_workgroup,
            limits.max_storage_buffers_per_shader_stage,
            info.subgroup_min_size,
            info.subgroup_max_size,
            self.inner.profile.compute_units.count,
            self.inner.profile.compute_units.source,
        )
    }
}

async fn choose_adapter(
    instance: &wgpu::Instance,
    backends: wgpu::Backends,
    options: &GpuOptions,
) -> Result<wgpu::Adapter> {
    let all = instance.enumerate_adapters(backends).await;
    let names: Vec<String> = all
        .iter()
        .map(|a| {
            let i = a.get_info();
            format!("`{}` ({:?}, {:?})", i.name, i.backend, i.device_type)
        })
        .collect();
    let filter = options.adapter_name.as_ref().map(|n| n.to_lowercase());
    let mut candidates: Vec<wgpu::Adapter> = all
        .into_iter()
        .filter(|a| filter.as_ref().is_none_or(|f| a.get_info().name.to_lowercase().contains(f)))
        .filter(|a| options.allow_software || a.get_info().device_type != wgpu::DeviceType::Cpu)
        .collect();
    candidates.sort_by_key(|a| rank(&a.get_info()));
    candidates.into_iter().next().ok_or_else(|| {
        let seen = if names.is_empty() { "none".to_string() } else { names.join(", ") };
        let wanted = match &options.adapter_name {
            Some(n) => format!(" named like `{n}`"),
            None => String::new(),
        };
        GpuError::NoAdapter(format!(
            "no adapter{wanted} on backends {backends:?} (found: {seen}); install a Vulkan driver, \
             e.g. Mesa's software rasterizer: `apt-get install mesa-vulkan-drivers`"
        ))
    })
}

/// Lower is better.
fn rank(info: &wgpu::AdapterInfo) -> (u8, u8) {
    let device = match info.device_type {
        wgpu::DeviceType::DiscreteGpu => 0,
        wgpu::DeviceType::IntegratedGpu => 1,
        wgpu::DeviceType::VirtualGpu => 2,
        wgpu::DeviceType::Other => 3,
        wgpu::DeviceType::Cpu => 4,
    };
    let backend = match info.backend {
        wgpu::Backend::Vulkan | wgpu::Backend::Metal | wgpu::Backend::Dx12 => 0,
        _ => 1,
    };
    (device, backend)
}
