//! Reusable GPU workspaces: buffers sized for the largest call so far, replaced only when a call needs more.

use crate::error::Result;

/// The workspace in `slot` when it `fits` this call, else a new one from `make`. The old one is dropped first, so
/// its GPU buffers are freed before the larger ones are allocated.
pub(crate) fn reuse_or_make<W>(
    slot: &mut Option<W>,
    fits: impl Fn(&W) -> bool,
    make: impl FnOnce() -> Result<W>,
) -> Result<&W> {
    if slot.as_ref().is_some_and(|w| !fits(w)) {
        *slot = None;
    }
    match slot {
        Some(work) => Ok(work),
        None => Ok(slot.insert(make()?)),
    }
}
