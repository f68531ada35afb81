//! Speaker fusion and the projector (docs/model.md §7): binarised speaker activity → LayerNorm(8) →
//! sinusoidal speaker table, added to LayerNorm(ASR states), then the Linear projector to the
//! language model's width. The 8-wide part runs on the host; the wide part on the GPU.

use async_lock::Mutex;

use audio_kernels::gemm::gemm_kernels;
use audio_kernels::{
    Epilogue, GemmShape, LAYER_NORM_EPS, Weight, gemm, layer_norm, layer_norm_f64, speaker_fusion, speaker_table,
};
use gpu_core::{Gpu, GpuBuffer, KernelVariant, Recorder, reuse_or_make};

use crate::config::TranscribeConfig;
use crate::error::{Error, Result};
use crate::names::FusionNames;
use crate::weights::{self, FusionWeights, GpuWeights};

/// Fused states and projected rows of one recording.
pub struct FusionOutput {
    /// `[T, d]`: LayerNorm(ASR states) + speaker embedding (before the projector).
    pub fused: Vec<f32>,
    /// `[tokens, text_hidden]`: projector output for the valid tokens.
    pub embeds: Vec<f32>,
}

/// Frames per fusion submission: enough to amortise a submission, small enough that the
/// workspace (21 KiB per frame for the release widths) stays under 100 MiB.
const MAX_BLOCK_ROWS: usize = 4096;

/// GPU buffers of one block of frames.
struct FusionWorkspace {
    rows: usize,
    hidden: GpuBuffer,
    z: GpuBuffer,
    fused: GpuBuffer,
    embeds: GpuBuffer,
}

impl FusionWorkspace {
    fn new(gpu: &Gpu, rows: usize, d: usize, speakers: usize, text: usize) -> Result<Self> {
        Ok(Self {
            rows,
            hidden: gpu.zeros("asr hidden", rows * d)?,
            z: gpu.zeros("speaker features", rows * speakers)?,
            fused: gpu.zeros("fused", rows * d)?,
            embeds: gpu.zeros("audio embeds", rows * text)?,
        })
    }
}

/// Fusion weights on the GPU plus the host-side speaker norm.
pub struct Fusion {
    gpu: Gpu,
    weights: FusionWeights<Weight, GpuBuffer>,
    speaker_norm: (Vec<f64>, Vec<f64>),
    table: GpuBuffer,
    threshold: f64,
    hidden: usize,
    speakers: usize,
    text_hidden: usize,
    /// Locked for a whole call: the workspace holds one call's block until it is read back.
    workspace: Mutex<Option<FusionWorkspace>>,
}

impl Fusion {
    /// The fusion norms and the projector from a checked (or random) store.
    pub async fn build(store: &mut impl GpuWeights, names: &FusionNames, c: &TranscribeConfig) -> Result<Self> {
        let weights = weights::fusion(store, names, c.asr.hidden, c.diarization.speakers, c.text_hidden)?;
        let gpu = store.gpu();
        let (hidden, speakers) = (c.asr.hidden, c.diarization.speakers);
        // The 8-wide speaker norm runs on the host.
        let norm = &weights.speaker_norm;
        let read = gpu.read_f32_ranges(&[(&norm.weight, 0, speakers), (&norm.bias, 0, speakers)]).await?;
        let widen = |values: &[f32]| values.iter().map(|&v| f64::from(v)).collect();
        let speaker_norm = (widen(&read[0]), widen(&read[1]));
        let table = gpu.upload_f32("speaker table", &speaker_table(speakers, hidden))?;
        Ok(Self {
            gpu: gpu.clone(),
            weights,
            speaker_norm,
            table,
            threshold: c.speaker_activity_threshold,
            hidden,
            speakers,
            text_hidden: c.text_hidden,
            workspace: Mutex::new(None),
        })
    }

    /// `z[t] = LayerNorm_8(p[t] > threshold)` for every frame (padding included).
    pub fn speaker_features(&self, probabilities: &[f64]) -> Vec<f32> {
        let (weight, bias) = &self.speaker_norm;
        let active: Vec<f64> = probabilities.iter().map(|&p| if p > self.threshold { 1.0 } else { 0.0 }).collect();
        layer_norm_f64(&active, weight, bias, self.speakers, LAYER_NORM_EPS as f64)
            .into_iter()
            .map(|v| v as f32)
            .collect()
    }

    /// The pipelines [`Fusion::run`] records: the norm, the fusion and the projector.
    pub(crate) fn kernels(&self) -> Vec<KernelVariant> {
        let w = &self.weights;
        let projector = Epilogue { bias: w.projector.bias.as_ref(), ..Epilogue::default() };
        let mut kernels = vec![layer_norm::kernel(false, false, self.hidden)];
        kernels.extend(audio_kernels::speaker_fusion::variants());
        kernels.extend(gemm_kernels(&self.gpu, &w.projector.weight, &projector, false));
        kernels
    }

    /// ASR states `[T, d]` and encoder-rate speaker probabilities `[T, speakers]` (as the
    /// diarizer outputs them) → fused states and the projector rows of the first `tokens` frames,
    /// in blocks of at most 4096 frames through one reused workspace.
    pub async fn run(&self, asr_hidden: &[f32], probabilities: &[f32], tokens: usize) -> Result<FusionOutput> {
        let (d, text, speakers) = (self.hidden, self.text_hidden, self.speakers);
        let frames = asr_hidden.len() / d;
        if asr_hidden.len() != frames * d {
            return Err(Error::Width { what: "fusion: ASR states", width: d, found: asr_hidden.len() });
        }
        if probabilities.len() != frames * speakers {
            let what = format!("fusion: speaker probabilities [{frames}, {speakers}]");
            return Err(Error::Length { what, expected: frames * speakers, found: probabilities.len() });
        }
        if tokens > frames {
            return Err(Error::Frames { what: "fusion: tokens", found: tokens, frames });
        }
        let limit = self.gpu.limits().max_storage_buffer_binding_size as usize;
        let block = (limit / (4 * d.max(text))).clamp(1, MAX_BLOCK_ROWS).min(frames.max(1));
        let mut guard = self.workspace.lock().await;
        let work = reuse_or_make(
            &mut guard,
            |w| w.rows >= block,
            || FusionWorkspace::new(&self.gpu, block, d, speakers, text),
        )?;
        let mut fused = gpu_core::host_vec(asr_hidden.len());
        let mut embeds = gpu_core::host_vec(tokens * text);
        for start in (0..frames).step_by(block) {
            let rows = block.min(frames - start);
            let keep = tokens.saturating_sub(start).min(rows);
            self.gpu.write_f32(&work.hidden, 0, &asr_hidden[start * d..(start + rows) * d])?;
            let block_probabilities = &probabilities[start * speakers..(start + rows) * speakers];
            let z = self.speaker_features(&block_probabilities.iter().map(|&p| f64::from(p)).collect::<Vec<_>>());
            self.gpu.write_f32(&work.z, 0, &z)?;
            let mut rec = Recorder::new(&self.gpu);
            let w = &self.weights;
            layer_norm(&mut rec, &work.hidden, &w.asr_norm.params(), &work.fused, rows, d, None)?;
            speaker_fusion(&mut rec, &work.fused, &work.z, &self.table, rows, d, speakers)?;
            let projector = Epilogue { bias: w.projector.bias.as_ref(), ..Epilogue::default() };
            let shape = GemmShape { n: keep, m: text, k: d };
            gemm(&mut rec, &work.fused, &w.projector.weight, &work.embeds, shape, &projector)?;
            rec.submit()?;
            // Both in one readback, straight into place: one round trip per block.
            let block_fused = &mut fused[start * d..(start + rows) * d];
            let first_token = start.min(tokens);
            let block_embeds = &mut embeds[first_token * text..(first_token + keep) * text];
            self.gpu.read_f32_into(&[(&work.fused, 0), (&work.embeds, 0)], &mut [block_fused, block_embeds]).await?;
        }
        Ok(FusionOutput { fused, embeds })
    }
}
