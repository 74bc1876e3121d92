//! `load: {refine: N}` in a run: after the planned steps, up to N more steps (same budget), each
//! chosen from what was measured so far (`findings::refine`), run through the same runner and
//! recorder as the planned ones, so they land in the same run directory as ordinary steps. Also
//! where a replay breaks (`add_breaks`), judged with the same SLO rule.

use crate::client::Backend;
use crate::findings::{self, refine};
use crate::runner::{self, Interrupt, SummarizingSink};
use crate::scenario::Scenario;
use std::sync::Arc;

/// A sink that also keeps the findings' per-step extras of the steps so far (per-request TTFT
/// samples, the server's evidence): the knee a refining step aims at is then the one the run
/// will report.
pub(super) trait WithExtras {
    fn extras(&self) -> Option<&findings::RunExtras>;
}

/// The intervals of every model's findings over `rows` (with the steps' extras, so the knee is
/// found as the run's report will find it).
fn brackets_of(
    s: &Scenario,
    rows: &[crate::stats::StepSummary],
    extras: Option<&findings::RunExtras>,
) -> Vec<refine::Bracket> {
    findings::analyze_run_with(rows, extras)
        .iter()
        .flat_map(|f| refine::brackets(rows, f, Some(&s.slo)))
        .collect()
}

/// Runs the refining steps; returns the values run and whether the run was interrupted.
pub(super) async fn refine_steps<B: Backend>(
    s: &Scenario,
    backend: Arc<B>,
    progress: Arc<dyn runner::Progress>,
    interrupt: &Interrupt,
    recorder: &mut (impl SummarizingSink + WithExtras),
) -> (Vec<u32>, bool) {
    let mut values = Vec::new();
    for _ in 0..s.load.refine {
        let done: Vec<u32> = recorder.summaries().iter().map(|r| r.concurrency).collect();
        let Some(value) = refine::next_value(
            &brackets_of(s, recorder.summaries(), recorder.extras()),
            &done,
        ) else {
            break;
        };
        let stopped =
            super::extra_step::extra_step(s, value, &backend, &progress, interrupt, recorder).await;
        values.push(value);
        if stopped {
            return (values, true);
        }
    }
    (values, false)
}

/// The report's sentence about the refinement, for each model's findings.
pub(super) fn add_notes(
    s: &Scenario,
    values: &[u32],
    rows: &[crate::stats::StepSummary],
    findings: &mut [findings::ModelFindings],
) {
    for f in findings.iter_mut() {
        let b = refine::brackets(rows, f, Some(&s.slo));
        if let Some(n) = refine::note(values, &b, f.ladder_unit) {
            f.notes.insert(0, n);
        }
    }
}

/// Replay: where each model breaks (`findings::replay`), kept in the findings and said first.
pub(super) fn add_breaks(
    s: &Scenario,
    rows: &[crate::stats::StepSummary],
    findings: &mut [findings::ModelFindings],
) {
    for f in findings.iter_mut() {
        f.breaks_at = findings::replay::breaks_at(rows, f, Some(&s.slo));
        if let Some(n) = findings::replay::sentence(f.breaks_at.as_ref(), rows, &f.model) {
            f.notes.insert(0, n);
        }
    }
}
