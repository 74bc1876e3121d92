//! Open-loop steps (`load.mode: rate`, and `replay`): requests are sent at the times of a seeded
//! arrival schedule (or of a trace, at a multiple of its rate) whether or not earlier ones have
//! finished. The plan (which times) and the dispatcher live here; the clock that hands out each
//! arrival when it is due is `pacing`'s; sending (how) is the closed loop's `one_request`. Each record carries its send lag (actual − scheduled), so
//! latency can also be read from the scheduled time (no coordinated omission). An arrival that
//! finds `max_concurrency` requests in flight is dropped and counted, never delayed.

use super::pacing::{Arrivals, Pacer};
use super::request::{one_request, spawn_sender, RequestKey};
use super::{drain_records, Interrupt, RunSink, Shared, StepPlan};
use crate::client::Backend;
use crate::model::RequestRecord;
use crate::scenario::arrivals::{step_seed, ArrivalProcess, Schedule};
use crate::scenario::trace::Trace;
use crate::scenario::{Budget, LoadMode, Scenario};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;
use tokio::time::Instant;

/// The pacing of one open-loop step: when each request is meant to go out (seconds after the
/// step's start, increasing), and the cap on requests in flight.
pub(super) struct OpenPlan {
    pub(super) times: Box<dyn Iterator<Item = f64> + Send>,
    pub(super) max_concurrency: Option<u32>,
    /// A replayed trace: which request each arrival sends, and the turns that follow it.
    pub(super) turns: Option<Arc<Turns>>,
}

/// A replay's requests: arrival k sends trace request `heads[k]`; a request whose session's
/// next turn waits on it (an agent trace) sends that turn after it ended, plus the recorded gap
/// ÷ the speed; only requests before `limit` are sent.
pub(super) struct Turns {
    trace: Arc<Trace>,
    heads: Vec<usize>,
    speed: f64,
    limit: usize,
}

impl Turns {
    /// The session's next turn after request `n`, and its wait after `n` ended.
    fn after(&self, n: usize) -> Option<(usize, Duration)> {
        let next = self.trace.requests[n].next.filter(|i| *i < self.limit)?;
        let gap_ms = self.trace.requests[next].after_previous_ms.unwrap_or(0.0);
        Some((next, Duration::from_secs_f64(gap_ms / 1000.0 / self.speed)))
    }
}

impl OpenPlan {
    /// A rate step: a seeded arrival schedule at `rate` requests/s (`None` when the rate or
    /// process cannot draw gaps).
    pub(super) fn rate(
        rate: f64,
        arrivals: ArrivalProcess,
        seed: u64,
        max_concurrency: Option<u32>,
    ) -> Option<OpenPlan> {
        let schedule = Schedule::new(rate, arrivals, seed)?;
        Some(OpenPlan {
            times: Box::new(schedule),
            max_concurrency,
            turns: None,
        })
    }

    /// A replay step of the trace's first `limit` requests: their arrivals at `speed`× their
    /// rate (`workload` sends request n's sizes or text); an agent trace's later turns are not
    /// arrivals, they follow their previous turn ([`Turns`]).
    pub(super) fn replay(
        trace: Arc<Trace>,
        speed: f64,
        max_concurrency: Option<u32>,
        limit: usize,
    ) -> OpenPlan {
        let limit = limit.min(trace.requests.len());
        let heads: Vec<usize> = (0..limit)
            .filter(|&i| trace.requests[i].after_previous_ms.is_none())
            .collect();
        let times: Vec<f64> = heads
            .iter()
            .map(|&i| trace.requests[i].at_ms / 1000.0 / speed)
            .collect();
        OpenPlan {
            times: Box::new(times.into_iter()),
            max_concurrency,
            turns: Some(Arc::new(Turns {
                trace,
                heads,
                speed,
                limit,
            })),
        }
    }
}

/// How a step of `scenario` is paced when it is open loop: its plan and the offered rate
/// (requests/s: the step's rate or a shard's share of it; a trace's own rate × the speed);
/// `None` for a closed-loop step. `load` is the step's rate or speed.
pub(super) fn plan(
    scenario: &Scenario,
    shard: Option<crate::shard::ShardSpec>,
    step: u32,
    load: f64,
    budget: &Budget,
) -> Option<(OpenPlan, f64)> {
    match scenario.load.mode {
        LoadMode::Concurrency => None,
        LoadMode::Rate {
            arrivals,
            max_concurrency,
        } => {
            let seed = step_seed(scenario.load.seed, step);
            let seed = shard.map_or(seed, |spec| crate::shard::arrival_seed(spec, seed));
            OpenPlan::rate(load, arrivals, seed, max_concurrency).map(|p| (p, load))
        }
        LoadMode::Replay { max_concurrency } => {
            let trace = Arc::clone(scenario.load.trace.as_ref()?);
            let n = match budget {
                Budget::RequestsPerStep(n) => *n as usize,
                _ => trace.requests.len(),
            };
            let offered = trace.rate(n).map_or(0.0, |r| r * load);
            Some((OpenPlan::replay(trace, load, max_concurrency, n), offered))
        }
    }
}

/// Runs one open-loop step; returns its wall time in seconds and the number of dropped
/// arrivals (and agent turns).
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
            turns: open.turns,
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
                let n = sender
                    .turns
                    .as_ref()
                    .map_or(k, |t| t.heads[k as usize] as u64);
                if sender.admit() {
                    spawn_sender(Arc::clone(&sender).send(n, at));
                }
            }
            // The sessions still running hold the sender; the count is final once they end.
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

/// What sends a step's arrivals (and an agent trace's later turns), shared by their tasks.
struct Sender<B> {
    shared: Arc<Shared<B>>,
    work: Arc<crate::runner::workload::StepWorkload>,
    interrupt: Interrupt,
    model: String,
    step: u32,
    value: u32,
    record: bool,
    cap: Option<u32>,
    in_flight: Arc<AtomicU32>,
    dropped: Arc<AtomicU64>,
    turns: Option<Arc<Turns>>,
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

    /// Sends request `n` (admitted) due at `at`; then, in an agent trace, each next turn of its
    /// session once the one before it ended and the gap has passed (a turn over the cap is
    /// dropped and the session goes on).
    async fn send(self: Arc<Self>, n: u64, at: Instant) {
        let (mut n, mut at) = (n, at);
        let mut prepared = Some(self.work.prepare(&*self.shared.backend, n, None));
        loop {
            if let Some(body) = prepared.take() {
                self.one(n, at, body).await;
            }
            let Some((next, gap)) = self.turns.as_ref().and_then(|t| t.after(n as usize)) else {
                return;
            };
            at = Instant::now() + gap;
            if self.end.is_some_and(|e| at >= e) {
                return;
            }
            // The body is built during the gap, and the wait ends on time to tens of
            // microseconds (tokio's timer alone wakes on millisecond ticks).
            n = next as u64;
            let body = self.work.prepare(&*self.shared.backend, n, None);
            let mut stop_rx = self.interrupt.subscribe();
            tokio::select! {
                _ = super::pacing::wait_until(at) => {}
                _ = stop_rx.wait_for(|v| *v >= 1) => return,
            }
            if self.interrupt.is_stopped() {
                return;
            }
            prepared = self.admit().then_some(body);
        }
    }

    /// Request `n`, its record handed on with its turn; a replayed session's requests are its
    /// "worker"'s (the session's number), so its turns read as one task.
    async fn one(&self, n: u64, at: Instant, prepared: crate::runner::workload::Prepared) {
        let turn = self
            .turns
            .as_ref()
            .and_then(|t| t.trace.requests[n as usize].turn);
        let key = RequestKey {
            model: &self.model,
            step: self.step,
            concurrency: self.value,
            worker: turn.map_or(0, |t| t.session),
            seq: u32::try_from(n).unwrap_or(u32::MAX),
        };
        let mut rec = one_request(&self.shared, key, prepared, Some(at), &self.interrupt).await;
        self.in_flight.fetch_sub(1, Ordering::Relaxed);
        if let Some(t) = turn {
            (rec.turn, rec.task_turns) = (Some(t.turn), Some(t.of));
        }
        if self.record {
            let ended_ms = self.shared.run_start.elapsed().as_secs_f64() * 1000.0;
            self.shared.progress.record(&rec);
            let _ = self.tx.send((rec, ended_ms));
        }
    }
}
