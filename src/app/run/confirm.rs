//! `ladder run --confirm`: when a run regressed or decided nothing, its concerned steps are run
//! again after a pause, within a budget of requests, into a run directory of their own
//! (`<run>-confirm`), and each concerned check is decided again from the rerun alone and both
//! measurements pooled (`compare::confirm`, where the rule lives). Runs on a fresh connection
//! to the target (a fresh embedded simulator for `target.sim`).

use super::judge::{judge_side, run_side, Judging, Reference};
use super::options::{ConfirmOptions, RunOptions};
use super::persist::{persist, run_meta};
use super::progress::{self, LiveProgress};
use super::recorder::{CollectedRun, Kept, Recorder};
use crate::compare::confirm::{self as rule, ModelStep};
use crate::compare::Comparison;
use crate::findings;
use crate::runner::{self, Interrupt};
use crate::scenario::{Budget, Scenario};
use anyhow::{Context, Result};
use std::sync::Arc;
use std::time::SystemTime;

/// What a rerun needs of the run that asks for it.
#[derive(Clone, Copy)]
pub(super) struct Rerun<'a> {
    pub interrupt: &'a Interrupt,
    pub quiet: bool,
}

/// The first judgement `first`, confirmed: unchanged when it neither regressed nor left
/// everything undecided, or when the budget allows no step; otherwise the concerned steps are
/// run again and the checks there decided by `compare::confirm::settle`.
pub(super) async fn confirm(
    judging: Judging<'_>,
    reference: Reference<'_>,
    first: Comparison,
    how: &ConfirmOptions,
    rerun: Rerun<'_>,
) -> Result<Comparison> {
    let Judging {
        s,
        opts,
        run,
        findings,
    } = judging;
    if !rule::worth_confirming(&first) {
        return Ok(first);
    }
    let wanted = rule::steps_to_confirm(&first);
    if wanted.is_empty() {
        // Undecided only because checks were skipped (too few requests per step, say): no
        // step holds a regressed or inconclusive check for a rerun to decide.
        let mut out = first;
        out.notes.push(
            "confirmation: not run: no step has a regressed or inconclusive check to re-measure (the checks that decide nothing were skipped; the skipped lines say what they need)"
                .to_string(),
        );
        return Ok(out);
    }
    let budget = how.max_requests.unwrap_or(run.failures.attempted);
    let (steps, left) = within_budget(s, run, &wanted, budget);
    let say = |line: String| {
        if !rerun.quiet {
            eprintln!("{line}");
        }
    };
    if steps.is_empty() {
        let mut out = first;
        out.notes.push(format!(
            "confirmation: not run: re-measuring even one concerned step needs more than the budget of {budget} requests (--confirm-budget)"
        ));
        return Ok(out);
    }
    say(format!(
        "confirming: {} — re-measuring {} after {}",
        first.outcome().label(),
        steps_words(&steps),
        crate::util::duration::format(how.after)
    ));
    // Ctrl-C during the pause ends it: nothing is rerun, and no empty rerun directory is left.
    tokio::select! {
        () = tokio::time::sleep(how.after) => {}
        () = rerun.interrupt.stopped() => {}
    }
    if let Some(stopped) = rerun.interrupt.stopped_by() {
        let mut out = first;
        out.notes.push(format!(
            "confirmation: not run: the run {} before the rerun started; the first verdict stands, unconfirmed",
            stopped.how()
        ));
        return Ok(out);
    }
    let (again, interrupted) = rerun_steps(s, opts, &steps, rerun).await?;
    if interrupted {
        // A rerun cut short decides nothing: its steps hold fewer requests than planned (or
        // none), and reading them would turn a measured regression into "not confirmed".
        let how = again.meta.stopped_by.as_ref().map_or_else(
            || "was interrupted".to_string(),
            crate::model::StoppedBy::how,
        );
        let mut out = first;
        out.notes.push(format!(
            "confirmation: not decided: the rerun {how} after {} requests; the first verdict stands, unconfirmed; the partial rerun is in {}",
            again.failures.attempted,
            again.dir.path.display()
        ));
        return Ok(out);
    }
    let again_findings = findings::analyze_run_with(&again.summaries, Some(&again.tap.extras));
    let rerun_side = run_side(s, &again, &again_findings);
    let first_side = run_side(s, run, findings);
    let pooled_side = rule::pooled(&first_side, &rerun_side);
    let (alone, _) = judge_side(s, opts, reference, &rerun_side, None);
    let (pooled, _) = judge_side(s, opts, reference, &pooled_side, None);
    let mut out = rule::settle(&first, &alone, &pooled, &steps);
    if !left.is_empty() {
        out.notes.push(format!(
            "confirmation: {} not re-measured: over the budget of {budget} requests (--confirm-budget)",
            steps_words(&left)
        ));
    }
    out.notes.push(format!(
        "confirmation: the rerun is in {}",
        again.dir.path.display()
    ));
    Ok(out)
}

/// The steps to rerun, in the order given, while their requests fit in `budget`; and those
/// left out. A step's requests: `requests_per_step` (both models' in an A/B run), or what the
/// first run sent at that step for a duration budget.
fn within_budget(
    s: &Scenario,
    run: &CollectedRun,
    wanted: &[ModelStep],
    budget: u64,
) -> (Vec<ModelStep>, Vec<ModelStep>) {
    let sides = if s.compare_interleave { 2 } else { 1 };
    let cost = |(model, value): &(String, u32)| -> u64 {
        match s.load.budget {
            Budget::RequestsPerStep(n) => n * sides,
            Budget::RequestsPerWorker(k) => k * u64::from(*value) * sides,
            Budget::Duration(_) => run
                .summaries
                .iter()
                .filter(|r| r.concurrency == *value && (s.compare_interleave || r.model == *model))
                .map(|r| r.attempted)
                .sum(),
        }
    };
    let (mut take, mut left, mut spent) = (Vec::new(), Vec::new(), 0u64);
    for w in wanted {
        let c = cost(w);
        if spent + c <= budget {
            spent += c;
            take.push(w.clone());
        } else {
            left.push(w.clone());
        }
    }
    (take, left)
}

/// "sim-model at 20 and 50 streams".
fn steps_words(steps: &[(String, u32)]) -> String {
    let mut by_model: Vec<(&str, Vec<u32>)> = Vec::new();
    for (m, v) in steps {
        match by_model.iter_mut().find(|(x, _)| x == m) {
            Some((_, vs)) => vs.push(*v),
            None => by_model.push((m, vec![*v])),
        }
    }
    by_model
        .iter()
        .map(|(m, vs)| {
            let mut vs = vs.clone();
            vs.sort_unstable();
            format!(
                "{m} at {}",
                crate::model::LadderUnit::Streams.describe_all(&vs)
            )
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// The scenario narrowed to `steps`: their ladder values in the ladder's order and their
/// models (an A/B run keeps both), recorded like any run into `<scenario>/<time>-confirm`;
/// and whether it was interrupted.
async fn rerun_steps(
    s: &Scenario,
    opts: &RunOptions,
    steps: &[(String, u32)],
    rerun: Rerun<'_>,
) -> Result<(CollectedRun, bool)> {
    let mut narrowed = s.clone();
    narrowed
        .load
        .ladder
        .retain(|v| steps.iter().any(|(_, at)| at == v));
    if !s.compare_interleave {
        narrowed
            .target
            .models
            .retain(|m| steps.iter().any(|(x, _)| x == m));
    }
    let started = SystemTime::now();
    let (base_url, sim_handle) = crate::client::endpoint::serve_endpoint(&s.target.endpoint)
        .await
        .context("cannot start the embedded simulator")?;
    let backend = Arc::new(super::http_backend(&narrowed, &base_url, &opts.env)?);
    let dir = crate::store::create_run_dir_named(&opts.out, &s.name, started, "-confirm")?;
    let meta = run_meta(&narrowed, started);
    let mut recorder = Recorder::start(&narrowed, dir, meta, Kept::new(true))?;
    let progress = Arc::new(LiveProgress::new(
        progress::Display::for_stderr(rerun.quiet),
        super::eta_plan(&narrowed),
    ));
    let interrupted = runner::run_scheduled(
        &narrowed,
        backend,
        progress.clone(),
        rerun.interrupt.clone(),
        &mut recorder,
        runner::Schedule::default(),
    )
    .await;
    progress.finish();
    let sim_report = match sim_handle {
        Some(h) => Some(h.shutdown_and_report().await),
        None => None,
    };
    let mut again = recorder.finish()?;
    again.meta.stopped_by = interrupted.then(|| rerun.interrupt.stopped_by()).flatten();
    let again_findings = findings::analyze_run_with(&again.summaries, Some(&again.tap.extras));
    persist(&mut again, &again_findings, None, sim_report, interrupted)?;
    Ok((again, interrupted))
}
