//! What the timed browser tests (`first_result.rs`, `release_size.rs`) share: the clock, file entries as a page
//! hands them over, a rejection's message, and a load's progress callback that notes when the kernels' compilation
//! began. (`first_result.rs` takes only the clock, hence the allowance.)

#![allow(dead_code)]

use std::cell::Cell;
use std::rc::Rc;

use js_sys::{Function, Object, Reflect, Uint8Array};
use wasm_bindgen::prelude::*;

/// Seconds, on the page's clock.
pub fn now() -> f64 {
    js_sys::Date::now() / 1000.0
}

/// The message of the `Error` a promise rejected with.
pub fn message(rejection: JsValue) -> String {
    rejection.dyn_into::<js_sys::Error>().map(|e| String::from(e.message())).unwrap_or_else(|v| format!("{v:?}"))
}

/// `{ name, bytes }`.
pub fn file(name: &str, bytes: &Uint8Array) -> JsValue {
    let entry = Object::new();
    let _ = Reflect::set(&entry, &"name".into(), &name.into());
    let _ = Reflect::set(&entry, &"bytes".into(), bytes);
    entry.into()
}

/// A load's `progress(fraction, stage)` callback, noting when it first heard of the kernels' compilation: the
/// files are read and the weights uploaded by then.
pub struct CompileStart {
    callback: Closure<dyn FnMut(f64, JsValue)>,
    started: Rc<Cell<Option<f64>>>,
}

impl Default for CompileStart {
    fn default() -> Self {
        let started = Rc::new(Cell::new(None));
        let seen = started.clone();
        let callback = Closure::<dyn FnMut(f64, JsValue)>::new(move |_fraction: f64, stage: JsValue| {
            let compiling = stage.as_string().is_some_and(|s| s.starts_with(nemotron_engine::COMPILING_KERNELS));
            if compiling && seen.get().is_none() {
                seen.set(Some(now()));
            }
        });
        Self { callback, started }
    }
}

impl CompileStart {
    /// The callback to hand the load.
    pub fn callback(&self) -> Function {
        self.callback.as_ref().unchecked_ref::<Function>().clone()
    }

    /// When the compilation began ([`now`]'s clock).
    pub fn started(&self) -> f64 {
        self.started.get().expect("the load reports its kernels' compilation")
    }
}
