//! Open-loop steps (`load.mode: rate`, and `replay`): requests are sent at the times of a seeded
//! arrival schedule (or of a trace, at a multiple of its rate) whether or not earlier ones have
//! finished. The plan (which times) and the dispatcher live here; the clock that hands out each
//! arrival when it is due is `pacing`'s; sending (how) is the closed loop's `one_request`. Each record carries its send lag (actual − scheduled), so
//! latency can also be read from the scheduled time (no coordinated omission). An arrival that
//! finds `max_concurrency` requests in flight is dropped and counted, never delayed.

use super::pacing::{Arrivals, Pacer};
use super::request::{one_request, RequestKey};
use super::{drain_records, Interrupt, RunSink, Shared, StepPlan};
use crate::client::Backend;
use crate::model::RequestRecord;
use crate::scenario::arrivals::{step_seed, ArrivalProcess, Schedule};
use crate::scenario::trace::Trace;
use crate::scenario::{Budget, LoadMode, Scenario};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use tokio::sync::mpsc;
use tokio::time::Instant;

/// The pacing of one open-loop step: when each request is meant to go out (seconds after the
/// step's start, increasing), and the cap on requests in flight.
pub(super) struct OpenPlan {
    pub(super) times: Box<dyn Iterator<Item = f64> + Send>,
    pub(super) max_concurrency: Option<u32>,
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
        })
    }

    /// A replay step: the trace's arrivals at `speed`× their rate, request n of the step being
    /// the trace's n-th (`workload` sends its sizes or text).
    pub(super) fn replay(trace: Arc<Trace>, speed: f64, max_concurrency: Option<u32>) -> OpenPlan {
        let n = trace.requests.len();
        OpenPlan {
            times: Box::new((0..n).map(move |i| trace.requests[i].at_ms / 1000.0 / speed)),
            max_concurrency,
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
            Some((OpenPlan::replay(trace, load, max_concurrency), offered))
        }
    }
}

/// Runs one open-loop step; returns its wall time in seconds and the number of dropped
/// arrivals.
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
        let shared = Arc::clone(shared);
        let work = Arc::clone(&plan.work);
        let interrupt = interrupt.clone();
        let (model, step, value, record) = (plan.model.clone(), plan.step, plan.value, plan.record);
        let cap = open.max_concurrency;
        tokio::spawn(async move {
            let in_flight = Arc::new(AtomicU32::new(0));
            let mut dropped = 0u64;
            let mut pacer = Pacer::start(shared.pacing, arrivals);
            let mut stop_rx = interrupt.subscribe();
            loop {
                let (n, at) = tokio::select! {
                    due = pacer.next() => match due {
                        Some(due) => due,
                        None => break,
                    },
                    _ = stop_rx.wait_for(|v| *v >= 1) => break,
                };
                if cap.is_some_and(|c| in_flight.load(Ordering::Relaxed) >= c) {
                    dropped += 1;
                    continue;
                }
                in_flight.fetch_add(1, Ordering::Relaxed);
                let prepared = work.prepare(&*shared.backend, n, None);
                let (shared, in_flight, tx) =
                    (Arc::clone(&shared), Arc::clone(&in_flight), tx.clone());
                let (interrupt, model) = (interrupt.clone(), model.clone());
                tokio::spawn(async move {
                    let key = RequestKey {
                        model: &model,
                        step,
                        concurrency: value,
                        worker: 0,
                        seq: u32::try_from(n).unwrap_or(u32::MAX),
                    };
                    let rec = one_request(&shared, key, prepared, Some(at), &interrupt).await;
                    in_flight.fetch_sub(1, Ordering::Relaxed);
                    if record {
                        let ended_ms = shared.run_start.elapsed().as_secs_f64() * 1000.0;
                        shared.progress.record(&rec);
                        let _ = tx.send((rec, ended_ms));
                    }
                });
            }
            dropped
        })
    };
    let duration_s = drain_records(rx, step_start, sink).await;
    let dropped = dispatcher.await.unwrap_or(0);
    (duration_s, dropped)
}
