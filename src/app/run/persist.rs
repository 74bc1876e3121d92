//! What a run leaves on disk besides its records: `meta.json` before traffic, and summary,
//! findings, the simulator's report and the completed `meta.json` after.

use crate::app::run::recorder::CollectedRun;
use crate::findings::ModelFindings;
use crate::model::MetricRow;
use crate::scenario::Scenario;
use crate::sim;
use crate::store;
use anyhow::Result;
use std::time::SystemTime;

/// `meta.json` as written before any traffic: `complete: false` until `persist`.
pub(super) fn run_meta(s: &Scenario, started: SystemTime) -> store::Meta {
    let redactor = s.target.redactor().for_files();
    store::Meta::before_traffic(
        s,
        env!("CARGO_PKG_VERSION").to_string(),
        store::host_name(),
        store::rfc3339_utc(started),
        std::env::args().map(|a| redactor.redact(&a)).collect(),
    )
}

/// Writes what the run leaves besides its records: the server's metrics when it scraped them,
/// summary, findings, the simulator's own view, and `meta.json` with `complete: true`
/// (`store::write_run`).
pub(super) fn persist(
    run: &mut CollectedRun,
    findings: &[ModelFindings],
    server_metrics: Option<&[MetricRow]>,
    sim_report: Option<(sim::SimStats, Vec<sim::TruthRecord>)>,
    interrupted: bool,
) -> Result<()> {
    run.meta.finished_at = store::rfc3339_utc(SystemTime::now());
    run.meta.interrupted = interrupted;
    run.meta.complete = true;
    let files = store::RunFiles {
        server_metrics,
        summaries: Some(&run.summaries),
        findings: Some(&serde_json::to_value(findings)?),
        sim_report: sim_report.as_ref().map(|(s, t)| (s, t.as_slice())),
        ..store::RunFiles::default()
    };
    store::write_run(&run.dir, Some(&run.meta), &files)?;
    Ok(())
}
