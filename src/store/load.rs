//! The one loader of a run: a run directory or a baseline CSV read into a typed
//! [`LoadedResult`] (its summaries and records, its `meta.json`, its recorded scenario with its
//! gates, SLO, limits and load plan, and whether and where it stopped), and the rebuilding of a
//! run's summaries from its records when it never finished. Every command that reads a run
//! (`diff`, `report`, `plan`, `trend`, `run --against`) reads it through here.

use super::{
    baseline_paths, read_meta, read_pool, read_requests_csv, read_summary_csv, Meta, StoreError,
    META_FILE, REQUESTS_FILE, SCENARIO_FILE, SUMMARY_FILE, WORKLOAD_FILE,
};
use crate::model::{RequestRecord, StepRun, StoppedBy};
use crate::scenario::Recorded;
use crate::stats::StepSummary;
use std::fs;
use std::path::{Path, PathBuf};

/// One run, from a run directory or a baseline CSV.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LoadedResult {
    /// The path as given, for headings.
    pub label: String,
    pub summaries: Vec<StepSummary>,
    pub requests: Option<Vec<RequestRecord>>,
    pub workload_yaml: Option<String>,
    /// For a run that never finished (killed, crashed): where it stopped, in words.
    pub incomplete: Option<String>,
    /// A pooled baseline's runs (id, summary rows), oldest first; empty otherwise.
    pub pool: Vec<(String, Vec<StepSummary>)>,
    /// The run directory, when this is a run rather than a baseline CSV.
    pub dir: Option<PathBuf>,
    /// Its `meta.json`.
    pub meta: Option<Meta>,
    /// Its recorded `scenario.yaml`, read part by part.
    pub recorded: Option<Recorded>,
}

impl LoadedResult {
    /// Stopped before its plan ended, by a signal or the fail-fast rule (`meta.json` says
    /// `interrupted`).
    pub fn interrupted(&self) -> bool {
        self.meta.as_ref().is_some_and(|m| m.interrupted)
    }

    /// Why it stopped early (`meta.json`'s `stopped_by`), when it says.
    pub fn stopped_by(&self) -> Option<&StoppedBy> {
        self.meta.as_ref().and_then(|m| m.stopped_by.as_ref())
    }

    /// The recorded scenario's file, for messages.
    pub fn recorded_path(&self) -> Option<PathBuf> {
        self.recorded.as_ref()?;
        self.dir.as_ref().map(|d| d.join(SCENARIO_FILE))
    }
}

/// The run directory `path` names: the directory itself or the one holding its `summary.csv`.
/// `None` for a baseline CSV or anything else.
pub fn run_dir_of(path: &Path) -> Option<PathBuf> {
    if path.is_dir() {
        Some(path.to_path_buf())
    } else if path.file_name().is_some_and(|n| n == SUMMARY_FILE) {
        Some(path.parent().unwrap_or(Path::new(".")).to_path_buf())
    } else {
        None
    }
}

/// Loads a run directory or a baseline `.csv` (see [`load_summaries`]) with its run facts: the
/// typed `meta.json` and the recorded scenario (a run directory's only).
pub fn load_result(path: &Path) -> Result<LoadedResult, StoreError> {
    let mut loaded = load_summaries(path)?;
    if let Some(dir) = run_dir_of(path) {
        if loaded.meta.is_none() {
            let meta_path = dir.join(META_FILE);
            if meta_path.is_file() {
                loaded.meta = Some(read_meta(&meta_path)?);
            }
        }
        loaded.recorded = fs::read_to_string(dir.join(SCENARIO_FILE))
            .ok()
            .map(Recorded::from_yaml);
        loaded.dir = Some(dir);
    }
    Ok(loaded)
}

/// Loads a run directory (`summary.csv`, optional `requests.csv` and `workload.yaml`) or a
/// baseline `.csv` (with `<stem>.requests.csv` and `<stem>.workload.yaml` when present). A path
/// to a run's own `summary.csv` loads that run directory.
fn load_summaries(path: &Path) -> Result<LoadedResult, StoreError> {
    let label = path.display().to_string();
    let meta = fs::metadata(path).map_err(|e| StoreError::read(path, e))?;
    let mut pool_dir = None;
    let (summary, requests, workload) = if meta.is_dir() {
        let meta_path = path.join(META_FILE);
        if meta_path.is_file() {
            let meta = read_meta(&meta_path)?;
            // A killed run, or one interrupted before a step finished (its summary.csv has no
            // rows), is read from its records like any run that stopped early.
            if !meta.complete || (meta.interrupted && !has_rows(&path.join(SUMMARY_FILE))?) {
                return rebuild_run(path, &meta);
            }
        }
        let summary = path.join(SUMMARY_FILE);
        if !summary.is_file() {
            return Err(StoreError::NoSummary {
                path: path.to_path_buf(),
                hint: latest_run_hint(path),
            });
        }
        (summary, path.join(REQUESTS_FILE), path.join(WORKLOAD_FILE))
    } else {
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if let Some(stem) = name.strip_suffix(".requests.csv") {
            return Err(StoreError::NotAResult {
                path: path.to_path_buf(),
                reason: format!(
                    "it is a per-request sidecar; pass the baseline `{stem}.csv` instead"
                ),
            });
        }
        let Some(stem) = name.strip_suffix(".csv") else {
            return Err(StoreError::NotAResult {
                path: path.to_path_buf(),
                reason: "expected a run directory or a baseline `.csv` file".to_string(),
            });
        };
        if name == SUMMARY_FILE {
            let dir = path.parent().unwrap_or(Path::new("."));
            (
                path.to_path_buf(),
                dir.join(REQUESTS_FILE),
                dir.join(WORKLOAD_FILE),
            )
        } else {
            let dir = path.parent().unwrap_or(Path::new(""));
            let p = baseline_paths(dir, stem);
            pool_dir = Some(p.runs);
            (p.summary, p.requests, p.workload)
        }
    };
    let summaries = read_summary_csv(&summary)?;
    if summaries.is_empty() {
        return Err(StoreError::NoRows { path: summary });
    }
    let requests = if requests.is_file() {
        Some(read_requests_csv(&requests, false)?)
    } else {
        None
    };
    let workload_yaml = if workload.is_file() {
        Some(fs::read_to_string(&workload).map_err(|e| StoreError::read(&workload, e))?)
    } else {
        None
    };
    let pool = match pool_dir {
        Some(d) => read_pool(&d)?,
        None => Vec::new(),
    };
    Ok(LoadedResult {
        label,
        summaries,
        requests,
        workload_yaml,
        incomplete: None,
        pool,
        ..LoadedResult::default()
    })
}

/// A run directory read from its records: `requests.csv` (a torn last row dropped when the run
/// is incomplete) summarized per step with `stats::summarize_run`, keeping the live rows of
/// `summary.csv` for the steps that finished. What `ladder summarize` writes back, and how
/// `diff` reads a run that never finished.
pub fn rebuild_run(dir: &Path, meta: &Meta) -> Result<LoadedResult, StoreError> {
    let requests_path = dir.join(REQUESTS_FILE);
    if !requests_path.is_file() {
        return Err(StoreError::NotAResult {
            path: dir.to_path_buf(),
            reason: format!("it has no {REQUESTS_FILE} (the run stopped before it started)"),
        });
    }
    let mut records = read_requests_csv(&requests_path, !meta.complete)?;
    let summary_path = dir.join(SUMMARY_FILE);
    let kept = if summary_path.is_file() {
        read_summary_csv(&summary_path)?
    } else {
        Vec::new()
    };
    // Runs written before meta.json listed its steps: every row of summary.csv is a finished step.
    let finished: Vec<StepRun> = if meta.steps.is_empty() && meta.complete {
        kept.iter().map(StepSummary::step_run).collect()
    } else {
        meta.steps.clone()
    };
    let ctx = crate::stats::RunContext {
        scenario: &meta.scenario,
        fingerprint: &meta.fingerprint,
        slo: &meta.slo,
        models: &meta.models,
        short_below: meta.short_below,
        // An A/B run's finished steps say so; a run stopped in its first step, its scenario.
        interleaved: meta.steps.iter().any(|s| s.interleaved)
            || fs::read_to_string(dir.join(SCENARIO_FILE))
                .is_ok_and(|y| Recorded::from_yaml(y).compare_interleave),
    };
    let mut summaries = crate::stats::summarize_run(&ctx, &mut records, &finished, &kept);
    // The unfinished step has no step record to say what its value counts: the run's meta does.
    // (Runs written before meta.json said it: the finished steps' records do.)
    let unit = finished.first().map_or(meta.ladder_unit, |s| s.ladder_unit);
    for s in summaries.iter_mut() {
        s.ladder_unit = unit;
    }
    if summaries.is_empty() {
        // A run stopped before its first flush is unfinished, like any other stopped run.
        if !meta.complete || meta.interrupted {
            return Err(StoreError::StoppedBeforeFirstRecord {
                path: dir.to_path_buf(),
            });
        }
        return Err(StoreError::NoRows {
            path: requests_path,
        });
    }
    let workload = dir.join(WORKLOAD_FILE);
    let workload_yaml = fs::read_to_string(&workload).ok();
    Ok(LoadedResult {
        label: dir.display().to_string(),
        summaries,
        incomplete: meta.stopped_at(&records),
        requests: Some(records),
        workload_yaml,
        pool: Vec::new(),
        dir: Some(dir.to_path_buf()),
        meta: Some(meta.clone()),
        recorded: None,
    })
}

/// Whether a `summary.csv` has a data row (`false` when it is missing).
fn has_rows(summary: &Path) -> Result<bool, StoreError> {
    Ok(summary.is_file() && !read_summary_csv(summary)?.is_empty())
}

/// For `runs/<scenario>/` given instead of one of its runs: name the latest run inside.
pub(super) fn latest_run_hint(dir: &Path) -> String {
    let latest = fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join(SUMMARY_FILE).is_file())
        .max();
    match latest {
        Some(p) => format!(" (it holds runs; the latest is {})", p.display()),
        None => String::new(),
    }
}
