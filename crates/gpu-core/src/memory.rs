//! Bytes held in [`crate::GpuBuffer`]s of one context, now and at the peak (what `bench`
//! reports as GPU memory; wgpu exposes no portable device-wide figure).

use std::sync::atomic::{AtomicU64, Ordering};

#[derive(Default, Debug)]
pub(crate) struct MemoryCounter {
    live: AtomicU64,
    peak: AtomicU64,
}

impl MemoryCounter {
    pub(crate) fn allocated(&self, bytes: u64) {
        let live = self.live.fetch_add(bytes, Ordering::Relaxed) + bytes;
        self.peak.fetch_max(live, Ordering::Relaxed);
    }

    pub(crate) fn freed(&self, bytes: u64) {
        self.live.fetch_sub(bytes, Ordering::Relaxed);
    }

    pub(crate) fn live(&self) -> u64 {
        self.live.load(Ordering::Relaxed)
    }

    pub(crate) fn peak(&self) -> u64 {
        self.peak.load(Ordering::Relaxed)
    }

    pub(crate) fn reset_peak(&self) {
        self.peak.store(self.live(), Ordering::Relaxed);
    }
}
