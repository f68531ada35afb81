//! Records a sequence of kernel launches and copies and submits them as one command buffer:
//! one compute pass, one parameter upload, one submit (or, for long work that shares the queue, a
//! few such parts). Optionally timed on the GPU: one span over the whole submission, or each
//! dispatch in its own pass with timestamps at both ends.

use std::collections::VecDeque;
use std::sync::Arc;

use crate::buffer::GpuBuffer;
use crate::error::{GpuError, Result};
use crate::gpu::Gpu;
use crate::pipeline::{Kernel, MAX_PARAMS_BYTES};
use crate::profiler::{PendingProfile, Profile};

enum Op {
    Dispatch { kernel: Arc<Kernel>, group: wgpu::BindGroup, offset: u32, workgroups: [u32; 3] },
    Copy { src: GpuBuffer, src_offset: u64, dst: GpuBuffer, dst_offset: u64, bytes: u64 },
}

/// How a submission is timed on the GPU.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Timing {
    /// No timestamps: the submission runs untimed.
    #[default]
    Off,
    /// From the start of the first dispatch to the end of the last: the submission's GPU time,
    /// with the passes left as they are.
    Span,
    /// Each dispatch in its own pass between two timestamps (per-kernel times; the extra passes
    /// add a little time of their own).
    PerDispatch,
}

/// A batch of GPU work, submitted at once by [`Recorder::submit`].
pub struct Recorder<'g> {
    gpu: &'g Gpu,
    ops: Vec<Op>,
    params: Vec<u8>,
    timing: Timing,
    /// The bound buffers, alive until the submission: dropping a buffer's last handle destroys it,
    /// and a destroyed buffer in a recorded bind group fails the submit.
    retained: Vec<GpuBuffer>,
    /// Parts submitted by [`Recorder::submit_part`] that may still be queued or running, oldest first.
    parts: VecDeque<wgpu::SubmissionIndex>,
}

impl<'g> Recorder<'g> {
    /// An empty batch on `gpu`.
    pub fn new(gpu: &'g Gpu) -> Self {
        Self {
            gpu,
            ops: Vec::new(),
            params: Vec::new(),
            timing: Timing::Off,
            retained: Vec::new(),
            parts: VecDeque::new(),
        }
    }

    /// Times the submission on the GPU (ignored, with a warning, when the device has no
    /// timestamp queries).
    pub fn with_timing(mut self, timing: Timing) -> Self {
        let available = self.gpu.has(wgpu::Features::TIMESTAMP_QUERY);
        if timing != Timing::Off && !available {
            log::warn!("GPU timing requested but the adapter has no timestamp queries");
        }
        self.timing = if available { timing } else { Timing::Off };
        self
    }

    /// The context this batch belongs to.
    pub fn gpu(&self) -> &'g Gpu {
        self.gpu
    }

    /// Number of dispatches recorded so far.
    pub fn dispatches(&self) -> usize {
        self.ops.iter().filter(|op| matches!(op, Op::Dispatch { .. })).count()
    }

    /// Records one launch of `kernel` with `buffers` bound in order to `@group(0)` and `params`
    /// (a `#[repr(C)]` struct of at most 256 bytes, the size its [`KernelSpec::params`](crate::KernelSpec::params) declares) at
    /// `@group(1) @binding(0)`.
    pub fn dispatch<P: bytemuck::Pod>(
        &mut self,
        kernel: &Arc<Kernel>,
        buffers: &[&GpuBuffer],
        params: &P,
        workgroups: [u32; 3],
    ) -> Result<()> {
        let expected = kernel.storage_layout.bindings.len();
        if buffers.len() != expected {
            return Err(GpuError::Validation(format!(
                "kernel `{}` takes {expected} buffers, {} given",
                kernel.label,
                buffers.len()
            )));
        }
        let bytes = bytemuck::bytes_of(params);
        if bytes.len() != kernel.params.size {
            return Err(GpuError::Validation(format!(
                "kernel `{}` declares parameters `{}` of {} bytes, {} given",
                kernel.label,
                kernel.params.name,
                kernel.params.size,
                bytes.len()
            )));
        }
        if bytes.len() as u64 > MAX_PARAMS_BYTES {
            return Err(GpuError::LimitExceeded {
                what: format!("parameters of `{}`", kernel.label),
                limit: "MAX_PARAMS_BYTES",
                requested: bytes.len() as u64,
                max: MAX_PARAMS_BYTES,
            });
        }
        let max = self.gpu.limits().max_compute_workgroups_per_dimension;
        if let Some(&count) = workgroups.iter().find(|&&c| c > max) {
            return Err(GpuError::LimitExceeded {
                what: format!("workgroups of `{}` ({workgroups:?})", kernel.label),
                limit: "max_compute_workgroups_per_dimension",
                requested: count as u64,
                max: max as u64,
            });
        }
        if workgroups.contains(&0) {
            return Ok(());
        }
        let stride = self.gpu.params_stride() as usize;
        let offset = self.params.len();
        self.params.extend_from_slice(bytes);
        self.params.resize(offset + stride, 0);
        let group = {
            let mut cache = self.gpu.inner.bind_groups.lock().unwrap_or_else(|p| p.into_inner());
            cache.get(&self.gpu.inner.device, &kernel.storage_layout, buffers)
        };
        self.retained.extend(buffers.iter().map(|&b| b.clone()));
        self.ops.push(Op::Dispatch { kernel: Arc::clone(kernel), group, offset: offset as u32, workgroups });
        Ok(())
    }

    /// Records a copy of `words` 4-byte words between buffers.
    pub fn copy(
        &mut self,
        src: &GpuBuffer,
        src_word: usize,
        dst: &GpuBuffer,
        dst_word: usize,
        words: usize,
    ) -> Result<()> {
        for (buffer, start) in [(src, src_word), (dst, dst_word)] {
            if start + words > buffer.len_words() {
                return Err(GpuError::SizeMismatch {
                    what: format!("copy of {words} words at word {start} of `{}`", buffer.label()),
                    expected: buffer.len_words() as u64,
                    got: (start + words) as u64,
                });
            }
        }
        if words > 0 {
            self.ops.push(Op::Copy {
                src: src.clone(),
                src_offset: src_word as u64 * 4,
                dst: dst.clone(),
                dst_offset: dst_word as u64 * 4,
                bytes: words as u64 * 4,
            });
        }
        Ok(())
    }

    /// Submits everything recorded, without waiting.
    pub fn submit(mut self) -> Result<()> {
        self.encode_and_submit().map(|_| ())
    }

    /// Submits what is recorded so far as one part and goes on recording into a fresh command buffer, after
    /// waiting for this recorder's previous part: at most two parts are queued or running at a time. The queue runs
    /// submissions in order, so work another thread submits meanwhile (the Sortformer's steps beside the ASR
    /// encoder) waits for about two parts instead of the whole batch, while this thread keeps the GPU fed. A timed
    /// recorder keeps everything for its one submission (its times cover one command buffer): there this does
    /// nothing. Every part is recorded whole before it is submitted, so a kernel pair that shares a
    /// [`Gpu::scratch`] buffer stays safe as long as it is not split between parts.
    pub fn submit_part(&mut self) -> Result<()> {
        if self.timing != Timing::Off || self.ops.is_empty() {
            return Ok(());
        }
        if let (_, Some(index)) = self.encode_and_submit()? {
            self.parts.push_back(index);
        }
        while self.parts.len() > 1 {
            let oldest = self.parts.pop_front();
            self.gpu.wait_for(oldest)?;
        }
        Ok(())
    }

    /// Submits, waits, and returns the GPU times asked for by [`Recorder::with_timing`] (empty
    /// when timing is off): one entry `submission` for a span, one per dispatch otherwise.
    pub async fn submit_profiled(mut self) -> Result<Profile> {
        let gpu = self.gpu;
        match self.encode_and_submit()?.0 {
            Some(pending) => pending.read(gpu).await,
            None => {
                gpu.wait().await?;
                Ok(Profile::default())
            }
        }
    }

    /// Encodes and submits what is recorded (leaving the recorder empty); returns the pending profile, if timed, and
    /// the submission (none when nothing was recorded).
    fn encode_and_submit(&mut self) -> Result<(Option<PendingProfile>, Option<wgpu::SubmissionIndex>)> {
        let gpu = self.gpu;
        if self.ops.is_empty() {
            return Ok((None, None));
        }
        let ops = std::mem::take(&mut self.ops);
        let params = std::mem::take(&mut self.params);
        // Alive until the submission has taken its references.
        let _retained = std::mem::take(&mut self.retained);
        let device = &gpu.inner.device;
        let arena = gpu.take_arena(params.len() as u64)?;
        gpu.inner.queue.write_buffer(&arena.buffer, 0, &params);
        let scope = device.push_error_scope(wgpu::ErrorFilter::Validation);
        let mut encoder = device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("recorder") });
        let dispatches: Vec<usize> =
            ops.iter().enumerate().filter(|(_, op)| matches!(op, Op::Dispatch { .. })).map(|(i, _)| i).collect();
        let labels: Vec<String> = match self.timing {
            Timing::Off => Vec::new(),
            Timing::Span => vec!["submission".to_string()],
            Timing::PerDispatch => dispatches
                .iter()
                .filter_map(|&i| match &ops[i] {
                    Op::Dispatch { kernel, .. } => Some(kernel.label.clone()),
                    Op::Copy { .. } => None,
                })
                .collect(),
        };
        let mut pending = (!labels.is_empty()).then(|| PendingProfile::new(gpu, labels));
        // The op that opens the final run of dispatches (the pass that must end the span).
        let last_run = dispatches.last().map(|&last| {
            let copy_before = ops[..last].iter().rposition(|op| matches!(op, Op::Copy { .. }));
            copy_before.map_or(0, |c| c + 1)
        });
        let mut pass: Option<wgpu::ComputePass<'static>> = None;
        let mut dispatch_index = 0u32;
        for (i, op) in ops.iter().enumerate() {
            match op {
                Op::Dispatch { kernel, group, offset, workgroups } => {
                    let writes = match (&pending, self.timing) {
                        (Some(p), Timing::PerDispatch) => Some(p.writes(dispatch_index, true, true)),
                        (Some(p), Timing::Span) if pass.is_none() => {
                            let first = dispatch_index == 0;
                            let last = last_run.is_some_and(|r| i >= r);
                            (first || last).then(|| p.writes(0, first, last))
                        }
                        _ => None,
                    };
                    if self.timing == Timing::PerDispatch {
                        // End the previous pass before the encoder can open the next one.
                        drop(pass.take());
                    }
                    let p = pass.get_or_insert_with(|| {
                        encoder
                            .begin_compute_pass(&wgpu::ComputePassDescriptor { label: None, timestamp_writes: writes })
                            .forget_lifetime()
                    });
                    p.set_pipeline(&kernel.pipeline);
                    p.set_bind_group(0, group, &[]);
                    p.set_bind_group(1, &arena.group, &[*offset]);
                    p.dispatch_workgroups(workgroups[0], workgroups[1], workgroups[2]);
                    dispatch_index += 1;
                }
                Op::Copy { src, src_offset, dst, dst_offset, bytes } => {
                    drop(pass.take());
                    encoder.copy_buffer_to_buffer(src.raw(), *src_offset, dst.raw(), *dst_offset, *bytes);
                }
            }
        }
        drop(pass);
        if let Some(profile) = pending.as_mut() {
            profile.resolve(&mut encoder);
        }
        let index = gpu.inner.queue.submit([encoder.finish()]);
        gpu.inner.arenas.put(arena);
        if let Some(error) = gpu.inner.faults.scope_error(scope) {
            return Err(gpu.lost_or(GpuError::Validation(error.to_string())));
        }
        gpu.check_faults()?;
        Ok((pending, Some(index)))
    }
}
