//! The sink of a real run (`runner::RunSink`): each record is appended to `requests.csv` as it
//! ends, counted into the step's findings extras and the failure breakdown, and held only until
//! its step ends; then the step is summarized (`stats::summarize_step`, on the step's own
//! records, nothing cloned), `summary.csv` and `meta.json` (with the finished steps, still
//! `complete: false`) are rewritten, and the records are dropped. Memory therefore holds one
//! step's records at a time, whatever the number of steps; only `--against` keeps the small
//! per-request samples the bootstrap needs.

use crate::compare::RequestSample;
use crate::findings::RunExtras;
use crate::model::{RequestRecord, StepRun};
use crate::runner::{RunSink, SummarizingSink};
use crate::scenario::Scenario;
use crate::stats::{self, StepContext, StepSummary};
use crate::store::{self, Meta, RequestsAppender, RunDir, RunFiles, StoreError};
use std::collections::BTreeMap;

/// Collects a run as it happens.
pub struct Recorder<'a> {
    scenario: &'a Scenario,
    run: CollectedRun,
    requests: Option<RequestsAppender>,
    /// The current step's records (one model × step at a time: steps never overlap).
    current: Vec<RequestRecord>,
    /// The first write error; the run goes on and the error is reported at the end.
    io_error: Option<StoreError>,
}

/// Everything a finished (or stopped) run leaves in memory.
pub struct CollectedRun {
    pub dir: RunDir,
    pub meta: Meta,
    /// The normalized workload (`workload.yaml`), produced once.
    pub workload_yaml: String,
    /// Ordered by model (scenario order), then step.
    pub summaries: Vec<StepSummary>,
    pub extras: RunExtras,
    pub failures: Failures,
    /// Per-request samples, kept only when asked (`--against`).
    pub samples: Option<Vec<RequestSample>>,
}

impl<'a> Recorder<'a> {
    /// Writes `scenario.yaml`, `workload.yaml`, `meta.json` (`complete: false`) and the
    /// `requests.csv` header before any traffic.
    pub fn start(
        scenario: &'a Scenario,
        dir: RunDir,
        meta: Meta,
        keep_samples: bool,
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
                extras: RunExtras::new(),
                failures: Failures::default(),
                samples: keep_samples.then(Vec::new),
            },
            requests: Some(requests),
            current: Vec::new(),
            io_error: None,
        })
    }

    /// Flushes `requests.csv`; the first write error of the run, if any, is returned now.
    pub fn finish(mut self) -> Result<CollectedRun, StoreError> {
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

    fn model_index(&self, m: &str) -> usize {
        let models = &self.scenario.target.models;
        models.iter().position(|x| x == m).unwrap_or(models.len())
    }
}

impl SummarizingSink for Recorder<'_> {
    fn summaries(&self) -> &[StepSummary] {
        &self.run.summaries
    }
}

impl super::refine::WithExtras for Recorder<'_> {
    fn extras(&self) -> Option<&crate::findings::RunExtras> {
        Some(&self.run.extras)
    }
}

impl RunSink for Recorder<'_> {
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
        self.run
            .extras
            .entry((r.model.clone(), r.step))
            .or_default()
            .add(&r);
        if let Some(samples) = &mut self.run.samples {
            samples.push(RequestSample::of(&r));
        }
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
        let mut row = stats::summarize_step(&ctx, &self.current);
        self.current.clear();
        row.apply_step_run(&step);
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
