//! Text → `manifest::parse_manifest`: JSON lines, fields, paths, ids.
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;
use nemotron_engine::io::manifest::parse_manifest;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    if let Ok(entries) = parse_manifest(&text, Path::new("/data"), "fuzz.jsonl") {
        for entry in entries {
            assert!(entry.offset >= 0.0 && entry.duration.is_none_or(|d| d > 0.0));
            assert!(!entry.id.is_empty() && !entry.id.contains('/'));
        }
    }
});
