//! The run directory of a run ladder did not measure itself: a production log (`ladder logs`)
//! or another tool's results (`ladder logs --format guidellm|aiperf|vllm`), written through
//! `store::write_run` with the records' own times, and saying who measured it.

use crate::findings::ModelFindings;
use crate::model::{LadderUnit, RequestRecord};
use crate::scenario::Scenario;
use crate::stats::StepSummary;
use crate::store;
use anyhow::Result;
use std::path::Path;
use std::time::SystemTime;

/// A run made from records someone else measured: a log, or another tool's results.
pub(super) struct LogRun<'a> {
    /// `--out`: the run goes to OUT/<scenario>/<timestamp>/.
    pub out: &'a Path,
    pub scenario: Option<&'a Scenario>,
    pub id: store::RunIdentity,
    /// Epoch ms of the first start and the last end (the run's started_at and finished_at).
    pub span_ms: (f64, f64),
    pub summaries: &'a [StepSummary],
    pub records: &'a [RequestRecord],
    pub findings: &'a [ModelFindings],
    pub timeline_csv: Option<&'a [u8]>,
    pub notes: &'a [String],
    pub unit: LadderUnit,
    /// Who measured it, when not ladder (`meta.json`'s `client`).
    pub client: Option<String>,
}

/// Writes `run` through `store::write_run`, its times the records' own.
pub(super) fn write_log_run(run: LogRun) -> Result<store::RunDir> {
    let dir = store::create_run_dir(run.out, &run.id.scenario, SystemTime::now())?;
    let at = |ms: f64| {
        let secs = (ms / 1000.0).max(0.0) as u64;
        store::rfc3339_utc(std::time::UNIX_EPOCH + std::time::Duration::from_secs(secs))
    };
    let (started_ms, finished_ms) = run.span_ms;
    let redactor = crate::util::redact::Redactor::new(std::iter::empty())
        .and_env()
        .for_files();
    let facts = store::RunFacts {
        tool_version: env!("CARGO_PKG_VERSION").to_string(),
        host: store::host_name(),
        started_at: at(started_ms),
        finished_at: at(finished_ms),
        command_line: std::env::args().map(|a| redactor.redact(&a)).collect(),
    };
    let mut meta = store::Meta::of_summaries(run.id, run.summaries, facts);
    meta.notes = run.notes.to_vec();
    meta.ladder_unit = run.unit;
    meta.client = run.client;
    let scenario_yaml = run.scenario.map(crate::scenario::normalized_yaml);
    let files = store::RunFiles {
        scenario_yaml: scenario_yaml.as_deref(),
        requests: Some(run.records),
        summaries: Some(run.summaries),
        findings: Some(&serde_json::to_value(run.findings)?),
        timeline_csv: run.timeline_csv,
        ..store::RunFiles::default()
    };
    store::write_run(&dir, Some(&meta), &files)?;
    Ok(dir)
}
