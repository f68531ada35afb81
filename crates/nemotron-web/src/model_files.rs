//! `Diarizer.load`: a checkpoint handed over as named files, each copied once into wasm memory.

use std::sync::Arc;

use js_sys::{Array, Function, Reflect, Uint8Array};
use wasm_bindgen::prelude::*;

use crate::bindings::{Diarizer, bytes_of, own_error, rejected, report, stages};
use crate::diarizer::{self, NamedFile};
use crate::error::WebError;

#[wasm_bindgen]
impl Diarizer {
    /// Loads a checkpoint from `[{ name, bytes }]` (`config.json` with `model.safetensors`, or with
    /// `model.safetensors.index.json` and its shards); `progress(fraction, stage)` hears of the load: the files
    /// copied (the first half, stage undefined), then the kernels compiled (stage `"compiling kernels k/n"`).
    pub async fn load(files: Array, progress: Option<Function>) -> Result<Diarizer, JsValue> {
        let files = named_files(&files, progress.as_ref())?;
        let engine = diarizer::load(files, &mut stages(progress.as_ref(), 0.5)).await.map_err(rejected)?;
        report(progress.as_ref(), 1.0, None);
        Ok(Diarizer::from(engine))
    }
}

/// The bytes of a `{ name, bytes }` entry.
fn entry_bytes(name: &str, entry: &JsValue) -> Result<Uint8Array, JsValue> {
    let bytes = Reflect::get(entry, &"bytes".into()).unwrap_or(JsValue::UNDEFINED);
    bytes_of(&bytes).ok_or_else(|| own_error(name, "its `bytes` are neither a Uint8Array nor an ArrayBuffer"))
}

/// Copies each file once into wasm memory (each into its own shared buffer, which the checkpoint then reads in
/// place), telling `progress` of the bytes copied, as a fraction of one half (the other is the upload).
fn named_files(files: &Array, progress: Option<&Function>) -> Result<Vec<NamedFile>, JsValue> {
    let mut entries = Vec::new();
    for entry in files.iter() {
        let name = Reflect::get(&entry, &"name".into()).ok().and_then(|name| name.as_string());
        let Some(name) = name else {
            return Err(own_error("files", "each entry needs a `name` string and `bytes`"));
        };
        let bytes = entry_bytes(&name, &entry)?;
        entries.push((name, bytes));
    }
    make_room(&entries)?;
    let total: f64 = entries.iter().map(|(_, bytes)| f64::from(bytes.length())).sum();
    let mut copied = 0.0;
    let mut named = Vec::with_capacity(entries.len());
    for (name, view) in entries {
        // One allocation of the final size, filled from JS: the bytes are in wasm memory once.
        let mut bytes: Arc<[u8]> = std::iter::repeat_n(0u8, view.length() as usize).collect();
        if let Some(slot) = Arc::get_mut(&mut bytes) {
            view.copy_to(slot);
        }
        copied += f64::from(view.length());
        report(progress, 0.5 * copied / total.max(1.0), None);
        named.push((name, bytes));
    }
    Ok(named)
}

/// Takes room for every file's copy from the allocator, fallibly, before any copy is made, and gives it back: the
/// copies then take that room. Files that do not fit the package's memory (wasm32's 4 GiB, under 2 GiB for one
/// allocation, less where the browser grows it no further) are refused naming that limit, where the copy itself
/// would abort the module.
fn make_room(entries: &[(String, Uint8Array)]) -> Result<(), JsValue> {
    // The bytes an `Arc<[u8]>` holds besides its slice: its two counts.
    const COUNTS: usize = 2 * std::mem::size_of::<usize>();
    let mut room = Vec::with_capacity(entries.len());
    for (_, view) in entries {
        let mut bytes = Vec::<u8>::new();
        if bytes.try_reserve_exact(view.length() as usize + COUNTS).is_err() {
            let files = entries.iter().map(|(name, _)| name.as_str()).collect::<Vec<_>>().join(", ");
            let bytes = entries.iter().map(|(_, view)| u64::from(view.length())).sum();
            let in_use = core::arch::wasm32::memory_size(0) as u64 * 65_536;
            return Err(rejected(WebError::Memory { files, bytes, in_use }));
        }
        room.push(bytes);
    }
    Ok(())
}
