//! The GPU settings this project's programs (the `nemotron-audio` CLI, its tests) take from the environment. The
//! library itself reads nothing: a program calls [`gpu_options`] or fills [`GpuOptions`] itself.

use std::path::PathBuf;

use gpu_core::GpuOptions;

/// The device and pipeline-cache label, and the folder name of the pipeline cache.
pub const APPLICATION: &str = "nemotron-audio";

/// [`GpuOptions::default`] labelled [`APPLICATION`], overridden by the environment:
///
/// | variable | sets |
/// |---|---|
/// | `WGPU_ADAPTER_NAME` | [`GpuOptions::adapter_name`] |
/// | `WGPU_BACKEND` | [`GpuOptions::backends`] |
/// | `NEMOTRON_PIPELINE_CACHE` | [`GpuOptions::pipeline_cache_dir`] (`off` or `0`: none); unset: `$XDG_CACHE_HOME/nemotron-audio/pipelines`, else `~/.cache/nemotron-audio/pipelines` |
///
/// Empty or blank variables count as unset.
pub fn gpu_options() -> GpuOptions {
    let var = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
    let pipeline_cache_dir = match var("NEMOTRON_PIPELINE_CACHE").as_deref() {
        Some("off") | Some("0") => None,
        Some(dir) => Some(PathBuf::from(dir)),
        None => var("XDG_CACHE_HOME")
            .map(PathBuf::from)
            .or_else(|| var("HOME").map(|home| PathBuf::from(home).join(".cache")))
            .map(|base| base.join(APPLICATION).join("pipelines")),
    };
    GpuOptions {
        adapter_name: var("WGPU_ADAPTER_NAME"),
        backends: var("WGPU_BACKEND")
            .map_or(gpu_core::wgpu::Backends::PRIMARY, |list| gpu_core::wgpu::Backends::from_comma_list(&list)),
        pipeline_cache_dir,
        label: APPLICATION.to_string(),
        ..GpuOptions::default()
    }
}
