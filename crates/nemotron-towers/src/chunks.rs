//! The chunk schedule shared by the ASR tower and the Sortformer (docs/model.md §4): chunks of
//! `length` encoder frames, each run with up to `left`/`right` frames of context as an
//! independent sequence whose positions restart at 0.

use crate::config::ChunkConfig;

/// Most chunks batched into one submission. The tower's workspace grows with the batch (65 KiB
/// per row for the release tower), and the storage-binding limit alone is no bound: with 4 GiB
/// bindings a long recording would batch ~350 chunks into a 22 GiB workspace. 8 chunks of 600
/// rows take 305 MiB and still fill a large GPU (every GEMM of the batch has ≥ 4,800 × 1,280
/// outputs), so the cap costs one submission per 8 chunks and no throughput. An offline
/// diarization batch runs the steps of as many recordings by default (`BatchLimits`).
pub const MAX_CHUNKS_PER_BATCH: usize = 8;

/// One chunk: output frames `[start, end)`, computed over `[context_start, context_end)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Chunk {
    /// First output frame.
    pub start: usize,
    /// One past the last output frame.
    pub end: usize,
    /// First frame the chunk's sequence reads (left context included).
    pub context_start: usize,
    /// One past the last frame it reads (right context included).
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

/// `chunks` cut into consecutive batches of at most `per_batch`, each of similar lengths: a batch pads every
/// sequence to its longest (attention and the row-wise passes run over the padded rows), so a chunk with context
/// shorter than 3/4 of the others' starts a batch of its own. A recording's last chunk is often such a one: at 60 s the
/// release schedule's chunks run over 550 and 300 frames, and batched the second would be 45 % padding.
pub fn batches(chunks: &[Chunk], per_batch: usize) -> Vec<&[Chunk]> {
    let rows = |k: &Chunk| k.context_end - k.context_start;
    let mut batches = Vec::new();
    let mut first = 0;
    while first < chunks.len() {
        let (mut shortest, mut longest) = (rows(&chunks[first]), rows(&chunks[first]));
        let mut end = first + 1;
        while end < chunks.len() && end - first < per_batch.max(1) {
            let (low, high) = (shortest.min(rows(&chunks[end])), longest.max(rows(&chunks[end])));
            if 4 * low < 3 * high {
                break;
            }
            (shortest, longest, end) = (low, high, end + 1);
        }
        batches.push(&chunks[first..end]);
        first = end;
    }
    batches
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batches_keep_order_size_and_similar_lengths() {
        let c = ChunkConfig { length: 500, left_context: 50, right_context: 50 };
        let rows = |k: &Chunk| k.context_end - k.context_start;
        for frames in [0, 1, 499, 500, 750, 1234, 7500, 9_321] {
            let chunks = schedule(frames, &c);
            for per_batch in [1, 3, 8] {
                let got = batches(&chunks, per_batch);
                assert_eq!(got.concat(), chunks, "every chunk once, in order");
                for batch in &got {
                    assert!(!batch.is_empty() && batch.len() <= per_batch);
                    let (low, high) = (batch.iter().map(rows).min().unwrap(), batch.iter().map(rows).max().unwrap());
                    assert!(4 * low >= 3 * high, "{frames} frames: a batch of {low}..{high} rows");
                }
                // Never cut where both sides are alike and there is room.
                for pair in got.windows(2) {
                    let joined: Vec<usize> = pair.concat().iter().map(rows).collect();
                    let alike = 4 * joined.iter().min().unwrap() >= 3 * joined.iter().max().unwrap();
                    assert!(pair[0].len() == per_batch || !alike, "{frames} frames: a needless cut");
                }
            }
        }
        // 60 s: 550 and 300 rows run apart; 600 s: 550, 600 × 13 and 550 rows batch by eight.
        assert_eq!(batches(&schedule(750, &c), 8).len(), 2);
        assert_eq!(batches(&schedule(7500, &c), 8).iter().map(|b| b.len()).collect::<Vec<_>>(), [8, 7]);
    }

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
