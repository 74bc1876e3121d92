//! The sink of a real run (`RunSink`): each record is appended to `requests.csv` as it ends,
//! counted into the failure breakdown and handed to the caller's [`Tap`] (the findings' extras,
//! the bootstrap's samples), and held only until its step ends; then the step is summarized
//! (`stats::summarize_step`, on the step's own records, nothing cloned), `summary.csv` and
//! `meta.json` (with the finished steps, still `complete: false`) are rewritten, and the records
//! are dropped. Memory therefore holds one step's records at a time, whatever the number of
//! steps. It lives below `app` so that the runner's own tests record a ladder through it.

use super::sink::{RunSink, SummarizingSink};
use crate::model::{RequestRecord, StepRun};
use crate::scenario::Scenario;
use crate::stats::{self, StepContext, StepSummary};
use crate::store::{self, Meta, RequestsAppender, RunDir, RunFiles, StoreError};
use std::collections::BTreeMap;

/// What else a run keeps of each record, beside the files and the failures: the findings'
/// per-step extras, the per-request samples of `--against` (each layer above implements it
/// for its own type).
pub trait Tap {
    /// One record, already priced.
    fn record(&mut self, r: &RequestRecord);
}

/// A tap kept only when asked (`None` sees nothing).
impl<T: Tap> Tap for Option<T> {
    fn record(&mut self, r: &RequestRecord) {
        if let Some(t) = self {
            t.record(r);
        }
    }
}

impl<A: Tap, B: Tap> Tap for (A, B) {
    fn record(&mut self, r: &RequestRecord) {
        self.0.record(r);
        self.1.record(r);
    }
}

/// Collects a run as it happens.
pub struct Recorder<'a, T> {
    scenario: &'a Scenario,
    run: CollectedRun<T>,
    requests: Option<RequestsAppender>,
    /// The current step's records (one model × step at a time: steps never overlap; an A/B
    /// step's two models' together, each summarized when its step ends).
    current: Vec<RequestRecord>,
    /// An A/B step's streams in flight over its steady window, both models' requests together
    /// (the step's, measured once when its first model's step ends).
    joint_steady: Option<(u32, Option<f64>)>,
    /// The first write error; the run goes on and the error is reported at the end.
    io_error: Option<StoreError>,
}

/// Everything a finished (or stopped) run leaves in memory.
pub struct CollectedRun<T> {
    pub dir: RunDir,
    pub meta: Meta,
    /// The normalized workload (`workload.yaml`), produced once.
    pub workload_yaml: String,
    /// Ordered by model (scenario order), then step.
    pub summaries: Vec<StepSummary>,
    pub failures: Failures,
    /// What the caller's tap kept.
    pub tap: T,
}

impl<'a, T: Tap> Recorder<'a, T> {
    /// Writes `scenario.yaml`, `workload.yaml`, `meta.json` (`complete: false`) and the
    /// `requests.csv` header before any traffic.
    pub fn start(
        scenario: &'a Scenario,
        dir: RunDir,
        meta: Meta,
        tap: T,
    ) -> Result<Self, StoreError> {
        let workload_yaml = crate::scenario::workload_yaml(scenario);
        let files = RunFiles {
            scenario_yaml: Some(&crate::scenario::normalized_yaml(scenario)),
            workload_yaml: Some(&workload_yaml),
            ..RunFiles::default()
        };
        store::write_run(&dir, Some(&meta), &files)?;
        let requests = dir.append_requests()?;
        Ok(Recorder {
            scenario,
            run: CollectedRun {
                dir,
                meta,
                workload_yaml,
                summaries: Vec::new(),
                failures: Failures::default(),
                tap,
            },
            requests: Some(requests),
            current: Vec::new(),
            joint_steady: None,
            io_error: None,
        })
    }

    /// What the tap kept so far.
    pub fn tap(&self) -> &T {
        &self.run.tap
    }

    /// Flushes `requests.csv`; the first write error of the run, if any, is returned now.
    pub fn finish(mut self) -> Result<CollectedRun<T>, StoreError> {
        if let Some(a) = self.requests.take() {
            let r = a.finish();
            self.keep_error(r);
        }
        match self.io_error {
            Some(e) => Err(e),
            None => Ok(self.run),
        }
    }

    fn keep_error(&mut self, r: Result<(), StoreError>) {
        if let Err(e) = r {
            self.io_error.get_or_insert(e);
        }
    }

    /// After a failed append (disk full) nothing more is appended: a later write after a torn
    /// row would leave a broken row in the middle of the file, not only at its end.
    fn appended(&mut self, r: Result<(), StoreError>) {
        if r.is_err() {
            self.requests = None;
        }
        self.keep_error(r);
    }

    /// The A/B step `step`'s streams in flight over its steady window, both models' requests
    /// together: measured while both models' records are held (when its first model's step
    /// ends), then kept for the second.
    fn joint_steady(&mut self, step: u32) -> Option<f64> {
        match self.joint_steady {
            Some((s, v)) if s == step => v,
            _ => {
                let v = stats::steady_concurrency(&self.current);
                self.joint_steady = Some((step, v));
                v
            }
        }
    }

    fn model_index(&self, m: &str) -> usize {
        let models = &self.scenario.target.models;
        models.iter().position(|x| x == m).unwrap_or(models.len())
    }
}

impl<T: Tap> SummarizingSink for Recorder<'_, T> {
    fn summaries(&self) -> &[StepSummary] {
        &self.run.summaries
    }
}

impl<T: Tap> RunSink for Recorder<'_, T> {
    fn record(&mut self, mut r: RequestRecord) {
        // Priced here, once: the file, the step's cost figures and the samples read this.
        if let Some(p) = &self.scenario.pricing {
            r.cost = p.cost_of(&r);
        }
        if let Some(a) = &mut self.requests {
            let written = a.push(&r);
            self.appended(written);
        }
        self.run.failures.add(&r);
        self.run.tap.record(&r);
        self.current.push(r);
    }

    fn step_finished(&mut self, step: StepRun) {
        if let Some(a) = &mut self.requests {
            let flushed = a.flush();
            self.appended(flushed);
        }
        let s = self.scenario;
        let ctx = StepContext {
            scenario: &s.name,
            fingerprint: &s.fingerprint,
            model: &step.model,
            step: step.step,
            concurrency: step.concurrency,
            duration_s: step.duration_s,
            slo: &s.slo,
            short_below: s.request.short_below,
        };
        let joint = step.interleaved.then(|| self.joint_steady(step.step));
        // An A/B step's other model keeps its records until its own step ends; any other
        // step's records are all its own.
        let mine = if step.interleaved {
            let (mine, others): (Vec<RequestRecord>, Vec<RequestRecord>) =
                std::mem::take(&mut self.current)
                    .into_iter()
                    .partition(|r| r.model == step.model);
            self.current = others;
            mine
        } else {
            std::mem::take(&mut self.current)
        };
        let mut row = stats::summarize_step(&ctx, &mine);
        drop(mine);
        row.apply_step_run(&step);
        if let Some(joint) = joint {
            // The step held its streams with both models' requests: what the client kept in
            // flight is their sum, and each model had about half of it.
            row.concurrency_steady = joint;
        }
        // Interleaved run order (A@5, B@5, ...) -> per model, then by step value (the ladder's
        // order, also for steps `refine` ran afterwards), then by step.
        let key = (self.model_index(&row.model), row.ladder_order());
        let at = self
            .run
            .summaries
            .partition_point(|r| (self.model_index(&r.model), r.ladder_order()) < key);
        self.run.summaries.insert(at, row);
        self.run.meta.steps.push(step);
        let files = RunFiles {
            summaries: Some(&self.run.summaries),
            ..RunFiles::default()
        };
        let written = store::write_run(&self.run.dir, Some(&self.run.meta), &files);
        self.keep_error(written);
    }

    fn tick(&mut self) {
        if let Some(a) = &mut self.requests {
            let flushed = a.flush_if_due();
            self.appended(flushed);
        }
    }
}

/// Failed requests by model, class and HTTP status, with the first (redacted) message of each;
/// and how many requests were attempted and succeeded.
#[derive(Debug, Default)]
pub struct Failures {
    pub attempted: u64,
    pub succeeded: u64,
    by_class: BTreeMap<(String, String, String), (u64, String)>,
    first: Option<String>,
}

impl Failures {
    pub fn add(&mut self, r: &RequestRecord) {
        self.attempted += 1;
        let Some(class) = r.error_class else {
            self.succeeded += 1;
            return;
        };
        let message = r.error_message.clone().unwrap_or_default();
        self.first
            .get_or_insert_with(|| format!("{class}: {message}"));
        let status = r.http_status.map(|s| s.to_string()).unwrap_or_default();
        self.by_class
            .entry((r.model.clone(), class.to_string(), status))
            .or_insert((0, message))
            .0 += 1;
    }

    /// Some requests were sent and none succeeded.
    pub fn all_failed(&self) -> bool {
        self.attempted > 0 && self.succeeded == 0
    }

    /// `class: message` of the first failure.
    pub fn first(&self) -> Option<&str> {
        self.first.as_deref()
    }

    /// `-v`: one line per model, class and status.
    pub fn lines(&self) -> Vec<String> {
        if self.by_class.is_empty() {
            return vec!["no failed requests".into()];
        }
        let mut out = vec!["failed requests by class:".to_string()];
        for ((model, class, status), (n, message)) in &self.by_class {
            let status = if status.is_empty() {
                String::new()
            } else {
                format!(" (HTTP {status})")
            };
            out.push(format!("  {model}: {class}{status} ×{n}: {message}"));
        }
        out
    }
}
