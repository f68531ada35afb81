//! Large transfers between host and device through staging memory that is kept and reused.
//!
//! A host-visible buffer created per transfer is a fresh allocation of pinned host memory, and on the H200 VM a
//! readback through one ran at 0.5–2 GB/s (the word-timestamp head's 143 MB of logits took 307 ms). Readbacks here go
//! through [`PIECE_BYTES`] staging buffers taken from a small pool, two pieces in flight: the copy of the next piece
//! runs on the GPU while the host copies the one before out, on several threads. Uploads of [`BELT_MIN_BYTES`] or more
//! go through wgpu's [`StagingBelt`](wgpu::util::StagingBelt), whose chunks are mapped again and reused once the GPU
//! has copied them.
//!
//! The host side of a readback is bound by first writes to fresh memory: 64 MiB copied into a new `Vec` took 25 ms on
//! a 2-core VM, 4 KiB page faults, against 8 ms with transparent huge pages. [`host_vec`] advises them for large
//! outputs, and the readers copy in parallel.

use std::collections::VecDeque;
use std::sync::Mutex;

use crate::buffer::GpuBuffer;
use crate::error::{GpuError, Result};
use crate::gpu::Gpu;
use crate::wait::{Mapping, map_for_reading};

/// Bytes of one readback staging buffer (a readback of more is read piece by piece) and of one upload chunk.
pub(crate) const PIECE_BYTES: u64 = 16 << 20;
/// Idle readback staging buffers kept for later readbacks: two readers (the module's two towers) with two pieces in
/// flight each.
const KEPT_READBACK_BUFFERS: usize = 4;
/// Bytes one thread copies out of a mapped piece at a time.
const COPY_BYTES: usize = 1 << 20;
/// Most threads that copy one piece out.
const MAX_COPY_THREADS: usize = 8;
/// Outputs from this size on are advised for transparent huge pages.
#[cfg(target_os = "linux")]
const HUGE_PAGE_MIN_BYTES: usize = 4 << 20;
/// Writes from this size on go through the staging belt; smaller ones through `Queue::write_buffer`, whose per-call
/// staging allocation is cheap at that size and which needs no submission of its own.
pub(crate) const BELT_MIN_BYTES: usize = 1 << 20;

/// The staging memory of one context.
pub(crate) struct Staging {
    readback: Mutex<Vec<wgpu::Buffer>>,
    belt: Mutex<wgpu::util::StagingBelt>,
    copy_threads: usize,
}

impl Staging {
    pub(crate) fn new(device: &wgpu::Device) -> Self {
        let copy_threads = std::thread::available_parallelism().map_or(1, |n| n.get()).min(MAX_COPY_THREADS);
        Self {
            readback: Mutex::default(),
            belt: Mutex::new(wgpu::util::StagingBelt::new(device.clone(), PIECE_BYTES)),
            copy_threads,
        }
    }
}

/// `len` zeroed values; from 4 MiB on (on Linux) in memory advised for transparent huge pages, so
/// that filling it takes a page fault per 2 MiB rather than per 4 KiB. For large host outputs of GPU work.
pub fn host_vec<T: bytemuck::Pod>(len: usize) -> Vec<T> {
    let mut values = Vec::with_capacity(len);
    #[cfg(target_os = "linux")]
    if len * std::mem::size_of::<T>() >= HUGE_PAGE_MIN_BYTES {
        const HUGE: usize = 2 << 20;
        let start = (values.as_mut_ptr() as usize).next_multiple_of(HUGE);
        let end = (values.as_mut_ptr() as usize + len * std::mem::size_of::<T>()) / HUGE * HUGE;
        if end > start {
            // SAFETY: advice only (the contents are unchanged and nothing has been written yet), on whole huge pages
            // inside this vector's own allocation. A kernel without transparent huge pages refuses it: ignored.
            let _ = unsafe { libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE) };
        }
    }
    values.resize(len, T::zeroed());
    values
}

/// Part of a requested range that one piece carries: `words` words of `ranges[range]` from word `offset` of its
/// buffer (the pieces take each range's words in order).
#[derive(Clone, Copy, Debug)]
struct Segment {
    range: usize,
    offset: usize,
    words: usize,
}

/// The `(word offset, words)` ranges cut into pieces of at most `piece_words` words, in order, each piece filled
/// before the next starts.
fn pieces(ranges: impl Iterator<Item = (usize, usize)>, piece_words: usize) -> Vec<Vec<Segment>> {
    let mut pieces = Vec::new();
    let mut piece: Vec<Segment> = Vec::new();
    let mut room = piece_words;
    for (range, (offset, words)) in ranges.enumerate() {
        let mut to = 0;
        while to < words {
            let take = (words - to).min(room);
            piece.push(Segment { range, offset: offset + to, words: take });
            (to, room) = (to + take, room - take);
            if room == 0 {
                pieces.push(std::mem::take(&mut piece));
                room = piece_words;
            }
        }
    }
    if !piece.is_empty() {
        pieces.push(piece);
    }
    pieces
}

/// One piece copied into a staging buffer and being mapped.
struct InFlight {
    staging: wgpu::Buffer,
    segments: Vec<Segment>,
    mapping: Mapping,
    submission: wgpu::SubmissionIndex,
}

impl Gpu {
    /// The values of each `(buffer, word offset, words)` range, after all submitted work (see [`Gpu::read_into`]).
    pub(crate) async fn read_ranges<T: bytemuck::Pod>(
        &self,
        ranges: &[(&GpuBuffer, usize, usize)],
    ) -> Result<Vec<Vec<T>>> {
        let mut outputs: Vec<Vec<T>> = ranges.iter().map(|&(_, _, words)| host_vec(words)).collect();
        let starts: Vec<(&GpuBuffer, usize)> = ranges.iter().map(|&(buffer, offset, _)| (buffer, offset)).collect();
        let mut targets: Vec<&mut [T]> = outputs.iter_mut().map(|o| o.as_mut_slice()).collect();
        self.read_into(&starts, &mut targets).await?;
        Ok(outputs)
    }

    /// Reads `outputs[i].len()` words from `ranges[i] = (buffer, word offset)` into `outputs[i]`, after all submitted
    /// work: piece by piece through reused staging buffers, two pieces in flight.
    pub(crate) async fn read_into<T: bytemuck::Pod>(
        &self,
        ranges: &[(&GpuBuffer, usize)],
        outputs: &mut [&mut [T]],
    ) -> Result<()> {
        debug_assert_eq!(std::mem::size_of::<T>(), 4);
        if ranges.len() != outputs.len() {
            return Err(GpuError::SizeMismatch {
                what: "readback outputs for its ranges".into(),
                expected: ranges.len() as u64,
                got: outputs.len() as u64,
            });
        }
        for (&(buffer, offset), output) in ranges.iter().zip(outputs.iter()) {
            let words = output.len();
            if offset + words > buffer.len_words() {
                return Err(GpuError::SizeMismatch {
                    what: format!("readback of {words} words at offset {offset} from `{}`", buffer.label()),
                    expected: buffer.len_words() as u64,
                    got: (offset + words) as u64,
                });
            }
        }
        // A lost device maps nothing; say so before any work (pooled staging buffers skip the check at creation).
        if let Some(reason) = self.inner.faults.lost() {
            return Err(GpuError::DeviceLost(reason));
        }
        let what = ranges.iter().map(|(b, _)| b.label()).collect::<Vec<_>>().join(", ");
        // What is left to fill of each output, as bytes: each piece takes its segments off the front.
        let mut rest: Vec<&mut [u8]> = outputs.iter_mut().map(|o| bytemuck::cast_slice_mut::<T, u8>(o)).collect();
        let spans = ranges.iter().zip(rest.iter()).map(|(&(_, offset), o)| (offset, o.len() / 4));
        let pieces = pieces(spans, (PIECE_BYTES / 4) as usize);
        let mut flight = VecDeque::with_capacity(2);
        for segments in pieces {
            if flight.len() == 2 {
                self.finish_piece(flight.pop_front().expect("two in flight"), &mut rest, &what).await?;
            }
            flight.push_back(self.start_piece(ranges, segments)?);
        }
        while let Some(piece) = flight.pop_front() {
            self.finish_piece(piece, &mut rest, &what).await?;
        }
        Ok(())
    }

    /// Copies `segments` into a staging buffer from the pool and asks for it to be mapped.
    fn start_piece(&self, ranges: &[(&GpuBuffer, usize)], segments: Vec<Segment>) -> Result<InFlight> {
        let staging = self.readback_buffer()?;
        let device = &self.inner.device;
        let mut encoder = device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("readback") });
        let mut at = 0;
        for s in &segments {
            let source = &ranges[s.range].0.inner.buffer;
            encoder.copy_buffer_to_buffer(source, s.offset as u64 * 4, &staging, at, s.words as u64 * 4);
            at += s.words as u64 * 4;
        }
        let submission = self.inner.queue.submit([encoder.finish()]);
        let mapping = map_for_reading(staging.slice(..at));
        Ok(InFlight { staging, segments, mapping, submission })
    }

    /// Waits for `piece`'s mapping, copies its bytes to the front of the outputs' unfilled `rest` (in parallel when
    /// large) and puts its staging buffer back.
    async fn finish_piece(&self, piece: InFlight, rest: &mut [&mut [u8]], what: &str) -> Result<()> {
        let InFlight { staging, segments, mapping, submission } = piece;
        self.mapped(mapping, Some(submission), what).await?;
        let bytes: u64 = segments.iter().map(|s| s.words as u64 * 4).sum();
        {
            let view = staging
                .slice(..bytes)
                .get_mapped_range()
                .map_err(|e| self.lost_or(GpuError::Readback { what: what.to_string(), message: e.to_string() }))?;
            let mut copies: Vec<(&mut [u8], &[u8])> = Vec::new();
            let mut at = 0;
            for s in &segments {
                let (to, left) = std::mem::take(&mut rest[s.range]).split_at_mut(s.words * 4);
                rest[s.range] = left;
                let from = &view[at..at + s.words * 4];
                copies.extend(to.chunks_mut(COPY_BYTES).zip(from.chunks(COPY_BYTES)));
                at += s.words * 4;
            }
            let threads = self.inner.staging.copy_threads.min(copies.len());
            if threads <= 1 {
                copies.into_iter().for_each(|(to, from)| to.copy_from_slice(from));
            } else {
                let per_thread = copies.len().div_ceil(threads);
                std::thread::scope(|scope| {
                    for share in copies.chunks_mut(per_thread) {
                        scope.spawn(move || share.iter_mut().for_each(|(to, from)| to.copy_from_slice(from)));
                    }
                });
            }
        }
        staging.unmap();
        let mut idle = self.inner.staging.readback.lock().unwrap_or_else(|p| p.into_inner());
        if idle.len() < KEPT_READBACK_BUFFERS {
            idle.push(staging);
        }
        Ok(())
    }

    /// An idle readback staging buffer, or a new one.
    fn readback_buffer(&self) -> Result<wgpu::Buffer> {
        if let Some(buffer) = self.inner.staging.readback.lock().unwrap_or_else(|p| p.into_inner()).pop() {
            return Ok(buffer);
        }
        if let Some(reason) = self.inner.faults.lost() {
            return Err(GpuError::DeviceLost(reason));
        }
        let device = &self.inner.device;
        let scope = device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
        let buffer = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("readback staging"),
            size: PIECE_BYTES,
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        if self.inner.faults.scope_error(scope).is_some() {
            return Err(GpuError::OutOfMemory { what: "readback staging buffer".into(), bytes: PIECE_BYTES });
        }
        Ok(buffer)
    }

    /// Writes `bytes` at byte `offset` of `buffer` through the staging belt, a chunk per [`PIECE_BYTES`], in one
    /// submission (ordered, as `Queue::write_buffer` is, after the work submitted before and before the work
    /// submitted after).
    pub(crate) fn write_through_belt(&self, buffer: &GpuBuffer, offset: u64, bytes: &[u8]) -> Result<()> {
        let device = &self.inner.device;
        // Collects the chunks whose copies have finished, so the belt reuses them instead of allocating more.
        let _ = device.poll(wgpu::PollType::Poll);
        let mut belt = self.inner.staging.belt.lock().unwrap_or_else(|p| p.into_inner());
        let mut encoder = device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("upload") });
        let mut at = offset;
        for piece in bytes.chunks(PIECE_BYTES as usize) {
            let size = wgpu::BufferSize::new(piece.len() as u64).expect("chunks are not empty");
            belt.write_buffer(&mut encoder, &buffer.inner.buffer, at, size).copy_from_slice(piece);
            at += piece.len() as u64;
        }
        belt.finish();
        self.inner.queue.submit([encoder.finish()]);
        belt.recall();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every requested word lands in exactly one segment, in order, and no piece exceeds its size.
    #[test]
    fn pieces_cover_every_range_once_in_order() {
        let ranges = [(0usize, 5usize), (3, 0), (7, 12), (0, 1), (2, 9)];
        for piece_words in [1, 2, 4, 5, 7, 100] {
            let pieces = pieces(ranges.iter().copied(), piece_words);
            let mut next = vec![0usize; ranges.len()];
            for piece in &pieces {
                let words: usize = piece.iter().map(|s| s.words).sum();
                assert!(words > 0 && words <= piece_words, "piece of {words} words for {piece_words}");
                for s in piece {
                    assert_eq!(s.offset, ranges[s.range].0 + next[s.range], "segments in order, none missing");
                    next[s.range] += s.words;
                }
            }
            let wanted: Vec<usize> = ranges.iter().map(|r| r.1).collect();
            assert_eq!(next, wanted);
            let total: usize = wanted.iter().sum();
            assert_eq!(pieces.len(), total.div_ceil(piece_words), "pieces are filled before a new one starts");
        }
    }
}
