//! Every file ladder writes or reads as a result (DESIGN §6): run directories
//! (`runs/<scenario>/<UTC timestamp>/`), baselines (`baselines/<scenario>.csv` plus sidecars) and
//! loading either side of a diff. It is the only module that does result-file I/O. Every file
//! but one is written atomically (temp file in the same directory, fsync, rename), so a crash or
//! Ctrl-C never leaves a half-written file under its final name; `requests.csv` is appended to
//! as requests end (`appender`), and `meta.json` says `complete: false` until the run ends, so a
//! killed run still leaves its records and readers know it stopped early. CSV encoding lives in
//! `summary_csv` and `requests_csv` (on the shared `csv_io`).

mod appender;
mod csv_io;
mod requests_csv;
mod shards;
mod summary_csv;

pub use appender::{RequestsAppender, FLUSH_EVERY};
pub use requests_csv::{read_requests_csv, requests_csv, REQUEST_COLUMNS};
pub use shards::{
    check_merge_output, find_runs, read_shard, shards_settled, stopped_early, write_merged,
    MergedFiles, ShardFiles,
};
pub use summary_csv::{parse_summary_csv, read_summary_csv, summary_csv, SUMMARY_COLUMNS};

use crate::model::{RequestRecord, StepRun};
pub use crate::model::{Slo, SloMs};
use crate::stats::StepSummary;
use serde::{Deserialize, Serialize};
use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// File names inside a run directory.
pub const SUMMARY_FILE: &str = "summary.csv";
pub const REQUESTS_FILE: &str = "requests.csv";
pub const SCENARIO_FILE: &str = "scenario.yaml";
pub const WORKLOAD_FILE: &str = "workload.yaml";
pub const META_FILE: &str = "meta.json";
pub const FINDINGS_FILE: &str = "findings.json";
pub const SIM_STATS_FILE: &str = "sim_stats.json";
pub const SIM_TRUTH_FILE: &str = "sim_truth.json";

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
    fn io(action: &'static str, path: &Path, error: io::Error) -> Self {
        StoreError::Io {
            action,
            path: path.to_path_buf(),
            error,
        }
    }

    fn read(path: &Path, error: io::Error) -> Self {
        if error.kind() == io::ErrorKind::NotFound {
            StoreError::NotFound {
                path: path.to_path_buf(),
            }
        } else {
            StoreError::io("read", path, error)
        }
    }
}

static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// Writes `bytes` to `path` atomically: parent directories are created, the bytes go to
/// `.{file}.tmp.{pid}.{counter}` in the same directory, are fsynced, then renamed over `path`.
/// On any error the temp file is removed and `path` keeps its previous content (if any).
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), StoreError> {
    let file_name = path.file_name().ok_or_else(|| {
        let e = io::Error::new(io::ErrorKind::InvalidInput, "the path has no file name");
        StoreError::io("write", path, e)
    })?;
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    fs::create_dir_all(dir).map_err(|e| StoreError::io("create directory", dir, e))?;
    let n = TEMP_COUNTER.fetch_add(1, Ordering::Relaxed);
    let tmp = dir.join(format!(
        ".{}.tmp.{}.{n}",
        file_name.to_string_lossy(),
        std::process::id()
    ));
    let result = (|| {
        let mut f = fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)
            .map_err(|e| StoreError::io("create temporary file", &tmp, e))?;
        f.write_all(bytes)
            .map_err(|e| StoreError::io("write", &tmp, e))?;
        f.sync_all().map_err(|e| StoreError::io("sync", &tmp, e))?;
        drop(f);
        fs::rename(&tmp, path).map_err(|e| StoreError::io("replace", path, e))
    })();
    match result {
        Ok(()) => {
            // Best effort: make the rename itself durable (not supported everywhere).
            if let Ok(d) = fs::File::open(dir) {
                let _ = d.sync_all();
            }
            Ok(())
        }
        Err(e) => {
            let _ = fs::remove_file(&tmp);
            Err(e)
        }
    }
}

/// `2026-11-29T18:30:05Z`; times outside 1970..=9999 are clamped (humantime panics on them).
pub fn rfc3339_utc(t: SystemTime) -> String {
    const MAX_SECS: u64 = 253_402_300_799; // last second of year 9999
    let secs = t
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
        .min(MAX_SECS);
    humantime::format_rfc3339_seconds(UNIX_EPOCH + Duration::from_secs(secs)).to_string()
}

/// Host name from `/etc/hostname`, else `$HOSTNAME`, else `unknown`.
pub fn host_name() -> String {
    let from_file = fs::read_to_string("/etc/hostname").ok();
    let from_env = std::env::var("HOSTNAME").ok();
    [from_file, from_env]
        .into_iter()
        .flatten()
        .map(|s| s.trim().to_string())
        .find(|s| !s.is_empty())
        .unwrap_or_else(|| "unknown".to_string())
}

/// `meta.json` of a run directory.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Meta {
    pub tool_version: String,
    pub scenario: String,
    pub fingerprint: String,
    pub host: String,
    /// RFC 3339 UTC (`rfc3339_utc`).
    pub started_at: String,
    pub finished_at: String,
    /// Already redacted by the caller.
    pub command_line: Vec<String>,
    pub interrupted: bool,
    pub models: Vec<String>,
    pub ladder: Vec<u32>,
    /// What the ladder's values count (older runs: streams).
    #[serde(default)]
    pub ladder_unit: crate::stats::LadderUnit,
    #[serde(default)]
    pub notes: Vec<String>,
    /// `false` from the start of a run until everything is written: a run directory whose
    /// meta says `false` belongs to a run that was killed or crashed. Older runs lack the field
    /// and were complete when written.
    #[serde(default = "yes")]
    pub complete: bool,
    /// The steps that finished, in run order, with their wall time and self-check figures
    /// (what `ladder summarize` needs besides `requests.csv`).
    #[serde(default)]
    pub steps: Vec<StepRun>,
    /// The scenario's SLO in ms (for goodput when summaries are rebuilt).
    #[serde(default)]
    pub slo: SloMs,
    /// The scenario's `request.short_below` (for the short count when summaries are rebuilt or
    /// shards merged). Runs written before it was kept used the default.
    #[serde(default = "default_short_below")]
    pub short_below: f64,
    /// For a shard of a sharded run (`run --shard I/N`): which one, and its clock.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<crate::shard::ShardMeta>,
    /// For a merged run (`ladder merge`): the shards it was made from.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub merged_from: Vec<crate::shard::MergedShard>,
}

fn yes() -> bool {
    true
}

fn default_short_below() -> f64 {
    crate::scenario::DEFAULT_SHORT_BELOW
}

impl Meta {
    /// `meta.json` of scenario `s` as written before any traffic: `complete: false`, no steps
    /// yet. The run's own facts (tool version, host, start time, redacted command line) are the
    /// caller's, so tests and calibration can give fixed ones.
    pub fn before_traffic(
        s: &crate::scenario::Scenario,
        tool_version: String,
        host: String,
        started_at: String,
        command_line: Vec<String>,
    ) -> Meta {
        Meta {
            tool_version,
            scenario: s.name.clone(),
            fingerprint: s.fingerprint.clone(),
            host,
            started_at,
            finished_at: String::new(),
            command_line,
            interrupted: false,
            models: s.target.models.clone(),
            ladder: s.load.ladder.clone(),
            ladder_unit: s.load.ladder_unit(),
            notes: Vec::new(),
            complete: false,
            steps: Vec::new(),
            slo: SloMs::from(&s.slo),
            short_below: s.request.short_below,
            shard: None,
            merged_from: Vec::new(),
        }
    }

    /// Where an incomplete run stopped, in words: `stopped in step 3 of 4 (at 20 streams)`
    /// when `records` hold some of the unfinished step, else `stopped between steps 2 and 3 of
    /// 4`; with the model when the run has several. `None` for a complete run.
    pub fn stopped_at(&self, records: &[RequestRecord]) -> Option<String> {
        if self.complete {
            return None;
        }
        let per_step = self.models.len().max(1);
        let done = self.steps.len();
        let step_idx = done / per_step;
        let n = self.ladder.len();
        let Some(&c) = self.ladder.get(step_idx) else {
            return Some(format!(
                "stopped after step {n} of {n}, before its files were written"
            ));
        };
        let model = self.models.get(done % per_step);
        let step = step_idx as u32 + 1;
        let started = records
            .iter()
            .any(|r| r.step == step && model.map_or(true, |m| &r.model == m));
        let of_model = match model {
            Some(m) if per_step > 1 => format!(", model {m}"),
            _ => String::new(),
        };
        let at = self.ladder_unit.at(c);
        Some(if started || done == 0 {
            format!("stopped in step {step} of {n} ({at}{of_model})")
        } else if done % per_step != 0 {
            let m = model.map_or("", String::as_str);
            format!("stopped in step {step} of {n} ({at}) before model {m} started")
        } else {
            format!("stopped between steps {step_idx} and {step} of {n} ({at} next)")
        })
    }
}

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
    pub fn write_summary(&self, rows: &[StepSummary]) -> Result<(), StoreError> {
        write_atomic(&self.path.join(SUMMARY_FILE), &summary_csv(rows))
    }

    pub fn write_requests(&self, records: &[RequestRecord]) -> Result<(), StoreError> {
        write_atomic(&self.path.join(REQUESTS_FILE), &requests_csv(records))
    }

    /// Starts `requests.csv` for appending (a new run).
    pub fn append_requests(&self) -> Result<RequestsAppender, StoreError> {
        RequestsAppender::create(&self.path.join(REQUESTS_FILE))
    }

    /// The embedded simulator's own view: what it injected (`sim_stats.json`) and per-request
    /// server-side truth keyed by request_id (`sim_truth.json`), to check the client's timings.
    pub fn write_sim_report(
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
    pub fn write_scenario_yaml(&self, yaml: &str) -> Result<(), StoreError> {
        write_atomic(&self.path.join(SCENARIO_FILE), yaml.as_bytes())
    }

    /// The normalized workload (what the fingerprint hashes), shown as a diff when the
    /// fingerprints of two results differ.
    pub fn write_workload_yaml(&self, yaml: &str) -> Result<(), StoreError> {
        write_atomic(&self.path.join(WORKLOAD_FILE), yaml.as_bytes())
    }

    pub fn write_meta(&self, meta: &Meta) -> Result<(), StoreError> {
        write_json(&self.path.join(META_FILE), meta)
    }

    pub fn write_findings_json(&self, findings: &serde_json::Value) -> Result<(), StoreError> {
        write_json(&self.path.join(FINDINGS_FILE), findings)
    }
}

fn write_json<T: Serialize>(path: &Path, value: &T) -> Result<(), StoreError> {
    let mut bytes = serde_json::to_vec_pretty(value).map_err(|e| StoreError::Json {
        path: path.to_path_buf(),
        error: e.to_string(),
    })?;
    bytes.push(b'\n');
    write_atomic(path, &bytes)
}

/// Reads a run's `meta.json`.
pub fn read_meta(path: &Path) -> Result<Meta, StoreError> {
    let bytes = fs::read(path).map_err(|e| StoreError::read(path, e))?;
    serde_json::from_slice(&bytes).map_err(|e| StoreError::Json {
        path: path.to_path_buf(),
        error: e.to_string(),
    })
}

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
fn run_order(id: &str) -> (&str, u32) {
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

/// One side of a diff, from a run directory or a baseline CSV.
#[derive(Debug, Clone, PartialEq)]
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
}

/// Loads a run directory (`summary.csv`, optional `requests.csv` and `workload.yaml`) or a
/// baseline `.csv` (with `<stem>.requests.csv` and `<stem>.workload.yaml` when present). A path
/// to a run's own `summary.csv` loads that run directory.
pub fn load_result(path: &Path) -> Result<LoadedResult, StoreError> {
    let label = path.display().to_string();
    let meta = fs::metadata(path).map_err(|e| StoreError::read(path, e))?;
    let mut pool_dir = None;
    let (summary, requests, workload) = if meta.is_dir() {
        let meta_path = path.join(META_FILE);
        if meta_path.is_file() {
            let meta = read_meta(&meta_path)?;
            if !meta.complete {
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
        kept.iter()
            .map(|r| StepRun {
                model: r.model.clone(),
                step: r.step,
                concurrency: r.concurrency,
                duration_s: r.duration_s,
                client_cpu_pct: r.client_cpu_pct,
                loop_lag_p99_ms: r.loop_lag_p99_ms,
                dropped: 0,
                offered_rps: None,
                ladder_unit: r.ladder_unit,
            })
            .collect()
    } else {
        meta.steps.clone()
    };
    let slo = Slo::from(&meta.slo);
    let ctx = crate::stats::RunContext {
        scenario: &meta.scenario,
        fingerprint: &meta.fingerprint,
        slo: &slo,
        models: &meta.models,
        short_below: meta.short_below,
    };
    let mut summaries = crate::stats::summarize_run(&ctx, &mut records, &finished, &kept);
    // The unfinished step has no step record to say what its value counts: the run's meta does.
    // (Runs written before meta.json said it: the finished steps' records do.)
    let unit = finished.first().map_or(meta.ladder_unit, |s| s.ladder_unit);
    for s in summaries.iter_mut() {
        s.ladder_unit = unit;
    }
    if summaries.is_empty() {
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
    })
}

/// For `runs/<scenario>/` given instead of one of its runs: name the latest run inside.
fn latest_run_hint(dir: &Path) -> String {
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

#[cfg(test)]
mod tests {
    use super::requests_csv::tests::request;
    use super::summary_csv::tests::summary_row;
    use super::*;

    const STAMP: u64 = 1_795_977_005; // 2026-11-29T18:30:05Z

    fn at(secs: u64) -> SystemTime {
        UNIX_EPOCH + Duration::from_secs(secs)
    }

    fn names(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn write_atomic_creates_dirs_replaces_content_and_leaves_no_temp_files() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("a/b/out.csv");
        write_atomic(&target, b"first").unwrap();
        assert_eq!(fs::read(&target).unwrap(), b"first");
        write_atomic(&target, b"second, longer").unwrap();
        assert_eq!(fs::read(&target).unwrap(), b"second, longer");
        write_atomic(&target, b"").unwrap();
        assert_eq!(fs::read(&target).unwrap(), b"");
        assert_eq!(names(&dir.path().join("a/b")), ["out.csv"]);
    }

    #[test]
    fn failed_write_atomic_removes_its_temp_file() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("taken");
        fs::create_dir(&target).unwrap();
        fs::write(target.join("keep"), b"x").unwrap();
        let err = write_atomic(&target, b"data").unwrap_err();
        assert!(err.to_string().starts_with("cannot replace "), "{err}");
        assert!(err.to_string().contains("taken"), "{err}");
        assert_eq!(names(dir.path()), ["taken"]);
        assert_eq!(names(&target), ["keep"]);
    }

    #[test]
    fn timestamps_are_utc_and_clamped() {
        assert_eq!(rfc3339_utc(at(STAMP)), "2026-11-29T18:30:05Z");
        assert_eq!(
            rfc3339_utc(UNIX_EPOCH - Duration::from_secs(5)),
            "1970-01-01T00:00:00Z"
        );
        assert_eq!(rfc3339_utc(at(u64::MAX / 4)), "9999-12-31T23:59:59Z");
        assert!(!host_name().is_empty());
    }

    #[test]
    fn run_dirs_are_timestamped_and_never_reused() {
        let out = tempfile::tempdir().unwrap();
        let first = create_run_dir(out.path(), "demo", at(STAMP)).unwrap();
        assert_eq!(first.path, out.path().join("demo/2026-11-29T18-30-05Z"));
        assert!(first.path.is_dir());
        let second = create_run_dir(out.path(), "demo", at(STAMP)).unwrap();
        assert_eq!(second.path, out.path().join("demo/2026-11-29T18-30-05Z-2"));
        let third = create_run_dir(out.path(), "demo", at(STAMP)).unwrap();
        assert_eq!(third.path, out.path().join("demo/2026-11-29T18-30-05Z-3"));
        for bad in ["", "..", "a/b", "."] {
            let err = create_run_dir(out.path(), bad, at(STAMP)).unwrap_err();
            assert!(
                matches!(err, StoreError::BadScenarioName { .. }),
                "{bad}: {err}"
            );
        }
    }

    #[test]
    fn run_dir_writes_every_file_and_meta_round_trips() {
        let out = tempfile::tempdir().unwrap();
        let run = create_run_dir(out.path(), "demo", at(STAMP)).unwrap();
        let meta = Meta {
            tool_version: "0.1.0".into(),
            scenario: "demo".into(),
            fingerprint: "abc".into(),
            host: "box".into(),
            started_at: rfc3339_utc(at(STAMP)),
            finished_at: rfc3339_utc(at(STAMP + 90)),
            command_line: vec!["ladder".into(), "run".into(), "demo.yaml".into()],
            interrupted: true,
            models: vec!["gpt-4o".into()],
            ladder: vec![5, 10],
            ladder_unit: Default::default(),
            notes: vec![],
            complete: true,
            steps: vec![],
            slo: SloMs::default(),
            short_below: 0.1,
            shard: None,
            merged_from: vec![],
        };
        run.write_summary(&[summary_row("gpt-4o", 1)]).unwrap();
        run.write_requests(&[request("gpt-4o", 1, 0, 0)]).unwrap();
        run.write_scenario_yaml("name: demo\n").unwrap();
        run.write_workload_yaml("api: openai-chat\n").unwrap();
        run.write_meta(&meta).unwrap();
        run.write_findings_json(&serde_json::json!({"knee": null}))
            .unwrap();
        assert_eq!(
            names(&run.path),
            [
                FINDINGS_FILE,
                META_FILE,
                REQUESTS_FILE,
                SCENARIO_FILE,
                SUMMARY_FILE,
                WORKLOAD_FILE
            ]
        );
        assert_eq!(read_meta(&run.path.join(META_FILE)).unwrap(), meta);
        let json = fs::read_to_string(run.path.join(META_FILE)).unwrap();
        assert!(
            json.contains("\"finished_at\": \"2026-11-29T18:31:35Z\""),
            "{json}"
        );
    }

    #[test]
    fn rebuilt_summaries_use_the_runs_short_threshold_and_old_meta_reads_the_default() {
        let out = tempfile::tempdir().unwrap();
        let run = create_run_dir(out.path(), "demo", at(STAMP)).unwrap();
        // 150 of 200 tokens, no `length`: short under 80%, not under the default 10%.
        let mut r = request("gpt-4o", 1, 0, 0);
        r.output_tokens = Some(150);
        r.finish_reason = Some("stop".into());
        run.write_requests(&[r]).unwrap();
        let mut meta = read_meta_fixture();
        meta.ladder = vec![5];
        meta.short_below = 0.8;
        assert_eq!(rebuild_run(&run.path, &meta).unwrap().summaries[0].short, 1);
        meta.short_below = 0.1;
        assert_eq!(rebuild_run(&run.path, &meta).unwrap().summaries[0].short, 0);
        // meta.json written before it kept `short_below`: the default.
        run.write_meta(&meta).unwrap();
        let path = run.path.join(META_FILE);
        let mut json: serde_json::Value =
            serde_json::from_str(&fs::read_to_string(&path).unwrap()).unwrap();
        json.as_object_mut().unwrap().remove("short_below");
        fs::write(&path, json.to_string()).unwrap();
        let old = read_meta(&path).unwrap();
        assert_eq!(old.short_below, crate::scenario::DEFAULT_SHORT_BELOW);
    }

    #[test]
    fn load_result_from_run_dir() {
        let out = tempfile::tempdir().unwrap();
        let run = create_run_dir(out.path(), "demo", at(STAMP)).unwrap();
        run.write_summary(&[summary_row("gpt-4o", 1)]).unwrap();
        let bare = load_result(&run.path).unwrap();
        assert_eq!(bare.summaries, vec![summary_row("gpt-4o", 1)]);
        assert_eq!((bare.requests, bare.workload_yaml), (None, None));
        assert_eq!(bare.label, run.path.display().to_string());

        run.write_requests(&[request("gpt-4o", 1, 0, 0)]).unwrap();
        run.write_workload_yaml("api: openai-chat\n").unwrap();
        let full = load_result(&run.path).unwrap();
        assert_eq!(full.requests, Some(vec![request("gpt-4o", 1, 0, 0)]));
        assert_eq!(full.workload_yaml.as_deref(), Some("api: openai-chat\n"));
        // The run's own summary.csv loads the same run, sidecars included.
        let via_file = load_result(&run.path.join(SUMMARY_FILE)).unwrap();
        assert_eq!(via_file.requests, full.requests);
        assert_eq!(via_file.workload_yaml, full.workload_yaml);
    }

    #[test]
    fn a_pool_keeps_the_newest_runs_in_time_order() {
        let dir = tempfile::tempdir().unwrap();
        let runs = dir.path().join("b.runs");
        let summary = summary_csv(&[]);
        for id in [
            "2026-01-01T00-00-00Z-10",
            "2026-01-01T00-00-00Z",
            "2026-01-01T00-00-00Z-2",
        ] {
            add_to_pool(&runs, id, &summary, 5).unwrap();
        }
        let ids = |d: &Path| -> Vec<String> {
            read_pool(d)
                .unwrap()
                .into_iter()
                .map(|(id, _)| id)
                .collect()
        };
        assert_eq!(
            ids(&runs),
            [
                "2026-01-01T00-00-00Z",
                "2026-01-01T00-00-00Z-2",
                "2026-01-01T00-00-00Z-10"
            ]
        );
        assert_eq!(
            add_to_pool(&runs, "2026-01-02T00-00-00Z", &summary, 2).unwrap(),
            2
        );
        assert_eq!(
            ids(&runs),
            ["2026-01-01T00-00-00Z-10", "2026-01-02T00-00-00Z"]
        );
        clear_pool(&runs).unwrap();
        assert!(!runs.exists());
        assert!(read_pool(&runs).unwrap().is_empty());
    }

    #[test]
    fn load_result_from_baseline_with_and_without_sidecars() {
        let dir = tempfile::tempdir().unwrap();
        let paths = baseline_paths(&dir.path().join("baselines"), "demo");
        assert_eq!(paths.summary, dir.path().join("baselines/demo.csv"));
        assert_eq!(
            paths.requests,
            dir.path().join("baselines/demo.requests.csv")
        );
        assert_eq!(
            paths.workload,
            dir.path().join("baselines/demo.workload.yaml")
        );
        let summary = summary_csv(&[summary_row("m", 1), summary_row("m", 2)]);
        let requests = requests_csv(&[request("m", 1, 0, 0)]);
        write_baseline(&paths, &summary, &requests, "api: x\n").unwrap();
        let full = load_result(&paths.summary).unwrap();
        assert_eq!(full.summaries.len(), 2);
        assert_eq!(full.requests, Some(vec![request("m", 1, 0, 0)]));
        assert_eq!(full.workload_yaml.as_deref(), Some("api: x\n"));

        fs::remove_file(&paths.requests).unwrap();
        fs::remove_file(&paths.workload).unwrap();
        let bare = load_result(&paths.summary).unwrap();
        assert_eq!(bare.summaries, full.summaries);
        assert_eq!((bare.requests, bare.workload_yaml), (None, None));
        assert_eq!(names(&dir.path().join("baselines")), ["demo.csv"]);
    }

    #[test]
    fn load_result_errors_say_what_is_wrong() {
        let dir = tempfile::tempdir().unwrap();
        let msg = |p: &Path| load_result(p).unwrap_err().to_string();

        let missing = dir.path().join("nope.csv");
        assert!(msg(&missing).contains("nope.csv does not exist: expected a run directory"));

        let out = dir.path().join("runs");
        let run = create_run_dir(&out, "demo", at(STAMP)).unwrap();
        run.write_summary(&[summary_row("m", 1)]).unwrap();
        let m = msg(&out.join("demo"));
        assert!(
            m.contains("is not a run directory: it has no summary.csv"),
            "{m}"
        );
        assert!(
            m.contains("the latest is") && m.contains("2026-11-29T18-30-05Z"),
            "{m}"
        );

        let paths = baseline_paths(dir.path(), "b");
        write_baseline(&paths, &summary_csv(&[]), &requests_csv(&[]), "").unwrap();
        assert!(msg(&paths.summary).contains("b.csv has a header but no rows"));
        assert!(msg(&paths.requests).contains("pass the baseline `b.csv` instead"));
        assert!(msg(&paths.workload).contains("expected a run directory or a baseline `.csv`"));
    }

    #[test]
    fn an_incomplete_run_says_where_it_stopped() {
        let mut meta = read_meta_fixture();
        assert_eq!(meta.stopped_at(&[]), None, "complete");
        meta.complete = false;
        assert_eq!(
            meta.stopped_at(&[]).as_deref(),
            Some("stopped in step 1 of 2 (at 5 streams)")
        );
        meta.steps.push(StepRun {
            model: "gpt-4o".into(),
            step: 1,
            concurrency: 5,
            duration_s: 1.0,
            client_cpu_pct: None,
            loop_lag_p99_ms: None,
            ..StepRun::default()
        });
        assert_eq!(
            meta.stopped_at(&[]).as_deref(),
            Some("stopped between steps 1 and 2 of 2 (at 10 streams next)")
        );
        let in_step_2 = [request("gpt-4o", 2, 0, 0)];
        assert_eq!(
            meta.stopped_at(&in_step_2).as_deref(),
            Some("stopped in step 2 of 2 (at 10 streams)")
        );
        meta.steps.push(meta.steps[0].clone());
        assert!(meta.stopped_at(&[]).unwrap().contains("after step 2 of 2"));
    }

    fn read_meta_fixture() -> Meta {
        Meta {
            tool_version: "0.1.0".into(),
            scenario: "demo".into(),
            fingerprint: "abc".into(),
            host: "box".into(),
            started_at: String::new(),
            finished_at: String::new(),
            command_line: vec![],
            interrupted: false,
            models: vec!["gpt-4o".into()],
            ladder: vec![5, 10],
            ladder_unit: Default::default(),
            notes: vec![],
            complete: true,
            steps: vec![],
            slo: SloMs::default(),
            short_below: 0.1,
            shard: None,
            merged_from: vec![],
        }
    }
}
