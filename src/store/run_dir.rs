//! A run directory `out/<scenario>/<UTC timestamp>/`: creating it without clobbering an earlier
//! run, and writing each of its files (for `write_run`, the one producer of run directories).

use super::{
    requests_csv, rfc3339_utc, summary_csv, write_atomic, write_json, Meta, RequestsAppender,
    StoreError, FINDINGS_FILE, META_FILE, REQUESTS_FILE, SCENARIO_FILE, SERVER_METRICS_FILE,
    SIM_STATS_FILE, SIM_TRUTH_FILE, SUMMARY_FILE, TIMELINE_FILE, WORKLOAD_FILE,
};
use crate::model::RequestRecord;
use crate::stats::StepSummary;
use serde::Serialize;
use std::fs;
use std::io::{self};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// A run directory `out/<scenario>/<UTC timestamp>/`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunDir {
    pub path: PathBuf,
}

/// Creates `out/<scenario>/<2026-11-29T18-30-05Z>` (colons are not portable in file names),
/// adding `-2`, `-3`, ... when that directory already exists.
pub fn create_run_dir(
    out: &Path,
    scenario: &str,
    started: SystemTime,
) -> Result<RunDir, StoreError> {
    create_run_dir_named(out, scenario, started, "")
}

/// As `create_run_dir`, with `suffix` after the timestamp (`-shard-2-of-8`).
pub fn create_run_dir_named(
    out: &Path,
    scenario: &str,
    started: SystemTime,
    suffix: &str,
) -> Result<RunDir, StoreError> {
    let plain = Path::new(scenario)
        .file_name()
        .is_some_and(|f| f == scenario);
    if !plain || scenario.contains(['/', '\\']) {
        return Err(StoreError::BadScenarioName {
            out: out.to_path_buf(),
            name: scenario.to_string(),
        });
    }
    let parent = out.join(scenario);
    fs::create_dir_all(&parent).map_err(|e| StoreError::io("create directory", &parent, e))?;
    let stamp = format!("{}{suffix}", rfc3339_utc(started).replace(':', "-"));
    for n in 1..=1000u32 {
        let name = if n == 1 {
            stamp.clone()
        } else {
            format!("{stamp}-{n}")
        };
        let path = parent.join(name);
        match fs::create_dir(&path) {
            Ok(()) => return Ok(RunDir { path }),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(StoreError::io("create directory", &path, e)),
        }
    }
    Err(StoreError::io(
        "create run directory",
        &parent.join(&stamp),
        io::Error::new(
            io::ErrorKind::AlreadyExists,
            "1000 runs with this timestamp already exist",
        ),
    ))
}

impl RunDir {
    pub(super) fn write_summary(&self, rows: &[StepSummary]) -> Result<(), StoreError> {
        write_atomic(&self.path.join(SUMMARY_FILE), &summary_csv(rows))
    }

    pub(super) fn write_requests(&self, records: &[RequestRecord]) -> Result<(), StoreError> {
        write_atomic(&self.path.join(REQUESTS_FILE), &requests_csv(records))
    }

    /// Starts `requests.csv` for appending (a new run).
    pub fn append_requests(&self) -> Result<RequestsAppender, StoreError> {
        RequestsAppender::create(&self.path.join(REQUESTS_FILE))
    }

    /// `server_metrics.csv` (the server's `/metrics` during the run), written atomically.
    pub(super) fn write_server_metrics(
        &self,
        rows: &[crate::model::MetricRow],
    ) -> Result<(), StoreError> {
        write_atomic(
            &self.path.join(SERVER_METRICS_FILE),
            &super::server_metrics_csv(rows),
        )
    }

    /// The embedded simulator's own view: what it injected (`sim_stats.json`) and per-request
    /// server-side truth keyed by request_id (`sim_truth.json`), to check the client's timings.
    pub(super) fn write_sim_report(
        &self,
        stats: &impl Serialize,
        truth: &impl Serialize,
    ) -> Result<(), StoreError> {
        write_json(&self.path.join(SIM_STATS_FILE), stats)?;
        let path = self.path.join(SIM_TRUTH_FILE);
        let bytes = serde_json::to_vec(truth).map_err(|e| StoreError::Json {
            path: path.clone(),
            error: e.to_string(),
        })?;
        write_atomic(&path, &bytes)
    }

    /// The normalized scenario as run, secrets already redacted by the caller.
    pub(super) fn write_scenario_yaml(&self, yaml: &str) -> Result<(), StoreError> {
        write_atomic(&self.path.join(SCENARIO_FILE), yaml.as_bytes())
    }

    /// The normalized workload (what the fingerprint hashes), shown as a diff when the
    /// fingerprints of two results differ.
    pub(super) fn write_workload_yaml(&self, yaml: &str) -> Result<(), StoreError> {
        write_atomic(&self.path.join(WORKLOAD_FILE), yaml.as_bytes())
    }

    pub(super) fn write_meta(&self, meta: &Meta) -> Result<(), StoreError> {
        write_json(&self.path.join(META_FILE), meta)
    }

    /// `timeline.csv` of `ladder logs` (rendered by `render::timeline`).
    pub(super) fn write_timeline_csv(&self, csv: &[u8]) -> Result<(), StoreError> {
        write_atomic(&self.path.join(TIMELINE_FILE), csv)
    }

    pub(super) fn write_findings_json(
        &self,
        findings: &serde_json::Value,
    ) -> Result<(), StoreError> {
        write_json(&self.path.join(FINDINGS_FILE), findings)
    }
}
