//! What a diarization hears and answers to besides its options: `onProgress(done, chunks)`, told before the first
//! step and after each, and an `AbortSignal` (`signal`), read at each of those reports. Once the signal is aborted,
//! the engine runs no further step and frees what the call held, and the promise rejects with the signal's reason (a
//! `DOMException` named `AbortError` unless `abort(reason)` gave another), as `fetch` does.

use std::ops::ControlFlow;

use js_sys::{Function, Object, Reflect};
use wasm_bindgen::{JsCast, JsValue};
use web_sys::{AbortSignal, DomException};

use crate::WebError;
use crate::bindings::{own_error, rejected};

/// A call's `onProgress` and `signal`.
#[derive(Default)]
pub(crate) struct Steps {
    on_progress: Option<Function>,
    signal: Option<AbortSignal>,
}

impl Steps {
    /// Takes `onProgress` (a function) and `signal` (an `AbortSignal`) out of an options argument: them, and a copy
    /// of the options without them (the caller's object is left as it is), which the engine's options are read from.
    pub(crate) fn take(options: &JsValue) -> Result<(Self, JsValue), JsValue> {
        if !options.is_object() {
            return Ok((Self::default(), options.clone()));
        }
        let rest = Object::assign(&Object::new(), options.unchecked_ref());
        let on_progress = match take(&rest, "onProgress") {
            None => None,
            Some(f) => Some(f.dyn_into::<Function>().map_err(|_| own_error("onProgress", "not a function"))?),
        };
        let signal = match take(&rest, "signal") {
            None => None,
            Some(s) => Some(s.dyn_into::<AbortSignal>().map_err(|_| own_error("signal", "not an AbortSignal"))?),
        };
        Ok((Self { on_progress, signal }, rest.into()))
    }

    /// Refuses a call whose signal was aborted before it started, as `fetch` does.
    pub(crate) fn start(&self) -> Result<(), JsValue> {
        match &self.signal {
            Some(signal) if signal.aborted() => Err(abort_reason(signal)),
            _ => Ok(()),
        }
    }

    /// The engine's progress callback: `onProgress(done, chunks)` (a callback that throws is the caller's business:
    /// the call goes on), then on unless the signal is aborted.
    pub(crate) fn progress(&self) -> impl FnMut(&str, usize, usize) -> ControlFlow<()> + '_ {
        move |_stage, done, all| {
            if let Some(on_progress) = &self.on_progress {
                let _ = on_progress.call2(&JsValue::NULL, &JsValue::from(done as f64), &JsValue::from(all as f64));
            }
            match &self.signal {
                Some(signal) if signal.aborted() => ControlFlow::Break(()),
                _ => ControlFlow::Continue(()),
            }
        }
    }

    /// What a failed call rejects with: the signal's reason when it was cancelled, else the error's sentence.
    pub(crate) fn rejected(&self, error: WebError) -> JsValue {
        match &self.signal {
            Some(signal) if error.is_cancelled() => abort_reason(signal),
            _ => rejected(error),
        }
    }
}

/// Removes `key` from `options`: its value, unless undefined or null.
fn take(options: &Object, key: &str) -> Option<JsValue> {
    let value = Reflect::get(options, &key.into()).ok().filter(|v| !v.is_undefined() && !v.is_null());
    let _ = Reflect::delete_property(options, &key.into());
    value
}

/// Why a signal was aborted: its `reason`, or, where a browser keeps none, a `DOMException` named `AbortError`.
fn abort_reason(signal: &AbortSignal) -> JsValue {
    let reason = signal.reason();
    if !reason.is_undefined() {
        return reason;
    }
    DomException::new_with_message_and_name("signal is aborted without reason", "AbortError")
        .map_or_else(|error| error, JsValue::from)
}
