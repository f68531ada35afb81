//! Waiting for the GPU. wgpu reports finished work and mapped buffers through callbacks. On native backends the
//! callbacks run from `Device::poll`, which can wait for a submission: the waits here poll, on the calling thread.
//! In a browser they run from the event loop once control returns to it, so there the waits are futures that
//! yield, and nothing polls or blocks (a blocking wait would never end).

use futures_channel::oneshot;

use crate::error::{GpuError, Result};
use crate::gpu::Gpu;

/// Polls for a device loss a failing call makes before it reports the failure itself (1 ms apart; native only:
/// in a browser the loss arrives through the event loop, not a poll).
#[cfg(not(target_arch = "wasm32"))]
const LOSS_CHECKS: usize = 20;
/// The longest wait for GPU work before it is reported as a timeout.
#[cfg(not(target_arch = "wasm32"))]
const TIMEOUT: std::time::Duration = std::time::Duration::from_secs(600);

/// The answer to a `map_async` call, once its callback has run.
pub(crate) type Mapping = oneshot::Receiver<std::result::Result<(), wgpu::BufferAsyncError>>;

/// Asks for `slice` to be mapped for reading.
pub(crate) fn map_for_reading(slice: wgpu::BufferSlice<'_>) -> Mapping {
    let (sender, mapping) = oneshot::channel();
    slice.map_async(wgpu::MapMode::Read, move |result| {
        let _ = sender.send(result);
    });
    mapping
}

impl Gpu {
    /// Resolves once all submitted work has finished, then reports any device fault.
    pub async fn wait(&self) -> Result<()> {
        #[cfg(target_arch = "wasm32")]
        {
            let (sender, done) = oneshot::channel();
            self.inner.queue.on_submitted_work_done(move || {
                let _ = sender.send(());
            });
            if done.await.is_err() {
                return Err(self.lost_or(GpuError::DeviceLost("submitted work never finished".into())));
            }
        }
        self.wait_for(None)
    }

    /// Waits (native backends) for `submission`, all submitted work when `None`, then reports any device fault. In a
    /// browser it only reports faults: there the queue's order is the only wait there is, short of awaiting.
    pub(crate) fn wait_for(&self, submission: Option<wgpu::SubmissionIndex>) -> Result<()> {
        #[cfg(not(target_arch = "wasm32"))]
        {
            let wait = wgpu::PollType::Wait { submission_index: submission, timeout: Some(TIMEOUT) };
            match self.inner.device.poll(wait) {
                Ok(_) => {}
                Err(wgpu::PollError::Timeout) => return Err(GpuError::Timeout { seconds: TIMEOUT.as_secs() }),
                Err(e) => {
                    self.check_faults()?;
                    // The device's own reason when it has one (a lost device also makes the wait fail, e.g. on a
                    // submission that never ran).
                    return Err(self.lost_or(GpuError::DeviceLost(e.to_string())));
                }
            }
        }
        #[cfg(target_arch = "wasm32")]
        let _ = submission;
        self.check_faults()
    }

    /// Resolves once the `map_async` call answering to `mapping` has mapped its buffer, after `submission` (all
    /// submitted work when `None`). On a lost device a mapping can fail or never come: the loss is what is reported.
    pub(crate) async fn mapped(
        &self,
        mapping: Mapping,
        submission: Option<wgpu::SubmissionIndex>,
        what: &str,
    ) -> Result<()> {
        let failed = |message: String| GpuError::Readback { what: what.to_string(), message };
        #[cfg(not(target_arch = "wasm32"))]
        let answer = self.poll_until_answered(mapping, submission)?;
        #[cfg(target_arch = "wasm32")]
        let answer = {
            let _ = submission;
            mapping.await.ok()
        };
        match answer {
            Some(Ok(())) => Ok(()),
            Some(Err(e)) => Err(self.lost_or(failed(e.to_string()))),
            None => Err(self.lost_or(failed("the buffer was never mapped".into()))),
        }
    }

    /// Polls for `submission` until `mapping` has its answer. Another thread's poll can be the one that runs the
    /// callback, after this thread's poll has returned, so one poll is not proof: the thread parks until the callback
    /// wakes it (at once when it runs), polling again every few milliseconds.
    #[cfg(not(target_arch = "wasm32"))]
    fn poll_until_answered(
        &self,
        mut mapping: Mapping,
        submission: Option<wgpu::SubmissionIndex>,
    ) -> Result<Option<std::result::Result<(), wgpu::BufferAsyncError>>> {
        use std::future::Future;
        use std::task::{Context, Poll, Wake, Waker};

        struct Unpark(std::thread::Thread);
        impl Wake for Unpark {
            fn wake(self: std::sync::Arc<Self>) {
                self.0.unpark();
            }
        }
        let waker = Waker::from(std::sync::Arc::new(Unpark(std::thread::current())));
        let deadline = std::time::Instant::now() + TIMEOUT;
        loop {
            self.wait_for(submission.clone())?;
            match std::pin::Pin::new(&mut mapping).poll(&mut Context::from_waker(&waker)) {
                Poll::Ready(answer) => return Ok(answer.ok()),
                Poll::Pending if std::time::Instant::now() < deadline => {
                    if let Some(reason) = self.inner.faults.lost() {
                        return Err(GpuError::DeviceLost(reason));
                    }
                    std::thread::park_timeout(std::time::Duration::from_millis(5));
                }
                Poll::Pending => return Ok(None),
            }
        }
    }

    /// `error`, unless the device has been lost: a lost device makes every later call invalid,
    /// and the loss, not the symptom, is what the caller must hear about.
    pub(crate) fn lost_or(&self, error: GpuError) -> GpuError {
        // wgpu runs the device-lost callback from a poll, on whichever thread polls: another thread's poll may be
        // delivering it at this moment (the module runs two towers at once), so look again for a few milliseconds
        // before taking the symptom for the cause. Only failing calls get here.
        #[cfg(not(target_arch = "wasm32"))]
        for _ in 0..LOSS_CHECKS {
            let _ = self.inner.device.poll(wgpu::PollType::Poll);
            if let Some(reason) = self.inner.faults.lost() {
                return GpuError::DeviceLost(reason);
            }
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        match self.inner.faults.lost() {
            Some(reason) => GpuError::DeviceLost(reason),
            None => error,
        }
    }
}
