//! Warns before the step that will cross a declared account limit, during the run: after each
//! step, the steps still to come are estimated from the ones measured so far (the rate Little's
//! law gives at the next step's load, the tokens each request took) and checked against the
//! scenario's `limits:` with the same rule `run`'s check before traffic uses
//! (`plan::estimate::limit_warnings`). A target with no baseline gets its warning one step
//! before the wall instead of none. Wraps the run's sink; each warning is said once.

use crate::model::{RequestRecord, StepRun};
use crate::runner::{RunSink, SummarizingSink};
use crate::scenario::Scenario;
use crate::stats::StepSummary;
use std::collections::BTreeSet;

pub(super) struct LimitWatch<'a, S: SummarizingSink> {
    inner: &'a mut S,
    scenario: &'a Scenario,
    quiet: bool,
    said: BTreeSet<String>,
}

impl<'a, S: SummarizingSink> LimitWatch<'a, S> {
    pub(super) fn new(inner: &'a mut S, scenario: &'a Scenario, quiet: bool) -> Self {
        LimitWatch {
            inner,
            scenario,
            quiet,
            said: BTreeSet::new(),
        }
    }

    /// After a step of `model` at `value`: the first warning about the next step, if any.
    fn check(&mut self, model: &str, value: u32) {
        let s = self.scenario;
        let limits = &s.limits;
        if self.quiet || !limits.any() {
            return;
        }
        let Some(next) = s.load.ladder.iter().copied().find(|&v| v > value) else {
            return;
        };
        let ahead = crate::plan::estimate::estimate_ahead(s, self.inner.summaries());
        let next_step: Vec<_> = ahead
            .into_iter()
            .filter(|e| e.model == model && e.value == next)
            .collect();
        for w in crate::plan::estimate::limit_warnings(limits, &next_step) {
            // One warning per limit and model: the rest of the ladder only repeats it.
            let key = format!("{model} {}", w.split(" exceeds ").nth(1).unwrap_or(&w));
            if self.said.insert(key) {
                eprintln!("\nwarning: {}: before the next step: {w}", s.path.display());
            }
        }
    }
}

impl<S: SummarizingSink> RunSink for LimitWatch<'_, S> {
    fn record(&mut self, record: RequestRecord) {
        self.inner.record(record);
    }

    fn step_finished(&mut self, step: StepRun) {
        let (model, value) = (step.model.clone(), step.concurrency);
        self.inner.step_finished(step);
        self.check(&model, value);
    }

    fn tick(&mut self) {
        self.inner.tick();
    }
}

impl<S: SummarizingSink> SummarizingSink for LimitWatch<'_, S> {
    fn summaries(&self) -> &[StepSummary] {
        self.inner.summaries()
    }
}
