//! `load: {search: {slo: {...}, max: N}}` in a run: after the planned steps (the ladder, or one
//! step of 1 when it is left out), up to `steps` more, each the next value of the search over
//! what was measured so far (`findings::search`), run through the same runner and recorder as
//! the planned ones; then the capacity each model's steps imply, kept in its findings and said
//! first.

use super::extra_step::extra_step;
use crate::client::Backend;
use crate::findings::{self, search};
use crate::runner::{self, Interrupt, SummarizingSink};
use crate::scenario::Scenario;
use crate::stats::StepSummary;
use std::sync::Arc;

/// The next value of the search: the lowest next value over the models (each model's search
/// over its own rows), never one already run.
fn next_value(s: &Scenario, rows: &[StepSummary]) -> Option<u32> {
    let spec = s.load.search.as_ref()?;
    let done: Vec<u32> = rows.iter().map(|r| r.concurrency).collect();
    s.target
        .models
        .iter()
        .filter_map(|m| {
            let mine: Vec<&StepSummary> = rows.iter().filter(|r| &r.model == m).collect();
            search::next_value(&mine, &spec.slo, spec.max)
        })
        .filter(|v| !done.contains(v))
        .min()
}

/// Runs the search's steps; returns whether the run was interrupted.
pub(super) async fn search_steps<B: Backend>(
    s: &Scenario,
    backend: Arc<B>,
    progress: Arc<dyn runner::Progress>,
    interrupt: &Interrupt,
    recorder: &mut impl SummarizingSink,
) -> bool {
    let Some(spec) = s.load.search.as_ref() else {
        return false;
    };
    for _ in 0..spec.steps {
        let Some(value) = next_value(s, recorder.summaries()) else {
            break;
        };
        let stopped = extra_step(s, value, &backend, &progress, interrupt, recorder).await;
        if stopped {
            return true;
        }
    }
    false
}

/// The steps chosen from what was measured, after the planned ones: the search's, then
/// refine's (none once `interrupted`). Returns the values refine ran and whether the run was
/// interrupted.
pub(super) async fn then_refine<B: Backend>(
    s: &Scenario,
    (backend, progress): (Arc<B>, Arc<dyn runner::Progress>),
    interrupt: &Interrupt,
    recorder: &mut (impl SummarizingSink + super::refine::WithExtras),
    interrupted: bool,
) -> (Vec<u32>, bool) {
    if interrupted {
        return (Vec::new(), true);
    }
    if search_steps(s, backend.clone(), progress.clone(), interrupt, recorder).await {
        return (Vec::new(), true);
    }
    if s.load.refine == 0 {
        return (Vec::new(), false);
    }
    super::refine::refine_steps(s, backend, progress, interrupt, recorder).await
}

/// "The search ran 4 more steps, in this order: 32, 23, 19, 21 (the table lists them by
/// load)." over one model's rows: the steps numbered after the planned ones, but for the last
/// `refined` (refine's, which ran after the search's).
fn search_order(s: &Scenario, mine: &[&StepSummary], refined: usize) -> Option<String> {
    let planned = s.load.ladder.len() as u32;
    let mut extra: Vec<&StepSummary> = mine.iter().copied().filter(|r| r.step > planned).collect();
    extra.sort_by_key(|r| r.step);
    extra.truncate(extra.len().saturating_sub(refined));
    let values: Vec<String> = extra.iter().map(|r| r.concurrency.to_string()).collect();
    let n = values.len();
    (n > 0).then(|| {
        format!(
            "The search ran {n} more step{}, in this order: {} (the table lists them by load).",
            if n == 1 { "" } else { "s" },
            values.join(", ")
        )
    })
}

/// Each model's capacity under the search's SLO, in its findings and as its first sentence,
/// then the order the search ran its steps in (the table lists them by load). `refined` steps
/// ran after the search's.
pub(super) fn add_capacity(
    s: &Scenario,
    rows: &[StepSummary],
    refined: usize,
    findings: &mut [findings::ModelFindings],
) {
    let Some(spec) = s.load.search.as_ref() else {
        return;
    };
    for f in findings.iter_mut() {
        let mine: Vec<&StepSummary> = rows.iter().filter(|r| r.model == f.model).collect();
        if let Some(order) = search_order(s, &mine, refined) {
            f.notes.insert(0, order);
        }
        f.capacity = search::capacity(&mine, &spec.slo);
        let sentence = match &f.capacity {
            Some(c) => format!("{}.", c.sentence(&spec.slo)),
            None if search::none_meets(&mine, &spec.slo) => format!(
                "No load tried meets the search's SLO: even {} misses it.",
                f.ladder_unit
                    .describe(mine.iter().map(|r| r.concurrency).min().unwrap_or(1))
            ),
            None => continue,
        };
        f.notes.insert(0, sentence);
    }
}
