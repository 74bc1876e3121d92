//! The one producer of run directories: `run` (at its start, after each step and at its end),
//! `logs`, `merge` and `summarize` all write a run's files through [`write_run`], so the files a
//! run may hold, their order and the `complete` rule live here once. Every file is written
//! atomically (`write_atomic`); `meta.json` says `complete: true` only once every other file is
//! in place, so a crash in between leaves a run that readers know stopped early.

use super::{Meta, RunDir, StoreError};
use crate::model::{MetricRow, RequestRecord};
use crate::sim::{SimStats, TruthRecord};
use crate::stats::StepSummary;

/// The files of a run directory besides `meta.json`, each written when given. `requests.csv` of
/// a live run is appended to instead (`RunDir::append_requests`).
#[derive(Default, Clone, Copy)]
pub struct RunFiles<'a> {
    /// The normalized scenario as run, secrets already redacted (`scenario.yaml`).
    pub scenario_yaml: Option<&'a str>,
    /// The normalized workload the fingerprint hashes (`workload.yaml`).
    pub workload_yaml: Option<&'a str>,
    pub requests: Option<&'a [RequestRecord]>,
    /// The server's `/metrics` scraped during the run (`server_metrics.csv`).
    pub server_metrics: Option<&'a [MetricRow]>,
    pub summaries: Option<&'a [StepSummary]>,
    pub findings: Option<&'a serde_json::Value>,
    /// The embedded simulator's own view (`sim_stats.json`, `sim_truth.json`).
    pub sim_report: Option<(&'a SimStats, &'a [TruthRecord])>,
    /// `ladder logs`: the log minute by minute, rendered (`timeline.csv`).
    pub timeline_csv: Option<&'a [u8]>,
}

/// Writes a run directory's files: every file `files` gives, then `meta` when given. A `meta`
/// that says `complete: true` is first written with `complete: false`, so the run reads as
/// stopped early until its last file is in place; a run in progress (`complete: false`) writes
/// it after its files, as each step ends. Without `meta` (`summarize`, rewriting a run's
/// results) `meta.json` is left as it is.
pub fn write_run(
    dir: &RunDir,
    meta: Option<&Meta>,
    files: &RunFiles<'_>,
) -> Result<(), StoreError> {
    if let Some(m) = meta.filter(|m| m.complete) {
        let open = Meta {
            complete: false,
            ..m.clone()
        };
        dir.write_meta(&open)?;
    }
    write_files(dir, files)?;
    match meta {
        Some(m) => dir.write_meta(m),
        None => Ok(()),
    }
}

fn write_files(dir: &RunDir, files: &RunFiles<'_>) -> Result<(), StoreError> {
    if let Some(y) = files.scenario_yaml {
        dir.write_scenario_yaml(y)?;
    }
    if let Some(y) = files.workload_yaml {
        dir.write_workload_yaml(y)?;
    }
    if let Some(r) = files.requests {
        dir.write_requests(r)?;
    }
    if let Some(rows) = files.server_metrics {
        dir.write_server_metrics(rows)?;
    }
    if let Some(s) = files.summaries {
        dir.write_summary(s)?;
    }
    if let Some(f) = files.findings {
        dir.write_findings_json(f)?;
    }
    if let Some((stats, truth)) = files.sim_report {
        dir.write_sim_report(stats, &truth)?;
    }
    if let Some(csv) = files.timeline_csv {
        dir.write_timeline_csv(csv)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{read_meta, RunFacts, RunIdentity, META_FILE};

    fn meta(summaries: &[StepSummary]) -> Meta {
        let id = RunIdentity {
            scenario: "demo".into(),
            models: vec!["m".into()],
            ..RunIdentity::default()
        };
        Meta::of_summaries(id, summaries, RunFacts::default())
    }

    fn every_file<'a>(
        summaries: &'a [StepSummary],
        requests: &'a [RequestRecord],
        findings: &'a serde_json::Value,
        stats: &'a SimStats,
    ) -> RunFiles<'a> {
        RunFiles {
            scenario_yaml: Some("name: demo\n"),
            workload_yaml: Some("api: openai-chat\n"),
            requests: Some(requests),
            server_metrics: Some(&[]),
            summaries: Some(summaries),
            findings: Some(findings),
            sim_report: Some((stats, &[])),
            timeline_csv: Some(b"minute\n"),
        }
    }

    #[test]
    fn writes_every_file_and_meta_last() {
        let out = tempfile::tempdir().unwrap();
        let dir = RunDir {
            path: out.path().to_path_buf(),
        };
        let (summaries, requests) = (vec![StepSummary::default()], vec![RequestRecord::default()]);
        let (findings, stats) = (serde_json::json!([]), SimStats::default());
        let files = every_file(&summaries, &requests, &findings, &stats);
        write_run(&dir, Some(&meta(&summaries)), &files).unwrap();
        let mut names: Vec<String> = std::fs::read_dir(out.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert_eq!(
            names,
            [
                "findings.json",
                "meta.json",
                "requests.csv",
                "scenario.yaml",
                "server_metrics.csv",
                "sim_stats.json",
                "sim_truth.json",
                "summary.csv",
                "timeline.csv",
                "workload.yaml"
            ]
        );
        assert!(read_meta(&out.path().join(META_FILE)).unwrap().complete);
    }

    #[test]
    fn meta_says_complete_only_once_every_file_is_written() {
        let out = tempfile::tempdir().unwrap();
        let dir = RunDir {
            path: out.path().to_path_buf(),
        };
        // The last file cannot be written (a directory holds its name): the run stays open.
        std::fs::create_dir(out.path().join(super::super::TIMELINE_FILE)).unwrap();
        let (summaries, requests) = (vec![StepSummary::default()], vec![]);
        let (findings, stats) = (serde_json::json!([]), SimStats::default());
        let files = every_file(&summaries, &requests, &findings, &stats);
        assert!(write_run(&dir, Some(&meta(&summaries)), &files).is_err());
        let written = read_meta(&out.path().join(META_FILE)).unwrap();
        assert!(
            !written.complete,
            "a run whose files are not all written is open"
        );
        assert!(out.path().join(super::super::FINDINGS_FILE).is_file());
        // Without meta, meta.json is left as it is.
        let only = RunFiles {
            summaries: Some(&summaries),
            ..RunFiles::default()
        };
        write_run(&dir, None, &only).unwrap();
        assert_eq!(read_meta(&out.path().join(META_FILE)).unwrap(), written);
    }
}
