//! Workspaces reused across calls (buffers, or structs of buffers): kept between calls, replaced when a call needs
//! more, and made smaller again when calls have needed much less for a while.

/// The workspace in `slot` when it `fits` this call, else a new one from `make`. The old one is dropped first, so
/// its GPU buffers are freed before the larger ones are allocated.
pub fn reuse_or_make<W, E>(
    slot: &mut Option<W>,
    fits: impl Fn(&W) -> bool,
    make: impl FnOnce() -> Result<W, E>,
) -> Result<&W, E> {
    if slot.as_ref().is_some_and(|w| !fits(w)) {
        *slot = None;
    }
    match slot {
        Some(work) => Ok(work),
        None => Ok(slot.insert(make()?)),
    }
}

/// Calls in a row that needed at most half of a workspace before it is made again at the largest of their needs.
/// A count of calls, not a time, so that what is allocated follows from the calls alone. 16 steps of a live
/// diarization session are 4 to 12 s: a round that is briefly small (late joiners, a few sessions between full
/// rounds) keeps the workspace, while the memory of a peak comes back seconds after the load has fallen.
pub const SHRINK_AFTER_CALLS: usize = 16;

/// A workspace whose size follows the calls it serves: grown to what a call needs, and made again for the most the
/// recent calls needed once [`SHRINK_AFTER_CALLS`] calls in a row have needed at most half of it (a call needing more
/// than half starts the count again, so a load that swings between large and small calls keeps the large size and
/// allocates nothing). [`Reused::release`] frees it, for when nothing will call again.
pub struct Reused<W> {
    work: Option<W>,
    /// Calls in a row that needed at most half of `work`, and the most one of them needed.
    small_calls: usize,
    small_peak: usize,
}

impl<W> Default for Reused<W> {
    fn default() -> Self {
        Self { work: None, small_calls: 0, small_peak: 0 }
    }
}

impl<W> Reused<W> {
    /// The workspace for a call that needs `need` (rows, words: what `capacity` counts), made by `make(need)` with at
    /// least that capacity. Round `need` up to the granularity `make` allocates in, so that a smaller need is a smaller
    /// workspace (`make` may add headroom beyond it).
    pub fn get<E>(
        &mut self,
        need: usize,
        capacity: impl Fn(&W) -> usize,
        make: impl FnOnce(usize) -> Result<W, E>,
    ) -> Result<&W, E> {
        let held = self.work.as_ref().map_or(0, &capacity);
        if need <= held / 2 {
            self.small_calls += 1;
            self.small_peak = self.small_peak.max(need);
        } else {
            self.small_calls = 0;
            self.small_peak = 0;
        }
        let need = if self.small_calls >= SHRINK_AFTER_CALLS {
            let peak = self.small_peak;
            self.release();
            peak
        } else {
            need
        };
        reuse_or_make(&mut self.work, |w| capacity(w) >= need, || make(need))
    }

    /// The workspace held now, if any.
    pub fn held(&self) -> Option<&W> {
        self.work.as_ref()
    }

    /// Frees the workspace; the next call makes one for its own need.
    pub fn release(&mut self) {
        *self = Self::default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The sizes the calls of `sizes` allocate, in order (a call that reuses the workspace allocates nothing).
    fn allocations(sizes: &[usize]) -> Vec<usize> {
        let mut reused = Reused::default();
        let mut made = Vec::new();
        for &size in sizes {
            let made = &mut made;
            let make = move |n| -> Result<usize, ()> {
                made.push(n);
                Ok(n)
            };
            reused.get(size, |&w| w, make).unwrap();
        }
        made
    }

    #[test]
    fn grows_when_a_call_needs_more_and_keeps_its_size_while_calls_need_more_than_half() {
        assert_eq!(allocations(&[64, 128, 64, 512, 300, 257, 512]), [64, 128, 512]);
        let swinging: Vec<usize> = (0..100).map(|i| if i % 8 == 0 { 512 } else { 64 }).collect();
        assert_eq!(allocations(&swinging), [512]);
    }

    #[test]
    fn shrinks_to_the_largest_small_call_after_a_run_of_small_calls() {
        let mut sizes = vec![1024];
        sizes.extend([64, 128, 64].iter().cycle().take(SHRINK_AFTER_CALLS));
        sizes.extend([128; 40]);
        assert_eq!(allocations(&sizes), [1024, 128]);
        // One call short of the run: nothing is made again.
        assert_eq!(allocations(&sizes[..SHRINK_AFTER_CALLS]), [1024]);
    }

    #[test]
    fn a_released_workspace_is_made_again_at_the_next_calls_size() {
        let mut reused = Reused::default();
        reused.get(512, |&w| w, Ok::<usize, ()>).unwrap();
        reused.release();
        assert_eq!(*reused.get(64, |&w| w, Ok::<usize, ()>).unwrap(), 64);
    }
}
