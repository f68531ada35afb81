//! Safetensors checkpoints: one `model.safetensors`, or shards listed by `model.safetensors.index.json`. The bytes
//! come from the caller ([`Checkpoint::from_bytes`], [`Checkpoint::from_shard_bytes`]: e.g. fetched by a browser)
//! or, on native targets, from files mapped into memory ([`Checkpoint::open`]). Files are opened on first use, so a
//! release checkpoint's language-model shards are never touched; tensor bytes are read only when asked for.

use std::borrow::Cow;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use safetensors::{Dtype, SafeTensors, tensor::TensorInfo};

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
pub(crate) const INDEX_FILE: &str = "model.safetensors.index.json";

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
    dir: PathBuf,
    shard_paths: Vec<PathBuf>,
    shards: Vec<OnceLock<Result<Shard, String>>>,
    /// Tensor name → shard index (all names of a single file, or the index's weight map).
    locations: HashMap<String, usize>,
    /// The caller handed the shards over: one it did not hand over is an error, not a file to open.
    handed_over: bool,
}

impl Checkpoint {
    /// Opens `path`: a directory with `model.safetensors` or a sharded index, or one file.
    pub fn open(path: &Path) -> Result<Self, CheckpointError> {
        if path.is_file() {
            return Self::single(path.parent().unwrap_or(Path::new(".")), path);
        }
        let single = path.join("model.safetensors");
        let index = path.join(INDEX_FILE);
        if index.is_file() {
            Self::sharded(path, &index)
        } else if single.is_file() {
            Self::single(path, &single)
        } else {
            Err(CheckpointError::NoWeights { dir: path.display().to_string() })
        }
    }

    /// A checkpoint held in memory (a serialized safetensors buffer), e.g. a generated one.
    pub fn from_bytes(label: &str, bytes: Vec<u8>) -> Result<Self, CheckpointError> {
        let path = PathBuf::from(label);
        let shard = parse_shard(&path, Bytes::Owned(bytes)).map_err(|message| file_error(&path, message))?;
        Ok(Self::from_shard(Path::new("."), shard))
    }

    /// A single-file checkpoint whose bytes the caller holds and may share (e.g. handed over by a browser, copied
    /// once into memory); `label` names it in errors.
    pub fn from_shared_bytes(label: &str, bytes: Arc<[u8]>) -> Result<Self, CheckpointError> {
        let path = PathBuf::from(label);
        let shard = parse_shard(&path, Bytes::Shared(bytes)).map_err(|message| file_error(&path, message))?;
        Ok(Self::from_shard(Path::new("."), shard))
    }

    fn single(dir: &Path, file: &Path) -> Result<Self, CheckpointError> {
        let shard = open_shard(file).map_err(|message| file_error(file, message))?;
        Ok(Self::from_shard(dir, shard))
    }

    fn from_shard(dir: &Path, shard: Shard) -> Self {
        let path = shard.path.clone();
        let locations = shard.tensors.keys().map(|name| (name.clone(), 0)).collect();
        let cell = OnceLock::new();
        let _ = cell.set(Ok(shard));
        Self { dir: dir.to_path_buf(), shard_paths: vec![path], shards: vec![cell], locations, handed_over: true }
    }

    /// A sharded checkpoint whose shards the caller holds in memory (e.g. fetched by a browser): the text of its
    /// `model.safetensors.index.json` and `(file name as the index names it, bytes)` for each shard handed over.
    /// Only the shards holding tensors that are read need be handed over; reading a tensor of another one is an
    /// error naming it. `dir` names the checkpoint in errors.
    pub fn from_shard_bytes(
        dir: &Path,
        index: &str,
        shards: impl IntoIterator<Item = (String, Arc<[u8]>)>,
    ) -> Result<Self, CheckpointError> {
        let mut checkpoint = Self::from_index(dir, index)?;
        checkpoint.handed_over = true;
        for (file, bytes) in shards {
            let path = dir.join(&file);
            let Some(i) = checkpoint.shard_paths.iter().position(|p| *p == path) else {
                return Err(file_error(&dir.join(INDEX_FILE), format!("names no shard `{file}`")));
            };
            let shard = parse_shard(&path, Bytes::Shared(bytes)).map_err(|message| file_error(&path, message))?;
            let _ = checkpoint.shards[i].set(Ok(shard));
        }
        Ok(checkpoint)
    }

    /// The `__metadata__` of a single-file checkpoint (empty for sharded ones).
    pub fn metadata(&self) -> HashMap<String, String> {
        match self.shards.as_slice() {
            [one] => one.get().and_then(|s| s.as_ref().ok()).map(|s| s.metadata.clone()).unwrap_or_default(),
            _ => HashMap::new(),
        }
    }

    fn sharded(dir: &Path, index: &Path) -> Result<Self, CheckpointError> {
        let text = std::fs::read_to_string(index).map_err(|e| file_error(index, e.to_string()))?;
        Self::from_index(dir, &text)
    }

    /// A sharded checkpoint from the text of its `model.safetensors.index.json`; the shards it
    /// names are opened from `dir` on first use.
    pub fn from_index(dir: &Path, text: &str) -> Result<Self, CheckpointError> {
        #[derive(serde::Deserialize)]
        struct Index {
            weight_map: HashMap<String, String>,
        }
        let index = &dir.join(INDEX_FILE);
        let parsed: Index = serde_json::from_str(text).map_err(|e| file_error(index, e.to_string()))?;
        let mut shard_paths: Vec<PathBuf> = Vec::new();
        // Shard path → its index in `shard_paths`: a hashed lookup, since an index may name many shards.
        let mut shard_numbers: HashMap<PathBuf, usize> = HashMap::new();
        let mut locations = HashMap::new();
        for (name, file) in parsed.weight_map {
            if file.contains("..") || Path::new(&file).is_absolute() {
                return Err(file_error(index, format!("shard path `{file}` leaves the checkpoint directory")));
            }
            let path = dir.join(&file);
            let i = *shard_numbers.entry(path.clone()).or_insert_with(|| {
                shard_paths.push(path);
                shard_paths.len() - 1
            });
            locations.insert(name, i);
        }
        let shards = shard_paths.iter().map(|_| OnceLock::new()).collect();
        Ok(Self { dir: dir.to_path_buf(), shard_paths, shards, locations, handed_over: false })
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
        self.locations.get(name).map(|&i| self.shard_paths[i].as_path())
    }

    /// Names of all tensors (from the index for sharded checkpoints).
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.locations.keys().map(String::as_str)
    }

    fn shard(&self, i: usize) -> Result<&Shard, CheckpointError> {
        let path = &self.shard_paths[i];
        let open = || match self.handed_over {
            true => Err("this shard was not handed over with the checkpoint".to_owned()),
            false => open_shard(path),
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
        let path = self.locations.get(name).map(|&i| self.shard_paths[i].display().to_string()).unwrap_or_default();
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
/// over, [`Checkpoint::from_shard_bytes`]).
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
/// 2^64), so those headers are refused before it sees them. `None` also when the header does not
/// parse: safetensors then says why.
fn data_past_the_end(bytes: &[u8]) -> Option<String> {
    let header_len = usize::try_from(u64::from_le_bytes(bytes.get(..8)?.try_into().ok()?)).ok()?;
    let header = bytes.get(8..8usize.checked_add(header_len)?)?;
    let entries: HashMap<String, serde_json::Value> = serde_json::from_slice(header).ok()?;
    let data_len = (bytes.len() - 8 - header_len) as u64;
    entries.iter().find_map(|(name, entry)| {
        let end = entry.get("data_offsets")?.get(1)?.as_u64()?;
        (end > data_len).then(|| format!("tensor `{name}` ends at byte {end} of {data_len} bytes of data"))
    })
}

impl std::fmt::Debug for Checkpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Checkpoint({}, {} tensors in {} file(s))",
            self.dir.display(),
            self.locations.len(),
            self.shard_paths.len()
        )
    }
}

impl std::fmt::Debug for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Shard({})", self.path.display())
    }
}
