//! The GPU's, the matrix products' and the Hub's settings the programs on the engine (the CLI, the server it runs, the Python
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

/// [`MatmulOptions::default`], overridden by `NEMOTRON_PRECISION` (`auto`, `f32` or `fast`), `NEMOTRON_COOP_KERNEL`
/// (`auto`, or a fixed tile configuration `MxNxS` or `MxNxSpP`, see [`audio_kernels::gemm::Tiles`]) and
/// `NEMOTRON_K_SPLIT` (`slices` or `stream`, see [`audio_kernels::gemm::KSplit`]), in any case.
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
    if let Some(text) = value("NEMOTRON_K_SPLIT") {
        options.k_split = text.parse().map_err(unknown("NEMOTRON_K_SPLIT"))?;
    }
    Ok(options)
}

/// The Hub settings `huggingface_hub` takes from the environment: `HF_ENDPOINT`; the cache `HF_HUB_CACHE`, else
/// `HF_HOME/hub`, where `HF_HOME` defaults to `$XDG_CACHE_HOME/huggingface`, else `~/.cache/huggingface`;
/// `HF_HUB_OFFLINE` (`1`, `true`, `yes` or `on`); the token `HF_TOKEN`, else the file `HF_TOKEN_PATH`, else
/// `HF_HOME/token` (what `huggingface-cli login` writes).
#[cfg(feature = "hub")]
pub(crate) fn hub_options() -> crate::hub::HubOptions {
    let home = variable("HF_HOME").map(PathBuf::from).unwrap_or_else(|| {
        let cache = variable("XDG_CACHE_HOME")
            .map(PathBuf::from)
            .unwrap_or_else(|| variable("HOME").map(PathBuf::from).unwrap_or_default().join(".cache"));
        cache.join("huggingface")
    });
    let cache_dir = variable("HF_HUB_CACHE").map(PathBuf::from).unwrap_or_else(|| home.join("hub"));
    let token_file = variable("HF_TOKEN_PATH").map(PathBuf::from).unwrap_or_else(|| home.join("token"));
    let token = variable("HF_TOKEN")
        .or_else(|| std::fs::read_to_string(token_file).ok())
        .map(|t| t.trim().to_owned())
        .filter(|t| !t.is_empty());
    let offline = variable("HF_HUB_OFFLINE")
        .is_some_and(|v| matches!(v.trim().to_ascii_lowercase().as_str(), "1" | "true" | "yes" | "on"));
    let endpoint = variable("HF_ENDPOINT").unwrap_or(crate::hub::DEFAULT_ENDPOINT.to_owned());
    crate::hub::HubOptions { endpoint: endpoint.trim_end_matches('/').to_owned(), cache_dir, token, offline }
}
