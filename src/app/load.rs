//! Loads a scenario for commands that send no traffic (`validate`, a dry run, `diff
//! --gates-from`): those must work in a CI job that has no secrets. Also how a stored run that
//! cannot be loaded reads to the user (`summarize`, `diff`).

use crate::error::UsageError;
use crate::scenario::{self, Overrides, Scenario, ScenarioError};
use crate::store;
use anyhow::Result;
use std::path::Path;

/// Loads a scenario for checks that send no traffic (`validate`, `diff --gates-from`): an unset
/// variable that holds a secret (`redact::is_secret_name`) reads as empty, so a
/// CI job without secrets can still validate; the names are returned for a note.
pub(super) fn load_without_secrets(path: &Path) -> Result<(Scenario, Vec<String>), ScenarioError> {
    let text = std::fs::read_to_string(path).map_err(|error| ScenarioError::Read {
        path: path.to_path_buf(),
        error,
    })?;
    load_text_without_secrets(&text, path, &Overrides::default())
}

/// `load_without_secrets` on scenario text as if read from `path`, with command-line overrides.
pub(super) fn load_text_without_secrets(
    text: &str,
    path: &Path,
    overrides: &Overrides,
) -> Result<(Scenario, Vec<String>), ScenarioError> {
    let missing = std::cell::RefCell::new(Vec::new());
    let lookup = |name: &str| -> Option<String> {
        std::env::var(name).ok().or_else(|| {
            if crate::util::redact::is_secret_name(name) {
                missing.borrow_mut().push(name.to_string());
                Some(String::new())
            } else {
                None
            }
        })
    };
    let s = scenario::load_str_with(text, path, &lookup, overrides)?;
    // `${NAME:-default}` needs no variable: only a use without a default does.
    let mut names: Vec<String> = missing
        .into_inner()
        .into_iter()
        .filter(|n| text.contains(&format!("${{{n}}}")))
        .collect();
    names.sort();
    names.dedup();
    Ok((s, names))
}

/// A store error as the user's input error (exit 2), except a run that stopped before its first
/// record: that one is INCOMPLETE (exit 1), like any other killed run.
pub(super) fn store_input(e: store::StoreError) -> anyhow::Error {
    if e.is_incomplete_run() {
        e.into()
    } else {
        UsageError(e.to_string()).into()
    }
}
