//! Tests that need something this machine may lack (Chromium, Prometheus, `make`, `git`, an
//! open-files limit of 1024) must not pass green without running. Under `CI=true` the lack
//! fails the test, with how to install what is missing (`.ci/run` installs all of it). Elsewhere
//! the test is skipped and says so where a user sees it: on the terminal during `cargo test`
//! (not in the output libtest captures and hides for a passing test), and in the list that
//! `make test` prints at its end.

use std::io::Write;
use std::path::{Path, PathBuf};

/// Whether this is a CI run (`CI=true`, as GitHub Actions, GitLab CI and most runners set it;
/// `1` counts too).
pub fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true" || v == "1")
}

/// The list `make test` prints at its end: one line per skipped test, in cargo's scratch
/// directory for integration tests.
pub fn skipped_list() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join("skipped-tests.txt")
}

/// `found`, or (when it is `None`) the skip of `test` for lack of `missing`, with `how` to get
/// it: a panic under CI, else a visible report and `None` (the caller returns).
pub fn require<T>(found: Option<T>, test: &str, missing: &str, how: &str) -> Option<T> {
    if found.is_some() {
        return found;
    }
    assert!(
        !in_ci(),
        "{test}: {missing}, and CI=true: a CI run must run this test ({how})"
    );
    let line = format!("SKIPPED {test}: {missing} ({how}; CI=true makes this a failure)");
    // Straight to the process's stderr: `eprintln!` would be captured and hidden with the
    // test's passing output.
    let _ = writeln!(std::io::stderr(), "\n{line}");
    if let Ok(mut f) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(skipped_list())
    {
        let _ = writeln!(f, "{line}");
    }
    None
}

/// The first of `names` found in a directory of `PATH`.
pub fn on_path(names: &[&str]) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    names
        .iter()
        .flat_map(|name| std::env::split_paths(&path).map(move |d| d.join(name)))
        .find(|p| p.is_file())
}
