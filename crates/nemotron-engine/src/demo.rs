//! The built-in demo model (`nemotron_towers::demo`, compiled in with the cargo feature `demo`) and its alignment
//! tokenizer.

use nemotron_postprocess::alignment::{AlignmentTokenizer, TokenizerError};
pub(crate) use nemotron_towers::demo::{LABEL, model};

static TOKENIZER: &[u8] =
    include_bytes!("../../../testdata/reference/tiny-release-chunks/alignment_tokenizer/tokenizer.json");

/// The demo model's alignment tokenizer (its `unk_token` is `<unk>`, as its `tokenizer_config.json` says).
pub(crate) fn tokenizer() -> Result<AlignmentTokenizer, TokenizerError> {
    AlignmentTokenizer::from_json(LABEL, TOKENIZER, "<unk>")
}
