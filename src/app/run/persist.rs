//! What a run leaves on disk besides its records: `meta.json` before traffic, and summary,
//! findings, the simulator's report and the completed `meta.json` after.

use crate::app::run::recorder::CollectedRun;
use crate::findings::ModelFindings;
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

/// Writes what the run leaves besides its records: summary, findings, the simulator's own view,
/// and finally `meta.json` with `complete: true`.
pub(super) fn persist(
    run: &mut CollectedRun,
    findings: &[ModelFindings],
    sim_report: Option<(sim::SimStats, Vec<sim::TruthRecord>)>,
    interrupted: bool,
) -> Result<()> {
    run.dir.write_summary(&run.summaries)?;
    run.dir
        .write_findings_json(&serde_json::to_value(findings)?)?;
    if let Some((stats, truth)) = &sim_report {
        run.dir.write_sim_report(stats, truth)?;
    }
    run.meta.finished_at = store::rfc3339_utc(SystemTime::now());
    run.meta.interrupted = interrupted;
    run.meta.complete = true;
    run.dir.write_meta(&run.meta)?;
    Ok(())
}
