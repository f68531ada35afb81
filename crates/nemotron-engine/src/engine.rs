//! Where a model comes from ([`ModelSource`]: a checkpoint folder, files handed over by name, a Hugging Face Hub id,
//! the built-in demo), and the [`Engine`] that holds it loaded on a GPU.

#[cfg(not(target_arch = "wasm32"))]
use nemotron_towers::blocking::Block;
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use nemotron_postprocess::alignment::AlignmentTokenizer;
use nemotron_postprocess::alignment::TokenizerError;
use nemotron_towers::{CheckpointFiles, Gpu, GpuOptions, Model, ModelConfig, ModelOptions, ModelParts, NamedFiles};

use crate::environment;
use crate::error::EngineError;

#[cfg(feature = "hub")]
use crate::hub::{FetchError, HubError, HubOptions, RepoId};

/// Reports a download's progress: (file, bytes done, bytes in all).
pub type DownloadProgress<'a> = &'a mut dyn FnMut(&str, u64, u64);

/// Where the model comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ModelSource {
    /// A checkpoint folder: `config.json` with `model.safetensors` or a sharded index (and, for `align`,
    /// `alignment_tokenizer/`).
    Folder(PathBuf),
    /// A checkpoint folder's files handed over by name (what a browser has), read by the folder's rule; errors name
    /// the files as handed over. There is no alignment tokenizer.
    Files(NamedFiles),
    /// A Hugging Face Hub repository (only the audio tensors are fetched, into the standard cache).
    #[cfg(feature = "hub")]
    Hub(RepoId),
    /// The built-in tiny model with random weights: its outputs are meaningless (it shows that everything runs).
    #[cfg(feature = "demo")]
    Demo,
}

impl ModelSource {
    /// A folder when a file or folder `text` exists, else a Hub id `owner/name[@revision]`: a local folder always
    /// wins, so `./owner/name` forces a folder.
    pub fn parse(text: &str) -> Result<Self, EngineError> {
        Self::from_path(Path::new(text))
    }

    /// [`ModelSource::parse`] of a path that may not be UTF-8 (a command line's).
    pub fn from_path(path: &Path) -> Result<Self, EngineError> {
        if path.exists() {
            return Ok(ModelSource::Folder(path.to_path_buf()));
        }
        let text = path.display().to_string();
        #[cfg(feature = "hub")]
        {
            let id: Result<RepoId, HubError> = path.to_string_lossy().parse();
            id.map(ModelSource::Hub).map_err(|e| EngineError::NoSuchModel { text, reason: e.to_string() })
        }
        #[cfg(not(feature = "hub"))]
        Err(EngineError::NoSuchModel { text, reason: "Hub ids need the `hub` feature of nemotron-engine".into() })
    }
}

/// How an [`Engine`] is set up. `Default` is the library's defaults; front ends that honour the environment call
/// [`EngineOptions::from_env`].
#[derive(Clone, Debug)]
pub struct EngineOptions {
    /// Which GPU adapter and backends, and where the pipeline cache lives.
    pub gpu: GpuOptions,
    /// How the model runs on it (tensor cores or plain f32 kernels).
    pub model: ModelOptions,
    /// Where Hub models are fetched from and cached.
    #[cfg(feature = "hub")]
    pub hub: HubOptions,
    /// Compile every pipeline the model's calls can take while loading (on by default), so that the first call
    /// compiles none; off, each is compiled at its first use.
    pub compile_kernels: bool,
}

impl Default for EngineOptions {
    /// Any adapter, automatic precision, kernels compiled at load, the Hub's defaults (`HubOptions::default`, with the `hub` feature); nothing
    /// is read from the environment (that is [`EngineOptions::from_env`]).
    fn default() -> Self {
        Self {
            gpu: GpuOptions::default(),
            model: ModelOptions::default(),
            #[cfg(feature = "hub")]
            hub: HubOptions::default(),
            compile_kernels: true,
        }
    }
}

impl EngineOptions {
    /// Every setting the environment gives: `WGPU_ADAPTER_NAME`, `WGPU_BACKEND`, `NEMOTRON_PIPELINE_CACHE`,
    /// `NEMOTRON_PRECISION`, `NEMOTRON_COOP_KERNEL` and the Hub's `HF_*` variables. A malformed value is a
    /// [`crate::ErrorKind::Usage`] error naming the variable. (The libraries below read no variable: the CLI, the
    /// server and the Python package take them through this.)
    pub fn from_env() -> Result<Self, EngineError> {
        let matmul = environment::matmul_options()?;
        Ok(Self {
            gpu: environment::gpu_options(),
            model: ModelOptions { matmul, ..ModelOptions::default() },
            #[cfg(feature = "hub")]
            hub: environment::hub_options(),
            compile_kernels: true,
        })
    }
}

/// One GPU context and one loaded model (with the alignment tokenizer of its checkpoint, read when `align` first
/// needs it). `Send + Sync`: load once, share between threads; see [`nemotron_towers::AudioModel`] for how
/// concurrent calls run.
pub struct Engine {
    // Declared before the GPU context: dropped first.
    pub(crate) model: Model,
    gpu: Gpu,
    description: String,
    tokenizer_source: TokenizerSource,
    tokenizer: OnceLock<AlignmentTokenizer>,
}

/// Where the alignment tokenizer is read from.
enum TokenizerSource {
    Folder(PathBuf),
    /// A random-weight model, or files handed over, have none.
    None,
    #[cfg(feature = "demo")]
    Demo,
}

impl Engine {
    /// Resolves `source` (fetching a Hub model's audio part, with `download` told of each file's progress), then
    /// creates a GPU context and loads the model onto it ([`Engine::load_async`], waited for).
    #[cfg(not(target_arch = "wasm32"))]
    pub fn load(
        source: &ModelSource,
        options: &EngineOptions,
        download: DownloadProgress<'_>,
    ) -> Result<Self, EngineError> {
        Self::load_async(source, options, download).block()
    }

    /// [`Engine::load`] as a future (what a browser awaits: there, nothing may block). Unless
    /// [`EngineOptions::compile_kernels`] is off, the model's pipelines are compiled before it returns, `download`
    /// told of each as the stage [`crate::COMPILING_KERNELS`] (pipelines done, in all).
    pub async fn load_async(
        source: &ModelSource,
        options: &EngineOptions,
        download: DownloadProgress<'_>,
    ) -> Result<Self, EngineError> {
        let engine = Self::load_model(source, options, &mut *download).await?;
        if options.compile_kernels {
            let mut progress = |stage: &str, done: usize, all: usize| {
                download(stage, done as u64, all as u64);
                ControlFlow::Continue(())
            };
            engine.model.compile_kernels(&mut progress).await?;
        }
        Ok(engine)
    }

    async fn load_model(
        source: &ModelSource,
        options: &EngineOptions,
        download: DownloadProgress<'_>,
    ) -> Result<Self, EngineError> {
        let (folder, description) = match source {
            ModelSource::Folder(dir) => (dir.clone(), dir.display().to_string()),
            ModelSource::Files(files) => return Self::load_files(files, options).await,
            #[cfg(feature = "hub")]
            ModelSource::Hub(id) => {
                // `--model owner/name` named no folder either: the error says so.
                let folder = fetch(id, &options.hub, options.model.parts, download).map_err(|error| match error {
                    EngineError::Hub(source @ HubError::RepoNotFound { .. }) => {
                        EngineError::NoSuchRepository { text: id.to_string(), source }
                    }
                    other => other,
                })?;
                let commit = folder.file_name().map(|c| c.to_string_lossy().into_owned()).unwrap_or_default();
                (folder, format!("{}@{commit}", id.repo))
            }
            #[cfg(feature = "demo")]
            ModelSource::Demo => return Self::load_demo(options).await,
        };
        #[cfg(not(feature = "hub"))]
        let _ = download;
        let gpu = gpu(&options.gpu).await?;
        let model = Model::load(&gpu, &folder, &options.model).await?;
        let tokenizer_source = TokenizerSource::Folder(folder);
        Ok(Self { model, gpu, description, tokenizer_source, tokenizer: OnceLock::new() })
    }

    /// The model of files handed over, described by its kind (the files have no folder to name).
    async fn load_files(files: &NamedFiles, options: &EngineOptions) -> Result<Self, EngineError> {
        let gpu = gpu(&options.gpu).await?;
        let files = CheckpointFiles::Named(files.clone());
        let model = Model::from_files(&gpu, &files, &options.model).await?;
        // The kind of the checkpoint, which a diarizer-only load of a Transcribe checkpoint does not tell.
        let description = match (files.config()?, options.model.parts) {
            (ModelConfig::Transcribe(_), ModelParts::Whole) => "Nemotron 3.5 Transcribe checkpoint",
            (ModelConfig::Transcribe(_), ModelParts::Diarizer) => "Nemotron 3.5 Transcribe checkpoint (its diarizer)",
            (ModelConfig::Diarization(_), _) => "Nemotron 3 Diarization checkpoint",
        };
        let (description, tokenizer_source) = (description.to_string(), TokenizerSource::None);
        Ok(Self { model, gpu, description, tokenizer_source, tokenizer: OnceLock::new() })
    }

    #[cfg(feature = "demo")]
    async fn load_demo(options: &EngineOptions) -> Result<Self, EngineError> {
        log::warn!("using the {}: its outputs are meaningless", nemotron_towers::demo::LABEL);
        let gpu = gpu(&options.gpu).await?;
        let (config, checkpoint) = crate::demo::model()?;
        let model = Model::from_checkpoint(&gpu, config, &checkpoint, &options.model).await?;
        let description = nemotron_towers::demo::LABEL.to_string();
        Ok(Self { model, gpu, description, tokenizer_source: TokenizerSource::Demo, tokenizer: OnceLock::new() })
    }

    /// A model of `config`'s shapes with random weights (seeded), for benchmarks of the engine's front ends (e.g.
    /// `nemotron-audio bench --serve`): its outputs are meaningless and it has no alignment tokenizer.
    #[cfg(not(target_arch = "wasm32"))]
    pub fn random(config: &ModelConfig, seed: u64, options: &EngineOptions) -> Result<Self, EngineError> {
        let gpu = open_gpu(&options.gpu)?;
        let model = Model::random(&gpu, config, seed, &options.model).block()?;
        let kind = match config {
            ModelConfig::Transcribe(_) => "nemo_speechlm",
            ModelConfig::Diarization(_) => "nemotron3_diarization",
        };
        let description = format!("random weights ({kind})");
        Ok(Self { model, gpu, description, tokenizer_source: TokenizerSource::None, tokenizer: OnceLock::new() })
    }

    /// The loaded model.
    pub fn model(&self) -> &Model {
        &self.model
    }

    /// The GPU context the model runs on.
    pub fn gpu(&self) -> &Gpu {
        &self.gpu
    }

    /// Where the model came from: `owner/name@commit`, a folder, the demo's label, or (files handed over, which have
    /// no folder) the kind of checkpoint.
    pub fn description(&self) -> &str {
        &self.description
    }

    /// Whether this is the built-in demo model (random weights, meaningless outputs).
    pub fn is_demo(&self) -> bool {
        match self.tokenizer_source {
            TokenizerSource::Folder(_) | TokenizerSource::None => false,
            #[cfg(feature = "demo")]
            TokenizerSource::Demo => true,
        }
    }

    /// The alignment tokenizer of the checkpoint (`alignment_tokenizer/tokenizer.json`), read once.
    pub fn alignment_tokenizer(&self) -> Result<&AlignmentTokenizer, EngineError> {
        if let Some(tokenizer) = self.tokenizer.get() {
            return Ok(tokenizer);
        }
        let tokenizer = match &self.tokenizer_source {
            TokenizerSource::Folder(dir) => AlignmentTokenizer::for_checkpoint(dir, |tensor| {
                nemotron_towers::Checkpoint::open(dir).is_ok_and(|checkpoint| checkpoint.contains(tensor))
            })?,
            #[cfg(feature = "demo")]
            TokenizerSource::Demo => crate::demo::tokenizer()?,
            TokenizerSource::None => {
                let dir = self.description.clone();
                return Err(TokenizerError::Missing { dir, has_proto: false }.into());
            }
        };
        // Two threads may read it at once; either copy serves.
        Ok(self.tokenizer.get_or_init(|| tokenizer))
    }
}

/// Fetches (or finds in the cache) the files of Hub model `id` that a load of `parts` reads, telling `progress` of
/// each file; the snapshot folder.
#[cfg(feature = "hub")]
pub fn fetch(
    id: &RepoId,
    options: &HubOptions,
    parts: ModelParts,
    progress: DownloadProgress<'_>,
) -> Result<PathBuf, EngineError> {
    // Which shards the model reads is the model's business, asked once the config and the index are there.
    let weight_files =
        |snapshot: &Path| nemotron_towers::weight_files(&CheckpointFiles::Folder(snapshot.to_path_buf()), parts);
    crate::hub::fetch_audio_model(id, options, weight_files, progress).map_err(|error| match error {
        FetchError::Hub(error) => EngineError::Hub(error),
        FetchError::Model(error) => EngineError::Towers(error),
    })
}

/// A GPU context of `options`, as [`Engine::load`] opens one (`bench` times the library on a context of its own).
#[cfg(not(target_arch = "wasm32"))]
pub fn open_gpu(options: &GpuOptions) -> Result<Gpu, EngineError> {
    gpu(options).block()
}

/// A GPU context of `options`, on the adapter's own limits.
async fn gpu(options: &GpuOptions) -> Result<Gpu, EngineError> {
    Ok(Gpu::with_options(options).await.map_err(nemotron_towers::Error::from)?)
}
