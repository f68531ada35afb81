//! Per-dispatch parameters live in one uniform buffer per submission, bound with a dynamic
//! offset, instead of one small buffer per dispatch. Arenas are pooled: a queue write into an
//! arena is ordered after the submissions that read it before, so reuse needs no fence.

use std::sync::Mutex;

use crate::error::{GpuError, Result};
use crate::gpu::Gpu;
use crate::pipeline::MAX_PARAMS_BYTES;

pub(crate) struct Arena {
    pub(crate) buffer: wgpu::Buffer,
    pub(crate) group: wgpu::BindGroup,
}

impl Arena {
    fn capacity(&self) -> u64 {
        self.buffer.size()
    }
}

#[derive(Default)]
pub(crate) struct ArenaPool {
    free: Mutex<Vec<Arena>>,
}

impl ArenaPool {
    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Arena>> {
        self.free.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    pub(crate) fn put(&self, arena: Arena) {
        self.lock().push(arena);
    }
}

impl Gpu {
    /// Bytes between consecutive parameter blocks in an arena.
    pub(crate) fn params_stride(&self) -> u64 {
        MAX_PARAMS_BYTES.max(self.inner.limits.min_uniform_buffer_offset_alignment as u64)
    }

    pub(crate) fn take_arena(&self, bytes: u64) -> Result<Arena> {
        {
            let mut free = self.inner.arenas.lock();
            if let Some(i) = free.iter().position(|a| a.capacity() >= bytes) {
                return Ok(free.swap_remove(i));
            }
        }
        let capacity = bytes.max(64 << 10).next_power_of_two();
        let device = &self.inner.device;
        let scope = device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
        let buffer = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("params"),
            size: capacity,
            usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        if self.inner.faults.scope_error(scope).is_some() {
            return Err(GpuError::OutOfMemory { what: "dispatch parameter arena".into(), bytes: capacity });
        }
        let group = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("params"),
            layout: &self.inner.pipelines.params_layout,
            entries: &[wgpu::BindGroupEntry {
                binding: 0,
                resource: wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                    buffer: &buffer,
                    offset: 0,
                    size: wgpu::BufferSize::new(MAX_PARAMS_BYTES),
                }),
            }],
        });
        Ok(Arena { buffer, group })
    }
}
