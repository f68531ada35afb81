//! Output files a user can trust:
//! - [`check_files`] / [`check_dir`]: every output path is checked before any work (the folder exists and takes a
//!   new file, the path is not a folder, no path is given twice), so a typo costs nothing;
//! - [`write_atomic`]: a file appears whole or not at all (written beside its final name, synced, renamed), with
//!   the usual mode (0666 less the umask, 0644 by default).
//!
//! Errors name the final path, never a temporary one. The atomic writes are [`crate::io::atomic`]'s, which the
//! speaker profiles' writer shares.

use std::io;
use std::path::Path;

use crate::error::EngineError;
use crate::io::atomic;

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
        let folder = atomic::folder_of(path);
        if !folder.is_dir() {
            let source = match folder.exists() {
                true => io::Error::new(io::ErrorKind::NotADirectory, format!("{} is not a folder", folder.display())),
                false => {
                    io::Error::new(io::ErrorKind::NotFound, format!("the folder {} does not exist", folder.display()))
                }
            };
            return Err(cannot_write(path, source));
        }
        atomic::probe(path).map_err(|e| cannot_write(path, e))?;
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
    atomic::probe(&dir.join("probe")).map_err(fail)
}

/// Writes `path` whole or not at all ([`atomic::write_atomic`]): `write` fills a new file at a temporary path in the
/// same folder (it may create or truncate that path, as file writers do), which is then synced and renamed to
/// `path`. An error of `write` names no path: the returned error names `path`.
pub fn write_atomic(path: &Path, write: impl FnOnce(&Path) -> io::Result<()>) -> Result<(), EngineError> {
    atomic::write_atomic(path, write).map_err(|e| cannot_write(path, e))
}

/// [`write_atomic`] of bytes.
pub fn write_bytes(path: &Path, bytes: &[u8]) -> Result<(), EngineError> {
    atomic::write_bytes(path, bytes).map_err(|e| cannot_write(path, e))
}
