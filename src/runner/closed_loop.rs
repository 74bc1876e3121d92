//! Closed-loop steps: exactly `c` workers send requests back to back until the step's budget
//! (requests per step, per worker, or a duration) is used, each started after its share of the
//! ramp-up. A worker holds its conversation (`workload::Conversation`) for the whole step: it
//! waits what the conversation asks before each turn, sends the next request, and tells the
//! conversation what the answer was. Records go to the sink as they end (`sink::drain_records`).

use super::interrupt::Interrupt;
use super::outbox::Outbox;
use super::plan::StepPlan;
use super::request::{one_request, spawn_sender, RequestKey};
use super::shared::Shared;
use super::sink::{drain_records, RunSink};
use super::workload::Conversation;
use crate::client::Backend;
use crate::model::RequestRecord;
use crate::scenario::Budget;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;
use tokio::time::Instant;

/// Runs one step with exactly `concurrency` closed-loop workers, handing each record to `sink`
/// as it ends; returns the step's wall time in seconds.
pub(super) async fn run_step<B: Backend>(
    shared: &Arc<Shared<B>>,
    plan: &StepPlan,
    interrupt: &Interrupt,
    sink: &mut dyn RunSink,
) -> f64 {
    let c = plan.concurrency.max(1);
    let step_start = Instant::now();
    let deadline = match plan.budget {
        Budget::Duration(d) => Some(step_start + plan.ramp_up + d),
        _ => None,
    };
    // Each record travels with its end time (ms since run start): with retries, a record's
    // `started_at_ms + e2e_ms` is not when it ended (e2e covers the last attempt only).
    let (tx, rx) = mpsc::unbounded_channel::<(RequestRecord, f64)>();
    let worker = Worker {
        shared: Arc::clone(shared),
        tickets: Arc::new(AtomicU64::new(0)),
        step_start,
        deadline,
        plan: Arc::new(WorkerPlan {
            model: plan.model.clone(),
            step: plan.step,
            value: plan.value,
            budget: plan.budget,
            record: plan.record,
        }),
        tx,
    };
    let mut handles = Vec::with_capacity(c as usize);
    for n in 0..c {
        let delay = if c > 1 {
            plan.ramp_up.mul_f64(f64::from(n) / f64::from(c))
        } else {
            Duration::ZERO
        };
        let conversation = Arc::clone(&plan.work).worker(n);
        let w = worker.clone();
        let interrupt = interrupt.clone();
        handles.push(spawn_sender(w.run(n, delay, conversation, interrupt)));
    }
    drop(worker);
    let duration_s = drain_records(rx, step_start, sink).await;
    for h in handles {
        let _ = h.await;
    }
    duration_s
}

/// What a step's workers share of its plan.
struct WorkerPlan {
    model: String,
    step: u32,
    /// The step's ladder value (the records' `concurrency` column).
    value: u32,
    budget: Budget,
    record: bool,
}

/// One worker's view of its step.
struct Worker<B> {
    shared: Arc<Shared<B>>,
    /// Requests started in the step so far (the next request's number).
    tickets: Arc<AtomicU64>,
    step_start: Instant,
    /// A duration budget's end: no request starts at or after it.
    deadline: Option<Instant>,
    plan: Arc<WorkerPlan>,
    tx: mpsc::UnboundedSender<(RequestRecord, f64)>,
}

impl<B> Clone for Worker<B> {
    fn clone(&self) -> Self {
        Worker {
            shared: Arc::clone(&self.shared),
            tickets: Arc::clone(&self.tickets),
            step_start: self.step_start,
            deadline: self.deadline,
            plan: Arc::clone(&self.plan),
            tx: self.tx.clone(),
        }
    }
}

impl<B: Backend> Worker<B> {
    /// Worker `worker`: after its ramp-up `delay`, its conversation's turns back to back
    /// (each after the wait the conversation asks) while the budget lasts.
    async fn run(
        self,
        worker: u32,
        delay: Duration,
        mut conversation: Box<dyn Conversation>,
        interrupt: Interrupt,
    ) {
        let mut stop_rx = interrupt.subscribe();
        if !delay.is_zero() {
            tokio::select! {
                _ = tokio::time::sleep_until(self.step_start + delay) => {}
                _ = stop_rx.wait_for(|v| *v >= 1) => return,
            }
        }
        let plan = &*self.plan;
        let mut seq = 0u32;
        let mut outbox = Outbox::default();
        loop {
            if interrupt.is_stopped() {
                break;
            }
            // What the conversation waits before its next turn (an agent's tool and thinking).
            let Some(wait) = conversation.wait() else {
                break;
            };
            if !wait.is_zero() {
                tokio::select! {
                    _ = tokio::time::sleep(wait) => {}
                    _ = stop_rx.wait_for(|v| *v >= 1) => break,
                }
            }
            let ticket = self.tickets.fetch_add(1, Ordering::Relaxed);
            let go = match plan.budget {
                Budget::RequestsPerStep(n) => ticket < n,
                Budget::RequestsPerWorker(k) => u64::from(seq) < k,
                Budget::Duration(_) => self.deadline.is_some_and(|d| Instant::now() < d),
            };
            // A held record is handed on once its next turn surely goes.
            if !go || !outbox.next_sent(&self.tx) {
                break;
            }
            let prepared = conversation.next(ticket);
            let (turn, origin) = (prepared.turn, prepared.origin);
            let (who, number) = origin.unwrap_or((worker, seq));
            let variant = prepared.variant.clone();
            let key = RequestKey {
                model: variant.as_deref().unwrap_or(&plan.model),
                step: plan.step,
                concurrency: plan.value,
                worker: who,
                seq: number,
            };
            let mut rec = one_request(&self.shared, key, prepared, None, &interrupt).await;
            let settled = conversation.answered(&mut rec);
            if let Some((turn, of)) = turn {
                (rec.turn, rec.task_turns) = (Some(turn), Some(of));
            }
            seq += 1;
            if plan.record {
                let ended_ms = self.shared.ended(&rec);
                if !outbox.send(&self.tx, rec, ended_ms, settled) {
                    return;
                }
            }
        }
        outbox.unsent(&self.tx);
    }
}
