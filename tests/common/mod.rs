//! Helpers shared by the end-to-end tests of the `dtsim` binary: running
//! it, reading what it printed, repository paths, scratch directories and
//! scenarios, and the shape of a bad-input refusal.
//!
//! Each test file is its own crate and uses only some of these, so the
//! ones it leaves unused would warn there.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Runs this build's `dtsim` with `args` and waits for it.
pub fn dtsim(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_dtsim"))
        .args(args)
        .output()
        .expect("dtsim runs")
}

/// A path in the repository, as a string.
pub fn repo(p: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(p)
        .display()
        .to_string()
}

/// A file under tests/fixtures, as a string.
pub fn fixture(p: &str) -> String {
    repo(&format!("tests/fixtures/{p}"))
}

/// What the command printed on standard output.
pub fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).expect("UTF-8 on stdout")
}

/// What the command printed on standard error.
pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A fresh, empty scratch directory `group/name` for one test.
pub fn fresh_dir(group: &str, name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(group)
        .join(name);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Writes `text` as `group/name` in the scratch area (the directory is
/// shared by the group's tests and kept).
pub fn scratch_file(group: &str, name: &str, text: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(group);
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

/// Asserts exit code 2, no panic, nothing on stdout, and that stderr
/// names every fragment.
#[track_caller]
pub fn assert_bad(o: &Output, fragments: &[&str]) {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(2), "stderr: {err}");
    assert!(!err.contains("panicked"), "{err}");
    assert!(o.stdout.is_empty(), "nothing on stdout for an error");
    for f in fragments {
        assert!(err.contains(f), "`{f}` missing from: {err}");
    }
}
