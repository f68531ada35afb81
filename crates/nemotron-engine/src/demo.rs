//! The built-in demo model (`nemotron_towers::demo`, compiled in with the cargo feature `demo`) and its alignment
//! tokenizer.

use nemotron_postprocess::alignment::{AlignmentTokenizer, TokenizerError};
use nemotron_towers::demo::LABEL;
pub(crate) use nemotron_towers::demo::model;

/// `testdata/reference/tiny-release-chunks/alignment_tokenizer/tokenizer.json`, through the crate's `demo/` link (so the
/// published package holds it).
static TOKENIZER: &[u8] = include_bytes!("../demo/tokenizer.json");

/// The demo model's alignment tokenizer (its `unk_token` is `<unk>`, as its `tokenizer_config.json` says).
pub(crate) fn tokenizer() -> Result<AlignmentTokenizer, TokenizerError> {
    AlignmentTokenizer::from_json(LABEL, TOKENIZER, "<unk>")
}
