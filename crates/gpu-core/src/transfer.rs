//! Large transfers between host and device through staging memory that is kept and reused.
//!
//! A host-visible buffer created per transfer is a fresh allocation of pinned host memory, and on the H200 VM a
//! readback through one ran at 0.5–2 GB/s (the word-timestamp head's 143 MB of logits took 307 ms). Readbacks here go
//! through [`PIECE_BYTES`] staging buffers taken from a small pool, two pieces in flight: the copy of the next piece
//! runs on the GPU while the host decodes the one before. Uploads of [`BELT_MIN_BYTES`] or more go through wgpu's
//! [`StagingBelt`](wgpu::util::StagingBelt), whose chunks are mapped again and reused once the GPU has copied them.

use std::collections::VecDeque;
use std::sync::Mutex;
use std::sync::mpsc::Receiver;

use crate::buffer::GpuBuffer;
use crate::error::{GpuError, Result};
use crate::gpu::Gpu;

/// Bytes of one readback staging buffer (a readback of more is read piece by piece) and of one upload chunk.
pub(crate) const PIECE_BYTES: u64 = 16 << 20;
/// Idle readback staging buffers kept for later readbacks: two readers (the module's two towers) with two pieces in
/// flight each.
const KEPT_READBACK_BUFFERS: usize = 4;
/// Writes from this size on go through the staging belt; smaller ones through `Queue::write_buffer`, whose per-call
/// staging allocation is cheap at that size and which needs no submission of its own.
pub(crate) const BELT_MIN_BYTES: usize = 1 << 20;

/// The staging memory of one context.
pub(crate) struct Staging {
    readback: Mutex<Vec<wgpu::Buffer>>,
    belt: Mutex<wgpu::util::StagingBelt>,
}

impl Staging {
    pub(crate) fn new(device: &wgpu::Device) -> Self {
        Self { readback: Mutex::default(), belt: Mutex::new(wgpu::util::StagingBelt::new(device.clone(), PIECE_BYTES)) }
    }
}

/// Part of a requested range that one piece carries: `words` words of `ranges[range]` from word `offset` of its
/// buffer, landing at word `to` of that range's output.
#[derive(Clone, Copy, Debug)]
struct Segment {
    range: usize,
    offset: usize,
    to: usize,
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
            piece.push(Segment { range, offset: offset + to, to, words: take });
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
    mapped: Receiver<std::result::Result<(), wgpu::BufferAsyncError>>,
    submission: wgpu::SubmissionIndex,
}

impl Gpu {
    /// The values of each `(buffer, word offset, words)` range, after all submitted work: each range read piece by
    /// piece through reused staging buffers, straight into its output.
    pub(crate) fn read_ranges<T: bytemuck::Pod>(&self, ranges: &[(&GpuBuffer, usize, usize)]) -> Result<Vec<Vec<T>>> {
        debug_assert_eq!(std::mem::size_of::<T>(), 4);
        for &(buffer, offset, words) in ranges {
            if offset + words > buffer.len_words() {
                return Err(GpuError::SizeMismatch {
                    what: format!("readback of {words} words at offset {offset} from `{}`", buffer.label()),
                    expected: buffer.len_words() as u64,
                    got: (offset + words) as u64,
                });
            }
        }
        let mut outputs: Vec<Vec<T>> = ranges.iter().map(|&(_, _, words)| vec![T::zeroed(); words]).collect();
        let what = ranges.iter().map(|(b, _, _)| b.label()).collect::<Vec<_>>().join(", ");
        let mut flight = VecDeque::with_capacity(2);
        let spans = ranges.iter().map(|&(_, offset, words)| (offset, words));
        for segments in pieces(spans, (PIECE_BYTES / 4) as usize) {
            if flight.len() == 2 {
                self.finish_piece(flight.pop_front().expect("two in flight"), &mut outputs, &what)?;
            }
            flight.push_back(self.start_piece(ranges, segments)?);
        }
        while let Some(piece) = flight.pop_front() {
            self.finish_piece(piece, &mut outputs, &what)?;
        }
        Ok(outputs)
    }

    /// Copies `segments` into a staging buffer from the pool and asks for it to be mapped.
    fn start_piece(&self, ranges: &[(&GpuBuffer, usize, usize)], segments: Vec<Segment>) -> Result<InFlight> {
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
        let (sender, mapped) = std::sync::mpsc::channel();
        staging.slice(..at).map_async(wgpu::MapMode::Read, move |result| {
            let _ = sender.send(result);
        });
        Ok(InFlight { staging, segments, mapped, submission })
    }

    /// Waits for `piece`'s mapping, copies its bytes into the outputs and puts its staging buffer back.
    fn finish_piece<T: bytemuck::Pod>(&self, piece: InFlight, outputs: &mut [Vec<T>], what: &str) -> Result<()> {
        let InFlight { staging, segments, mapped, submission } = piece;
        self.await_mapping(&mapped, Some(submission), what)?;
        let bytes: u64 = segments.iter().map(|s| s.words as u64 * 4).sum();
        {
            let view = staging
                .slice(..bytes)
                .get_mapped_range()
                .map_err(|e| GpuError::Readback { what: what.to_string(), message: e.to_string() })?;
            let mut at = 0;
            for s in &segments {
                let to = &mut outputs[s.range][s.to..s.to + s.words];
                bytemuck::cast_slice_mut::<T, u8>(to).copy_from_slice(&view[at..at + s.words * 4]);
                at += s.words * 4;
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
        if pollster::block_on(scope.pop()).is_some() {
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
                    assert_eq!(s.to, next[s.range], "segment out of order");
                    assert_eq!(s.offset, ranges[s.range].0 + s.to);
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
