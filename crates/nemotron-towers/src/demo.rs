//! The built-in demo model (cargo feature `demo`): the tiny random-weight checkpoint of
//! `testdata/reference/tiny-release-chunks`, compiled in, so a program built with it runs wherever it is installed
//! (the CLI's `--demo`, the browser package's `Diarizer.demo()`). Its outputs are meaningless. The crate's `demo/`
//! links to the two files, so the published package holds them.

use crate::{Checkpoint, ModelConfig, Result};

/// The demo model's `config.json`.
pub const CONFIG: &str = include_str!("../demo/config.json");
/// The demo model's `model.safetensors`.
pub static WEIGHTS: &[u8] = include_bytes!("../demo/model.safetensors");

/// What the demo model is, and where it says it comes from.
pub const LABEL: &str = "built-in demo model (tiny-release-chunks, random weights)";

/// The demo model's config and checkpoint.
pub fn model() -> Result<(ModelConfig, Checkpoint)> {
    Ok((ModelConfig::from_json(CONFIG)?, Checkpoint::from_bytes(LABEL, WEIGHTS.to_vec())?))
}
