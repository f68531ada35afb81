//! Running `nemotron-audio` as a user runs it, shared by the CLI test files.

#![allow(dead_code)] // each test binary uses a different part of this module

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A path under the repository's `testdata/`.
pub fn testdata(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata").join(path)
}

/// Runs the binary: it must not panic nor print a `Debug` dump.
pub fn run(args: &[&str]) -> Output {
    let output = Command::new(env!("CARGO_BIN_EXE_nemotron-audio")).args(args).output().expect("the binary runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!stderr.contains("panicked"), "nemotron-audio {args:?} panicked:\n{stderr}");
    assert_no_debug_text(args, &stderr);
    output
}

/// Every message is a sentence: no `Debug` dump of an error (`Os { code: 2, kind: NotFound, … }`,
/// `ImageError(IoError(…))`) on any path the tests take.
pub fn assert_no_debug_text(args: &[&str], stderr: &str) {
    for dump in ["Os {", "kind: ", " { code", "Error(", "Custom {", "\"/", ".partial"] {
        assert!(!stderr.contains(dump), "nemotron-audio {args:?} printed `{dump}`:\n{stderr}");
    }
}

/// Runs the binary: it must succeed.
pub fn ok(args: &[&str]) -> Output {
    let output = run(args);
    assert!(output.status.success(), "nemotron-audio {args:?} failed:\n{}", String::from_utf8_lossy(&output.stderr));
    output
}

/// Exit status 1 and an `error:` message naming `needle` (a list of problems may follow it on
/// indented lines); returns the message.
pub fn fails(args: &[&str], needle: &str) -> String {
    let output = run(args);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "nemotron-audio {args:?}: {stderr}");
    let start = stderr.rfind("error: ").unwrap_or_else(|| panic!("no error line in {stderr}"));
    assert!(start == 0 || stderr[..start].ends_with('\n'), "no error line in {stderr}");
    let message = &stderr[start..];
    assert!(message.contains(needle), "`{message}` should mention `{needle}`");
    message.to_string()
}

pub fn path_str(p: &Path) -> &str {
    p.to_str().unwrap()
}
