//! Files written whole or not at all: a failed write leaves the old file and no temporary one, a writer that
//! replaces its file does not change the mode the new file gets, and a probe leaves nothing behind.

use std::path::Path;

use nemotron_engine::io::atomic::{folder_of, probe, write_atomic, write_bytes};

fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> =
        std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    names.sort();
    names
}

#[test]
fn a_failed_write_keeps_the_old_file_and_leaves_no_temporary_one() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("out.bin");
    write_bytes(&path, b"old").unwrap();
    let error = write_atomic(&path, |temporary| {
        std::fs::write(temporary, b"partial")?;
        Err(std::io::Error::other("disk full"))
    })
    .unwrap_err();
    assert_eq!(error.to_string(), "disk full");
    assert_eq!(std::fs::read(&path).unwrap(), b"old");
    assert_eq!(names(dir.path()), ["out.bin"]);
    write_bytes(&path, b"new").unwrap();
    assert_eq!(std::fs::read(&path).unwrap(), b"new");
    assert_eq!(names(dir.path()), ["out.bin"]);
}

#[cfg(unix)]
#[test]
fn a_writer_that_replaces_its_file_keeps_the_usual_mode() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let usual = dir.path().join("usual");
    write_bytes(&usual, b"x").unwrap();
    let mode = |path: &Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
    let replaced = dir.path().join("replaced");
    // As safetensors' file writer does: a 0600 file of its own renamed over the path it was given.
    write_atomic(&replaced, |temporary| {
        let own = temporary.with_extension("own");
        std::fs::write(&own, b"y")?;
        std::fs::set_permissions(&own, std::fs::Permissions::from_mode(0o600))?;
        std::fs::rename(own, temporary)
    })
    .unwrap();
    assert_ne!(mode(&usual), 0o600, "the umask gave new files 0600: the test cannot tell");
    assert_eq!(mode(&replaced), mode(&usual));
}

#[test]
fn probes_leave_nothing_and_fail_where_no_file_can_be_made() {
    let dir = tempfile::tempdir().unwrap();
    probe(&dir.path().join("out.json")).unwrap();
    assert!(names(dir.path()).is_empty());
    assert!(probe(&dir.path().join("missing/out.json")).is_err());
    assert_eq!(folder_of(Path::new("out.json")), Path::new("."));
    assert_eq!(folder_of(Path::new("a/b/out.json")), Path::new("a/b"));
}
