//! Output files a user can trust:
//! - [`check_files`] / [`check_dir`]: every output path is checked before any work (the folder exists and takes a
//!   new file, the path is not a folder, no path is given twice), so a typo costs nothing;
//! - [`write_atomic`]: a file appears whole or not at all (written beside its final name, synced, renamed), with
//!   the usual mode (0666 less the umask, 0644 by default).
//!
//! Errors name the final path, never a temporary one.

use std::fs::{File, OpenOptions};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::error::EngineError;

/// The folder a file is written into (`.` for a bare file name).
fn folder_of(path: &Path) -> &Path {
    match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    }
}

fn cannot_write(path: &Path, source: io::Error) -> EngineError {
    EngineError::Write { path: path.to_path_buf(), source }
}

/// Checks, before any work, that each of `paths` can be written: its folder exists and takes a new file, the path
/// is not a folder, and no path is named twice.
pub fn check_files(paths: &[&Path]) -> Result<(), EngineError> {
    for (i, path) in paths.iter().enumerate() {
        if paths[..i].contains(path) {
            return Err(EngineError::DuplicateOutput { path: path.to_path_buf() });
        }
        if path.is_dir() {
            return Err(cannot_write(path, io::Error::new(io::ErrorKind::IsADirectory, "it is a folder")));
        }
        let folder = folder_of(path);
        if !folder.is_dir() {
            let source = match folder.exists() {
                true => io::Error::new(io::ErrorKind::NotADirectory, format!("{} is not a folder", folder.display())),
                false => {
                    io::Error::new(io::ErrorKind::NotFound, format!("the folder {} does not exist", folder.display()))
                }
            };
            return Err(cannot_write(path, source));
        }
        let probe = Temporary::create(path).map_err(|e| cannot_write(path, e))?;
        probe.remove();
    }
    Ok(())
}

/// Checks, before any work, that `dir` is a folder that takes new files, creating it (and its parents) if it does
/// not exist.
pub fn check_dir(dir: &Path) -> Result<(), EngineError> {
    let fail = |source: io::Error| EngineError::WriteInto { dir: dir.to_path_buf(), source };
    if dir.exists() && !dir.is_dir() {
        return Err(fail(io::Error::new(io::ErrorKind::NotADirectory, "it is not a folder")));
    }
    std::fs::create_dir_all(dir).map_err(fail)?;
    let probe = Temporary::create(&dir.join("probe")).map_err(fail)?;
    probe.remove();
    Ok(())
}

/// Writes `path` whole or not at all: `write` fills a new file at a temporary path in the same folder (it may
/// create or truncate that path, as file writers do), which is then synced and renamed to `path`. An error of
/// `write` names no path: the returned error names `path`.
pub fn write_atomic(path: &Path, write: impl FnOnce(&Path) -> io::Result<()>) -> Result<(), EngineError> {
    let temporary = Temporary::create(path).map_err(|e| cannot_write(path, e))?;
    let written = write(&temporary.path).and_then(|()| {
        // A writer may have replaced the file by one of its own (safetensors writes a 0600 temporary file and
        // renames it): the mode the process gave the new file is restored.
        std::fs::set_permissions(&temporary.path, temporary.permissions.clone())?;
        // The data reach the disk before the name does: after a crash the name holds the old file or the new one.
        File::open(&temporary.path).and_then(|f| f.sync_all())?;
        std::fs::rename(&temporary.path, path)
    });
    if let Err(source) = written {
        temporary.remove();
        return Err(cannot_write(path, source));
    }
    // The rename itself is durable once the folder is synced (not possible on every platform: best effort).
    if let Ok(folder) = File::open(folder_of(path)) {
        let _ = folder.sync_all();
    }
    Ok(())
}

/// [`write_atomic`] of bytes.
pub fn write_bytes(path: &Path, bytes: &[u8]) -> Result<(), EngineError> {
    write_atomic(path, |temporary| std::fs::write(temporary, bytes))
}

/// A fresh file beside its final name: `.<name>.<pid>-<n>.partial`. Created by the process with the usual mode
/// (0666 less the umask), which file writers keep when they truncate it.
struct Temporary {
    path: PathBuf,
    /// As created: 0666 less the umask.
    permissions: std::fs::Permissions,
}

impl Temporary {
    fn create(final_path: &Path) -> io::Result<Self> {
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
