//! Baselines: `baselines/<scenario>.csv` with its sidecars, and pooled baselines (a directory
//! of earlier runs' summaries, oldest dropped first).

use super::{read_summary_csv, write_atomic, StoreError};
use crate::stats::StepSummary;
use std::fs;
use std::path::{Path, PathBuf};

/// The files of one scenario's baseline.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BaselinePaths {
    /// `dir/<scenario>.csv`: the summary.
    pub summary: PathBuf,
    /// `dir/<scenario>.requests.csv`: per-request samples for the bootstrap.
    pub requests: PathBuf,
    /// `dir/<scenario>.workload.yaml`: the normalized workload, for the fingerprint diff.
    pub workload: PathBuf,
    /// `dir/<scenario>.runs/`: a pooled baseline's runs, one `<run id>.csv` summary each.
    pub runs: PathBuf,
}

pub fn baseline_paths(dir: &Path, scenario: &str) -> BaselinePaths {
    BaselinePaths {
        summary: dir.join(format!("{scenario}.csv")),
        requests: dir.join(format!("{scenario}.requests.csv")),
        workload: dir.join(format!("{scenario}.workload.yaml")),
        runs: dir.join(format!("{scenario}.runs")),
    }
}

/// A pooled baseline's runs, oldest first: each `<run id>.csv` in `dir` (run ids are UTC
/// timestamps, so name order is time order). Empty when `dir` does not exist.
pub fn read_pool(dir: &Path) -> Result<Vec<(String, Vec<StepSummary>)>, StoreError> {
    if !dir.is_dir() {
        return Ok(Vec::new());
    }
    let mut ids: Vec<String> = fs::read_dir(dir)
        .map_err(|e| StoreError::read(dir, e))?
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            name.strip_suffix(".csv").map(str::to_string)
        })
        .collect();
    ids.sort_by(|a, b| run_order(a).cmp(&run_order(b)));
    ids.into_iter()
        .map(|id| {
            let rows = read_summary_csv(&dir.join(format!("{id}.csv")))?;
            Ok((id, rows))
        })
        .collect()
}

/// Time order of run ids: the UTC timestamp, then the `-2`, `-3`, ... that `create_run_dir`
/// adds to runs started in the same second (so `…Z-10` comes after `…Z-2`, and both after `…Z`).
pub(super) fn run_order(id: &str) -> (&str, u32) {
    match id.rsplit_once('-') {
        Some((stamp, n))
            if stamp.ends_with('Z') && !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) =>
        {
            (stamp, n.parse().unwrap_or(u32::MAX))
        }
        _ => (id, 1),
    }
}

/// How `write_baseline` keeps earlier runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Keep {
    /// The run replaces the baseline, and a pool of earlier runs is removed.
    Replace,
    /// The run joins the pool under `baselines/<scenario>.runs/`, which keeps the newest `k`.
    Pool(u32),
}

/// Adds a run's summary to a pooled baseline's directory and removes the oldest runs beyond
/// `keep`; returns how many runs the pool holds. Each file is written atomically.
pub fn add_to_pool(
    dir: &Path,
    run_id: &str,
    summary_bytes: &[u8],
    keep: u32,
) -> Result<usize, StoreError> {
    fs::create_dir_all(dir).map_err(|e| StoreError::io("create", dir, e))?;
    write_atomic(&dir.join(format!("{run_id}.csv")), summary_bytes)?;
    let pool = read_pool(dir)?;
    let drop = pool.len().saturating_sub(keep.max(1) as usize);
    for (id, _) in &pool[..drop] {
        let path = dir.join(format!("{id}.csv"));
        fs::remove_file(&path).map_err(|e| StoreError::io("remove", &path, e))?;
    }
    Ok(pool.len() - drop)
}

/// Removes a pooled baseline's runs (a plain `--save-baseline` starts over with one run);
/// returns how many it removed.
pub fn clear_pool(dir: &Path) -> Result<usize, StoreError> {
    if !dir.is_dir() {
        return Ok(0);
    }
    let pool = read_pool(dir)?;
    for (id, _) in &pool {
        let path = dir.join(format!("{id}.csv"));
        fs::remove_file(&path).map_err(|e| StoreError::io("remove", &path, e))?;
    }
    // Only when empty: anything else a user put there stays.
    let _ = fs::remove_dir(dir);
    Ok(pool.len())
}

/// Writes the three baseline files, each atomically; the summary goes last so that it is the
/// last file to change.
pub fn write_baseline(
    paths: &BaselinePaths,
    summary_bytes: &[u8],
    requests_bytes: &[u8],
    workload_yaml: &str,
) -> Result<(), StoreError> {
    write_atomic(&paths.requests, requests_bytes)?;
    write_atomic(&paths.workload, workload_yaml.as_bytes())?;
    write_atomic(&paths.summary, summary_bytes)
}
