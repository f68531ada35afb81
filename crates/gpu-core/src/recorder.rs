//! Records a sequence of kernel launches and copies and submits them as one command buffer:
//! one compute pass, one parameter upload, one submit. With profiling on, each dispatch gets its
//! own pass with GPU timestamps at both ends.

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

/// A batch of GPU work, submitted at once by [`Recorder::submit`].
pub struct Recorder<'g> {
    gpu: &'g Gpu,
    ops: Vec<Op>,
    params: Vec<u8>,
    profile: bool,
}

impl<'g> Recorder<'g> {
    /// An empty batch on `gpu`.
    pub fn new(gpu: &'g Gpu) -> Self {
        Self { gpu, ops: Vec::new(), params: Vec::new(), profile: false }
    }

    /// Records GPU timestamps around every dispatch (ignored, with a warning, when the device
    /// has no timestamp queries).
    pub fn with_profiling(mut self, on: bool) -> Self {
        if on && !self.gpu.has(wgpu::Features::TIMESTAMP_QUERY) {
            log::warn!("profiling requested but the adapter has no timestamp queries");
        }
        self.profile = on && self.gpu.has(wgpu::Features::TIMESTAMP_QUERY);
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
    /// (a `#[repr(C)]` struct of at most 256 bytes) at `@group(1) @binding(0)`.
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
    pub fn submit(self) -> Result<()> {
        self.encode_and_submit().map(|_| ())
    }

    /// Submits, waits, and returns per-dispatch GPU times (empty when profiling is off).
    pub fn submit_profiled(self) -> Result<Profile> {
        let gpu = self.gpu;
        match self.encode_and_submit()? {
            Some(pending) => pending.read(gpu),
            None => {
                gpu.wait()?;
                Ok(Profile::default())
            }
        }
    }

    fn encode_and_submit(self) -> Result<Option<PendingProfile>> {
        let gpu = self.gpu;
        if self.ops.is_empty() {
            return Ok(None);
        }
        let device = &gpu.inner.device;
        let arena = gpu.take_arena(self.params.len() as u64)?;
        gpu.inner.queue.write_buffer(&arena.buffer, 0, &self.params);
        let scope = device.push_error_scope(wgpu::ErrorFilter::Validation);
        let mut encoder = device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("recorder") });
        let labels: Vec<String> = self
            .ops
            .iter()
            .filter_map(|op| match op {
                Op::Dispatch { kernel, .. } => Some(kernel.label.clone()),
                Op::Copy { .. } => None,
            })
            .collect();
        let mut pending = self.profile.then(|| PendingProfile::new(gpu, labels));
        let mut pass: Option<wgpu::ComputePass<'static>> = None;
        let mut dispatch_index = 0u32;
        for op in &self.ops {
            match op {
                Op::Dispatch { kernel, group, offset, workgroups } => {
                    if let Some(profile) = pending.as_ref() {
                        // End the previous pass before the encoder can open the next one.
                        drop(pass.take());
                        let writes = profile.writes(dispatch_index);
                        pass = Some(
                            encoder
                                .begin_compute_pass(&wgpu::ComputePassDescriptor {
                                    label: None,
                                    timestamp_writes: Some(writes),
                                })
                                .forget_lifetime(),
                        );
                    }
                    let p = pass.get_or_insert_with(|| {
                        encoder
                            .begin_compute_pass(&wgpu::ComputePassDescriptor { label: None, timestamp_writes: None })
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
        gpu.inner.queue.submit([encoder.finish()]);
        gpu.inner.arenas.put(arena);
        if let Some(error) = pollster::block_on(scope.pop()) {
            return Err(GpuError::Validation(error.to_string()));
        }
        gpu.check_faults()?;
        Ok(pending)
    }
}
