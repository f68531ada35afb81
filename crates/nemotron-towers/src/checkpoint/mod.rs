//! Safetensors checkpoints: one `model.safetensors`, or shards listed by `model.safetensors.index.json`. The files
//! come from a folder, mapped into memory on native targets ([`Checkpoint::open`]), or are handed over by name
//! ([`CheckpointFiles::Named`]: e.g. by a browser), both read by one rule ([`CheckpointFiles`]); a buffer can also be
//! read as one file ([`Checkpoint::from_bytes`]). Shards are opened on first use, so a release checkpoint's
//! language-model shards are never touched; tensor bytes are read only when asked for.

use std::borrow::Cow;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use safetensors::{Dtype, SafeTensors, tensor::TensorInfo};

mod files;

pub use files::{CONFIG_FILE, CheckpointFiles, NamedFiles};

/// A checkpoint that cannot be read, or that does not hold what the config describes.
#[derive(Debug, thiserror::Error)]
pub enum CheckpointError {
    /// A shard or the index could not be opened, mapped or parsed.
    #[error("{path}: {message}")]
    File {
        /// The shard, single file or `model.safetensors.index.json` at fault.
        path: String,
        /// What went wrong (I/O error, malformed header or index, shard path escaping the directory).
        message: String,
    },
    /// The directory holds no safetensors weights.
    #[error("{dir}: neither model.safetensors nor model.safetensors.index.json exists")]
    NoWeights {
        /// The checkpoint directory that was searched.
        dir: String,
    },
    /// Tensors missing, misshapen or of an unsupported dtype, all reported at once.
    #[error("{dir}: {}", listed(problems))]
    Tensors {
        /// The checkpoint directory.
        dir: String,
        /// One line per offending tensor, naming it and the expected shape or dtype.
        problems: Vec<String>,
    },
    /// A tensor read as numbers is stored in a dtype other than BF16, F16 or F32.
    #[error("tensor `{name}` in {path} has dtype {dtype:?}; only BF16, F16 and F32 are supported")]
    Dtype {
        /// The checkpoint key of the tensor.
        name: String,
        /// The shard file holding it.
        path: String,
        /// The stored dtype.
        dtype: Dtype,
    },
    /// A Transcribe run was asked of a standalone diarization checkpoint (no ASR tower tensors).
    #[error(
        "{dir}: the weights hold only a diarizer (no ASR tower), but the config or the call needs a Transcribe model"
    )]
    DiarizerOnly {
        /// The checkpoint directory.
        dir: String,
    },
    /// Word timestamps were asked of a checkpoint without the word-timestamp head (`ctc_timestamp.*` or
    /// `model.word_timestamp_encoder.*`).
    #[error("{dir}: the checkpoint has no word-timestamp head")]
    NoWordTimestampHead {
        /// The checkpoint directory.
        dir: String,
    },
    /// None of the probe tensors of the NeMo, Transformers or standalone diarizer layouts is present.
    #[error("{dir}: cannot tell the tensor naming scheme (no audio tensors found; looked for {looked_for})")]
    UnknownNames {
        /// The checkpoint directory.
        dir: String,
        /// The probe tensor names tried, back-quoted and comma-separated.
        looked_for: String,
    },
}

/// The index of a sharded checkpoint: tensor name → shard file.
pub const INDEX_FILE: &str = "model.safetensors.index.json";
/// The weights of a checkpoint in one file.
pub const SINGLE_FILE: &str = "model.safetensors";

/// The `weight_map` (tensor → shard file) of the index `text`, read from `index`; a shard path that leaves the
/// checkpoint's folder is refused: `..`, a root (`/`, `\`), or a colon (a drive, or a URL's scheme where the files
/// are fetched), on every target alike.
fn weight_map(index: &Path, text: &str) -> Result<HashMap<String, String>, CheckpointError> {
    #[derive(serde::Deserialize)]
    struct Index {
        weight_map: HashMap<String, String>,
    }
    let parsed: Index = serde_json::from_str(text).map_err(|e| file_error(index, e.to_string()))?;
    let leaves = |file: &&String| {
        file.contains("..")
            || file.contains(':')
            || file.starts_with(['/', '\\'])
            || Path::new(file.as_str()).is_absolute()
    };
    if let Some(file) = parsed.weight_map.values().find(leaves) {
        return Err(file_error(index, format!("shard path `{file}` leaves the checkpoint directory")));
    }
    Ok(parsed.weight_map)
}

/// One tensor as stored: dtype, shape, little-endian bytes.
#[derive(Clone, Copy, Debug)]
pub struct TensorRef<'a> {
    /// Element type as stored (BF16 for the release's audio matrices; see docs/model.md §11).
    pub dtype: Dtype,
    /// Dimensions as stored, PyTorch order (`[out, in]` for linear weights).
    pub shape: &'a [usize],
    /// The raw little-endian element bytes, borrowed from the mapped shard.
    pub bytes: &'a [u8],
}

struct Shard {
    path: PathBuf,
    bytes: Bytes,
    data_start: usize,
    tensors: HashMap<String, TensorInfo>,
    metadata: HashMap<String, String>,
}

/// Where a shard's bytes live.
enum Bytes {
    /// A file mapped into memory (native targets).
    #[cfg(not(target_arch = "wasm32"))]
    Mapped(memmap2::Mmap),
    /// A buffer the checkpoint owns.
    Owned(Vec<u8>),
    /// A buffer the caller handed over and may share.
    Shared(Arc<[u8]>),
}

impl std::ops::Deref for Bytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            #[cfg(not(target_arch = "wasm32"))]
            Bytes::Mapped(m) => m,
            Bytes::Owned(v) => v,
            Bytes::Shared(v) => v,
        }
    }
}

/// An open checkpoint directory (or a single `.safetensors` file).
pub struct Checkpoint {
    /// What errors about the whole checkpoint name (its folder).
    dir: PathBuf,
    /// Each shard: its file as the index names it, and its path as errors name it.
    shard_files: Vec<(String, PathBuf)>,
    shards: Vec<OnceLock<Result<Shard, String>>>,
    /// Tensor name → shard index (all names of a single file, or the index's weight map).
    locations: HashMap<String, usize>,
    /// Where a shard not yet read comes from.
    source: ShardSource,
}

/// Where a checkpoint's shards are read from when first used.
enum ShardSource {
    /// Files opened at their paths.
    Disk,
    /// Files handed over by name: one not handed over is an error, never a file opened instead.
    Named(NamedFiles),
}

impl Checkpoint {
    /// Opens `path`: a directory with `model.safetensors` or a sharded index ([`CheckpointFiles::checkpoint`]'s
    /// rule), or one file.
    pub fn open(path: &Path) -> Result<Self, CheckpointError> {
        if path.is_file() {
            return Self::single(path.parent().unwrap_or(Path::new(".")), path);
        }
        CheckpointFiles::Folder(path.to_path_buf()).checkpoint()
    }

    /// A checkpoint held in memory (a serialized safetensors buffer), e.g. a generated one.
    pub fn from_bytes(label: &str, bytes: Vec<u8>) -> Result<Self, CheckpointError> {
        let path = PathBuf::from(label);
        let shard = parse_shard(&path, Bytes::Owned(bytes)).map_err(|message| file_error(&path, message))?;
        Ok(Self::from_shard(Path::new("."), shard))
    }

    fn single(dir: &Path, file: &Path) -> Result<Self, CheckpointError> {
        let shard = open_shard(file).map_err(|message| file_error(file, message))?;
        Ok(Self::from_shard(dir, shard))
    }

    /// A single file whose bytes the caller shares; `path` names it in errors, `dir` the checkpoint.
    fn shared(dir: &Path, path: PathBuf, bytes: Arc<[u8]>) -> Result<Self, CheckpointError> {
        let shard = parse_shard(&path, Bytes::Shared(bytes)).map_err(|message| file_error(&path, message))?;
        Ok(Self::from_shard(dir, shard))
    }

    fn from_shard(dir: &Path, shard: Shard) -> Self {
        let file = shard.path.display().to_string();
        let shard_files = vec![(file, shard.path.clone())];
        let locations = shard.tensors.keys().map(|name| (name.clone(), 0)).collect();
        let cell = OnceLock::new();
        let _ = cell.set(Ok(shard));
        Self { dir: dir.to_path_buf(), shard_files, shards: vec![cell], locations, source: ShardSource::Disk }
    }

    /// The `__metadata__` of a single-file checkpoint (empty for sharded ones).
    pub fn metadata(&self) -> HashMap<String, String> {
        match self.shards.as_slice() {
            [one] => one.get().and_then(|s| s.as_ref().ok()).map(|s| s.metadata.clone()).unwrap_or_default(),
            _ => HashMap::new(),
        }
    }

    /// A sharded checkpoint from the text of its `model.safetensors.index.json`; the shards it
    /// names are opened from `dir` on first use.
    pub fn from_index(dir: &Path, text: &str) -> Result<Self, CheckpointError> {
        Self::indexed(dir, text, |file| dir.join(file), ShardSource::Disk)
    }

    /// A sharded checkpoint of index `text`: `dir` names it in errors, `path` each file, `source` gives the shards.
    fn indexed(
        dir: &Path,
        text: &str,
        path: impl Fn(&str) -> PathBuf,
        source: ShardSource,
    ) -> Result<Self, CheckpointError> {
        let mut shard_files: Vec<(String, PathBuf)> = Vec::new();
        // Shard file → its index in `shard_files`: a hashed lookup, since an index may name many shards.
        let mut shard_numbers: HashMap<String, usize> = HashMap::new();
        let mut locations = HashMap::new();
        for (name, file) in weight_map(&path(INDEX_FILE), text)? {
            let i = match shard_numbers.get(&file) {
                Some(&i) => i,
                None => {
                    shard_numbers.insert(file.clone(), shard_files.len());
                    shard_files.push((file.clone(), path(&file)));
                    shard_files.len() - 1
                }
            };
            locations.insert(name, i);
        }
        let shards = shard_files.iter().map(|_| OnceLock::new()).collect();
        Ok(Self { dir: dir.to_path_buf(), shard_files, shards, locations, source })
    }

    /// The directory the checkpoint was opened from.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// True when the checkpoint lists `name`.
    pub fn contains(&self, name: &str) -> bool {
        self.locations.contains_key(name)
    }

    /// The file holding `name` (a shard of a sharded checkpoint, which need not exist yet), or `None` when absent.
    pub fn shard_path(&self, name: &str) -> Option<&Path> {
        self.locations.get(name).map(|&i| self.shard_files[i].1.as_path())
    }

    /// The files holding the tensors `names` (as the index names them; sorted, each once), those it does not list
    /// left out.
    pub(crate) fn files_holding(&self, names: &[String]) -> Vec<String> {
        let mut files: Vec<String> =
            names.iter().filter_map(|name| self.locations.get(name)).map(|&i| self.shard_files[i].0.clone()).collect();
        files.sort();
        files.dedup();
        files
    }

    /// Names of all tensors (from the index for sharded checkpoints).
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.locations.keys().map(String::as_str)
    }

    fn shard(&self, i: usize) -> Result<&Shard, CheckpointError> {
        let (file, path) = &self.shard_files[i];
        let open = || match &self.source {
            ShardSource::Disk => open_shard(path),
            ShardSource::Named(named) => match named.get(file) {
                Some(bytes) => parse_shard(path, Bytes::Shared(bytes.clone())),
                None => Err("this shard was not handed over with the checkpoint".to_owned()),
            },
        };
        self.shards[i].get_or_init(open).as_ref().map_err(|message| file_error(path, message.clone()))
    }

    /// The stored tensor `name`.
    pub fn tensor(&self, name: &str) -> Result<TensorRef<'_>, CheckpointError> {
        let missing = || CheckpointError::Tensors {
            dir: self.dir.display().to_string(),
            problems: vec![format!("missing tensor `{name}`")],
        };
        let &i = self.locations.get(name).ok_or_else(missing)?;
        let shard = self.shard(i)?;
        let info = shard.tensors.get(name).ok_or_else(missing)?;
        let (start, end) = info.data_offsets;
        Ok(TensorRef {
            dtype: info.dtype,
            shape: &info.shape,
            bytes: &shard.bytes[shard.data_start + start..shard.data_start + end],
        })
    }

    /// Shape of `name`, or `None` when absent.
    pub fn shape(&self, name: &str) -> Result<Option<Vec<usize>>, CheckpointError> {
        if !self.contains(name) {
            return Ok(None);
        }
        Ok(Some(self.tensor(name)?.shape.to_vec()))
    }

    /// bf16 bit patterns of `name`, borrowed from the map when stored as BF16, otherwise
    /// converted (round to nearest even) with a logged note.
    pub fn bf16(&self, name: &str) -> Result<Cow<'_, [u16]>, CheckpointError> {
        let t = self.tensor(name)?;
        match t.dtype {
            Dtype::BF16 => Ok(match bytemuck::try_cast_slice(t.bytes) {
                Ok(bits) => Cow::Borrowed(bits),
                Err(_) => Cow::Owned(t.bytes.chunks_exact(2).map(|b| u16::from_le_bytes([b[0], b[1]])).collect()),
            }),
            Dtype::F16 | Dtype::F32 => {
                log::info!("`{name}` is stored as {:?}; converting to bf16 for the GPU", t.dtype);
                Ok(Cow::Owned(self.f32(name)?.iter().map(|&v| half::bf16::from_f32(v).to_bits()).collect()))
            }
            dtype => Err(self.dtype_error(name, dtype)),
        }
    }

    /// f32 values of `name` (BF16 and F16 widen exactly).
    pub fn f32(&self, name: &str) -> Result<Vec<f32>, CheckpointError> {
        let t = self.tensor(name)?;
        let words = |n: usize| t.bytes.chunks_exact(n);
        Ok(match t.dtype {
            Dtype::F32 => words(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect(),
            Dtype::BF16 => words(2).map(|b| half::bf16::from_le_bytes([b[0], b[1]]).to_f32()).collect(),
            Dtype::F16 => words(2).map(|b| half::f16::from_le_bytes([b[0], b[1]]).to_f32()).collect(),
            dtype => return Err(self.dtype_error(name, dtype)),
        })
    }

    /// f64 values of `name` (any float dtype), for reference data.
    pub fn f64(&self, name: &str) -> Result<Vec<f64>, CheckpointError> {
        let t = self.tensor(name)?;
        if t.dtype == Dtype::F64 {
            return Ok(t.bytes.chunks_exact(8).map(|b| f64::from_le_bytes(b.try_into().unwrap_or([0; 8]))).collect());
        }
        Ok(self.f32(name)?.into_iter().map(f64::from).collect())
    }

    fn dtype_error(&self, name: &str, dtype: Dtype) -> CheckpointError {
        let path = self.locations.get(name).map(|&i| self.shard_files[i].1.display().to_string()).unwrap_or_default();
        CheckpointError::Dtype { name: name.to_string(), path, dtype }
    }

    /// Checks every `(name, shape)` for presence, shape and a supported dtype, and reports all
    /// problems at once.
    pub fn check(&self, expected: &[(String, Vec<usize>)]) -> Result<(), CheckpointError> {
        let mut problems = Vec::new();
        for (name, shape) in expected {
            if !self.contains(name) {
                problems.push(format!("missing tensor `{name}` (expected shape {shape:?})"));
                continue;
            }
            match self.tensor(name) {
                Ok(t) if t.shape != shape.as_slice() => {
                    problems.push(format!("tensor `{name}` has shape {:?}, expected {shape:?}", t.shape));
                }
                Ok(t) if !matches!(t.dtype, Dtype::BF16 | Dtype::F16 | Dtype::F32) => {
                    problems
                        .push(format!("tensor `{name}` has dtype {:?}; only BF16, F16, F32 are supported", t.dtype));
                }
                Ok(_) => {}
                Err(CheckpointError::File { path, message }) => problems.push(format!("{path}: {message}")),
                Err(e) => problems.push(e.to_string()),
            }
        }
        if problems.is_empty() {
            Ok(())
        } else {
            Err(CheckpointError::Tensors { dir: self.dir.display().to_string(), problems })
        }
    }
}

/// One problem on the error's line; several on lines of their own, the first few of them (a
/// config that asks for 400 layers of a 2-layer checkpoint misses thousands of tensors).
fn listed(problems: &[String]) -> String {
    const SHOWN: usize = 12;
    match problems {
        [one] => one.clone(),
        _ => {
            let mut text = format!("{} tensor problems:", problems.len());
            for problem in problems.iter().take(SHOWN) {
                text.push_str(&format!("\n  {problem}"));
            }
            if problems.len() > SHOWN {
                text.push_str(&format!("\n  … and {} more", problems.len() - SHOWN));
            }
            text
        }
    }
}

fn file_error(path: &Path, message: impl Into<String>) -> CheckpointError {
    CheckpointError::File { path: path.display().to_string(), message: message.into() }
}

/// A shard file, mapped into memory.
#[cfg(not(target_arch = "wasm32"))]
fn open_shard(path: &Path) -> Result<Shard, String> {
    let file = std::fs::File::open(path).map_err(|e| e.to_string())?;
    // SAFETY: the map is read-only; a checkpoint modified while open is the caller's mistake and
    // can at worst yield wrong values, which the shape/dtype checks do not hide.
    let mmap = unsafe { memmap2::Mmap::map(&file) }.map_err(|e| e.to_string())?;
    parse_shard(path, Bytes::Mapped(mmap))
}

/// A shard file, read into memory: there is no mapping on wasm32 (and a browser has no files: it hands the bytes
/// over, [`CheckpointFiles::Named`]).
#[cfg(target_arch = "wasm32")]
fn open_shard(path: &Path) -> Result<Shard, String> {
    parse_shard(path, Bytes::Owned(std::fs::read(path).map_err(|e| e.to_string())?))
}

fn parse_shard(path: &Path, bytes: Bytes) -> Result<Shard, String> {
    if let Some(problem) = data_past_the_end(&bytes) {
        return Err(format!("not a safetensors file: {problem}"));
    }
    let (header, parsed) = SafeTensors::read_metadata(&bytes).map_err(|e| format!("not a safetensors file: {e}"))?;
    let tensors = parsed.tensors().into_iter().map(|(name, info)| (name, info.clone())).collect();
    let metadata = parsed.metadata().clone().unwrap_or_default();
    Ok(Shard { path: path.to_path_buf(), bytes, data_start: 8 + header, tensors, metadata })
}

/// A tensor whose data would end past the end of the file. safetensors adds the data's end to the
/// header's length without an overflow check (a panic in builds with overflow checks, for ends near
/// 2^64), so those headers are refused before it sees them, naming the first such tensor by name. `None` also when the header does not
/// parse: safetensors then says why.
fn data_past_the_end(bytes: &[u8]) -> Option<String> {
    let header_len = usize::try_from(u64::from_le_bytes(bytes.get(..8)?.try_into().ok()?)).ok()?;
    let header = bytes.get(8..8usize.checked_add(header_len)?)?;
    let entries: HashMap<String, serde_json::Value> = serde_json::from_slice(header).ok()?;
    let data_len = (bytes.len() - 8 - header_len) as u64;
    // The first such tensor by name: the message is the same on every run (the map's order is not).
    let past_the_end = entries.iter().filter_map(|(name, entry)| {
        let end = entry.get("data_offsets")?.get(1)?.as_u64()?;
        (end > data_len).then_some((name, end))
    });
    let (name, end) = past_the_end.min_by(|a, b| a.0.cmp(b.0))?;
    Some(format!("tensor `{name}` ends at byte {end} of {data_len} bytes of data"))
}

impl std::fmt::Debug for Checkpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Checkpoint({}, {} tensors in {} file(s))",
            self.dir.display(),
            self.locations.len(),
            self.shard_files.len()
        )
    }
}

impl std::fmt::Debug for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Shard({})", self.path.display())
    }
}
