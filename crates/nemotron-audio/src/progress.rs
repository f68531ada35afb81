//! Progress bars on stderr (hidden with `--quiet`): the model's stages, with elapsed time, ETA and the realtime
//! factor, and downloads, in bytes.

use std::time::Instant;

use indicatif::{ProgressBar, ProgressStyle};
use nemotron_engine::COMPILING_KERNELS;

/// A progress bar for runs of more than one step.
pub struct Bar {
    bar: Option<ProgressBar>,
    /// Seconds of audio the run covers (0 when unknown), for the realtime factor.
    audio_seconds: f64,
    stage: String,
    stage_started: Instant,
}

impl Bar {
    /// A bar for a run over `audio_seconds` of audio (hidden when `quiet`).
    pub fn new(quiet: bool, audio_seconds: f64) -> Self {
        Self {
            bar: (!quiet).then(ProgressBar::hidden),
            audio_seconds,
            stage: String::new(),
            stage_started: Instant::now(),
        }
    }

    /// Stage `stage` is at step `done` of `total`.
    pub fn update(&mut self, stage: &str, done: usize, total: usize) {
        if stage != self.stage {
            self.stage = stage.to_owned();
            self.stage_started = Instant::now();
            if let Some(bar) = &self.bar {
                bar.reset_eta();
            }
        }
        let covered = self.audio_seconds * done as f64 / total.max(1) as f64;
        self.show(stage, done, total, covered, self.stage_started.elapsed().as_secs_f64());
    }

    /// A batch run is at entry `done` of `total`, having covered `seconds` of audio in `elapsed` seconds.
    pub fn update_batch(&mut self, done: usize, total: usize, seconds: f64, elapsed: f64) {
        self.show("entries", done, total, seconds, elapsed);
    }

    fn show(&mut self, stage: &str, done: usize, total: usize, covered: f64, elapsed: f64) {
        let Some(bar) = &mut self.bar else { return };
        if total > 1 && bar.is_hidden() {
            *bar = ProgressBar::new(total as u64);
            let template = "{msg:>12} [{bar:30}] {pos}/{len} {elapsed} elapsed, ETA {eta} {prefix}";
            if let Ok(style) = ProgressStyle::with_template(template) {
                bar.set_style(style.progress_chars("=> "));
            }
        }
        bar.set_message(stage.to_string());
        bar.set_length(total as u64);
        bar.set_position(done as u64);
        if covered > 0.0 && elapsed > 0.0 {
            bar.set_prefix(format!("{} realtime", crate::output::realtime(covered, elapsed)));
        }
    }

    /// Prints `line` on stderr above the bar.
    pub fn println(&self, line: &str) {
        match &self.bar {
            Some(bar) if !bar.is_hidden() => bar.println(line),
            _ => eprintln!("{line}"),
        }
    }

    pub fn finish(self) {
        if let Some(bar) = self.bar {
            bar.finish_and_clear();
        }
    }
}

/// The bar of a model's load: bytes of each file downloaded, then the kernels compiled (hidden when `quiet`).
pub struct DownloadBar {
    bar: Option<ProgressBar>,
    file: String,
}

impl DownloadBar {
    pub fn new(quiet: bool) -> Self {
        Self { bar: (!quiet).then(ProgressBar::hidden), file: String::new() }
    }

    /// `file` is at byte `done` of `total`, or the stage [`COMPILING_KERNELS`] at pipeline `done` of `total`.
    pub fn update(&mut self, file: &str, done: u64, total: u64) {
        let Some(bar) = &mut self.bar else { return };
        if bar.is_hidden() && total > 0 {
            *bar = ProgressBar::new(total);
        }
        if file != self.file {
            self.file = file.to_owned();
            let (message, template) = if file == COMPILING_KERNELS {
                (file.to_string(), "{msg} [{bar:30}] {pos}/{len}, ETA {eta}")
            } else {
                (format!("downloading {file}"), "{msg} [{bar:30}] {bytes}/{total_bytes} {bytes_per_sec}, ETA {eta}")
            };
            if let Ok(style) = ProgressStyle::with_template(template) {
                bar.set_style(style.progress_chars("=> "));
            }
            bar.set_message(message);
            bar.reset();
        }
        bar.set_length(total);
        bar.set_position(done);
    }

    pub fn finish(self) {
        if let Some(bar) = self.bar {
            bar.finish_and_clear();
        }
    }
}
