//! One step run after the planned ones, at a ladder value chosen from what was measured (by
//! `load.search` or by refine): after the scenario's pause, numbered after the steps already
//! run, recorded like any other. Its own file because both the search and refine run it.

use crate::client::Backend;
use crate::runner::{self, Interrupt, Schedule, SummarizingSink};
use crate::scenario::Scenario;
use crate::stats::StepSummary;
use std::sync::Arc;

/// One step chosen after the planned ones (by the search or by refine) at ladder `value`:
/// after the scenario's pause, numbered after the steps already run, recorded like any other.
/// Returns whether the run was interrupted.
pub(super) async fn extra_step<B: Backend>(
    s: &Scenario,
    value: u32,
    backend: &Arc<B>,
    progress: &Arc<dyn runner::Progress>,
    interrupt: &Interrupt,
    recorder: &mut impl SummarizingSink,
) -> bool {
    if !s.load.pause_between_steps.is_zero() {
        tokio::time::sleep(s.load.pause_between_steps).await;
    }
    let mut step = s.clone();
    step.load.ladder = vec![value];
    let schedule = Schedule {
        first_step: steps_run(recorder.summaries()),
        ..Schedule::default()
    };
    let stopped = runner::run_scheduled(
        &step,
        backend.clone(),
        progress.clone(),
        interrupt.clone(),
        recorder,
        schedule,
    )
    .await;
    stopped
}

/// Steps already run (the next one is numbered one more).
fn steps_run(rows: &[StepSummary]) -> u32 {
    rows.iter().map(|r| r.step).max().unwrap_or(0)
}
