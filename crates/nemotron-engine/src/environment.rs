//! The GPU's and the matrix products' settings the programs on the engine (the CLI, the server it runs, the Python
//! package) take from the environment, for [`crate::EngineOptions::from_env`]. The model and kernel crates read no
//! variable: they take the typed values these fill.

use std::path::PathBuf;

use audio_kernels::gemm::UnknownValue;
use gpu_core::wgpu::Backends;
use nemotron_towers::{GpuOptions, MatmulOptions};

/// The device and pipeline-cache label, and the folder name of the pipeline cache.
const APPLICATION: &str = "nemotron-audio";

/// An environment variable that holds none of its documented values.
#[derive(Debug, thiserror::Error)]
#[error("{variable}={source}")]
pub struct UnknownSetting {
    /// The variable.
    pub variable: &'static str,
    /// What is wrong with its value.
    pub source: UnknownValue,
}

/// A variable's value; empty or blank counts as unset.
fn variable(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

/// [`GpuOptions::default`] labelled `nemotron-audio`, overridden by the environment:
///
/// | variable | sets |
/// |---|---|
/// | `WGPU_ADAPTER_NAME` | [`GpuOptions::adapter_name`] |
/// | `WGPU_BACKEND` | [`GpuOptions::backends`] |
/// | `NEMOTRON_PIPELINE_CACHE` | [`GpuOptions::pipeline_cache_dir`] (`off` or `0`: none); unset: `$XDG_CACHE_HOME/nemotron-audio/pipelines`, else `~/.cache/nemotron-audio/pipelines` |
pub(crate) fn gpu_options() -> GpuOptions {
    let pipeline_cache_dir = match variable("NEMOTRON_PIPELINE_CACHE").as_deref() {
        Some("off") | Some("0") => None,
        Some(dir) => Some(PathBuf::from(dir)),
        None => variable("XDG_CACHE_HOME")
            .map(PathBuf::from)
            .or_else(|| variable("HOME").map(|home| PathBuf::from(home).join(".cache")))
            .map(|base| base.join(APPLICATION).join("pipelines")),
    };
    GpuOptions {
        adapter_name: variable("WGPU_ADAPTER_NAME"),
        backends: variable("WGPU_BACKEND").map_or(Backends::PRIMARY, |list| Backends::from_comma_list(&list)),
        pipeline_cache_dir,
        label: APPLICATION.to_string(),
        ..GpuOptions::default()
    }
}

/// [`MatmulOptions::default`], overridden by `NEMOTRON_PRECISION` (`auto` or `f32`) and `NEMOTRON_COOP_KERNEL`
/// (`auto`, or a fixed tile configuration `MxNxS` or `MxNxSpP`, see [`audio_kernels::gemm::Tiles`]), in either case.
pub(crate) fn matmul_options() -> Result<MatmulOptions, UnknownSetting> {
    let mut options = MatmulOptions::default();
    let value = |name| variable(name).map(|v| v.trim().to_ascii_lowercase());
    let unknown = |variable| move |source| UnknownSetting { variable, source };
    if let Some(text) = value("NEMOTRON_PRECISION") {
        options.precision = text.parse().map_err(unknown("NEMOTRON_PRECISION"))?;
    }
    if let Some(text) = value("NEMOTRON_COOP_KERNEL") {
        options.tensor_core_kernel = text.parse().map_err(unknown("NEMOTRON_COOP_KERNEL"))?;
    }
    Ok(options)
}
