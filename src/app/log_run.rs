//! The run directory of a run ladder did not measure itself: a production log (`ladder logs`)
//! or another tool's results (`ladder logs --format guidellm|aiperf|vllm`), written through
//! `store::write_run` with the records' own times, and saying who measured it.

use super::load::load_without_secrets;
use crate::cli::LogsArgs;
use crate::error::UsageError;
use crate::findings::ModelFindings;
use crate::model::{LadderUnit, RequestRecord, Slo};
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

/// `--scenario`: the scenario whose name, fingerprint and SLO the run takes.
pub(super) fn scenario_of(args: &LogsArgs) -> Result<Option<Scenario>> {
    Ok(match &args.scenario {
        Some(p) => Some(
            load_without_secrets(p)
                .map_err(|e| UsageError(e.to_string()))?
                .0,
        ),
        None => None,
    })
}

/// The run's SLO: `--slo-*`, else the scenario's.
pub(super) fn slo_of(args: &LogsArgs, scenario: Option<&Scenario>) -> Slo {
    let base = scenario.map_or_else(Slo::default, |s| s.slo);
    Slo {
        ttft: args.slo_ttft.or(base.ttft),
        ttfc: base.ttfc,
        tpot: args.slo_tpot.or(base.tpot),
        e2e: args.slo_e2e.or(base.e2e),
    }
}

/// Each model's findings on stdout, then the run's own notes on stderr once (not once per
/// model), and where the run went.
pub(super) fn print_findings(
    stdout: &mut impl std::io::Write,
    out: &super::Output,
    found: &[ModelFindings],
    notes: &[String],
    dir: &store::RunDir,
) -> Result<()> {
    for f in found {
        for line in f.sentences().iter().filter(|l| !notes.contains(l)) {
            writeln!(stdout, "{}: {line}", f.model)?;
        }
    }
    if !out.quiet {
        for n in notes {
            eprintln!("note: {n}");
        }
        eprintln!("wrote {}", dir.path.display());
    }
    Ok(())
}

/// The run's table on stdout.
pub(super) fn print_table(
    stdout: &mut impl std::io::Write,
    out: &super::Output,
    summaries: &[StepSummary],
) -> Result<()> {
    writeln!(
        stdout,
        "{}",
        crate::render::table::run_table(summaries, out.color)
    )?;
    Ok(())
}
