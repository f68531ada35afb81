//! `Diarizer.fromUrl`: a checkpoint folder loaded by URL — `config.json`, then `model.safetensors.index.json` with
//! the shards holding the diarizer's tensors where the server has one (a Transcribe checkpoint's other shards are
//! never downloaded), else `model.safetensors` — each file read from the model cache
//! ([`crate::model_cache`]) or downloaded straight into wasm memory, and the downloaded files kept in the cache once
//! the model has loaded (a checkpoint the engine refuses is not kept). `fetch` and `caches` are the global scope's:
//! a window's or a worker's.

use std::sync::Arc;

use js_sys::{Function, Object, Reflect, Uint8Array};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;
use web_sys::{ReadableStreamDefaultReader, Request, RequestCache, RequestInit, Response};

use crate::bindings::{Diarizer, rejected, report, stages};
use crate::diarizer::{self, NamedFile};
use crate::error::WebError;
use crate::model_cache::{ModelStore, SIZE, absolute, describe, header, validators, warn};
use crate::url_rules::{CacheMode, Validators, hub_revision, is_commit};
use nemotron_engine::{CONFIG_FILE as CONFIG, INDEX_FILE as INDEX, SINGLE_FILE as SINGLE};

#[wasm_bindgen]
extern "C" {
    /// The global scope's `fetch`.
    #[wasm_bindgen(js_name = fetch)]
    fn global_fetch(request: &Request) -> js_sys::Promise;
}

#[wasm_bindgen]
impl Diarizer {
    /// Loads the checkpoint folder at `url` (relative URLs resolved as `fetch` resolves them). Options:
    /// `onProgress(fraction, stage)` hears of the files read (the first half: stage `"downloading <file>"` or
    /// `"reading <file> from the cache"`) and the kernels compiled (`"compiling kernels k/n"`); `cache`
    /// (`"default"`, `"force-cache"` or `"no-store"`, see [`CacheMode`]) says how the model cache is used.
    #[wasm_bindgen(js_name = fromUrl)]
    pub async fn from_url(url: String, options: JsValue) -> Result<Diarizer, JsValue> {
        let options = UrlOptions::of(&options)?;
        let progress = options.progress.as_ref();
        let folder = Folder::new(&url, options.mode).await?;
        let files = folder.checkpoint(progress).await?;
        let engine = diarizer::load(named(&files), &mut stages(progress, 0.5)).await.map_err(rejected)?;
        folder.keep(&files).await;
        report(progress, 1.0, None);
        Ok(Diarizer::from(engine))
    }
}

/// `fromUrl`'s options.
struct UrlOptions {
    progress: Option<Function>,
    mode: CacheMode,
}

impl UrlOptions {
    fn of(options: &JsValue) -> Result<Self, JsValue> {
        let mut read = Self { progress: None, mode: CacheMode::Default };
        if options.is_undefined() || options.is_null() {
            return Ok(read);
        }
        let refused = |problem: String| rejected(WebError::Options(problem));
        let object = options.dyn_ref::<Object>().ok_or_else(|| refused("not an object".into()))?;
        for key in Object::keys(object).iter() {
            let value = Reflect::get(object, &key)?;
            if value.is_undefined() || value.is_null() {
                continue;
            }
            match key.as_string().unwrap_or_default().as_str() {
                "onProgress" => {
                    let progress = value.dyn_into().map_err(|_| refused("onProgress: not a function".into()))?;
                    read.progress = Some(progress);
                }
                "cache" => {
                    let name = value.as_string().ok_or_else(|| refused("cache: not a string".into()))?;
                    read.mode = name.parse().map_err(|e| refused(format!("cache: {e}")))?;
                }
                other => return Err(refused(format!("unknown setting `{other}` (fromUrl takes onProgress, cache)"))),
            }
        }
        Ok(read)
    }
}

/// A file opened: its response (body unread), and whether it came from the cache or the server (with what the
/// server said of it, for the cache).
struct Opened {
    name: String,
    url: String,
    response: Response,
    downloaded: Option<Validators>,
}

/// A file read into wasm memory.
struct File {
    name: String,
    url: String,
    bytes: Arc<[u8]>,
    /// What the server said of a downloaded file (`None`: read from the cache).
    downloaded: Option<Validators>,
}

/// The checkpoint's folder, and the cache it is read through (`None`: not used, or there is none here).
struct Folder {
    base: String,
    mode: CacheMode,
    store: Option<ModelStore>,
}

impl Folder {
    async fn new(url: &str, mode: CacheMode) -> Result<Self, JsValue> {
        let base = absolute(&format!("{}/", url.trim_end_matches('/')))?;
        let store = match mode {
            CacheMode::NoStore => None,
            CacheMode::Default | CacheMode::ForceCache => match ModelStore::open().await {
                Ok(store) => Some(store),
                Err(why) => {
                    warn(&format!("{why}: the model at {base} is downloaded again at every load"));
                    None
                }
            },
        };
        Ok(Self { base, mode, store })
    }

    fn url(&self, name: &str) -> Result<String, JsValue> {
        let url = web_sys::Url::new_with_base(name, &self.base);
        url.map(|u| u.href()).map_err(|e| rejected(download_error(&self.base, describe(&e))))
    }

    /// The checkpoint's files that the load reads: `config.json`, the index and the shards holding the diarizer's
    /// tensors, or the single file. Where the cache holds the single file and no index, the server is not asked for
    /// an index.
    async fn checkpoint(&self, progress: Option<&Function>) -> Result<Vec<File>, JsValue> {
        let single_stored = self.stored(SINGLE).await && !self.stored(INDEX).await;
        let mut first: Vec<Opened> = self.open(CONFIG, false).await?.into_iter().collect();
        if !single_stored {
            first.extend(self.open(INDEX, true).await?);
        }
        let mut files = read_each(first, None).await?;
        let weights = diarizer::weight_files(named(&files)).map_err(rejected)?;
        let mut opened = Vec::new();
        for name in weights {
            opened.extend(self.open(&name, false).await?);
        }
        files.extend(read_each(opened, progress).await?);
        Ok(files)
    }

    async fn stored(&self, name: &str) -> bool {
        match (&self.store, self.url(name)) {
            (Some(store), Ok(url)) => store.lookup(&url).await.is_some(),
            _ => false,
        }
    }

    /// The file `name`, from the cache where it holds a copy the server confirms (or that needs no confirming),
    /// else from the server; an `optional` file the server does not have is `None`.
    async fn open(&self, name: &str, optional: bool) -> Result<Option<Opened>, JsValue> {
        let url = self.url(name)?;
        let opened = |response, downloaded| Some(Opened { name: name.into(), url: url.clone(), response, downloaded });
        if let Some(store) = &self.store
            && let Some(stored) = store.lookup(&url).await
            && self.still_stands(&url, &stored.validators).await
        {
            return Ok(opened(stored.response, None));
        }
        let response = fetch(&url, "GET", self.store.is_some()).await.map_err(|e| {
            let problem =
                format!("cannot fetch it: {} (is the server up, and does it allow this page: CORS?)", describe(&e));
            rejected(download_error(&url, problem))
        })?;
        if response.ok() {
            let server = validators(&response);
            return Ok(opened(response, Some(server)));
        }
        if let Some(body) = response.body() {
            let _ = body.cancel();
        }
        match optional {
            true => Ok(None),
            false => {
                Err(rejected(download_error(&url, format!("HTTP {} {}", response.status(), response.status_text()))))
            }
        }
    }

    /// Whether the stored copy of `url` is the server's file: without asking in `force-cache` mode or for a Hub
    /// commit (which never changes); else by a `HEAD` request, whose `ETag`, `Content-Length` and `Last-Modified`
    /// must be those stored. A server out of reach leaves the stored copy in use.
    async fn still_stands(&self, url: &str, stored: &Validators) -> bool {
        if self.mode == CacheMode::ForceCache || hub_revision(url).is_some_and(is_commit) {
            return true;
        }
        match fetch(url, "HEAD", true).await {
            Ok(now) => now.ok() && stored.same_file(&validators(&now)),
            Err(error) => {
                warn(&format!("cannot reach {url} to check the cached copy ({}): using that copy", describe(&error)));
                true
            }
        }
    }

    /// Keeps the downloaded files in the cache.
    async fn keep(&self, files: &[File]) {
        let Some(store) = &self.store else { return };
        for file in files {
            if let Some(server) = &file.downloaded {
                store.keep(&file.url, &file.bytes, server).await;
            }
        }
    }
}

/// The files as the engine takes them, by name (their bytes shared, not copied).
fn named(files: &[File]) -> Vec<NamedFile> {
    files.iter().map(|f| (f.name.clone(), f.bytes.clone())).collect()
}

fn download_error(url: &str, problem: impl Into<String>) -> WebError {
    WebError::Download { url: url.into(), problem: problem.into() }
}

/// A request to the server; `bypass` keeps the browser's HTTP cache out of it (the model cache keeps the file, or
/// a `HEAD` must reach the server).
async fn fetch(url: &str, method: &str, bypass: bool) -> Result<Response, JsValue> {
    let init = RequestInit::new();
    init.set_method(method);
    if bypass {
        init.set_cache(RequestCache::NoStore);
    }
    let request = Request::new_with_str_and_init(url, &init)?;
    JsFuture::from(global_fetch(&request)).await?.dyn_into()
}

/// The files' bodies read one after the other; `progress`, if given, follows their bytes over the first half of
/// the load.
async fn read_each(opened: Vec<Opened>, progress: Option<&Function>) -> Result<Vec<File>, JsValue> {
    let sizes: Vec<Option<usize>> = opened.iter().map(expected_size).collect();
    let total = sizes.iter().flatten().sum::<usize>().max(1) as f64;
    let (mut files, mut before) = (Vec::new(), 0);
    for (file, size) in opened.into_iter().zip(sizes) {
        let stage = match file.downloaded {
            Some(_) => format!("downloading {}", file.name),
            None => format!("reading {} from the cache", file.name),
        };
        let on_bytes =
            |read: usize| report(progress, 0.5 * ((before + read) as f64 / total).min(1.0), Some(stage.clone()));
        let bytes = read_body(&file.response, size, on_bytes)
            .await
            .map_err(|e| rejected(download_error(&file.url, format!("reading it broke off: {}", describe(&e)))))?;
        before += bytes.len();
        files.push(File { name: file.name, url: file.url, bytes, downloaded: file.downloaded });
    }
    Ok(files)
}

/// The size a body announces: a stored file's, or the server's `Content-Length` when the body is not encoded
/// (an encoded body's length is the compressed one).
fn expected_size(file: &Opened) -> Option<usize> {
    let headers = file.response.headers();
    let length = match file.downloaded {
        None => header(&headers, SIZE),
        Some(_) if header(&headers, "content-encoding").is_some_and(|e| e != "identity") => None,
        Some(_) => header(&headers, "content-length"),
    };
    length.and_then(|n| n.parse().ok())
}

/// A body read into one buffer of the size announced (grown if more arrive): a checkpoint can be gigabytes, so it is
/// neither gathered in pieces nor copied again. `on_bytes(read)` hears of each piece.
async fn read_body(
    response: &Response,
    size: Option<usize>,
    mut on_bytes: impl FnMut(usize),
) -> Result<Arc<[u8]>, JsValue> {
    let mut filling = Filling { bytes: zeroed(size.unwrap_or(0)), len: 0 };
    let Some(body) = response.body() else { return Ok(filling.finish()) };
    let reader: ReadableStreamDefaultReader = body.get_reader().unchecked_into();
    loop {
        let piece = JsFuture::from(reader.read()).await?;
        if Reflect::get(&piece, &"done".into())?.as_bool() == Some(true) {
            return Ok(filling.finish());
        }
        filling.push(&Reflect::get(&piece, &"value".into())?.unchecked_into());
        on_bytes(filling.len);
    }
}

fn zeroed(len: usize) -> Arc<[u8]> {
    std::iter::repeat_n(0u8, len).collect()
}

struct Filling {
    bytes: Arc<[u8]>,
    len: usize,
}

impl Filling {
    fn push(&mut self, piece: &Uint8Array) {
        let end = self.len + piece.length() as usize;
        if end > self.bytes.len() {
            let mut grown = zeroed(end.max(2 * self.bytes.len()));
            if let Some(slot) = Arc::get_mut(&mut grown) {
                slot[..self.len].copy_from_slice(&self.bytes[..self.len]);
            }
            self.bytes = grown;
        }
        // The buffer is this function's alone until `finish` hands it over.
        if let Some(slot) = Arc::get_mut(&mut self.bytes) {
            piece.copy_to(&mut slot[self.len..end]);
        }
        self.len = end;
    }

    fn finish(self) -> Arc<[u8]> {
        match self.len == self.bytes.len() {
            true => self.bytes,
            false => Arc::from(&self.bytes[..self.len]),
        }
    }
}
