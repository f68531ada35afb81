//! The alignment tokenizer: the word-timestamp head's vocabulary, from the Transformers `tokenizer.json` the
//! checkpoint ships in `alignment_tokenizer/` (SentencePiece BPE converted to BPE merges + Metaspace), read by the
//! `tokenizers` crate as Transformers' `TokenizersBackend` reads it.
//!
//! A checkpoint that holds only the SentencePiece model (`ctc_timestamp.tokenizer.model_proto`, the release's NeMo
//! weights) is refused with a message asking for the `tokenizer.json`: building the BPE merges from the proto's
//! scores is what Transformers' converter does, and no maintained Rust crate does it.

use std::path::{Path, PathBuf};

use tokenizers::Tokenizer;

/// A tokenizer that cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum TokenizerError {
    /// `tokenizer.json` (or `tokenizer_config.json`) could not be read or parsed.
    #[error("{path}: {message}")]
    File {
        /// The file.
        path: String,
        /// What went wrong.
        message: String,
    },
    /// The checkpoint folder has no `alignment_tokenizer/tokenizer.json`.
    #[error(
        "{dir}: no alignment tokenizer (expected alignment_tokenizer/tokenizer.json){}",
        if *has_proto { "; the checkpoint holds only the SentencePiece model `ctc_timestamp.tokenizer.model_proto`, \
            which this program does not convert: take alignment_tokenizer/tokenizer.json from the Transformers \
            release of the model" } else { "" }
    )]
    Missing {
        /// The checkpoint folder.
        dir: String,
        /// Whether the checkpoint holds the SentencePiece proto.
        has_proto: bool,
    },
    /// Encoding failed inside the tokenizer.
    #[error("tokenizing {text:?}: {message}")]
    Encode {
        /// The text.
        text: String,
        /// The tokenizer's message.
        message: String,
    },
}

/// The folder and files of the alignment tokenizer inside a checkpoint folder.
pub const TOKENIZER_DIR: &str = "alignment_tokenizer";
const TOKENIZER_FILE: &str = "tokenizer.json";
const CONFIG_FILE: &str = "tokenizer_config.json";
/// Where the release's NeMo weights keep the SentencePiece model.
pub const PROTO_TENSOR: &str = "ctc_timestamp.tokenizer.model_proto";

/// The word-timestamp head's tokenizer.
pub struct AlignmentTokenizer {
    tokenizer: Tokenizer,
    unk_id: Option<u32>,
}

impl AlignmentTokenizer {
    /// Reads `tokenizer.json` text; `unk_token` names the unknown piece (`tokenizer_config.json`'s `unk_token`,
    /// `<unk>` when there is none).
    pub fn from_json(origin: &str, json: &[u8], unk_token: &str) -> Result<Self, TokenizerError> {
        let tokenizer = Tokenizer::from_bytes(json)
            .map_err(|e| TokenizerError::File { path: origin.into(), message: e.to_string() })?;
        let unk_id = tokenizer.token_to_id(unk_token);
        Ok(Self { tokenizer, unk_id })
    }

    /// Reads `dir/tokenizer.json` and, when present, the `unk_token` of `dir/tokenizer_config.json`.
    pub fn from_dir(dir: &Path) -> Result<Self, TokenizerError> {
        let read = |path: PathBuf| {
            std::fs::read(&path)
                .map_err(|e| TokenizerError::File { path: path.display().to_string(), message: e.to_string() })
        };
        let json = read(dir.join(TOKENIZER_FILE))?;
        let config_path = dir.join(CONFIG_FILE);
        let unk = if config_path.is_file() {
            unk_token(&config_path.display().to_string(), &read(config_path)?)?
        } else {
            None
        };
        Self::from_json(&dir.join(TOKENIZER_FILE).display().to_string(), &json, unk.as_deref().unwrap_or("<unk>"))
    }

    /// The tokenizer of a checkpoint folder (`alignment_tokenizer/`), or why there is none (saying so when the
    /// weights hold only the SentencePiece model). `holds_tensor` says whether the folder's weights hold a tensor of
    /// that name; it is asked (for [`PROTO_TENSOR`]) only when the folder has no tokenizer, and reading the weights
    /// is the caller's business (`nemotron_towers::Checkpoint`).
    pub fn for_checkpoint(dir: &Path, holds_tensor: impl FnOnce(&str) -> bool) -> Result<Self, TokenizerError> {
        let folder = dir.join(TOKENIZER_DIR);
        if !folder.join(TOKENIZER_FILE).is_file() {
            let has_proto = holds_tensor(PROTO_TENSOR);
            return Err(TokenizerError::Missing { dir: dir.display().to_string(), has_proto });
        }
        Self::from_dir(&folder)
    }

    /// `encode(text, add_special_tokens=False)`.
    pub fn encode(&self, text: &str) -> Result<Vec<u32>, TokenizerError> {
        let encoding = self
            .tokenizer
            .encode(text, false)
            .map_err(|e| TokenizerError::Encode { text: text.into(), message: e.to_string() })?;
        Ok(encoding.get_ids().to_vec())
    }

    /// `convert_tokens_to_ids`: the piece's id, or the unknown piece's when absent.
    pub fn token_to_id(&self, piece: &str) -> Option<u32> {
        self.tokenizer.token_to_id(piece).or(self.unk_id)
    }

    /// The unknown piece's id.
    pub fn unk_id(&self) -> Option<u32> {
        self.unk_id
    }
}

/// The `unk_token` of a `tokenizer_config.json` (a string, or an added-token object with `content`).
fn unk_token(origin: &str, json: &[u8]) -> Result<Option<String>, TokenizerError> {
    let value: serde_json::Value = serde_json::from_slice(json)
        .map_err(|e| TokenizerError::File { path: origin.into(), message: e.to_string() })?;
    Ok(match value.get("unk_token") {
        Some(serde_json::Value::String(s)) => Some(s.clone()),
        Some(token) => token.get("content").and_then(|c| c.as_str()).map(str::to_string),
        None => None,
    })
}
