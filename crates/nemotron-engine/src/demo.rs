//! The built-in demo model: the tiny random-weight checkpoint of `testdata/reference/tiny-release-chunks`, compiled
//! in (cargo feature `demo`), so a program built with it runs wherever it is installed.

use nemotron_postprocess::alignment::{AlignmentTokenizer, TokenizerError};
use nemotron_towers::{Checkpoint, ModelConfig};

const CONFIG: &str = include_str!("../../../testdata/reference/tiny-release-chunks/config.json");
static WEIGHTS: &[u8] = include_bytes!("../../../testdata/reference/tiny-release-chunks/model.safetensors");

static TOKENIZER: &[u8] =
    include_bytes!("../../../testdata/reference/tiny-release-chunks/alignment_tokenizer/tokenizer.json");

/// What the demo model is, and where it says it comes from.
pub const LABEL: &str = "built-in demo model (tiny-release-chunks, random weights)";

/// The demo model's config and checkpoint.
pub(crate) fn model() -> nemotron_towers::Result<(ModelConfig, Checkpoint)> {
    Ok((ModelConfig::from_json(CONFIG)?, Checkpoint::from_bytes(LABEL, WEIGHTS.to_vec())?))
}

/// The demo model's alignment tokenizer (its `unk_token` is `<unk>`, as its `tokenizer_config.json` says).
pub(crate) fn tokenizer() -> Result<AlignmentTokenizer, TokenizerError> {
    AlignmentTokenizer::from_json(LABEL, TOKENIZER, "<unk>")
}
