//! Asynchronous device faults. wgpu's default handler panics on an uncaptured error; this log
//! records the fault instead so that the next wait or readback returns it as a typed error.
//!
//! Error scopes answer through a future. Native wgpu answers when the scope is popped, so the answer is taken at
//! once and the call that caused it returns the typed error; WebGPU answers through the browser's event loop, so
//! there the answer is recorded here when it comes and the next wait or readback (which awaits) reports it. Nothing
//! ever blocks on a scope.

use std::future::Future;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};

use crate::error::{GpuError, Result};

#[derive(Default)]
pub(crate) struct FaultLog {
    state: Mutex<Faults>,
}

#[derive(Default)]
struct Faults {
    lost: Option<String>,
    out_of_memory: bool,
    validation: Option<String>,
}

impl FaultLog {
    pub(crate) fn install(device: &wgpu::Device) -> Arc<Self> {
        let log = Arc::new(Self::default());
        let on_error = Arc::clone(&log);
        device.on_uncaptured_error(Arc::new(move |error: wgpu::Error| on_error.record(error)));
        let on_lost = Arc::clone(&log);
        device.set_device_lost_callback(move |reason, message| {
            let mut state = on_lost.lock();
            state.lost.get_or_insert_with(|| format!("{reason:?}: {message}"));
        });
        log
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Faults> {
        // A panic while holding this lock cannot leave the log inconsistent: take it anyway.
        self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn record(&self, error: wgpu::Error) {
        let mut state = self.lock();
        match error {
            wgpu::Error::OutOfMemory { .. } => state.out_of_memory = true,
            other => {
                log::error!("uncaptured GPU error: {other}");
                state.validation.get_or_insert_with(|| other.to_string());
            }
        }
    }

    /// The error `scope` caught, when it has answered by now (always, on native backends); an answer still to come
    /// is recorded as a fault when it comes.
    pub(crate) fn scope_error(self: &Arc<Self>, scope: wgpu::ErrorScopeGuard) -> Option<wgpu::Error> {
        let mut answer = Box::pin(scope.pop());
        match answer.as_mut().poll(&mut Context::from_waker(Waker::noop())) {
            Poll::Ready(error) => error,
            Poll::Pending => {
                self.record_when_answered(answer);
                None
            }
        }
    }

    #[cfg(target_arch = "wasm32")]
    fn record_when_answered(self: &Arc<Self>, answer: impl Future<Output = Option<wgpu::Error>> + 'static) {
        let log = Arc::clone(self);
        wasm_bindgen_futures::spawn_local(async move {
            if let Some(error) = answer.await {
                log.record(error);
            }
        });
    }

    /// wgpu-core answers every scope when it is popped: a scope left unanswered is a broken invariant of wgpu's,
    /// reported at the next check rather than lost.
    #[cfg(not(target_arch = "wasm32"))]
    fn record_when_answered(self: &Arc<Self>, _answer: impl Future<Output = Option<wgpu::Error>>) {
        self.lock().validation.get_or_insert_with(|| "wgpu left an error scope unanswered".to_string());
    }

    /// Why the device was lost, once it has been.
    pub(crate) fn lost(&self) -> Option<String> {
        self.lock().lost.clone()
    }

    /// Reports (and clears, except device loss, which is permanent) the first recorded fault.
    pub(crate) fn check(&self) -> Result<()> {
        let mut state = self.lock();
        if let Some(lost) = &state.lost {
            return Err(GpuError::DeviceLost(lost.clone()));
        }
        if std::mem::take(&mut state.out_of_memory) {
            return Err(GpuError::OutOfMemory { what: "GPU work".into(), bytes: 0 });
        }
        if let Some(message) = state.validation.take() {
            return Err(GpuError::Validation(message));
        }
        Ok(())
    }
}
