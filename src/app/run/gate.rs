//! Judging a run: its exit code, the verdict against `--against` in the chosen format, and
//! whether it may become the new baseline.

use super::baseline::save;
use super::options::RunOptions;
use crate::app::run::recorder::CollectedRun;
use crate::app::verdict;
use crate::app::verdict::compare_options;
use crate::app::verdict::Against;
use crate::compare::{partial, Side};
use crate::error::{ExitCode, RunEnd};
use crate::findings::ModelFindings;
use crate::render::diff::DiffContext;
use crate::scenario::Scenario;
use anyhow::Result;

/// The exit code: an interrupted or all-failed run is an error and never a baseline; otherwise
/// the run is judged against the baseline (in memory), then saved as the new baseline if asked
/// and allowed (`verdict::may_replace_baseline`).
pub(super) fn gate(
    s: &Scenario,
    opts: &RunOptions,
    run: &CollectedRun,
    findings: &[ModelFindings],
    baseline: Option<&Against>,
    interrupted: bool,
    sink: &verdict::Sink,
) -> Result<ExitCode> {
    if interrupted {
        let how = run.meta.stopped_by.as_ref().map_or_else(
            || "was interrupted".to_string(),
            crate::model::StoppedBy::how,
        );
        eprintln!(
            "the run {how}; partial results written to {}",
            run.dir.path.display()
        );
        if opts.baselines.save {
            eprintln!("baseline not saved: the run stopped before its plan ended (an incomplete ladder is never a baseline)");
        }
        // Judged on what was collected, by the rule `ladder diff` applies to the same data: a
        // regression in the steps that ran is exit 3, otherwise incomplete (exit 1).
        let verdict = match baseline {
            Some(base) => Some(judge(s, opts, run, findings, base, true, sink)?),
            None if s.compare_interleave => Some(judge_ab(s, opts, run, findings, sink)?),
            None => None,
        };
        return Ok(ExitCode::of_run(RunEnd::Stopped { verdict }));
    }
    if run.failures.all_failed() {
        // Nothing was measured: never gate on it, never keep it as a baseline.
        if opts.baselines.save {
            eprintln!("baseline not saved: no request succeeded");
        }
        return Ok(ExitCode::of_run(RunEnd::NothingSucceeded));
    }
    // Judge against the existing baseline first: with `--save-baseline --against` the old
    // baseline is the reference, and it is replaced only afterwards.
    let verdict = match baseline {
        Some(base) => Some(judge(s, opts, run, findings, base, false, sink)?),
        None if s.compare_interleave => Some(judge_ab(s, opts, run, findings, sink)?),
        None => None,
    };
    let replace = verdict::may_replace_baseline(verdict, opts.baselines.force);
    if let (true, Err(kept)) = (opts.baselines.save, &replace) {
        eprintln!("{kept}");
    }
    if opts.baselines.save && replace.is_ok() {
        save(s, &opts.baselines, run)?;
    }
    Ok(ExitCode::of_run(RunEnd::Finished { verdict }))
}

/// The run against the baseline, emitted through `sink`; `interrupted` marks the new side as
/// unfinished, as `ladder diff` does for a run whose meta.json says it did not complete.
fn judge(
    s: &Scenario,
    opts: &RunOptions,
    run: &CollectedRun,
    findings: &[ModelFindings],
    base: &Against,
    interrupted: bool,
    sink: &verdict::Sink,
) -> Result<ExitCode> {
    let label = run.dir.path.display().to_string();
    let mut new = Side::from_parts(
        &label,
        run.summaries.clone(),
        run.tap.samples.clone(),
        findings,
        Some(run.workload_yaml.clone()),
    );
    // The workload is the scenario's, whether or not a step finished: a run interrupted before
    // its first step summary is unfinished, not "measured with another workload".
    new.fingerprint = s.fingerprint.clone();
    let mut compare = compare_options(&opts.gates, s.gates.clone());
    compare.search = verdict::capacity_slo(s.load.search.map(|x| x.slo), &s.slo);
    compare.pricing = s.pricing.clone();
    // An interrupted run is read as `ladder diff` reads it afterwards: where it stopped, which
    // steps it cut short against the scenario's plan, the advice for the planned count.
    let partial = interrupted.then(|| {
        partial::of(
            "the new run",
            label.clone(),
            false,
            &run.meta,
            Some(&s.load),
            None,
            &run.summaries,
        )
    });
    let (comparison, warnings) = verdict::judge(
        &base.side,
        &new,
        [base.partial.as_ref(), partial.as_ref()],
        &s.gates,
        &compare,
    );
    let ctx = DiffContext {
        run_dir: Some(label),
        gates: Some(
            verdict::describe(&s.gates, &verdict::GatesSource::Scenario(s.path.clone()))
                + verdict::cost_gate_words(&s.gates, compare.pricing.as_ref()),
        ),
        warnings,
        full: opts.gates.full,
        informs: None,
    };
    Ok(sink.emit(&comparison, &ctx)?)
}

/// An A/B run (`compare: {baseline: A, interleave: true}`, `--ab A=B`): B's steps judged against
/// A's, measured at the same moments, with the rules, formats and exit codes of a baseline
/// diff; emitted through `sink`.
fn judge_ab(
    s: &Scenario,
    opts: &RunOptions,
    run: &CollectedRun,
    findings: &[ModelFindings],
    sink: &verdict::Sink,
) -> Result<ExitCode> {
    let Some(pair) = crate::compare::ab_pair(s.compare_baseline.as_deref(), &s.target.models)
    else {
        return Ok(ExitCode::Ok);
    };
    let label = run.dir.path.display().to_string();
    let side = Side::from_parts(
        &label,
        run.summaries.clone(),
        run.tap.samples.clone(),
        findings,
        Some(run.workload_yaml.clone()),
    );
    let mut compare = compare_options(&opts.gates, s.gates.clone());
    compare.search = verdict::capacity_slo(None, &s.slo);
    compare.pricing = s.pricing.clone();
    compare.interleaved = true;
    let mut comparison = match crate::compare::compare_in_run(&side, &pair, &compare) {
        Ok(c) => c,
        // Both models ran every step together; a model without a step summary ran nothing.
        Err(e) => anyhow::bail!("the A/B run has nothing to judge: {e}"),
    };
    comparison.base_label = format!("A: {} (interleaved with B in {label})", pair.old);
    comparison.new_label = format!("B: {} (the same steps, request by request)", pair.new);
    let ctx = DiffContext {
        run_dir: Some(label),
        gates: Some(
            verdict::describe(&s.gates, &verdict::GatesSource::Scenario(s.path.clone()))
                + verdict::cost_gate_words(&s.gates, compare.pricing.as_ref()),
        ),
        warnings: Vec::new(),
        full: opts.gates.full,
        informs: None,
    };
    Ok(sink.emit(&comparison, &ctx)?)
}
