//! What the CLI says about its outputs (the files themselves are written by `nemotron_engine::output`: checked
//! before any work, written atomically):
//! - [`write_stdout`]: data on standard output (RTTM, a score table), its errors reported like a file's;
//! - [`Done`]: the one line that says, on success, what was written.

use std::io::Write;
use std::path::Path;
use std::time::Instant;

use crate::failure::Failure;

/// Writes `text` to standard output; a closed pipe (`… | head`) or a full disk is an error naming `what`, not a panic
/// (which `print!` would be).
pub fn write_stdout(text: &str, what: &str) -> Result<(), Failure> {
    let mut stdout = std::io::stdout().lock();
    stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
        .map_err(|e| Failure::Message(format!("cannot write {what} to standard output: {e}")))
}

/// The success line: `wrote out.safetensors: 45.2 s of audio, 562 tokens, 3.1 s, 14× realtime`.
pub struct Done {
    started: Instant,
}

impl Done {
    /// Starts the clock of a command.
    pub fn start() -> Self {
        Self { started: Instant::now() }
    }

    /// Seconds since [`Done::start`].
    pub fn elapsed(&self) -> f64 {
        self.started.elapsed().as_secs_f64()
    }

    /// The line for `paths` written from `audio_seconds` of audio, with `details` (e.g. `562 tokens`).
    pub fn line(&self, paths: &[&Path], audio_seconds: f64, details: &[String]) -> String {
        let names: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
        let elapsed = self.elapsed();
        let mut parts = vec![format!("{audio_seconds:.1} s of audio")];
        parts.extend(details.iter().cloned());
        parts.push(format!("{elapsed:.1} s"));
        parts.push(format!("{} realtime", realtime(audio_seconds, elapsed)));
        format!("wrote {}: {}", names.join(", "), parts.join(", "))
    }

    /// Prints [`Done::line`] on stderr unless `quiet` (stdout may carry data, e.g. RTTM).
    pub fn report(&self, quiet: bool, paths: &[&Path], audio_seconds: f64, details: &[String]) {
        if !quiet {
            eprintln!("{}", self.line(paths, audio_seconds, details));
        }
    }
}

/// `14×` (one decimal under 10×).
pub fn realtime(audio_seconds: f64, elapsed: f64) -> String {
    let factor = audio_seconds / elapsed.max(1e-9);
    if factor < 10.0 { format!("{factor:.1}×") } else { format!("{factor:.0}×") }
}
