//! `StoreError`: what can go wrong reading or writing result files; every message names the
//! file concerned.

use super::SUMMARY_FILE;
use std::io;
use std::path::{Path, PathBuf};

/// Errors of result-file I/O. Every message names the file concerned.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("cannot {action} {}: {error}", path.display())]
    Io {
        action: &'static str,
        path: PathBuf,
        error: io::Error,
    },
    #[error(
        "{} does not exist: expected a run directory (runs/<scenario>/<timestamp>/) or a baseline \
         CSV (baselines/<scenario>.csv)",
        path.display()
    )]
    NotFound { path: PathBuf },
    #[error("{} is not a run directory: it has no {SUMMARY_FILE}{hint}", path.display())]
    NoSummary { path: PathBuf, hint: String },
    #[error("{} is not a ladder result: {reason}", path.display())]
    NotAResult { path: PathBuf, reason: String },
    #[error("{} is empty: expected a ladder CSV with a header line", path.display())]
    Empty { path: PathBuf },
    #[error(
        "{} has a header but no rows: nothing to compare (was the run interrupted before its \
         first step finished?)",
        path.display()
    )]
    NoRows { path: PathBuf },
    #[error(
        "{} is INCOMPLETE: the run was stopped (killed or interrupted) before its first record \
         was written, so there is nothing to compare or summarize; run it again",
        path.display()
    )]
    StoppedBeforeFirstRecord { path: PathBuf },
    #[error("{} is not a ladder {kind}: missing column(s) {columns}{hint}", path.display())]
    MissingColumns {
        path: PathBuf,
        kind: &'static str,
        columns: String,
        hint: &'static str,
    },
    #[error(
        "{}: line {line}, column {column_no} (`{column}`): cannot read `{value}` as {expected}",
        path.display()
    )]
    BadValue {
        path: PathBuf,
        line: u64,
        column_no: usize,
        column: String,
        value: String,
        expected: String,
    },
    #[error("{}: malformed CSV: {error}", path.display())]
    Csv { path: PathBuf, error: String },
    #[error(
        "{}: line {line}: schema_version {found} is newer than this ladder reads (up to \
         {supported}); upgrade ladder",
        path.display()
    )]
    NewerSchema {
        path: PathBuf,
        line: u64,
        found: u32,
        supported: u32,
    },
    #[error("{}: invalid JSON: {error}", path.display())]
    Json { path: PathBuf, error: String },
    #[error(
        "cannot create a run directory under {}: scenario name `{name}` is not a plain file name",
        out.display()
    )]
    BadScenarioName { out: PathBuf, name: String },
}

impl StoreError {
    /// The input is fine, the run just never got far enough: a runtime outcome (exit 1, like
    /// any incomplete run), not the user's input error (exit 2).
    pub fn is_incomplete_run(&self) -> bool {
        matches!(self, StoreError::StoppedBeforeFirstRecord { .. })
    }

    pub(super) fn io(action: &'static str, path: &Path, error: io::Error) -> Self {
        StoreError::Io {
            action,
            path: path.to_path_buf(),
            error,
        }
    }

    pub(super) fn read(path: &Path, error: io::Error) -> Self {
        if error.kind() == io::ErrorKind::NotFound {
            StoreError::NotFound {
                path: path.to_path_buf(),
            }
        } else {
            StoreError::io("read", path, error)
        }
    }
}
