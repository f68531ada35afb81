//! Storage buffers: uploads (f32, u32, bf16 packed two per u32), zeroed scratch, writes and
//! readbacks. Every buffer is bindable whole as a storage buffer, so its size is checked against
//! `max_storage_buffer_binding_size` up front.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::error::{GpuError, Result};
use crate::gpu::Gpu;
use crate::memory::MemoryCounter;
use crate::transfer::BELT_MIN_BYTES;

static NEXT_BUFFER_ID: AtomicU64 = AtomicU64::new(1);

/// A GPU storage buffer of 4-byte words. Cloning shares the buffer; the memory is released when
/// the last clone drops.
#[derive(Clone)]
pub struct GpuBuffer {
    pub(crate) inner: Arc<BufferInner>,
}

pub(crate) struct BufferInner {
    pub(crate) buffer: wgpu::Buffer,
    pub(crate) id: u64,
    label: String,
    memory: Arc<MemoryCounter>,
}

impl Drop for BufferInner {
    fn drop(&mut self) {
        // Bind groups cached with this buffer may outlive it; free the memory now rather than
        // when the cache is next pruned.
        self.buffer.destroy();
        self.memory.freed(self.buffer.size());
    }
}

impl std::fmt::Debug for GpuBuffer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "GpuBuffer(`{}`, {} bytes)", self.inner.label, self.size_bytes())
    }
}

impl GpuBuffer {
    /// Size in bytes.
    pub fn size_bytes(&self) -> u64 {
        self.inner.buffer.size()
    }

    /// Number of 4-byte words (f32, u32, or bf16 pairs).
    pub fn len_words(&self) -> usize {
        (self.size_bytes() / 4) as usize
    }

    /// The label given at creation, used in error messages.
    pub fn label(&self) -> &str {
        &self.inner.label
    }

    /// The underlying wgpu buffer.
    pub fn raw(&self) -> &wgpu::Buffer {
        &self.inner.buffer
    }
}

/// Packs bf16 bit patterns two per u32, the even element in the low half (an odd count is padded
/// with a zero half).
pub fn pack_bf16(bits: &[u16]) -> Vec<u32> {
    bits.chunks(2).map(|pair| pair[0] as u32 | (pair.get(1).copied().unwrap_or(0) as u32) << 16).collect()
}

const STORAGE: wgpu::BufferUsages =
    wgpu::BufferUsages::STORAGE.union(wgpu::BufferUsages::COPY_SRC).union(wgpu::BufferUsages::COPY_DST);

impl Gpu {
    /// Bytes held in this context's buffers now.
    pub fn memory_in_use(&self) -> u64 {
        self.inner.memory.live()
    }

    /// Most bytes held in this context's buffers at once since creation or the last reset.
    pub fn peak_memory(&self) -> u64 {
        self.inner.memory.peak()
    }

    /// Starts a new peak measurement from the current use.
    pub fn reset_peak_memory(&self) {
        self.inner.memory.reset_peak();
    }

    /// Uploads f32 values.
    pub fn upload_f32(&self, label: &str, data: &[f32]) -> Result<GpuBuffer> {
        self.upload_bytes(label, bytemuck::cast_slice(data))
    }

    /// Uploads u32 values.
    pub fn upload_u32(&self, label: &str, data: &[u32]) -> Result<GpuBuffer> {
        self.upload_bytes(label, bytemuck::cast_slice(data))
    }

    /// Uploads bf16 bit patterns packed two per u32 (see [`pack_bf16`]); no widening on the host.
    pub fn upload_bf16(&self, label: &str, bits: &[u16]) -> Result<GpuBuffer> {
        if bits.len().is_multiple_of(2) && cfg!(target_endian = "little") {
            self.upload_bytes(label, bytemuck::cast_slice(bits))
        } else {
            self.upload_u32(label, &pack_bf16(bits))
        }
    }

    /// A zero-filled buffer of `words` 4-byte elements.
    pub fn zeros(&self, label: &str, words: usize) -> Result<GpuBuffer> {
        // A word count past u64 bytes is over every limit; saturate so the limit check names it.
        self.create_buffer(label, (words as u64).saturating_mul(4), false)
    }

    /// Writes f32 values at word offset `offset` (ordered before the next submission).
    pub fn write_f32(&self, buffer: &GpuBuffer, offset: usize, data: &[f32]) -> Result<()> {
        self.write_words(buffer, offset, bytemuck::cast_slice(data))
    }

    /// Writes u32 values at word offset `offset` (ordered before the next submission).
    pub fn write_u32(&self, buffer: &GpuBuffer, offset: usize, data: &[u32]) -> Result<()> {
        self.write_words(buffer, offset, bytemuck::cast_slice(data))
    }

    /// Reads the whole buffer back as f32 after all submitted work.
    pub async fn read_f32(&self, buffer: &GpuBuffer) -> Result<Vec<f32>> {
        self.read_f32_range(buffer, 0, buffer.len_words()).await
    }

    /// Reads `len` f32 values starting at word `offset`.
    pub async fn read_f32_range(&self, buffer: &GpuBuffer, offset: usize, len: usize) -> Result<Vec<f32>> {
        Ok(self.read_ranges(&[(buffer, offset, len)]).await?.remove(0))
    }

    /// Reads several `(buffer, word offset, words)` ranges as f32 with one copy submission and one
    /// mapping per 16 MiB: one round trip for any number of small ranges.
    pub async fn read_f32_ranges(&self, ranges: &[(&GpuBuffer, usize, usize)]) -> Result<Vec<Vec<f32>>> {
        self.read_ranges(ranges).await
    }

    /// Reads `outputs[i].len()` f32 values from `ranges[i] = (buffer, word offset)` into `outputs[i]`: for callers
    /// that place GPU results straight where they belong (no intermediate vector, no second copy).
    pub async fn read_f32_into(&self, ranges: &[(&GpuBuffer, usize)], outputs: &mut [&mut [f32]]) -> Result<()> {
        self.read_into(ranges, outputs).await
    }

    /// Reads the whole buffer back as u32.
    pub async fn read_u32(&self, buffer: &GpuBuffer) -> Result<Vec<u32>> {
        Ok(self.read_ranges(&[(buffer, 0, buffer.len_words())]).await?.remove(0))
    }

    fn write_words(&self, buffer: &GpuBuffer, offset: usize, bytes: &[u8]) -> Result<()> {
        let words = bytes.len() / 4;
        if offset + words > buffer.len_words() {
            return Err(GpuError::SizeMismatch {
                what: format!("write of {words} words at offset {offset} into `{}`", buffer.label()),
                expected: buffer.len_words() as u64,
                got: (offset + words) as u64,
            });
        }
        if bytes.len() >= BELT_MIN_BYTES {
            self.write_through_belt(buffer, offset as u64 * 4, bytes)?;
        } else if !bytes.is_empty() {
            self.inner.queue.write_buffer(&buffer.inner.buffer, offset as u64 * 4, bytes);
        }
        Ok(())
    }

    fn upload_bytes(&self, label: &str, bytes: &[u8]) -> Result<GpuBuffer> {
        let buffer = self.create_buffer(label, bytes.len() as u64, true)?;
        {
            let mut view = buffer
                .inner
                .buffer
                .slice(..)
                .get_mapped_range_mut()
                .map_err(|e| self.lost_or(GpuError::Validation(format!("mapping `{label}` at creation: {e}"))))?;
            let mut padded;
            let src = if bytes.len() as u64 == buffer.size_bytes() {
                bytes
            } else {
                padded = bytes.to_vec();
                padded.resize(buffer.size_bytes() as usize, 0);
                &padded[..]
            };
            view.copy_from_slice(src);
        }
        buffer.inner.buffer.unmap();
        Ok(buffer)
    }

    pub(crate) fn create_buffer(&self, label: &str, bytes: u64, mapped: bool) -> Result<GpuBuffer> {
        // Zero-sized bindings are invalid and storage sizes must be word multiples.
        let size = bytes.max(4).checked_next_multiple_of(4).unwrap_or(u64::MAX);
        let limits = &self.inner.limits;
        for (limit, max) in [
            ("max_buffer_size", limits.max_buffer_size),
            ("max_storage_buffer_binding_size", limits.max_storage_buffer_binding_size),
        ] {
            if size > max {
                return Err(GpuError::LimitExceeded {
                    what: format!("buffer `{label}` ({size} bytes)"),
                    limit,
                    requested: size,
                    max,
                });
            }
        }
        // wgpu drops the errors of calls on a lost device and hands back an unusable buffer.
        if let Some(reason) = self.inner.faults.lost() {
            return Err(GpuError::DeviceLost(reason));
        }
        let scope = self.inner.device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
        let buffer = self.inner.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some(label),
            size,
            usage: STORAGE,
            mapped_at_creation: mapped,
        });
        if self.inner.faults.scope_error(scope).is_some() {
            return Err(GpuError::OutOfMemory { what: format!("buffer `{label}`"), bytes: size });
        }
        let id = NEXT_BUFFER_ID.fetch_add(1, Ordering::Relaxed);
        let memory = Arc::clone(&self.inner.memory);
        memory.allocated(size);
        Ok(GpuBuffer { inner: Arc::new(BufferInner { buffer, id, label: label.to_string(), memory }) })
    }
}
