//! `ladder plan RUN --rps N`: reads the run (through `report::load_run`, so the SLO and limits
//! are the run's own unless flags override them), plans, and prints plain words or JSON.

use crate::app::paths::resolve_run;
use crate::app::report::load_run;
use crate::cli::{PlanArgs, PlanFormatArg};
use crate::error::{ExitCode, UsageError};
use crate::scenario::Scenario;
use crate::store;
use std::path::{Path, PathBuf};

pub fn run(args: &PlanArgs) -> anyhow::Result<ExitCode> {
    if !(args.rps.is_finite() && args.rps > 0.0) {
        return Err(UsageError(format!(
            "--rps {}: expected a rate above 0 requests per second, e.g. --rps 10",
            args.rps
        ))
        .into());
    }
    let (path, note) = resolve_run(&args.run);
    if let Some(n) = note {
        eprintln!("note: {n}");
    }
    let view = load_run(&path).map_err(|e| UsageError(e.to_string()))?;
    for w in &view.warnings {
        eprintln!("warning: {w}");
    }
    let mut slo = view.slo;
    slo.ttft = args.slo_ttft.or(slo.ttft);
    slo.ttfc = args.slo_ttfc.or(slo.ttfc);
    slo.tpot = args.slo_tpot.or(slo.tpot);
    slo.e2e = args.slo_e2e.or(slo.e2e);
    let mut limits = view.limits;
    limits.concurrency = args.limit_concurrency.or(limits.concurrency);
    limits.tpm = args.limit_tpm.or(limits.tpm);
    limits.rpm = args.limit_rpm.or(limits.rpm);
    // A run that searched is sized from the capacity the search found.
    let search = crate::app::report::recorded_of(&view.result)
        .and_then(|r| r.load)
        .and_then(|l| l.search)
        .map(|s| s.slo);
    let mut plan = crate::plan::plan(
        &view.result.summaries,
        args.rps,
        &slo,
        &limits,
        search.as_ref(),
        &view.findings,
    );
    plan.currency = view
        .result
        .recorded
        .as_ref()
        .and_then(|r| r.pricing.as_ref())
        .map(|p| p.currency.clone());
    match args.format {
        PlanFormatArg::Table => out!("{}", crate::plan::plain_words(&plan))?,
        PlanFormatArg::Json => outln!("{}", serde_json::to_string_pretty(&plan)?)?,
    }
    Ok(ExitCode::Ok)
}

/// Before `ladder run` sends anything: warns (stderr) when the ladder or its planned token and
/// request rates exceed the scenario's declared `limits:`; with `dry_run`, prints what each step
/// would send (stdout) and returns true: the run stops there. The estimate uses the scenario's
/// saved baseline (`baseline_of`) when it exists and can be read.
pub fn before_traffic(
    scenarios: &[Scenario],
    baseline_of: &dyn Fn(&Scenario) -> PathBuf,
    dry_run: bool,
    quiet: bool,
) -> std::io::Result<bool> {
    for s in scenarios {
        let path = baseline_of(s);
        let rows = read_baseline(&path, &s.fingerprint);
        let steps = crate::plan::estimate::estimate(s, rows.as_deref());
        let limits = s.limits.clone();
        let warnings = crate::plan::estimate::limit_warnings(&limits, &steps);
        if dry_run {
            out!(
                "{}",
                crate::plan::words::dry_run(s, &steps, rows.is_some().then_some(path.as_path()))
            )?;
        }
        if !quiet || dry_run {
            for w in warnings {
                eprintln!("warning: {}: {w}", s.path.display());
            }
        }
    }
    Ok(dry_run)
}

/// The baseline's rows when they were measured with this workload (same fingerprint).
fn read_baseline(path: &Path, fingerprint: &str) -> Option<Vec<crate::stats::StepSummary>> {
    if !path.is_file() {
        return None;
    }
    store::read_summary_csv(path)
        .ok()
        .filter(|rows| !rows.is_empty() && rows.iter().all(|r| r.fingerprint == fingerprint))
}
