//! NeMo-style manifests: JSON lines, one recording (or a stretch of one) per line.
//!
//! ```text
//! {"audio_filepath": "calls/a.wav", "offset": 12.5, "duration": 30, "uniq_id": "a-0001", "text": "…"}
//! ```
//!
//! `audio_filepath` is required (relative paths are resolved against the manifest's folder); `offset` (seconds,
//! default 0) and `duration` (seconds, default: to the end; `null` allowed) cut the recording; `uniq_id` names the
//! entry's outputs (default: the file name without its extension). Other fields are kept as they are. Blank lines
//! are skipped. Ids must be unique in a manifest: two entries with one id are refused before any work.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

/// A manifest that cannot be read or used, naming the file and line.
#[derive(Debug, thiserror::Error)]
pub enum ManifestError {
    /// The file could not be read.
    #[error("cannot read manifest {path}: {source}")]
    Read {
        /// The manifest.
        path: String,
        /// The I/O error.
        source: std::io::Error,
    },
    /// A line that is not a usable entry.
    #[error("{path} line {line}: {message}")]
    Line {
        /// The manifest.
        path: String,
        /// 1-based line number.
        line: usize,
        /// What is wrong.
        message: String,
    },
    /// Two entries with one id (their outputs would overwrite each other).
    #[error(
        "{path} line {line}: uniq_id `{id}` is used by line {first} too (ids name the outputs; give each entry its own uniq_id)"
    )]
    DuplicateId {
        /// The manifest.
        path: String,
        /// The id.
        id: String,
        /// The line that used it first.
        first: usize,
        /// The line that used it again.
        line: usize,
    },
}

/// One recording to process.
#[derive(Clone, Debug, PartialEq)]
pub struct ManifestEntry {
    /// 1-based line in the manifest (or position in a list of inputs).
    pub line: usize,
    /// The audio file, resolved against the manifest's folder.
    pub audio: PathBuf,
    /// Seconds skipped at the start.
    pub offset: f64,
    /// Seconds kept after the offset (`None`: to the end).
    pub duration: Option<f64>,
    /// Names the entry's outputs: `uniq_id`, or the file name without its extension.
    pub id: String,
    /// The entry as written (all fields, unknown ones included).
    pub fields: Map<String, Value>,
}

impl ManifestEntry {
    /// An entry for a whole audio file given directly (not in a manifest), numbered `line`.
    pub fn for_file(audio: &Path, line: usize) -> Result<Self, String> {
        let id = derived_id(audio)?;
        let mut fields = Map::new();
        fields.insert("audio_filepath".into(), Value::String(audio.display().to_string()));
        Ok(Self { line, audio: audio.to_path_buf(), offset: 0.0, duration: None, id, fields })
    }
}

/// Reads and checks the manifest at `path`.
pub fn read_manifest(path: &Path) -> Result<Vec<ManifestEntry>, ManifestError> {
    let text = std::fs::read_to_string(path)
        .map_err(|source| ManifestError::Read { path: path.display().to_string(), source })?;
    let base = path.parent().unwrap_or(Path::new(""));
    parse_manifest(&text, base, &path.display().to_string())
}

/// Parses manifest `text`, resolving relative audio paths against `base`; `name` names it in errors.
pub fn parse_manifest(text: &str, base: &Path, name: &str) -> Result<Vec<ManifestEntry>, ManifestError> {
    let mut entries = Vec::new();
    let mut lines_of_ids: HashMap<String, usize> = HashMap::new();
    for (i, line) in text.lines().enumerate() {
        let number = i + 1;
        if line.trim().is_empty() {
            continue;
        }
        let bad = |message: String| ManifestError::Line { path: name.to_owned(), line: number, message };
        let entry = parse_entry(line, base, number).map_err(bad)?;
        if let Some(&first) = lines_of_ids.get(&entry.id) {
            return Err(ManifestError::DuplicateId { path: name.to_owned(), id: entry.id, first, line: number });
        }
        lines_of_ids.insert(entry.id.clone(), number);
        entries.push(entry);
    }
    Ok(entries)
}

fn parse_entry(line: &str, base: &Path, number: usize) -> Result<ManifestEntry, String> {
    let value: Value = serde_json::from_str(line).map_err(|e| format!("not JSON: {e}"))?;
    let Value::Object(fields) = value else { return Err("not a JSON object".into()) };
    let audio = match fields.get("audio_filepath") {
        Some(Value::String(path)) if !path.is_empty() => base.join(path),
        Some(_) => return Err("audio_filepath is not a non-empty string".into()),
        None => return Err("no audio_filepath".into()),
    };
    let seconds = |key: &str| -> Result<Option<f64>, String> {
        match fields.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Number(n)) => n.as_f64().map(Some).ok_or_else(|| format!("{key} is not a number")),
            Some(other) => Err(format!("{key} is {other}, not a number of seconds")),
        }
    };
    let offset = seconds("offset")?.unwrap_or(0.0);
    if !(offset.is_finite() && offset >= 0.0) {
        return Err(format!("offset {offset} is not ≥ 0"));
    }
    let duration = seconds("duration")?;
    if let Some(d) = duration.filter(|d| !(d.is_finite() && *d > 0.0)) {
        return Err(format!("duration {d} is not > 0"));
    }
    let id = match fields.get("uniq_id") {
        None | Some(Value::Null) => derived_id(&audio)?,
        Some(Value::String(id)) => checked_id(id)?,
        Some(Value::Number(n)) => checked_id(&n.to_string())?,
        Some(other) => return Err(format!("uniq_id is {other}, not a string")),
    };
    Ok(ManifestEntry { line: number, audio, offset, duration, id, fields })
}

/// The file name without its extension.
fn derived_id(audio: &Path) -> Result<String, String> {
    let stem = audio.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    checked_id(&stem).map_err(|e| format!("no uniq_id, and none can be made from `{}`: {e}", audio.display()))
}

/// An id usable as a file name.
fn checked_id(id: &str) -> Result<String, String> {
    if id.is_empty() || id == "." || id == ".." || id.contains(['/', '\\', '\0']) || id.len() > 200 {
        return Err(format!(
            "uniq_id `{id}` cannot name a file (empty, `.`, `..`, a path separator, or over 200 bytes)"
        ));
    }
    Ok(id.to_owned())
}
