//! A stand-in for the Hugging Face Hub on 127.0.0.1, answering the file-resolution route
//! `GET /{owner}/{name}/resolve/{revision}/{file}` as the Hub does for `hf-hub`'s client: `ETag`, `X-Repo-Commit`,
//! byte ranges (`Content-Range`), and `X-Error-Code` (`RepoNotFound` with 401, `RevisionNotFound` and
//! `EntryNotFound` with 404) for what it lacks. It records every request, so tests can check what was fetched.
//! Also: the bundled tiny checkpoint split into shards, with a language-model shard that must never be fetched.

#![allow(dead_code)] // each test binary uses a different part of this module

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use nemotron_testkit::towers::Checkpoint;
use nemotron_testkit::towers::tensor_file::{Tensor, serialize};

/// Files of one repository at its single commit.
pub type Files = HashMap<String, Vec<u8>>;

/// The commit every stand-in repository is at.
pub const COMMIT: &str = "0123456789abcdef0123456789abcdef01234567";

pub struct StandInHub {
    /// `http://127.0.0.1:<port>`.
    pub endpoint: String,
    requests: Arc<Mutex<Vec<String>>>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl StandInHub {
    /// Serves `repos` (`owner/name` → files) until dropped.
    pub fn start(repos: HashMap<String, Files>) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1");
        let endpoint = format!("http://{}", listener.local_addr().expect("address"));
        let requests = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let (log, stopping) = (requests.clone(), stop.clone());
        let thread = std::thread::spawn(move || {
            for stream in listener.incoming() {
                if stopping.load(Ordering::SeqCst) {
                    break;
                }
                if let Ok(stream) = stream {
                    answer(stream, &repos, &log);
                }
            }
        });
        Self { endpoint, requests, stop, thread: Some(thread) }
    }

    /// The paths asked for so far, in order.
    pub fn requests(&self) -> Vec<String> {
        self.requests.lock().expect("request log").clone()
    }
}

impl Drop for StandInHub {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wakes the accept loop so it sees the flag.
        let _ = TcpStream::connect(self.endpoint.trim_start_matches("http://"));
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// One request, one response, then the connection closes.
fn answer(mut stream: TcpStream, repos: &HashMap<String, Files>, log: &Mutex<Vec<String>>) {
    let mut reader = BufReader::new(stream.try_clone().expect("clone stream"));
    let mut request_line = String::new();
    if reader.read_line(&mut request_line).is_err() {
        return;
    }
    let mut range = None;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
            break;
        }
        if let Some((name, value)) = line.split_once(':')
            && name.eq_ignore_ascii_case("range")
        {
            range = value.trim().strip_prefix("bytes=").map(str::to_owned);
        }
    }
    let path = request_line.split_whitespace().nth(1).unwrap_or("").to_owned();
    log.lock().expect("request log").push(path.clone());
    let respond = |stream: &mut TcpStream, status: &str, headers: &[(&str, String)], body: &[u8]| {
        let mut head = format!("HTTP/1.1 {status}\r\nContent-Length: {}\r\nConnection: close\r\n", body.len());
        for (name, value) in headers {
            head.push_str(&format!("{name}: {value}\r\n"));
        }
        head.push_str("\r\n");
        let _ = stream.write_all(head.as_bytes());
        let _ = stream.write_all(body);
    };
    let parts: Vec<&str> = path.trim_start_matches('/').splitn(5, '/').collect();
    let [owner, name, "resolve", revision, file] = parts.as_slice() else {
        return respond(&mut stream, "404 Not Found", &[], b"no such route");
    };
    let error = |code: &str| vec![("X-Error-Code", code.to_owned())];
    let Some(files) = repos.get(&format!("{owner}/{name}")) else {
        return respond(&mut stream, "401 Unauthorized", &error("RepoNotFound"), b"Repository Not Found");
    };
    if *revision != "main" && *revision != COMMIT {
        return respond(&mut stream, "404 Not Found", &error("RevisionNotFound"), b"Invalid rev id");
    }
    let Some(bytes) = files.get(*file) else {
        return respond(&mut stream, "404 Not Found", &error("EntryNotFound"), b"Entry not found");
    };
    let start: usize = range.as_deref().and_then(|r| r.split('-').next()?.parse().ok()).unwrap_or(0);
    let end = match range.as_deref().and_then(|r| r.split('-').nth(1)).filter(|e| !e.is_empty()) {
        Some(end) => end.parse::<usize>().map_or(bytes.len(), |e| e + 1),
        None => bytes.len(),
    }
    .min(bytes.len());
    let body = &bytes[start.min(end)..end];
    let headers = vec![
        ("ETag", format!("\"{}\"", digest(bytes))),
        ("X-Repo-Commit", COMMIT.to_owned()),
        ("Content-Range", format!("bytes {start}-{}/{}", end.max(1) - 1, bytes.len())),
    ];
    respond(&mut stream, "206 Partial Content", &headers, body);
}

/// A 64-hex-digit content tag (FNV-1a under four seeds), standing in for the Hub's SHA-256 ETags.
fn digest(bytes: &[u8]) -> String {
    (0..4u64)
        .map(|seed| {
            let hash = bytes
                .iter()
                .fold(0xcbf2_9ce4_8422_2325 ^ seed, |h, &b| (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3));
            format!("{hash:016x}")
        })
        .collect()
}

/// The bundled tiny checkpoint (`testdata/reference/tiny-release-chunks`) as one file: `config.json` and
/// `model.safetensors`.
pub fn single_file_repo(case: &Path) -> Files {
    let mut files = Files::new();
    for name in ["config.json", "model.safetensors"] {
        files.insert(name.to_owned(), std::fs::read(case.join(name)).expect("read bundled model"));
    }
    files
}

/// The name of the language-model shard of [`sharded_repo`].
pub const LM_SHARD: &str = "model-00004-of-00004.safetensors";

/// The bundled tiny checkpoint split over three shards (tensors dealt round-robin in name order) with
/// `model.safetensors.index.json`, plus a fourth shard of language-model tensors that the audio module never reads,
/// and the alignment tokenizer.
pub fn sharded_repo(case: &Path) -> Files {
    let checkpoint = Checkpoint::open(&case.join("model.safetensors")).expect("open bundled model");
    let mut names: Vec<String> = checkpoint.names().map(str::to_owned).collect();
    names.sort();
    let mut shards: Vec<Vec<(String, Tensor)>> = (0..3).map(|_| Vec::new()).collect();
    let mut weight_map = serde_json::Map::new();
    for (i, name) in names.iter().enumerate() {
        let t = checkpoint.tensor(name).expect("listed tensor");
        let tensor = Tensor { dtype: t.dtype, shape: t.shape.to_vec(), bytes: t.bytes.to_vec() };
        shards[i % 3].push((name.clone(), tensor));
        weight_map.insert(name.clone(), format!("model-0000{}-of-00004.safetensors", i % 3 + 1).into());
    }
    let lm: Vec<(String, Tensor)> = ["language_model.model.embed_tokens.weight", "language_model.lm_head.weight"]
        .iter()
        .map(|name| (name.to_string(), Tensor::f32(vec![4, 8], &[0.5; 32])))
        .collect();
    for (name, _) in &lm {
        weight_map.insert(name.clone(), LM_SHARD.into());
    }
    let mut files = Files::new();
    for (i, shard) in shards.iter().enumerate() {
        files.insert(
            format!("model-0000{}-of-00004.safetensors", i + 1),
            serialize(shard, Default::default()).expect("shard"),
        );
    }
    files.insert(LM_SHARD.to_owned(), serialize(&lm, Default::default()).expect("LM shard"));
    let index = serde_json::json!({ "metadata": { "total_size": 0 }, "weight_map": weight_map });
    files.insert("model.safetensors.index.json".to_owned(), index.to_string().into_bytes());
    for name in ["config.json", ALIGNMENT_TOKENIZER] {
        files.insert(name.to_owned(), std::fs::read(case.join(name)).expect("read bundled file"));
    }
    files
}

/// The alignment tokenizer of [`sharded_repo`] (the single-file repo has none).
pub const ALIGNMENT_TOKENIZER: &str = "alignment_tokenizer/tokenizer.json";
