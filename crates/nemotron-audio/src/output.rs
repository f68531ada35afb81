//! Output files a user can trust, for every command:
//! - [`check_files`] / [`check_dir`]: every output path is checked before any work (the folder exists and takes a
//!   new file, the path is not a folder, no path is given twice), so a typo costs nothing;
//! - [`write_atomic`]: a file appears whole or not at all (written beside its final name, synced, renamed), with
//!   the usual mode (0666 less the umask, 0644 by default);
//! - [`write_stdout`]: data on standard output (RTTM, a score table), its errors reported like a file's;
//! - [`Done`]: the one line that says, on success, what was written.
//!
//! Errors are plain sentences naming the final path, never a temporary one.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use crate::failure::Failure;

/// The folder a file is written into (`.` for a bare file name).
fn folder_of(path: &Path) -> &Path {
    match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    }
}

fn cannot_write(path: &Path, reason: impl std::fmt::Display) -> Failure {
    Failure::Message(format!("cannot write {}: {reason}", path.display()))
}

/// Checks, before any work, that each of `paths` can be written: its folder exists and takes a new file, the path
/// is not a folder, and no path is named twice.
pub fn check_files(paths: &[&Path]) -> Result<(), Failure> {
    for (i, path) in paths.iter().enumerate() {
        if paths[..i].contains(path) {
            return Err(Failure::Usage(format!("{} is named as two outputs", path.display())));
        }
        if path.is_dir() {
            return Err(cannot_write(path, "it is a folder"));
        }
        let folder = folder_of(path);
        if !folder.is_dir() {
            let reason = match folder.exists() {
                true => format!("{} is not a folder", folder.display()),
                false => format!("the folder {} does not exist", folder.display()),
            };
            return Err(cannot_write(path, reason));
        }
        let probe = Temporary::create(path).map_err(|e| cannot_write(path, e))?;
        probe.remove();
    }
    Ok(())
}

/// Checks, before any work, that `dir` is a folder that takes new files, creating it (and its parents) if it does
/// not exist.
pub fn check_dir(dir: &Path) -> Result<(), Failure> {
    let fail = |reason: String| Failure::Message(format!("cannot write into {}: {reason}", dir.display()));
    if dir.exists() && !dir.is_dir() {
        return Err(fail("it is not a folder".into()));
    }
    std::fs::create_dir_all(dir).map_err(|e| fail(e.to_string()))?;
    let probe = Temporary::create(&dir.join("probe")).map_err(|e| fail(e.to_string()))?;
    probe.remove();
    Ok(())
}

/// Writes `path` whole or not at all: `write` fills a new file at a temporary path in the same folder (it may
/// create or truncate that path, as file writers do), which is then synced and renamed to `path`. `write` returns
/// the reason of a failure, without the path (the message names `path`).
pub fn write_atomic(path: &Path, write: impl FnOnce(&Path) -> Result<(), String>) -> Result<(), Failure> {
    let temporary = Temporary::create(path).map_err(|e| cannot_write(path, e))?;
    let written = write(&temporary.path).and_then(|()| {
        // A writer may have replaced the file by one of its own (safetensors writes a 0600 temporary file and
        // renames it): the mode the process gave the new file is restored.
        std::fs::set_permissions(&temporary.path, temporary.permissions.clone()).map_err(|e| e.to_string())?;
        // The data reach the disk before the name does: after a crash the name holds the old file or the new one.
        File::open(&temporary.path).and_then(|f| f.sync_all()).map_err(|e| e.to_string())?;
        std::fs::rename(&temporary.path, path).map_err(|e| e.to_string())
    });
    if let Err(reason) = written {
        temporary.remove();
        return Err(cannot_write(path, reason));
    }
    // The rename itself is durable once the folder is synced (not possible on every platform: best effort).
    if let Ok(folder) = File::open(folder_of(path)) {
        let _ = folder.sync_all();
    }
    Ok(())
}

/// [`write_atomic`] of bytes.
pub fn write_bytes(path: &Path, bytes: &[u8]) -> Result<(), Failure> {
    write_atomic(path, |temporary| std::fs::write(temporary, bytes).map_err(|e| e.to_string()))
}

/// Writes `text` to standard output; a closed pipe (`… | head`) or a full disk is an error naming `what`, not a panic
/// (which `print!` would be).
pub fn write_stdout(text: &str, what: &str) -> Result<(), Failure> {
    let mut stdout = std::io::stdout().lock();
    stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
        .map_err(|e| Failure::Message(format!("cannot write {what} to standard output: {e}")))
}

/// A fresh file beside its final name: `.<name>.<pid>-<n>.partial`. Created by the process with the usual mode
/// (0666 less the umask), which file writers keep when they truncate it.
struct Temporary {
    path: PathBuf,
    /// As created: 0666 less the umask.
    permissions: std::fs::Permissions,
}

impl Temporary {
    fn create(final_path: &Path) -> std::io::Result<Self> {
        static COUNTER: AtomicUsize = AtomicUsize::new(0);
        let name = final_path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let path = folder_of(final_path).join(format!(".{name}.{}-{n}.partial", std::process::id()));
        let file = OpenOptions::new().write(true).create_new(true).open(&path)?;
        let permissions = file.metadata()?.permissions();
        Ok(Self { path, permissions })
    }

    fn remove(self) {
        let _ = std::fs::remove_file(&self.path);
    }
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
