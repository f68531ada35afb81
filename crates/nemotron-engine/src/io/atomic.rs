//! Files that appear whole or not at all: written beside their final name, synced, then renamed over it, with the
//! usual mode (0666 less the umask, 0644 by default). After a crash the name holds the old file or the new one,
//! never a part; a failed write leaves nothing behind.

use std::fs::{File, OpenOptions};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

/// The folder a file is written into (`.` for a bare file name).
pub fn folder_of(path: &Path) -> &Path {
    match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    }
}

/// Writes `path` whole or not at all: `write` fills a new file at a temporary path in the same folder (it may
/// create or truncate that path, as file writers do), which is then synced and renamed to `path`. The error is the
/// first I/O error met; the temporary file is removed.
pub fn write_atomic(path: &Path, write: impl FnOnce(&Path) -> io::Result<()>) -> io::Result<()> {
    let temporary = Temporary::create(path)?;
    let written = write(&temporary.path).and_then(|()| {
        // A writer may have replaced the file by one of its own (safetensors writes a 0600 temporary file and
        // renames it): the mode the process gave the new file is restored.
        std::fs::set_permissions(&temporary.path, temporary.permissions.clone())?;
        // The data reach the disk before the name does: after a crash the name holds the old file or the new one.
        File::open(&temporary.path).and_then(|f| f.sync_all())?;
        std::fs::rename(&temporary.path, path)
    });
    if let Err(error) = written {
        temporary.remove();
        return Err(error);
    }
    // The rename itself is durable once the folder is synced (not possible on every platform: best effort).
    if let Ok(folder) = File::open(folder_of(path)) {
        let _ = folder.sync_all();
    }
    Ok(())
}

/// [`write_atomic`] of bytes.
pub fn write_bytes(path: &Path, bytes: &[u8]) -> io::Result<()> {
    write_atomic(path, |temporary| std::fs::write(temporary, bytes))
}

/// Checks that the folder of `path` takes the new file [`write_atomic`] would write there, by creating that file
/// and removing it.
pub fn probe(path: &Path) -> io::Result<()> {
    Temporary::create(path)?.remove();
    Ok(())
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
