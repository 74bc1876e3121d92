//! Judging a run: its exit code, the verdict against `--against` (or, in an A/B run, of its
//! second model against its first) in the chosen format, confirmed on a rerun when asked
//! (`--confirm`, `confirm`), and whether it may become the new baseline.

use super::baseline::save;
use super::confirm::{self, Rerun};
use super::judge::{judge_side, run_side, Judging, Reference};
use super::options::RunOptions;
use crate::app::run::recorder::CollectedRun;
use crate::app::verdict;
use crate::app::verdict::Against;
use crate::compare::{partial, Comparison};
use crate::error::{ExitCode, RunEnd};
use crate::findings::ModelFindings;
use crate::render::diff::DiffContext;
use crate::scenario::Scenario;
use anyhow::Result;

/// The exit code: an interrupted or all-failed run is an error and never a baseline; otherwise
/// the run is judged (in memory), confirmed on a rerun when asked, then saved as the new
/// baseline if asked and allowed (`verdict::may_replace_baseline`).
pub(super) async fn gate(
    judging: Judging<'_>,
    baseline: Option<&Against>,
    interrupted: bool,
    sink: &verdict::Sink,
    rerun: Rerun<'_>,
) -> Result<ExitCode> {
    let Judging {
        s,
        opts,
        run,
        findings,
    } = judging;
    let ab = crate::compare::ab_pair(s.compare_baseline.as_deref(), &s.target.models)
        .filter(|_| s.compare_interleave);
    let reference = match (baseline, &ab) {
        (Some(base), _) => Some(Reference::Baseline(base)),
        (None, Some(pair)) => Some(Reference::Ab(pair)),
        _ => None,
    };
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
        let verdict = match reference {
            Some(r) => {
                let (c, ctx) = judged(s, opts, run, findings, r, true);
                Some(sink.emit(&c, &ctx)?)
            }
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
    let verdict = match reference {
        Some(r) => {
            let (mut c, ctx) = judged(s, opts, run, findings, r, false);
            if let Some(how) = opts.confirm.as_ref() {
                c = confirm::confirm(judging, r, c, how, rerun).await?;
            }
            Some(sink.emit(&c, &ctx)?)
        }
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

/// The run judged against `reference`, with the context every format prints; `interrupted`
/// marks the new side as unfinished, as `ladder diff` does for a run whose meta.json says it
/// did not complete.
fn judged(
    s: &Scenario,
    opts: &RunOptions,
    run: &CollectedRun,
    findings: &[ModelFindings],
    reference: Reference<'_>,
    interrupted: bool,
) -> (Comparison, DiffContext) {
    let label = run.dir.path.display().to_string();
    let side = run_side(s, run, findings);
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
    let (comparison, warnings) = judge_side(s, opts, reference, &side, partial.as_ref());
    let ctx = DiffContext {
        run_dir: Some(label),
        gates: Some(
            verdict::describe(&s.gates, &verdict::GatesSource::Scenario(s.path.clone()))
                + verdict::cost_gate_words(&s.gates, s.pricing.as_ref()),
        ),
        warnings,
        full: opts.gates.full,
        informs: None,
    };
    (comparison, ctx)
}
