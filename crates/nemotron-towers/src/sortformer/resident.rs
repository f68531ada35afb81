//! The speaker cache and FIFO of the recordings and live sessions on the GPU. Each recording or session leases a
//! slot of rows in a page (one storage buffer for many of them, so a batched step gathers the rows of all of them
//! with one launch per page), and a step moves only the rows its cache update names ([`RowSource`]): the embeddings
//! never cross the bus, a step uploads its frames' features and reads back logits.
//!
//! A slot has two halves of a step's rows: a step reads its `[cache ; FIFO]` rows from the current half and writes
//! its rows up to its chunk's end to the other, which becomes current once the step has succeeded; a failed step
//! leaves the current half as it was, so a live chunk runs again on the next push. Row 0 of every page is the silence
//! embedding the compression inserts.
//!
//! Pages follow their users: a recording or session leases the lowest free slot, so they gather on the first pages
//! and the later (larger) ones empty out as they end; a page whose slots are all free is freed, but for one per pool
//! (per size of step: the offline schedule's, each live mode's), the smallest, kept in reserve so that a user that
//! comes and goes beside a steady load does not allocate and free a page each time. A freed page leaves its index empty: the indices that slots and free lists hold never shift.

use std::collections::BTreeSet;
use std::ops::Range;
use std::sync::{Arc, Mutex, MutexGuard};

use audio_kernels::{RowPairs, gather_rows};
use gpu_core::{Gpu, GpuBuffer, GpuError, Recorder, Reused};

use crate::error::Result;
use crate::speaker_cache::RowSource;

/// Most slots of one page: pages grow 1, 2, 4, … slots up to this, so one user costs one slot's memory and a
/// thousand take a few dozen pages.
const MAX_SLOTS_PER_PAGE: usize = 64;

/// The pages of a diarizer's recordings and live sessions, per size of step.
pub(crate) struct ResidentRows {
    gpu: Gpu,
    silence: Vec<f32>,
    pools: Mutex<Vec<Pool>>,
    /// The pairs of one batched step's copies, written before its submission; held from the write until the
    /// submission is recorded, so that concurrent steps do not overwrite each other's.
    pairs: async_lock::Mutex<Reused<GpuBuffer>>,
}

/// Pages whose slots hold steps of `step_rows` rows.
struct Pool {
    step_rows: usize,
    /// By index (page `i` has `2^i` slots, up to what a page holds); a freed page leaves `None`.
    pages: Vec<Option<Page>>,
    /// `(page, slot)` free for the next lease, the lowest first.
    free: BTreeSet<(usize, usize)>,
}

struct Page {
    buffer: GpuBuffer,
    /// Its slots leased now.
    leased: usize,
}

/// A recording's or session's rows on the GPU, given back to its page when dropped. It holds its pages' owner, so
/// what holds it borrows nothing.
pub(crate) struct Slot {
    owner: Arc<ResidentRows>,
    step_rows: usize,
    page: usize,
    index: usize,
    buffer: GpuBuffer,
    /// The half that holds the rows of the last step that succeeded.
    current: usize,
}

impl ResidentRows {
    /// Pages for the recordings and sessions of a diarizer whose compression inserts `silence` (`[d]`).
    pub(crate) fn new(gpu: &Gpu, silence: Vec<f32>) -> Self {
        Self { gpu: gpu.clone(), silence, pools: Mutex::new(Vec::new()), pairs: Default::default() }
    }

    fn width(&self) -> usize {
        self.silence.len()
    }

    fn pools(&self) -> MutexGuard<'_, Vec<Pool>> {
        // Nothing that can panic runs between the changes to a pool that belong together (a page and its free slots).
        self.pools.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The lowest free slot for steps of `step_rows` rows, on a new page where none is free (in the first empty place
    /// of the pool's pages). Refused when one slot (its two halves and the silence row) does not fit a storage binding.
    pub(crate) fn lease(self: &Arc<Self>, step_rows: usize) -> Result<Slot> {
        let mut pools = self.pools();
        let p = match pools.iter().position(|pool| pool.step_rows == step_rows) {
            Some(p) => p,
            None => {
                pools.push(Pool { step_rows, pages: Vec::new(), free: BTreeSet::new() });
                pools.len() - 1
            }
        };
        let pool = &mut pools[p];
        if pool.free.is_empty() {
            let place = pool.pages.iter().position(Option::is_none).unwrap_or(pool.pages.len());
            // 1, 2, 4, … slots, up to what `slots_per_page` allows.
            let slots = (1usize << place.min(16)).min(self.slots_per_page(step_rows)?);
            let buffer = self.gpu.zeros("speaker cache and FIFO rows", page_rows(slots, step_rows) * self.width())?;
            self.gpu.write_f32(&buffer, 0, &self.silence)?;
            if place == pool.pages.len() {
                pool.pages.push(None);
            }
            pool.pages[place] = Some(Page { buffer, leased: 0 });
            pool.free.extend((0..slots).map(|slot| (place, slot)));
        }
        let (page, index) =
            pool.free.pop_first().ok_or_else(|| crate::Error::Internal("a new page has no slot".into()))?;
        let held =
            pool.pages[page].as_mut().ok_or_else(|| crate::Error::Internal("a free slot's page is gone".into()))?;
        held.leased += 1;
        let buffer = held.buffer.clone();
        Ok(Slot { owner: self.clone(), step_rows, page, index, buffer, current: 0 })
    }

    /// Slots of `step_rows` rows one page holds: at most [`MAX_SLOTS_PER_PAGE`], at least one or an error naming the
    /// binding limit.
    fn slots_per_page(&self, step_rows: usize) -> Result<usize> {
        let limit = self.gpu.limits().max_storage_buffer_binding_size;
        let rows = (limit / (4 * self.width() as u64)) as usize;
        let slots = rows.saturating_sub(1) / (2 * step_rows).max(1);
        if slots == 0 {
            return Err(GpuError::LimitExceeded {
                what: format!(
                    "a slot of speaker cache and FIFO rows: 2 × {step_rows} rows of {} values and a silence row",
                    self.width()
                ),
                limit: "max_storage_buffer_binding_size",
                requested: page_rows(1, step_rows) as u64 * 4 * self.width() as u64,
                max: limit,
            }
            .into());
        }
        Ok(slots.min(MAX_SLOTS_PER_PAGE))
    }

    /// Gives `slot` back; frees its page when that leaves two pages of the pool with no slot leased (the larger of
    /// them: the reserve is the smaller).
    fn release(&self, slot: &Slot) {
        let mut pools = self.pools();
        let Some(pool) = pools.iter_mut().find(|pool| pool.step_rows == slot.step_rows) else { return };
        let Some(page) = pool.pages.get_mut(slot.page).and_then(Option::as_mut) else { return };
        page.leased -= 1;
        pool.free.insert((slot.page, slot.index));
        if page.leased > 0 {
            return;
        }
        let empty = |(i, page): (usize, &Option<Page>)| (i != slot.page && page.as_ref()?.leased == 0).then_some(i);
        if let Some(other) = pool.pages.iter().enumerate().find_map(empty) {
            let freed = other.max(slot.page);
            pool.pages[freed] = None;
            pool.free.retain(|&(page, _)| page != freed);
        }
    }

    /// Frees the row pairs' buffer, unless a step holds it now (see `Sortformer::leave`).
    pub(crate) fn release_pairs(&self) {
        if let Some(mut pairs) = self.pairs.try_lock() {
            pairs.release();
        }
    }

    /// Lays out a batch of steps' row copies (into the tower's rows before it, back into the slots after it; sequence
    /// `i` of the batch starts at row `i · seq_len`) and writes their pairs to the GPU. The pairs buffer stays
    /// locked while the copies live: keep them until the steps are submitted.
    pub(crate) async fn copies(&self, steps: &[StepRows<'_>], seq_len: usize) -> Result<StepCopies<'_>> {
        let mut into = ByPage::default();
        let mut back = ByPage::default();
        for (i, step) in steps.iter().enumerate() {
            let (slot, first) = (step.slot, i * seq_len);
            let pairs = into.of(slot);
            for (r, source) in step.sources.iter().enumerate() {
                let row = match *source {
                    RowSource::Step(row) => slot.row(slot.current, row),
                    RowSource::Silence => 0,
                };
                pairs.extend([row as u32, (first + r) as u32]);
            }
            let pairs = back.of(slot);
            for r in step.keep.clone() {
                pairs.extend([(first + r) as u32, slot.row(1 - slot.current, r) as u32]);
            }
        }
        let mut pairs = Vec::new();
        let into = into.lay_out(&mut pairs);
        let back = back.lay_out(&mut pairs);
        let mut guard = self.pairs.lock().await;
        let words = pairs.len().max(1).next_power_of_two();
        let buffer =
            guard.get(words, GpuBuffer::len_words, |words| self.gpu.zeros("speaker cache row pairs", words))?.clone();
        self.gpu.write_u32(&buffer, 0, &pairs)?;
        Ok(StepCopies { _guard: guard, pairs: buffer, width: self.width(), into, back })
    }
}

/// Rows of a page of `slots` slots: the silence row, then two halves of `step_rows` per slot.
fn page_rows(slots: usize, step_rows: usize) -> usize {
    1 + 2 * slots * step_rows
}

impl Slot {
    /// Page row of row `r` of `half`.
    fn row(&self, half: usize, r: usize) -> usize {
        1 + (2 * self.index + half) * self.step_rows + r
    }

    /// After a step that succeeded: the half it wrote becomes current.
    pub(crate) fn flip(&mut self) {
        self.current = 1 - self.current;
    }

    /// A new slot holding this one's rows (GPU copies, submitted at once: the queue runs them before any later step).
    pub(crate) fn fork(&self) -> Result<Self> {
        let mut copy = self.owner.lease(self.step_rows)?;
        copy.current = self.current;
        let width = self.owner.width();
        let words = self.step_rows * width;
        let (from, to) = (self.row(self.current, 0) * width, copy.row(copy.current, 0) * width);
        // Through a buffer of its own: a copy within one buffer (both slots on one page) is not allowed.
        let between = self.owner.gpu.zeros("a forked session's rows", words)?;
        let mut rec = Recorder::new(&self.owner.gpu);
        rec.copy(&self.buffer, from, &between, 0, words)?;
        rec.copy(&between, 0, &copy.buffer, to, words)?;
        rec.submit()?;
        Ok(copy)
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.owner.release(self);
    }
}

/// One step's rows, as [`ResidentRows::copies`] moves them.
#[derive(Clone)]
pub(crate) struct StepRows<'s> {
    pub slot: &'s Slot,
    /// Where each row of the step's `[cache ; FIFO]` comes from in the slot's current half.
    pub sources: &'s [RowSource],
    /// The step's rows kept for its next step (up to its chunk's end; none after the last chunk).
    pub keep: Range<usize>,
}

/// Row pairs `(from, to)` grouped by page, each group one launch.
#[derive(Default)]
struct ByPage {
    pages: Vec<((usize, usize), GpuBuffer, Vec<u32>)>,
}

impl ByPage {
    /// The pairs of `slot`'s page, to extend with `(from, to)` rows (looked up once per step, not per row).
    fn of(&mut self, slot: &Slot) -> &mut Vec<u32> {
        let key = (slot.step_rows, slot.page);
        let p = match self.pages.iter().position(|(k, _, _)| *k == key) {
            Some(p) => p,
            None => {
                self.pages.push((key, slot.buffer.clone(), Vec::new()));
                self.pages.len() - 1
            }
        };
        &mut self.pages[p].2
    }

    /// Appends the pairs to `pairs`, page after page: one launch each.
    fn lay_out(self, pairs: &mut Vec<u32>) -> Vec<Launch> {
        self.pages
            .into_iter()
            .map(|(_, page, page_pairs)| {
                let first = pairs.len() / 2;
                pairs.extend(&page_pairs);
                Launch { page, first, count: page_pairs.len() / 2 }
            })
            .collect()
    }
}

/// The copies of one page: pairs `first..first + count` of the pairs buffer.
struct Launch {
    page: GpuBuffer,
    first: usize,
    count: usize,
}

/// A batch of steps' row copies, their pairs on the GPU.
pub(crate) struct StepCopies<'r> {
    _guard: async_lock::MutexGuard<'r, Reused<GpuBuffer>>,
    pairs: GpuBuffer,
    width: usize,
    into: Vec<Launch>,
    back: Vec<Launch>,
}

impl StepCopies<'_> {
    /// Records the gathers of the steps' `[cache ; FIFO]` rows into the tower's rows `x` (`rows` of them).
    pub(crate) fn record_into(&self, rec: &mut Recorder<'_>, x: &GpuBuffer, rows: usize) -> Result<()> {
        for launch in &self.into {
            let pairs = self.pairs(launch, self.page_rows(&launch.page), rows);
            gather_rows(rec, &launch.page, x, pairs, self.width)?;
        }
        Ok(())
    }

    /// Records the writes of the steps' kept rows from the tower's rows `x` (`rows` of them) back to their slots.
    pub(crate) fn record_back(&self, rec: &mut Recorder<'_>, x: &GpuBuffer, rows: usize) -> Result<()> {
        for launch in &self.back {
            let pairs = self.pairs(launch, rows, self.page_rows(&launch.page));
            gather_rows(rec, x, &launch.page, pairs, self.width)?;
        }
        Ok(())
    }

    fn pairs<'a>(&'a self, launch: &Launch, src_rows: usize, dst_rows: usize) -> RowPairs<'a> {
        RowPairs { pairs: &self.pairs, first: launch.first, count: launch.count, src_rows, dst_rows }
    }

    fn page_rows(&self, page: &GpuBuffer) -> usize {
        page.len_words() / self.width
    }
}
