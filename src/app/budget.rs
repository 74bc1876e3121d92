//! Before any traffic (`validate`, `run --dry-run`, the first lines of `run --against`): the
//! smallest change each gate can detect at the scenario's requests per step, from the
//! baseline's own spread (`compare::budget`). This file finds and loads the baseline and says
//! when there is none to learn from.

use crate::compare::budget;
use crate::compare::Side;
use crate::scenario::{Gates, Scenario};
use crate::store;
use std::path::Path;

/// The lines for `s` against the baseline at `path` (its summary CSV or run directory), read
/// here; a missing baseline or one of another workload is said in one line; none for an A/B
/// scenario.
pub(super) fn lines_from_path(s: &Scenario, gates: &Gates, path: &Path) -> Vec<String> {
    // An A/B run is judged between its two models, never against a baseline (and refuses to
    // save one): a baseline's spread says nothing of its gates.
    if s.compare_interleave {
        return Vec::new();
    }
    if !path.exists() {
        return vec![format!(
            "no baseline at {}: the smallest change each gate can detect comes from a baseline's spread; save one with `ladder run {} --save-baseline`",
            path.display(),
            s.path.display()
        )];
    }
    match store::load_result(path) {
        Ok(base) => lines_from_side(s, gates, &crate::app::side::of_result(&base)),
        Err(e) => vec![format!(
            "the baseline {} could not be read ({e}): no estimate of what the gates can detect",
            path.display()
        )],
    }
}

/// The lines for `s` against a baseline already loaded.
pub(super) fn lines_from_side(s: &Scenario, gates: &Gates, base: &Side) -> Vec<String> {
    if base.fingerprint != s.fingerprint {
        return vec![format!(
            "the baseline {} was measured with another workload (fingerprint {} vs {}): it cannot say what the gates can detect",
            base.label, base.fingerprint, s.fingerprint
        )];
    }
    let planned = |value: u32| s.load.planned_requests(value);
    budget::lines(&budget::detectable(base, gates, &planned), &base.label)
}
