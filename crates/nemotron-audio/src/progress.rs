//! The progress bar on stderr.

use indicatif::{ProgressBar, ProgressStyle};

/// A progress bar for runs of more than one step (hidden with `--quiet`).
pub struct Bar(Option<ProgressBar>);

impl Bar {
    pub fn new(quiet: bool) -> Self {
        Self((!quiet).then(ProgressBar::hidden))
    }

    /// Stage `stage` is at step `done` of `total`.
    pub fn update(&mut self, stage: &str, done: usize, total: usize) {
        let Some(bar) = &mut self.0 else { return };
        if total > 1 && bar.is_hidden() {
            *bar = ProgressBar::new(total as u64);
            if let Ok(style) = ProgressStyle::with_template("{msg:>12} [{bar:40}] {pos}/{len} {elapsed}") {
                bar.set_style(style.progress_chars("=> "));
            }
        }
        bar.set_message(stage.to_string());
        bar.set_length(total as u64);
        bar.set_position(done as u64);
    }

    pub fn finish(self) {
        if let Some(bar) = self.0 {
            bar.finish_and_clear();
        }
    }
}
