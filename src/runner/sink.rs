//! Where a step's records go: the progress display (`Progress`), the run's sink (`RunSink`: each
//! record as it ends, each step when it ends, a tick about once a second) and the drain that
//! hands a step's records from its senders to the sink in batches.

use crate::model::{RequestRecord, StepRun};
use std::time::Duration;
use tokio::sync::mpsc;
use tokio::time::Instant;

/// What the runner reports while it works (progress display, logs).
pub trait Progress: Send + Sync {
    /// `label` says the step's load in its unit (`16 streams`, `4 req/s`).
    fn step_started(&self, model: &str, step: u32, steps: u32, label: &str, total: Option<u64>);
    /// The running step's load in its unit (streams, or requests/s in rate mode; a shard's
    /// share), right after `step_started`.
    fn step_load(&self, _load: f64) {}
    fn record(&self, record: &RequestRecord);
    fn in_flight(&self, n: usize);
    fn step_finished(&self, model: &str, step: u32);
}

/// A progress sink that shows nothing.
pub struct NoProgress;

impl Progress for NoProgress {
    fn step_started(&self, _: &str, _: u32, _: u32, _: &str, _: Option<u64>) {}
    fn record(&self, _: &RequestRecord) {}
    fn in_flight(&self, _: usize) {}
    fn step_finished(&self, _: &str, _: u32) {}
}

/// Where the records of a run go, as they happen.
pub trait RunSink {
    /// One recorded request, as soon as it ended (warmup requests are not recorded).
    fn record(&mut self, record: RequestRecord);
    /// A step of one model ended: every one of its records has been handed over.
    fn step_finished(&mut self, step: StepRun);
    /// Called about once a second while a step runs (time to flush buffered records).
    fn tick(&mut self) {}
}

/// A sink that summarizes each step as it ends: what a search or refine chooses its next step
/// from, so that they drive extra steps through the runner without knowing who records them.
pub trait SummarizingSink: RunSink {
    /// The steps summarized so far, per model, by step value.
    fn summaries(&self) -> &[crate::stats::StepSummary];
}

/// How often `RunSink::tick` is called while a step runs.
pub(super) const TICK: Duration = Duration::from_secs(1);

/// Where warmup records go.
pub(super) struct Discard;

impl RunSink for Discard {
    fn record(&mut self, _: RequestRecord) {}
    fn step_finished(&mut self, _: StepRun) {}
}

/// After handing a batch of records to the sink, the drain waits this long before it takes the
/// next. It runs on the caller's thread (`block_on`, outside the runtime's workers, so the sink's
/// file writes never hold up a stream), and waking that thread for each request that ended cost a
/// futex wake and two context switches per request on the client's core (benches/RESULTS.md,
/// issue 24); records still reach the sink within this delay.
const BATCH_EVERY: Duration = Duration::from_millis(50);

/// Hands a step's records to `sink` as they arrive, a batch at most every [`BATCH_EVERY`]
/// (ticking it about once a second), until every sender is gone; returns the step's wall time in
/// seconds: first request start to last end.
pub(super) async fn drain_records(
    mut rx: mpsc::UnboundedReceiver<(RequestRecord, f64)>,
    step_start: Instant,
    sink: &mut dyn RunSink,
) -> f64 {
    let mut first_start_ms = f64::INFINITY;
    let mut last_end_ms = 0.0f64;
    let mut tick = tokio::time::interval_at(step_start + TICK, TICK);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut batch = Vec::new();
    loop {
        tokio::select! {
            n = rx.recv_many(&mut batch, usize::MAX) => {
                if n == 0 {
                    break;
                }
                for (r, ended_ms) in batch.drain(..) {
                    last_end_ms = last_end_ms.max(ended_ms);
                    first_start_ms = first_start_ms.min(r.started_at_ms);
                    sink.record(r);
                }
                tokio::time::sleep(BATCH_EVERY).await;
            }
            _ = tick.tick() => sink.tick(),
        }
    }
    if first_start_ms.is_finite() {
        ((last_end_ms - first_start_ms) / 1000.0).max(0.0)
    } else {
        step_start.elapsed().as_secs_f64()
    }
}

/// Where a step's senders send their records with their end times.
pub(super) type RecordTx = mpsc::UnboundedSender<(RequestRecord, f64)>;
