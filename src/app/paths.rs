//! The paths the commands that read runs (`report`, `report --trend`, `plan`, `diff`) share:
//! which run a path names (a folder of runs means its latest), and where a page goes without
//! `-o`; and where a scenario's baselines live (`run`, `validate`). Its own file so that those
//! commands depend on it, not on each other.

use crate::store;
use std::path::{Path, PathBuf};

/// Where a page goes without `-o`: `NAME.html` next to the inputs (in the run directory of
/// one run, else in the folder of the first input), never in the working directory. An
/// existing page there is kept: the new one becomes `NAME-2.html` (`-3`, ...), and the note
/// says so. `-o` writes where it is told, replacing what is there.
pub fn default_output(inputs: &[PathBuf], name: &str) -> (PathBuf, Option<String>) {
    let dir = match inputs.first() {
        Some(p) if p.is_dir() => p.clone(),
        Some(p) => p
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .map_or_else(|| PathBuf::from("."), Path::to_path_buf),
        None => PathBuf::from("."),
    };
    let first = dir.join(format!("{name}.html"));
    if !first.exists() {
        return (first, None);
    }
    let free = (2u32..)
        .map(|i| dir.join(format!("{name}-{i}.html")))
        .find(|p| !p.exists())
        .unwrap_or(first.clone());
    let note = format!(
        "{} exists: kept it and wrote {} (give -o FILE to choose, or to replace)",
        first.display(),
        free.display()
    );
    (free, Some(note))
}

/// `runs/demo/` (a folder of runs) means its latest run; anything else is taken as given.
/// Returns the path to load and, when it was resolved, a note saying so.
pub fn resolve_run(path: &Path) -> (PathBuf, Option<String>) {
    if !path.is_dir() || path.join(store::SUMMARY_FILE).is_file() {
        return (path.to_path_buf(), None);
    }
    let latest = std::fs::read_dir(path)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join(store::SUMMARY_FILE).is_file())
        .max();
    match latest {
        Some(p) => {
            let note = format!(
                "{} holds runs: using the latest, {}",
                path.display(),
                p.display()
            );
            (p, Some(note))
        }
        None => (path.to_path_buf(), None),
    }
}

/// `scenarios/x.yaml` -> `baselines/` beside the scenarios folder.
pub(crate) fn default_baselines_dir(scenario_path: &Path) -> PathBuf {
    let dir = scenario_path.parent().unwrap_or(Path::new("."));
    let parent = dir.parent().unwrap_or(Path::new("."));
    if dir.as_os_str().is_empty() {
        PathBuf::from("baselines")
    } else {
        parent.join("baselines")
    }
}
