//! Every file ladder writes or reads as a result: run directories
//! (`runs/<scenario>/<UTC timestamp>/`), baselines (`baselines/<scenario>.csv` plus sidecars) and
//! loading either side of a diff. It is the only module that does result-file I/O. Every file
//! but one is written atomically (temp file in the same directory, fsync, rename), so a crash or
//! Ctrl-C never leaves a half-written file under its final name; `requests.csv` is appended to
//! as requests end (`appender`), and `meta.json` says `complete: false` until the run ends, so a
//! killed run still leaves its records and readers know it stopped early. `write_run` is the one
//! producer of run directories (`run`, `logs`, `merge`, `summarize`). CSV encoding lives in
//! `summary_csv` and `requests_csv` (on the shared `csv_io`).

mod appender;
mod baseline;
mod columns;
mod csv_io;
mod error;
mod files;
mod load;
mod meta;
mod requests_csv;
mod run_dir;
mod server_metrics_csv;
mod shards;
mod summary_csv;
mod timeline_csv;
mod write_run;

pub use appender::{RequestsAppender, FLUSH_EVERY};
pub use baseline::{
    add_to_pool, baseline_paths, clear_pool, read_pool, write_baseline, BaselinePaths, Keep,
};
pub use error::StoreError;
use files::write_json;
pub use files::{host_name, rfc3339_utc, write_atomic};
pub use load::{load_result, rebuild_run, run_dir_of, LoadedResult};
pub use meta::{read_meta, MergedShard, Meta, RunFacts, RunIdentity, ShardMeta};
pub use requests_csv::{read_requests_csv, request_columns, requests_csv};
pub use run_dir::{create_run_dir, create_run_dir_named, RunDir};
pub use server_metrics_csv::{read_server_metrics_csv, server_metrics_csv, SERVER_METRICS_COLUMNS};
pub use shards::{
    check_merge_output, find_runs, read_shard, shards_settled, stopped_early, write_merged,
    ShardFiles,
};
pub use summary_csv::{parse_summary_csv, read_summary_csv, summary_columns, summary_csv};
pub use timeline_csv::{read_timeline_csv, TimelineMinute};
pub use write_run::{write_run, RunFiles};

/// File names inside a run directory.
pub const SUMMARY_FILE: &str = "summary.csv";
pub const REQUESTS_FILE: &str = "requests.csv";
pub const SCENARIO_FILE: &str = crate::scenario::RECORDED_FILE;
pub const WORKLOAD_FILE: &str = "workload.yaml";
pub const META_FILE: &str = "meta.json";
pub const FINDINGS_FILE: &str = "findings.json";
/// `ladder logs`: the log minute by minute.
pub const TIMELINE_FILE: &str = "timeline.csv";
pub const SIM_STATS_FILE: &str = "sim_stats.json";
pub const SIM_TRUTH_FILE: &str = "sim_truth.json";
/// The server's `/metrics` scraped during the run (`target.metrics`).
pub const SERVER_METRICS_FILE: &str = "server_metrics.csv";

#[cfg(test)]
mod tests;
