//! The model's pipelines made ahead of its first call: each tower names the pipelines its calls can record (every
//! variant the shapes of its schedule, its batches and the named streaming modes select), and the load compiles
//! them, so that a first diarization compiles nothing.

use std::collections::BTreeMap;

use gpu_core::KernelVariant;

use super::{Model, Progress, report};
use crate::error::Result;

/// The stage [`Model::compile_kernels`] reports.
pub const COMPILING_KERNELS: &str = "compiling kernels";

impl Model {
    /// Every pipeline this model's calls can record on its device (diarization offline and live in the named
    /// modes; with a Transcribe checkpoint also encoding, fusion and the word-timestamp head), each once, by label.
    pub fn kernels(&self) -> Vec<KernelVariant> {
        let mut kernels = self.diarizer().sortformer().kernels();
        if let Model::Transcribe(m) = self {
            kernels.extend(m.asr.kernels());
            kernels.extend(m.fusion.kernels());
            if let Some(head) = &m.word_timestamps {
                kernels.extend(head.kernels());
            }
        }
        let unique: BTreeMap<String, KernelVariant> = kernels.into_iter().map(|k| (k.label(), k)).collect();
        unique.into_values().collect()
    }

    /// Compiles [`Model::kernels`] now (those the context has already are kept), telling `progress` of each as
    /// [`COMPILING_KERNELS`] (done, all).
    ///
    /// In a browser, creating a pipeline returns at once and the GPU process compiles it afterwards, in the order
    /// of the calls, before any later work of the queue: so after each pipeline this waits for the queue, which
    /// waits for the compilation. The load then ends once the pipelines are compiled (else the first diarization
    /// would wait for them), the progress follows the compiler, and the page gets the event loop between pipelines.
    pub async fn compile_kernels(&self, progress: Progress<'_>) -> Result<()> {
        let gpu = self.diarizer().sortformer().tower().gpu();
        let kernels = self.kernels();
        for (done, kernel) in kernels.iter().enumerate() {
            report(progress, COMPILING_KERNELS, done, kernels.len())?;
            gpu.prepare(kernel)?;
            #[cfg(target_arch = "wasm32")]
            gpu.wait().await?;
        }
        report(progress, COMPILING_KERNELS, kernels.len(), kernels.len())
    }
}
