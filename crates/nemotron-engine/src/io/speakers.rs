//! Known speakers' profiles: voices enrolled once under a name, so that every recording can name them.
//!
//! The file is safetensors: one 1-D F32 tensor of 16 kHz mono samples per speaker, named by the speaker, and
//! `__metadata__` `{"format": "nemotron-speakers", "version": "1", "names": "<JSON list in enrollment order>"}`
//! (the tensors' own order in a safetensors file is by name, so the list keeps the enrollment order). Written, the
//! header's keys are sorted, so one profile always gives the same bytes. A profile holds audio, not model state, so
//! it works with any diarizer and any latency mode.
//!
//! A name is 1–64 characters without whitespace, unique in the profile; each clip is at least 1 s long (16,000
//! samples) and finite. How many speakers a diarizer can take is the model's business: [`SpeakerProfile::len`]
//! tells the caller how many there are. Readers accept other `__metadata__` keys beside the three above (a tool may
//! add its own) and refuse any version but "1".
//!
//! [`SpeakerProfile::read`] and [`SpeakerProfile::write`] (whole or not at all) take files on native targets; a
//! browser, which has none, hands bytes over ([`SpeakerProfile::from_bytes`], [`SpeakerProfile::to_bytes`]).

use std::collections::{BTreeMap, HashMap, HashSet};
#[cfg(not(target_arch = "wasm32"))]
use std::path::Path;

use safetensors::tensor::{Metadata, TensorView};
use safetensors::{Dtype, SafeTensors};

use super::audio::SAMPLE_RATE;

/// The `format` tag of a profile's `__metadata__`.
pub const FORMAT: &str = "nemotron-speakers";
/// The one `version` this build reads and writes.
pub const VERSION: &str = "1";
/// The shortest clip a speaker is enrolled with: 1 s at 16 kHz.
pub const MIN_CLIP_SAMPLES: usize = SAMPLE_RATE as usize;
/// The longest name, in characters (Unicode scalar values).
pub const MAX_NAME_CHARS: usize = 64;
/// `__metadata__` is safetensors' own key in the header, so no tensor (no speaker) can have that name.
const RESERVED_NAME: &str = "__metadata__";

/// A profile's speakers that break the format's rules, each error naming the speaker and the rule.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum SpeakerError {
    /// No speaker at all.
    #[error("a speaker profile holds at least one speaker")]
    NoSpeakers,
    /// An empty name.
    #[error("a speaker name is empty: a name is 1–{MAX_NAME_CHARS} characters without whitespace")]
    EmptyName,
    /// A name over [`MAX_NAME_CHARS`] characters.
    #[error("speaker name `{name}` has {chars} characters: a name is 1–{MAX_NAME_CHARS} characters")]
    NameTooLong {
        /// The name.
        name: String,
        /// Its length in characters.
        chars: usize,
    },
    /// A name with a space, tab, line break or other whitespace.
    #[error("speaker name {name:?} contains whitespace: a name is 1–{MAX_NAME_CHARS} characters without whitespace")]
    NameWhitespace {
        /// The name.
        name: String,
    },
    /// The one name safetensors keeps for itself.
    #[error("`{RESERVED_NAME}` is the safetensors header's own key and cannot name a speaker")]
    ReservedName,
    /// Two speakers with one name.
    #[error("speaker `{name}` is named twice: names are unique in a profile")]
    DuplicateName {
        /// The name.
        name: String,
    },
    /// A clip under [`MIN_CLIP_SAMPLES`].
    #[error(
        "speaker `{name}`: the clip is {:.3} s ({samples} samples); a speaker is enrolled with at least 1 s \
         ({MIN_CLIP_SAMPLES} samples at 16 kHz)",
        seconds(.samples)
    )]
    ClipTooShort {
        /// The speaker.
        name: String,
        /// The clip's samples.
        samples: usize,
    },
    /// A clip with a NaN or an infinity.
    #[error("speaker `{name}`: sample {index} is {value}, not a finite number")]
    NotFinite {
        /// The speaker.
        name: String,
        /// The sample's position in the clip.
        index: usize,
        /// The sample.
        value: f32,
    },
}

fn seconds(samples: &usize) -> f64 {
    *samples as f64 / f64::from(SAMPLE_RATE)
}

/// A profile that cannot be read, parsed or written; each error names the file (or the name given to bytes in
/// memory) and, where there is one, the speaker.
#[derive(Debug, thiserror::Error)]
pub enum ProfileError {
    /// The file could not be read.
    #[error("cannot read speaker profile {path}: {source}")]
    Read {
        /// The file.
        path: String,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The file could not be written (nothing was left at its path).
    #[error("cannot write speaker profile {path}: {source}")]
    Write {
        /// The file.
        path: String,
        /// The I/O error.
        source: std::io::Error,
    },
    /// safetensors could not lay the profile out (a header past its 100 MB limit).
    #[error("cannot encode the speaker profile: {message}")]
    Encode {
        /// What safetensors said.
        message: String,
    },
    /// Not a safetensors file, or a damaged or truncated one.
    #[error("{origin}: not a speaker profile (a damaged, truncated or foreign file): {message}")]
    Corrupt {
        /// The file, or the name given to the bytes.
        origin: String,
        /// What is wrong.
        message: String,
    },
    /// A safetensors file without the profile's `format` tag.
    #[error("{origin}: not a speaker profile: {}", describe_format(.format))]
    NotAProfile {
        /// The file, or the name given to the bytes.
        origin: String,
        /// The `format` its metadata gives, if any.
        format: Option<String>,
    },
    /// A profile of another version (or none).
    #[error("{origin}: speaker profile version {} is not supported: this build reads version {VERSION}", describe_version(.version))]
    Version {
        /// The file, or the name given to the bytes.
        origin: String,
        /// The `version` its metadata gives, if any.
        version: Option<String>,
    },
    /// A `names` list that is missing, not a JSON list of strings, or not the tensors' names.
    #[error("{origin}: {problem}")]
    Names {
        /// The file, or the name given to the bytes.
        origin: String,
        /// What is wrong.
        problem: String,
    },
    /// A speaker's tensor that is not 1-D F32.
    #[error("{origin}: speaker `{name}` is a {dtype} tensor of shape {shape:?}; a profile holds 1-D F32 tensors")]
    Tensor {
        /// The file, or the name given to the bytes.
        origin: String,
        /// The speaker.
        name: String,
        /// Its dtype, as safetensors names it.
        dtype: String,
        /// Its shape.
        shape: Vec<usize>,
    },
    /// A speaker that breaks the format's rules.
    #[error("{origin}: {source}")]
    Speaker {
        /// The file, or the name given to the bytes.
        origin: String,
        /// Which rule, which speaker.
        source: SpeakerError,
    },
}

fn describe_format(format: &Option<String>) -> String {
    match format {
        None => format!("its metadata has no \"format\" (a profile's is {FORMAT:?})"),
        Some(other) => format!("its format is {other:?}, not {FORMAT:?}"),
    }
}

fn describe_version(version: &Option<String>) -> String {
    version.as_ref().map_or("(none given)".to_owned(), |v| format!("{v:?}"))
}

/// Named voices, in enrollment order: each speaker's name and 16 kHz mono samples. Built only through
/// [`SpeakerProfile::new`] or a reader, so every profile keeps the format's rules.
#[derive(Clone, Debug, PartialEq)]
pub struct SpeakerProfile {
    clips: Vec<(String, Vec<f32>)>,
}

impl SpeakerProfile {
    /// A profile of `clips` (name, 16 kHz mono samples), in enrollment order: at least one, names 1–64
    /// characters without whitespace and unique, clips at least 1 s long and finite.
    pub fn new(clips: Vec<(String, Vec<f32>)>) -> Result<Self, SpeakerError> {
        if clips.is_empty() {
            return Err(SpeakerError::NoSpeakers);
        }
        let mut names = HashSet::with_capacity(clips.len());
        for (name, samples) in &clips {
            check_name(name)?;
            if !names.insert(name.as_str()) {
                return Err(SpeakerError::DuplicateName { name: name.clone() });
            }
            check_clip(name, samples)?;
        }
        Ok(Self { clips })
    }

    /// The speakers (name, samples), in enrollment order.
    pub fn clips(&self) -> &[(String, Vec<f32>)] {
        &self.clips
    }

    /// The speakers (name, samples), in enrollment order, handed over.
    pub fn into_clips(self) -> Vec<(String, Vec<f32>)> {
        self.clips
    }

    /// The speakers' names, in enrollment order.
    pub fn names(&self) -> impl ExactSizeIterator<Item = &str> {
        self.clips.iter().map(|(name, _)| name.as_str())
    }

    /// How many speakers the profile holds (at least one), for a caller to check against its diarizer's slots.
    #[allow(clippy::len_without_is_empty)] // never empty: `new` refuses a profile without speakers
    pub fn len(&self) -> usize {
        self.clips.len()
    }

    /// The profile as a safetensors file's bytes: the same profile gives the same bytes, on every front end and
    /// build (the header's keys sorted).
    pub fn to_bytes(&self) -> Result<Vec<u8>, ProfileError> {
        let data: Vec<Vec<u8>> =
            self.clips.iter().map(|(_, samples)| samples.iter().flat_map(|x| x.to_le_bytes()).collect()).collect();
        let encode = |e: safetensors::SafeTensorError| ProfileError::Encode { message: e.to_string() };
        let views = self
            .clips
            .iter()
            .zip(&data)
            .map(|((name, samples), bytes)| {
                Ok((name.as_str(), TensorView::new(Dtype::F32, vec![samples.len()], bytes)?))
            })
            .collect::<Result<Vec<_>, _>>()
            .map_err(encode)?;
        let names = serde_json::to_string(&self.names().collect::<Vec<_>>())
            .map_err(|e| ProfileError::Encode { message: e.to_string() })?;
        let metadata = HashMap::from([
            ("format".to_owned(), FORMAT.to_owned()),
            ("version".to_owned(), VERSION.to_owned()),
            ("names".to_owned(), names),
        ]);
        let mut bytes = safetensors::serialize(views, Some(metadata)).map_err(encode)?;
        canonical_header(&mut bytes).map_err(|message| ProfileError::Encode { message })?;
        Ok(bytes)
    }

    /// Reads a profile from a safetensors file's `bytes`; `origin` names them in errors (the file, or what they
    /// came from).
    pub fn from_bytes(bytes: &[u8], origin: &str) -> Result<Self, ProfileError> {
        let corrupt = |message: String| ProfileError::Corrupt { origin: origin.to_owned(), message };
        let header = checked_header(bytes).map_err(corrupt)?;
        let file = SafeTensors::deserialize(bytes).map_err(|e| corrupt(e.to_string()))?;
        let order = names_in_order(header.metadata().as_ref(), origin)?;
        let names_problem = |problem: String| ProfileError::Names { origin: origin.to_owned(), problem };
        let listed: HashSet<&str> = order.iter().map(String::as_str).collect();
        if let Some(unlisted) = file.names().into_iter().filter(|name| !listed.contains(name)).min() {
            return Err(names_problem(format!("tensor `{unlisted}` is not in the metadata's `names` list")));
        }
        let mut clips = Vec::with_capacity(order.len());
        for name in order {
            let Ok(view) = file.tensor(&name) else {
                return Err(names_problem(format!("the metadata's `names` lists `{name}`, which has no tensor")));
            };
            if view.dtype() != Dtype::F32 || view.shape().len() != 1 {
                let (dtype, shape) = (view.dtype().to_string(), view.shape().to_vec());
                return Err(ProfileError::Tensor { origin: origin.to_owned(), name, dtype, shape });
            }
            let samples = view.data().chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect();
            clips.push((name, samples));
        }
        Self::new(clips).map_err(|source| ProfileError::Speaker { origin: origin.to_owned(), source })
    }

    /// Reads the profile at `path`.
    #[cfg(not(target_arch = "wasm32"))]
    pub fn read(path: &Path) -> Result<Self, ProfileError> {
        let bytes =
            std::fs::read(path).map_err(|source| ProfileError::Read { path: path.display().to_string(), source })?;
        Self::from_bytes(&bytes, &path.display().to_string())
    }

    /// Writes the profile to `path`, whole or not at all ([`write_atomic`](super::atomic::write_atomic)).
    #[cfg(not(target_arch = "wasm32"))]
    pub fn write(&self, path: &Path) -> Result<(), ProfileError> {
        let bytes = self.to_bytes()?;
        super::atomic::write_bytes(path, &bytes)
            .map_err(|source| ProfileError::Write { path: path.display().to_string(), source })
    }
}

fn check_name(name: &str) -> Result<(), SpeakerError> {
    let chars = name.chars().count();
    if chars == 0 {
        return Err(SpeakerError::EmptyName);
    }
    if chars > MAX_NAME_CHARS {
        return Err(SpeakerError::NameTooLong { name: name.to_owned(), chars });
    }
    if name.chars().any(char::is_whitespace) {
        return Err(SpeakerError::NameWhitespace { name: name.to_owned() });
    }
    if name == RESERVED_NAME {
        return Err(SpeakerError::ReservedName);
    }
    Ok(())
}

fn check_clip(name: &str, samples: &[f32]) -> Result<(), SpeakerError> {
    if samples.len() < MIN_CLIP_SAMPLES {
        return Err(SpeakerError::ClipTooShort { name: name.to_owned(), samples: samples.len() });
    }
    if let Some((index, &value)) = samples.iter().enumerate().find(|(_, x)| !x.is_finite()) {
        return Err(SpeakerError::NotFinite { name: name.to_owned(), index, value });
    }
    Ok(())
}

/// A safetensors header as [`canonical_header`] writes it: the metadata's keys sorted, then the tensors by name (which
/// is their data's order: safetensors lays out tensors of one dtype by name), each entry's fields in safetensors'
/// order.
#[derive(serde::Serialize, serde::Deserialize)]
struct Header {
    #[serde(rename = "__metadata__")]
    metadata: BTreeMap<String, String>,
    #[serde(flatten)]
    tensors: BTreeMap<String, TensorEntry>,
}

#[derive(serde::Serialize, serde::Deserialize)]
struct TensorEntry {
    dtype: String,
    shape: Vec<usize>,
    data_offsets: [usize; 2],
}

/// Writes the header of the safetensors file `bytes` again in one order. safetensors takes the metadata as a hash
/// map and writes its keys in the map's order, which changes from one map to the next; a profile is a file users
/// keep under version control, compare and cache by content, so its bytes must follow from what it holds. The
/// header says the same in either order, so it keeps its length (and safetensors' padding to 8 bytes).
fn canonical_header(bytes: &mut [u8]) -> Result<(), String> {
    let (length, rest) = bytes.split_first_chunk_mut::<8>().ok_or("no safetensors header")?;
    let length = usize::try_from(u64::from_le_bytes(*length)).map_err(|e| e.to_string())?;
    let header = rest.get_mut(..length).ok_or("a header longer than the file")?;
    let parsed: Header = serde_json::from_slice(header).map_err(|e| format!("safetensors' header: {e}"))?;
    let canonical = serde_json::to_vec(&parsed).map_err(|e| e.to_string())?;
    if canonical.len() > length {
        return Err(format!("the header grew from {length} to {} bytes when sorted", canonical.len()));
    }
    header.fill(b' ');
    header[..canonical.len()].copy_from_slice(&canonical);
    Ok(())
}

/// The header of a safetensors file whose tensors fill exactly the bytes after it. safetensors' own reader adds the
/// data's end to the header's length unchecked, which overflows (a panic with overflow checks on) for ends near
/// 2^64; here the header is parsed by safetensors' `Metadata` (which checks each tensor's offsets and size) and the
/// data's length compared with what is there, before safetensors reads the file.
fn checked_header(bytes: &[u8]) -> Result<Metadata, String> {
    let (length, rest) = bytes.split_first_chunk::<8>().ok_or("shorter than a safetensors header's 8-byte length")?;
    let header_length = usize::try_from(u64::from_le_bytes(*length)).unwrap_or(usize::MAX);
    let (header, data) = rest
        .split_at_checked(header_length)
        .ok_or_else(|| format!("the header is {header_length} bytes long, but {} bytes follow", rest.len()))?;
    let metadata: Metadata = serde_json::from_slice(header).map_err(|e| format!("unreadable header: {e}"))?;
    if metadata.data_len() != data.len() {
        return Err(format!("the header describes {} bytes of data, but {} follow", metadata.data_len(), data.len()));
    }
    Ok(metadata)
}

/// The speakers' names in enrollment order, from a profile's `__metadata__`: the format tag, then the version, then
/// the `names` list (JSON, unique strings).
fn names_in_order(metadata: Option<&HashMap<String, String>>, origin: &str) -> Result<Vec<String>, ProfileError> {
    let get = |key: &str| metadata.and_then(|m| m.get(key));
    if get("format").map(String::as_str) != Some(FORMAT) {
        return Err(ProfileError::NotAProfile { origin: origin.to_owned(), format: get("format").cloned() });
    }
    if get("version").map(String::as_str) != Some(VERSION) {
        return Err(ProfileError::Version { origin: origin.to_owned(), version: get("version").cloned() });
    }
    let problem = |problem: String| ProfileError::Names { origin: origin.to_owned(), problem };
    let list = get("names").ok_or_else(|| problem("the metadata has no `names` list".into()))?;
    let names: Vec<String> = serde_json::from_str(list)
        .map_err(|e| problem(format!("the metadata's `names` is not a JSON list of strings: {e}")))?;
    let mut seen = HashSet::with_capacity(names.len());
    if let Some(twice) = names.iter().find(|name| !seen.insert(name.as_str())) {
        return Err(problem(format!("the metadata's `names` lists `{twice}` twice")));
    }
    Ok(names)
}
