//! Loads a scenario for commands that send no traffic (`validate`, a dry run, `diff
//! --gates-from`): those must work in a CI job that has no secrets. Also how a stored run that
//! cannot be loaded reads to the user (`summarize`, `diff`).

use crate::error::UsageError;
use crate::scenario::{self, Overrides, Scenario, ScenarioError};
use crate::store;
use anyhow::Result;
use std::path::Path;

/// What an unset or empty secret reads as when nothing will be sent.
const SECRET_STAND_IN: &str = "ladder-validate-stand-in";

/// Loads a scenario for checks that send no traffic (`validate`, `diff --gates-from`): a
/// variable that holds a secret (`redact::is_secret_name`) and is unset or empty reads as a
/// stand-in, so a CI job without secrets can still validate; what is wrong with each is returned
/// for a note (`OPENAI_API_KEY is not set`, `… is set but empty`).
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
        let value = std::env::var(name).ok();
        let secret = crate::util::redact::is_secret_name(name);
        if !secret || value.as_deref().is_some_and(|v| !v.is_empty()) {
            return value;
        }
        let how = if value.is_some() {
            "is set but empty"
        } else {
            "is not set"
        };
        missing.borrow_mut().push((name.to_string(), how));
        // Nothing is sent: the stand-in only lets the rest of the file be checked.
        Some(SECRET_STAND_IN.to_string())
    };
    let s = scenario::load_str_with(text, path, &lookup, overrides)?;
    // `${NAME:-default}` needs no variable: only a use without a default does.
    let mut names: Vec<String> = missing
        .into_inner()
        .into_iter()
        .filter(|(n, _)| text.contains(&format!("${{{n}}}")))
        .map(|(n, how)| format!("{n} {how}"))
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
