//! The chunk schedule shared by the ASR tower and the Sortformer (docs/model.md §4): chunks of
//! `length` encoder frames, each run with up to `left`/`right` frames of context as an
//! independent sequence whose positions restart at 0.

use crate::config::ChunkConfig;

/// Most chunks batched into one submission. The tower's workspace grows with the batch (65 KiB
/// per row for the release tower), and the storage-binding limit alone is no bound: with 4 GiB
/// bindings a long recording would batch ~350 chunks into a 22 GiB workspace. 8 chunks of 600
/// rows take 305 MiB and still fill a large GPU (every GEMM of the batch has ≥ 4,800 × 1,280
/// outputs), so the cap costs one submission per 8 chunks and no throughput. The Sortformer
/// embeds its input the same number of chunks at a time.
pub const MAX_CHUNKS_PER_BATCH: usize = 8;

/// One chunk: output frames `[start, end)`, computed over `[context_start, context_end)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Chunk {
    pub start: usize,
    pub end: usize,
    pub context_start: usize,
    pub context_end: usize,
}

impl Chunk {
    /// Frames of left context (the chunk's first output row inside its sequence).
    pub fn lookback(&self) -> usize {
        self.start - self.context_start
    }
}

/// The chunks covering `frames` encoder frames.
pub fn schedule(frames: usize, c: &ChunkConfig) -> Vec<Chunk> {
    (0..frames)
        .step_by(c.length.max(1))
        .map(|start| {
            let end = (start + c.length).min(frames);
            Chunk {
                start,
                end,
                context_start: start.saturating_sub(c.left_context),
                context_end: (end + c.right_context).min(frames),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn release_schedule_covers_every_frame_once() {
        let c = ChunkConfig { length: 500, left_context: 50, right_context: 50 };
        let chunks = schedule(1234, &c);
        assert_eq!(chunks.len(), 3);
        assert_eq!(chunks[0], Chunk { start: 0, end: 500, context_start: 0, context_end: 550 });
        assert_eq!(chunks[1], Chunk { start: 500, end: 1000, context_start: 450, context_end: 1050 });
        assert_eq!(chunks[2], Chunk { start: 1000, end: 1234, context_start: 950, context_end: 1234 });
        assert_eq!(chunks[1].lookback(), 50);
        assert!(schedule(0, &c).is_empty());
        assert_eq!(schedule(500, &c).len(), 1);
    }
}
