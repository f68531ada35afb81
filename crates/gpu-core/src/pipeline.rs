//! Compiled pipelines, keyed by (shader, entry point, override constants), and bind-group layouts
//! keyed by their binding list. The driver's own pipeline cache is persisted to disk when the
//! adapter supports it, so a second process start skips shader compilation.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use crate::error::{GpuError, Result};
use crate::gpu::{Gpu, GpuOptions};
use crate::layout::{self, Binding, PARAMS_GROUP, ParamsLayout, STORAGE_GROUP};
use crate::profile::Capability;

/// Largest per-dispatch parameter block (bytes), bound as `@group(1) @binding(0) var<uniform>`.
pub const MAX_PARAMS_BYTES: u64 = 256;

/// A WGSL source file.
#[derive(Debug)]
pub struct Shader {
    /// Stable name (the file name without extension), used in cache keys and errors.
    pub name: &'static str,
    /// The WGSL text.
    pub source: &'static str,
    /// The author vouches that every loop of the shader terminates, no integer division or
    /// remainder has a zero divisor, and every index into a workgroup, function or private array is
    /// in bounds. wgpu then leaves out the loop counters, division guards and index clamps it
    /// otherwise injects (the counters keep drivers from unrolling loops, which costs hot kernels
    /// several times their speed; the clamps cost the tensor-core GEMM 6 %). Storage buffers stay
    /// protected by the device's robust buffer access, which wgpu-hal enables on Vulkan.
    pub trusted: bool,
}

/// How a kernel uses one `@group(0)` storage binding.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Access {
    /// `var<storage, read>`: the kernel only loads from it.
    Read,
    /// `var<storage, read_write>`: the kernel stores to it (and may load).
    ReadWrite,
}

/// Everything needed to build one pipeline: the shader, entry point, override constants, the access mode of each
/// `@group(0)` storage binding in binding order, and the layout of the parameters at `@group(1) @binding(0)`.
#[derive(Clone, Debug)]
pub struct KernelSpec<'a> {
    /// The WGSL module holding the entry point.
    pub shader: &'static Shader,
    /// Name of the `@compute` entry point.
    pub entry: &'static str,
    /// Pipeline-overridable constants (`override NAME`) and their values; order does not matter.
    pub constants: &'a [(&'static str, f64)],
    /// Access mode of each `@group(0)` storage binding, in binding order.
    pub bindings: &'static [Access],
    /// The parameter struct every dispatch of this kernel uploads (its size is checked at each dispatch).
    pub params: &'static ParamsLayout,
}

impl KernelSpec<'_> {
    fn key(&self) -> PipelineKey {
        let mut constants: Vec<(&'static str, u64)> =
            self.constants.iter().map(|(name, value)| (*name, value.to_bits())).collect();
        constants.sort_unstable();
        PipelineKey { shader: self.shader.name, entry: self.entry, constants }
    }

    /// `shader:entry[NAME=value,...]`, used as the profiler label.
    pub fn label(&self) -> String {
        let mut label = format!("{}:{}", self.shader.name, self.entry);
        if !self.constants.is_empty() {
            let list: Vec<String> = self.constants.iter().map(|(n, v)| format!("{n}={v}")).collect();
            label.push_str(&format!("[{}]", list.join(",")));
        }
        label
    }
}

/// A [`KernelSpec`] that owns its override constants: one pipeline a launcher can build, listed so that a tool can
/// validate every variant without a device (`cargo xtask validate-shaders`).
#[derive(Clone, Debug)]
pub struct KernelVariant {
    /// The shader.
    pub shader: &'static Shader,
    /// Its entry point.
    pub entry: &'static str,
    /// Override constants, by name.
    pub constants: Vec<(&'static str, f64)>,
    /// Access mode of each `@group(0)` storage binding, in binding order.
    pub bindings: &'static [Access],
    /// The parameter struct's layout.
    pub params: &'static ParamsLayout,
}

impl KernelVariant {
    /// The spec this variant builds.
    pub fn spec(&self) -> KernelSpec<'_> {
        KernelSpec {
            shader: self.shader,
            entry: self.entry,
            constants: &self.constants,
            bindings: self.bindings,
            params: self.params,
        }
    }

    /// `shader:entry[NAME=value,...]`, as [`Kernel::label`] names the pipeline.
    pub fn label(&self) -> String {
        self.spec().label()
    }

    /// Every entry of the pipeline layout, as the device builds it: [`layout::bindings`].
    pub fn layout(&self) -> Vec<Binding> {
        layout::bindings(self.bindings)
    }
}

impl From<&KernelSpec<'_>> for KernelVariant {
    fn from(spec: &KernelSpec<'_>) -> Self {
        Self {
            shader: spec.shader,
            entry: spec.entry,
            constants: spec.constants.to_vec(),
            bindings: spec.bindings,
            params: spec.params,
        }
    }
}

#[derive(Clone, PartialEq, Eq, Hash)]
struct PipelineKey {
    shader: &'static str,
    entry: &'static str,
    constants: Vec<(&'static str, u64)>,
}

/// A compiled compute pipeline with the layout of its storage bindings.
pub struct Kernel {
    pub(crate) pipeline: wgpu::ComputePipeline,
    pub(crate) storage_layout: Arc<StorageLayout>,
    pub(crate) params: &'static ParamsLayout,
    pub(crate) label: String,
}

impl Kernel {
    /// `shader:entry[constants]`.
    pub fn label(&self) -> &str {
        &self.label
    }
}

pub(crate) struct StorageLayout {
    pub(crate) layout: wgpu::BindGroupLayout,
    pub(crate) id: u64,
    pub(crate) bindings: &'static [Access],
}

static NEXT_LAYOUT_ID: AtomicU64 = AtomicU64::new(1);

pub(crate) struct PipelineStore {
    pipelines: Mutex<HashMap<PipelineKey, Arc<Kernel>>>,
    modules: Mutex<HashMap<&'static str, wgpu::ShaderModule>>,
    storage_layouts: Mutex<HashMap<&'static [Access], Arc<StorageLayout>>>,
    pub(crate) params_layout: wgpu::BindGroupLayout,
    driver_cache: Option<DriverCache>,
}

struct DriverCache {
    cache: wgpu::PipelineCache,
    path: PathBuf,
}

impl PipelineStore {
    pub(crate) fn new(
        device: &wgpu::Device,
        info: &wgpu::AdapterInfo,
        features: wgpu::Features,
        options: &GpuOptions,
    ) -> Self {
        let entries: Vec<wgpu::BindGroupLayoutEntry> =
            layout::bindings(&[]).iter().filter(|b| b.group == PARAMS_GROUP).map(Binding::layout_entry).collect();
        let params_layout = device
            .create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor { label: Some("params"), entries: &entries });
        let driver_cache = if features.contains(wgpu::Features::PIPELINE_CACHE) {
            options.pipeline_cache_dir.as_deref().zip(wgpu::util::pipeline_cache_key(info)).map(|(dir, key)| {
                let path = dir.join(key);
                let data = std::fs::read(&path).ok();
                // SAFETY: the data was written by `PipelineCache::get_data` under a key that
                // identifies the adapter and driver; `fallback` makes wgpu ignore stale data.
                let cache = unsafe {
                    device.create_pipeline_cache(&wgpu::PipelineCacheDescriptor {
                        label: Some(&options.label),
                        data: data.as_deref(),
                        fallback: true,
                    })
                };
                DriverCache { cache, path }
            })
        } else {
            None
        };
        Self {
            pipelines: Mutex::default(),
            modules: Mutex::default(),
            storage_layouts: Mutex::default(),
            params_layout,
            driver_cache,
        }
    }

    pub(crate) fn save(&self) {
        let Some(driver) = &self.driver_cache else { return };
        let Some(data) = driver.cache.get_data() else { return };
        let written = driver
            .path
            .parent()
            .map_or(Ok(()), std::fs::create_dir_all)
            .and_then(|()| std::fs::write(&driver.path, data));
        if let Err(e) = written {
            log::debug!("pipeline cache not saved to {}: {e}", driver.path.display());
        }
    }
}

impl Drop for PipelineStore {
    fn drop(&mut self) {
        self.save();
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl Gpu {
    /// The pipeline for `spec`, compiled on first use and cached for the life of the context.
    pub fn kernel(&self, spec: &KernelSpec<'_>) -> Result<Arc<Kernel>> {
        let store = &self.inner.pipelines;
        let key = spec.key();
        if let Some(kernel) = lock(&store.pipelines).get(&key) {
            return Ok(Arc::clone(kernel));
        }
        let kernel = Arc::new(self.compile(spec)?);
        // Another thread may have compiled the same pipeline meanwhile: keep one.
        Ok(Arc::clone(lock(&store.pipelines).entry(key).or_insert(kernel)))
    }

    /// Compiles the pipeline of `variant` now, unless the context has it: what a model does at load, so that its
    /// first call compiles nothing.
    pub fn prepare(&self, variant: &KernelVariant) -> Result<()> {
        self.kernel(&variant.spec()).map(drop)
    }

    /// How many pipelines this context has compiled (each once; they stay for the life of the context).
    pub fn pipelines_compiled(&self) -> usize {
        lock(&self.inner.pipelines.pipelines).len()
    }

    /// The labels of the pipelines this context has compiled ([`Kernel::label`]), sorted.
    pub fn pipeline_labels(&self) -> Vec<String> {
        let mut labels: Vec<String> =
            lock(&self.inner.pipelines.pipelines).values().map(|kernel| kernel.label.clone()).collect();
        labels.sort_unstable();
        labels
    }

    fn compile(&self, spec: &KernelSpec<'_>) -> Result<Kernel> {
        // A shader using a capability the device lacks (or had masked) fails wgpu's validation: refuse it first, as
        // a typed error, whichever launcher asked.
        let kernel = format!("{}:{}", spec.shader.name, spec.entry);
        self.inner.profile.require(&kernel, &Capability::required_by(spec.shader.source))?;
        // Likewise a layout with more storage bindings than a stage may have (8 in WebGPU's defaults, fewer on some
        // GL drivers) fails validation: refuse it naming the limit.
        let storage = spec.bindings.len() as u64;
        let most = u64::from(self.inner.limits.max_storage_buffers_per_shader_stage);
        if storage > most {
            return Err(GpuError::LimitExceeded {
                what: format!("kernel `{kernel}` storage bindings"),
                limit: "max_storage_buffers_per_shader_stage",
                requested: storage,
                max: most,
            });
        }
        let device = &self.inner.device;
        let store = &self.inner.pipelines;
        let compile_error = |message: String| {
            self.lost_or(GpuError::ShaderCompile {
                shader: spec.shader.name.to_string(),
                entry: spec.entry.to_string(),
                message,
            })
        };
        let module = {
            let mut modules = lock(&store.modules);
            match modules.get(spec.shader.name) {
                Some(module) => module.clone(),
                None => {
                    let scope = device.push_error_scope(wgpu::ErrorFilter::Validation);
                    let descriptor = wgpu::ShaderModuleDescriptor {
                        label: Some(spec.shader.name),
                        source: wgpu::ShaderSource::Wgsl(spec.shader.source.into()),
                    };
                    let module = if spec.shader.trusted {
                        // SAFETY: `trusted` is the shader author's promise that its loops terminate, its divisors
                        // are non-zero and every index into a workgroup, function or private array is in bounds by
                        // construction (its tests against the f64 reference cover the edges). Storage and uniform
                        // buffers stay protected without naga's clamps: wgpu-hal turns on the Vulkan device's
                        // robust buffer access, so an out-of-range load or store cannot leave the binding.
                        unsafe {
                            device.create_shader_module_trusted(descriptor, wgpu::ShaderRuntimeChecks::unchecked())
                        }
                    } else {
                        device.create_shader_module(descriptor)
                    };
                    if let Some(error) = self.inner.faults.scope_error(scope) {
                        return Err(compile_error(error.to_string()));
                    }
                    modules.insert(spec.shader.name, module.clone());
                    module
                }
            }
        };
        let storage_layout = self.storage_layout(spec.bindings);
        let layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some(spec.entry),
            bind_group_layouts: &[Some(&storage_layout.layout), Some(&store.params_layout)],
            immediate_size: 0,
        });
        let label = spec.label();
        let scope = device.push_error_scope(wgpu::ErrorFilter::Validation);
        let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: Some(&label),
            layout: Some(&layout),
            module: &module,
            entry_point: Some(spec.entry),
            compilation_options: wgpu::PipelineCompilationOptions {
                constants: spec.constants,
                zero_initialize_workgroup_memory: false,
            },
            cache: store.driver_cache.as_ref().map(|d| &d.cache),
        });
        if let Some(error) = self.inner.faults.scope_error(scope) {
            return Err(compile_error(error.to_string()));
        }
        Ok(Kernel { pipeline, storage_layout, params: spec.params, label })
    }

    fn storage_layout(&self, bindings: &'static [Access]) -> Arc<StorageLayout> {
        let mut layouts = lock(&self.inner.pipelines.storage_layouts);
        let layout = layouts.entry(bindings).or_insert_with(|| {
            let entries: Vec<wgpu::BindGroupLayoutEntry> = layout::bindings(bindings)
                .iter()
                .filter(|b| b.group == STORAGE_GROUP)
                .map(Binding::layout_entry)
                .collect();
            let layout = self.inner.device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
                label: Some("storage"),
                entries: &entries,
            });
            Arc::new(StorageLayout { layout, id: NEXT_LAYOUT_ID.fetch_add(1, Ordering::Relaxed), bindings })
        });
        Arc::clone(layout)
    }
}
