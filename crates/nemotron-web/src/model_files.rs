//! `Diarizer.load` and `Diarizer.weightFiles`: a checkpoint handed over as named files. Of those, only the files the
//! load reads are copied into wasm memory — `config.json`, the index and the shards holding the diarizer's tensors,
//! or `model.safetensors` (`diarizer::weight_files`) — and the others' bytes are not even looked at, so a Transcribe
//! checkpoint's ASR and language-model shards handed over with the rest cost no memory. `weightFiles` names those
//! shards from `config.json` and the index alone, for a caller that reads files only when needed (the page).

use std::sync::Arc;

use js_sys::{Array, Function, Reflect, Uint8Array};
use wasm_bindgen::prelude::*;

use crate::bindings::{Diarizer, bytes_of, own_error, rejected, report, stages};
use crate::diarizer::{self, NamedFile};
use crate::error::WebError;
use nemotron_engine::{CONFIG_FILE as CONFIG, INDEX_FILE as INDEX};

#[wasm_bindgen]
impl Diarizer {
    /// Loads a checkpoint from `[{ name, bytes }]` (`config.json` with `model.safetensors`, or with
    /// `model.safetensors.index.json` and the shards holding the diarizer's tensors; other entries are left alone,
    /// their bytes unread); `progress(fraction, stage)` hears of the load: the weight files copied (the first half,
    /// stage undefined), then the kernels compiled (stage `"compiling kernels k/n"`).
    pub async fn load(files: Array, progress: Option<Function>) -> Result<Diarizer, JsValue> {
        let files = files_read(&files, progress.as_ref())?;
        let engine = diarizer::load(files, &mut stages(progress.as_ref(), 0.5)).await.map_err(rejected)?;
        report(progress.as_ref(), 1.0, None);
        Ok(Diarizer::from(engine))
    }

    /// The weight files `load` reads of the checkpoint whose `config.json` is `config` and whose
    /// `model.safetensors.index.json` is `index` (`null` or undefined where it has none), each a string or bytes:
    /// the shards holding the diarizer's tensors (sorted, each once), else `["model.safetensors"]`. A config or an
    /// index the load would refuse is refused (thrown) with the same sentence.
    #[wasm_bindgen(js_name = weightFiles)]
    pub fn weight_files(config: JsValue, index: JsValue) -> Result<Array, JsValue> {
        let mut given = vec![(CONFIG.to_owned(), text_or_bytes("config", &config)?)];
        if !(index.is_undefined() || index.is_null()) {
            given.push((INDEX.to_owned(), text_or_bytes("index", &index)?));
        }
        let weights = diarizer::weight_files(copied(given, None)?).map_err(rejected)?;
        Ok(weights.into_iter().map(JsValue::from).collect())
    }
}

/// A string's UTF-8 bytes, or a `Uint8Array`'s or an `ArrayBuffer`'s.
fn text_or_bytes(name: &str, value: &JsValue) -> Result<Uint8Array, JsValue> {
    match value.as_string() {
        Some(text) => Ok(Uint8Array::from(text.as_bytes())),
        None => bytes_of(value).ok_or_else(|| own_error(name, "neither a string, a Uint8Array nor an ArrayBuffer")),
    }
}

/// The bytes of a `{ name, bytes }` entry.
fn entry_bytes(name: &str, entry: &JsValue) -> Result<Uint8Array, JsValue> {
    let bytes = Reflect::get(entry, &"bytes".into()).unwrap_or(JsValue::UNDEFINED);
    bytes_of(&bytes).ok_or_else(|| own_error(name, "its `bytes` are neither a Uint8Array nor an ArrayBuffer"))
}

/// The files of `[{ name, bytes }]` that the load reads, copied into wasm memory: `config.json` and the index first,
/// which name the weight files, then those, telling `progress` of their bytes copied.
fn files_read(files: &Array, progress: Option<&Function>) -> Result<Vec<NamedFile>, JsValue> {
    let mut entries = Vec::new();
    for entry in files.iter() {
        let name = Reflect::get(&entry, &"name".into()).ok().and_then(|name| name.as_string());
        let Some(name) = name else {
            return Err(own_error("files", "each entry needs a `name` string and `bytes`"));
        };
        entries.push((name, entry));
    }
    let bytes_of_each = |read: &dyn Fn(&str) -> bool| -> Result<Vec<(String, Uint8Array)>, JsValue> {
        let read = entries.iter().filter(|(name, _)| read(name));
        read.map(|(name, entry)| Ok((name.clone(), entry_bytes(name, entry)?))).collect()
    };
    let mut named = copied(bytes_of_each(&|name| name == CONFIG || name == INDEX)?, None)?;
    // Every entry of a name the load reads is copied, so that one given twice is refused as the load refuses it.
    let weights = diarizer::weight_files(named.clone()).map_err(rejected)?;
    let weight = |name: &str| name != CONFIG && name != INDEX && weights.iter().any(|file| file == name);
    named.extend(copied(bytes_of_each(&weight)?, progress)?);
    Ok(named)
}

/// Copies each file once into wasm memory (each into its own shared buffer, which the checkpoint then reads in
/// place), telling `progress` of the bytes copied, as a fraction of one half (the other is the upload).
fn copied(entries: Vec<(String, Uint8Array)>, progress: Option<&Function>) -> Result<Vec<NamedFile>, JsValue> {
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
