//! Open-loop steps (`load.mode: rate`, and `replay`): requests are sent at the times of a seeded
//! arrival schedule (or of the workload's own arrivals, a trace's) whether or not earlier ones
//! have finished. The dispatcher lives here; the plan (which times) is `plan`'s, the clock that
//! hands out each arrival when it is due is `pacing`'s; sending (how) is `request`'s. Each
//! arrival runs its own conversation (`workload::Conversation`): its first turn at the arrival,
//! and each later turn (a replayed agent session's) once the previous answer ended plus the wait
//! the conversation asks. Each record carries its send lag (actual − scheduled), so latency can
//! also be read from the scheduled time (no coordinated omission). An arrival or a turn that
//! finds `max_concurrency` requests in flight is dropped and counted, never delayed.

use super::interrupt::Interrupt;
use super::outbox::Outbox;
use super::pacing::{Arrivals, Pacer};
use super::plan::{OpenPlan, StepPlan};
use super::request::{one_request, spawn_sender, RequestKey};
use super::shared::Shared;
use super::sink::{drain_records, RunSink};
use super::workload::{Conversation, Prepared, Workload};
use crate::client::Backend;
use crate::model::RequestRecord;
use crate::scenario::Budget;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;
use tokio::sync::mpsc;
use tokio::time::Instant;

/// Runs one open-loop step; returns its wall time in seconds and the number of dropped
/// arrivals (and later turns).
pub(super) async fn run_open_step<B: Backend>(
    shared: &Arc<Shared<B>>,
    plan: &StepPlan,
    open: OpenPlan,
    interrupt: &Interrupt,
    sink: &mut dyn RunSink,
) -> (f64, u64) {
    let step_start = Instant::now();
    let (limit, end) = match plan.budget {
        Budget::RequestsPerStep(n) => (Some(n), None),
        Budget::Duration(d) => (None, Some(step_start + d)),
        // Refused by validation in rate mode; treated as one request per "worker".
        Budget::RequestsPerWorker(k) => (Some(k), None),
    };
    let arrivals = Arrivals::new(open.times, step_start, limit, end);
    let (tx, rx) = mpsc::unbounded_channel::<(RequestRecord, f64)>();
    let dispatcher = {
        let sender = Sender {
            shared: Arc::clone(shared),
            work: Arc::clone(&plan.work),
            interrupt: interrupt.clone(),
            model: plan.model.clone(),
            step: plan.step,
            value: plan.value,
            record: plan.record,
            cap: open.max_concurrency,
            in_flight: Arc::default(),
            dropped: Arc::default(),
            end,
            tx,
        };
        let interrupt = interrupt.clone();
        let pacing = shared.pacing;
        tokio::spawn(async move {
            let sender = Arc::new(sender);
            let mut pacer = Pacer::start(pacing, arrivals);
            let mut stop_rx = interrupt.subscribe();
            loop {
                let (k, at) = tokio::select! {
                    due = pacer.next() => match due {
                        Some(due) => due,
                        None => break,
                    },
                    _ = stop_rx.wait_for(|v| *v >= 1) => break,
                };
                if sender.admit() {
                    spawn_sender(Arc::clone(&sender).send(k, at));
                }
            }
            // The conversations still running hold the sender; the count is final once they
            // end.
            let dropped = Arc::clone(&sender.dropped);
            drop(sender);
            dropped
        })
    };
    let duration_s = drain_records(rx, step_start, sink).await;
    let dropped = match dispatcher.await {
        Ok(d) => d.load(Ordering::Relaxed),
        Err(_) => 0,
    };
    (duration_s, dropped)
}

/// What sends a step's arrivals (and their later turns), shared by their tasks.
struct Sender<B> {
    shared: Arc<Shared<B>>,
    work: Arc<dyn Workload>,
    interrupt: Interrupt,
    model: String,
    step: u32,
    value: u32,
    record: bool,
    cap: Option<u32>,
    in_flight: Arc<AtomicU32>,
    dropped: Arc<AtomicU64>,
    /// A duration budget's end: no turn starts at or after it.
    end: Option<Instant>,
    tx: mpsc::UnboundedSender<(RequestRecord, f64)>,
}

impl<B: Backend> Sender<B> {
    /// Whether a request may go out now: below `max_concurrency` (counted in flight), else
    /// dropped and counted.
    fn admit(&self) -> bool {
        if self
            .cap
            .is_some_and(|c| self.in_flight.load(Ordering::Relaxed) >= c)
        {
            self.dropped.fetch_add(1, Ordering::Relaxed);
            return false;
        }
        self.in_flight.fetch_add(1, Ordering::Relaxed);
        true
    }

    /// Arrival `k` (admitted) due at `at`: its conversation's first turn; then each next turn
    /// once the one before it ended and the conversation's wait has passed (a turn over the
    /// cap is dropped and the conversation goes on).
    async fn send(self: Arc<Self>, k: u64, at: Instant) {
        let mut conversation = Arc::clone(&self.work).arrival(k);
        let mut outbox = Outbox::default();
        let mut at = at;
        let mut prepared = Some(conversation.next(k));
        loop {
            if let Some(p) = prepared.take() {
                self.one(k, at, p, &mut *conversation, &mut outbox).await;
            }
            let Some(wait) = conversation.wait() else {
                break;
            };
            at = Instant::now() + wait;
            if self.end.is_some_and(|e| at >= e) {
                break;
            }
            // The body is built during the wait, and the wait ends on time to tens of
            // microseconds (tokio's timer alone wakes on millisecond ticks).
            let body = conversation.next(k);
            let mut stop_rx = self.interrupt.subscribe();
            tokio::select! {
                _ = super::pacing::wait_until(at) => {}
                _ = stop_rx.wait_for(|v| *v >= 1) => break,
            }
            if self.interrupt.is_stopped() {
                break;
            }
            prepared = self.admit().then_some(body);
            if prepared.is_some() {
                outbox.next_sent(&self.tx);
            } else {
                outbox.unsent(&self.tx);
            }
        }
        outbox.unsent(&self.tx);
    }

    /// One turn of arrival `k`'s conversation, its record handed on with its turn; a
    /// conversation that numbers its requests (a replayed session) names the record's worker
    /// and seq.
    async fn one(
        &self,
        k: u64,
        at: Instant,
        prepared: Prepared,
        conversation: &mut dyn Conversation,
        outbox: &mut Outbox,
    ) {
        let (turn, origin) = (prepared.turn, prepared.origin);
        let (worker, seq) = origin.unwrap_or((0, u32::try_from(k).unwrap_or(u32::MAX)));
        let variant = prepared.variant.clone();
        let key = RequestKey {
            model: variant.as_deref().unwrap_or(&self.model),
            step: self.step,
            concurrency: self.value,
            worker,
            seq,
        };
        let mut rec = one_request(&self.shared, key, prepared, Some(at), &self.interrupt).await;
        self.in_flight.fetch_sub(1, Ordering::Relaxed);
        let settled = conversation.answered(&mut rec);
        if let Some((turn, of)) = turn {
            (rec.turn, rec.task_turns) = (Some(turn), Some(of));
        }
        if self.record {
            let ended_ms = self.shared.ended(&rec);
            outbox.send(&self.tx, rec, ended_ms, settled);
        }
    }
}
