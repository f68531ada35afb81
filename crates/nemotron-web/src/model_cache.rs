//! The model cache: the files `Diarizer.fromUrl` downloaded, kept in the browser's Cache Storage (one cache,
//! [`CACHE_NAME`]) under their URLs, and [`ModelCache`], the JS API that lists and clears them. Cache Storage is
//! reached through the global scope (`caches`), so this works in a window and in a worker alike; where there is
//! none (a page that is not a secure context) or it refuses to open, loads go on without it, with a warning.
//!
//! Each file is stored as a `Response` of its bytes whose headers carry what the server said of it (`ETag`,
//! `Last-Modified`, its `Content-Length` as `x-nemotron-length`), its size (`x-nemotron-size`) and when it was
//! stored (`x-nemotron-stored`, milliseconds since 1970).

use std::sync::Arc;

use js_sys::{Array, Date, Object, Reflect, Uint8Array};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;
use web_sys::{Cache, CacheStorage, Headers, Request, Response, ResponseInit};

use crate::bindings::{own_error, set};
use crate::url_rules::{Validators, covers, hub_revision};

/// The Cache Storage cache the package keeps models in.
pub const CACHE_NAME: &str = "nemotron-audio-web-models";

/// The stored response's header that gives the file's size in bytes.
pub(crate) const SIZE: &str = "x-nemotron-size";
const STORED: &str = "x-nemotron-stored";
const LENGTH: &str = "x-nemotron-length";

/// A warning on the console: the package's, about something it went on without.
pub(crate) fn warn(message: &str) {
    web_sys::console::warn_1(&format!("nemotron-audio-web: {message}").into());
}

/// A JS exception or rejection as text (an `Error`'s or `DOMException`'s name and message).
pub(crate) fn describe(error: &JsValue) -> String {
    let field = |key: &str| Reflect::get(error, &key.into()).ok().and_then(|v| v.as_string());
    match (field("name"), field("message")) {
        (Some(name), Some(message)) => format!("{name}: {message}"),
        _ => error.as_string().unwrap_or_else(|| format!("{error:?}")),
    }
}

/// A header's value, where the headers have it.
pub(crate) fn header(headers: &Headers, name: &str) -> Option<String> {
    headers.get(name).ok().flatten()
}

/// What the server's response says of its file.
pub(crate) fn validators(response: &Response) -> Validators {
    let headers = response.headers();
    Validators {
        etag: header(&headers, "etag"),
        length: header(&headers, "content-length").and_then(|n| n.parse().ok()),
        last_modified: header(&headers, "last-modified"),
    }
}

/// The package's cache, opened.
pub(crate) struct ModelStore {
    cache: Cache,
}

/// A stored file: its response (the body unread) and what the server said of it when it was stored.
pub(crate) struct Stored {
    pub response: Response,
    pub validators: Validators,
}

/// The global scope's Cache Storage (`caches`), where it has one.
fn cache_storage() -> Option<CacheStorage> {
    let caches = Reflect::get(&js_sys::global(), &"caches".into()).ok()?;
    caches.dyn_into::<CacheStorage>().ok()
}

impl ModelStore {
    /// The package's cache; `Err` says why there is none here.
    pub async fn open() -> Result<Self, String> {
        let caches = cache_storage()
            .ok_or("this context has no Cache Storage (`caches`: a secure context, https or localhost, has one)")?;
        let cache = JsFuture::from(caches.open(CACHE_NAME)).await;
        let cache = cache.map_err(|e| format!("Cache Storage refused to open ({})", describe(&e)))?;
        Ok(Self { cache: cache.unchecked_into() })
    }

    /// The stored file of `url`, if any (a failed lookup is none).
    pub async fn lookup(&self, url: &str) -> Option<Stored> {
        let found = JsFuture::from(self.cache.match_with_str(url)).await.ok()?;
        let response = found.dyn_into::<Response>().ok()?;
        let headers = response.headers();
        let validators = Validators {
            etag: header(&headers, "etag"),
            length: header(&headers, LENGTH).and_then(|n| n.parse().ok()),
            last_modified: header(&headers, "last-modified"),
        };
        Some(Stored { response, validators })
    }

    /// Keeps `bytes`, downloaded from `url`, with what the server said of them. A failure (the site's storage
    /// quota exceeded, above all) is a warning: the model is loaded, only not kept.
    pub async fn keep(&self, url: &str, bytes: &Arc<[u8]>, server: &Validators) {
        let headers = Headers::new().ok();
        let Some(headers) = headers else { return };
        let mut fields = vec![
            ("content-type", "application/octet-stream".to_string()),
            (SIZE, bytes.len().to_string()),
            (STORED, Date::now().to_string()),
        ];
        fields.extend(server.etag.clone().map(|etag| ("etag", etag)));
        fields.extend(server.length.map(|length| (LENGTH, length.to_string())));
        fields.extend(server.last_modified.clone().map(|date| ("last-modified", date)));
        for (name, value) in fields {
            let _ = headers.set(name, &value);
        }
        let init = ResponseInit::new();
        init.set_headers_headers(&headers);
        // SAFETY: the view is read by the Response's constructor, which copies the bytes before it returns; nothing
        // allocates in wasm memory (which would move it) while the view lives.
        let response = unsafe {
            let view = Uint8Array::view(bytes);
            Response::new_with_opt_buffer_source_and_init(Some(&view), &init)
        };
        let stored = match response {
            Ok(response) => JsFuture::from(self.cache.put_with_str(url, &response)).await.map(drop),
            Err(error) => Err(error),
        };
        if let Err(error) = stored {
            let megabytes = bytes.len() as f64 / 1e6;
            let why = match Reflect::get(&error, &"name".into()).ok().and_then(|n| n.as_string()).as_deref() {
                Some("QuotaExceededError") => "the browser's storage quota for this site is too small for it",
                _ => "the browser's Cache Storage refused it",
            };
            warn(&format!("{url} ({megabytes:.1} MB) is loaded but not cached: {why} ({})", describe(&error)));
        }
    }

    /// The stored requests, with their responses.
    async fn entries(&self) -> Result<Vec<(Request, Response)>, JsValue> {
        let requests: Array = JsFuture::from(self.cache.keys()).await?.unchecked_into();
        let mut entries = Vec::new();
        for request in requests.iter() {
            let request: Request = request.unchecked_into();
            let response = JsFuture::from(self.cache.match_with_request(&request)).await?;
            if let Ok(response) = response.dyn_into::<Response>() {
                entries.push((request, response));
            }
        }
        Ok(entries)
    }
}

/// `url` made absolute against the global scope's location (a window's page, a worker's script), as `fetch`
/// resolves it.
pub(crate) fn absolute(url: &str) -> Result<String, JsValue> {
    let location = Reflect::get(&js_sys::global(), &"location".into()).ok();
    let base = location.and_then(|l| Reflect::get(&l, &"href".into()).ok()).and_then(|href| href.as_string());
    let resolved = match base {
        Some(base) => web_sys::Url::new_with_base(url, &base),
        None => web_sys::Url::new(url),
    };
    resolved.map(|u| u.href()).map_err(|_| own_error("url", &format!("`{url}` is not a URL")))
}

/// The models `Diarizer.fromUrl` keeps in the browser's Cache Storage, file by file.
#[wasm_bindgen]
pub struct ModelCache {}

#[wasm_bindgen]
impl ModelCache {
    /// The stored files, by URL: `[{ url, size, etag, lastModified, stored, revision }]` (`size` in bytes, `etag`
    /// and `lastModified` as the server sent them or `null`, `stored` a `Date`, `revision` a Hugging Face Hub URL's
    /// revision or `null`). Empty where there is no Cache Storage.
    pub async fn list() -> Result<Array, JsValue> {
        let Ok(store) = ModelStore::open().await else { return Ok(Array::new()) };
        let mut entries = store.entries().await?;
        entries.sort_by_key(|(request, _)| request.url());
        let list = Array::new();
        for (request, response) in entries {
            let (url, headers) = (request.url(), response.headers());
            let number = |name| header(&headers, name).and_then(|n| n.parse::<f64>().ok());
            let text = |name| header(&headers, name).map_or(JsValue::NULL, JsValue::from);
            let entry = Object::new();
            set(&entry, "url", url.as_str());
            set(&entry, "size", number(SIZE).unwrap_or(0.0));
            set(&entry, "etag", text("etag"));
            set(&entry, "lastModified", text("last-modified"));
            set(&entry, "stored", Date::new(&number(STORED).unwrap_or(0.0).into()));
            set(&entry, "revision", hub_revision(&url).map_or(JsValue::NULL, JsValue::from));
            list.push(&entry);
        }
        Ok(list)
    }

    /// Removes the stored files of `url` (a file's URL, or a folder's: every file under it; relative URLs resolved
    /// as `fetch` resolves them), or, without one, every stored file; resolves to the number removed.
    pub async fn clear(url: Option<String>) -> Result<u32, JsValue> {
        let Ok(store) = ModelStore::open().await else { return Ok(0) };
        let target = url.as_deref().map(absolute).transpose()?;
        let mut removed = 0;
        for (request, _) in store.entries().await? {
            if target.as_deref().is_none_or(|target| covers(target, &request.url())) {
                let deleted = JsFuture::from(store.cache.delete_with_request(&request)).await?;
                removed += u32::from(deleted.as_bool() == Some(true));
            }
        }
        Ok(removed)
    }
}
