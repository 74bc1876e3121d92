//! `ladder plan RUN --rps N` (or `--agents N`, `--tasks-per-hour N` for a run of agents): reads the run (through `report::load_run`, so the SLO and limits
//! are the run's own unless flags override them), plans, and prints plain words or JSON.

use crate::app::paths::resolve_run;
use crate::app::report::load_run;
use crate::cli::{PlanArgs, PlanFormatArg};
use crate::error::{ExitCode, UsageError};
use crate::plan::agents::AgentTarget;
use crate::scenario::Scenario;
use crate::store;
use std::path::{Path, PathBuf};

pub fn run(args: &PlanArgs) -> anyhow::Result<ExitCode> {
    let (path, note) = resolve_run(&args.run);
    if let Some(n) = note {
        eprintln!("note: {n}");
    }
    let timeline = path.join(store::TIMELINE_FILE);
    let no_target = args.rps.is_none() && args.agents.is_none() && args.tasks_per_hour.is_none();
    if no_target && timeline.is_file() {
        return plan_from_log(&path, &timeline, args.format);
    }
    let target = target_of(args)?;
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
    limits.itpm = args.limit_itpm.or(limits.itpm);
    limits.otpm = args.limit_otpm.or(limits.otpm);
    // A run that searched is sized from the capacity the search found.
    let search = crate::app::report::recorded_of(&view.result)
        .and_then(|r| r.load)
        .and_then(|l| l.search)
        .map(|s| s.slo);
    // Hosted API or a server the user runs: which lever the plan names.
    let target_kind = crate::app::report::recorded_of(&view.result).and_then(|r| r.target);
    let rps = match target {
        Target::Rps(rps) => rps,
        Target::Agents(agents) => {
            if let Some(why) = crate::plan::agents::not_an_agent_run(&view.result.summaries) {
                return Err(UsageError(format!(
                    "{}: cannot size agents from this run: {why}",
                    path.display()
                ))
                .into());
            }
            // The agents' mean think time between tasks, from the run's `load.agent`.
            let think_ms = crate::app::report::recorded_of(&view.result)
                .and_then(|r| r.load)
                .and_then(|l| l.agent)
                .map_or(0.0, |a| a.think_time.at(0.5).as_secs_f64() * 1000.0);
            let mut plan = crate::plan::agents::plan(
                &view.result.summaries,
                agents,
                &slo,
                &limits,
                &view.findings,
                think_ms,
                !args.tpm_excludes_cached,
            );
            plan.target_kind = target_kind;
            match args.format {
                PlanFormatArg::Table => out!("{}", crate::plan::agent_words::agent_words(&plan))?,
                PlanFormatArg::Json => outln!("{}", serde_json::to_string_pretty(&plan)?)?,
            }
            return Ok(ExitCode::Ok);
        }
    };
    let mut plan = crate::plan::plan(
        &view.result.summaries,
        rps,
        &slo,
        &limits,
        search.as_ref(),
        &view.findings,
    );
    plan.target_kind = target_kind;
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

/// `ladder plan LOGRUN`: the limit or copies that would have kept each of the log's minutes
/// unqueued (`plan::log`), from its `timeline.csv` and the caps its findings show.
fn plan_from_log(path: &Path, timeline: &Path, format: PlanFormatArg) -> anyhow::Result<ExitCode> {
    let minutes = store::read_timeline_csv(timeline).map_err(|e| UsageError(e.to_string()))?;
    let view = load_run(path).map_err(|e| UsageError(e.to_string()))?;
    let caps = view
        .findings
        .iter()
        .filter_map(|f| match &f.knee {
            crate::findings::KneeFinding::Knee(k) => Some((f.model.clone(), k.estimated_cap?)),
            _ => None,
        })
        .collect();
    let plans = crate::plan::log::log_plans(&minutes, &caps);
    match format {
        PlanFormatArg::Table => out!("{}", crate::plan::log::log_words(&plans))?,
        PlanFormatArg::Json => outln!("{}", serde_json::to_string_pretty(&plans)?)?,
    }
    Ok(ExitCode::Ok)
}

/// What `ladder plan` was asked to carry: a rate, or agents (as many, or tasks per hour).
enum Target {
    Rps(f64),
    Agents(AgentTarget),
}

/// The target from the flags (clap requires exactly one); a value that is no count or rate is a
/// usage error.
fn target_of(args: &PlanArgs) -> anyhow::Result<Target> {
    let positive = |v: f64| v.is_finite() && v > 0.0;
    match (args.rps, args.agents, args.tasks_per_hour) {
        (Some(rps), ..) if positive(rps) => Ok(Target::Rps(rps)),
        (Some(rps), ..) => Err(UsageError(format!(
            "--rps {rps}: expected a rate above 0 requests per second, e.g. --rps 10"
        ))
        .into()),
        (_, Some(n), _) if n > 0 => Ok(Target::Agents(AgentTarget::Agents(n))),
        (_, Some(_), _) => Err(UsageError(
            "--agents 0: expected at least 1 concurrent agent, e.g. --agents 40".into(),
        )
        .into()),
        (.., Some(t)) if positive(t) => Ok(Target::Agents(AgentTarget::TasksPerHour(t))),
        (.., Some(t)) => Err(UsageError(format!(
            "--tasks-per-hour {t}: expected a rate above 0 tasks per hour, e.g. --tasks-per-hour 1200"
        ))
        .into()),
        _ => Err(UsageError(
            "say what to plan for: --rps N, --agents N or --tasks-per-hour N (only a run `ladder logs` wrote, with its timeline.csv, is sized from its own minutes)".into(),
        )
        .into()),
    }
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
pub(super) fn read_baseline(
    path: &Path,
    fingerprint: &str,
) -> Option<Vec<crate::stats::StepSummary>> {
    if !path.is_file() {
        return None;
    }
    store::read_summary_csv(path)
        .ok()
        .filter(|rows| !rows.is_empty() && rows.iter().all(|r| r.fingerprint == fingerprint))
}
