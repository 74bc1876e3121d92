//! The closed-loop load generator: for each model and each ladder step, exactly `c` workers send
//! requests back to back until the step's budget is used. Every attempted request becomes one
//! `RequestRecord`, handed to the `RunSink` as soon as it ends (so the caller can append it to
//! disk and summarize the step as records arrive; nothing is kept here). Warmup requests are sent
//! and not recorded. The network is behind `client::Backend`, so tests drive whole ladders with a
//! scripted backend on paused time. Cancellation is cooperative: a stop signal stops new
//! requests, a cancel signal ends in-flight ones as `interrupted`.

use crate::client::request_id::RequestIds;
use crate::client::Backend;
use crate::model::RequestRecord;
use crate::model::StepRun;
use crate::model::StoppedBy;
use crate::runner::selfcheck::{LoopLagProbe, ProcessCpu};
use crate::runner::workload::StepWorkload;
use crate::scenario::{Budget, LadderOver, RetryPolicy, Scenario};
use crate::util::redact::Redactor;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, SystemTime};
use tokio::sync::{mpsc, watch};
use tokio::time::Instant;

/// Stop/cancel signals shared by the runner and whoever handles Ctrl-C.
#[derive(Clone)]
pub struct Interrupt {
    stop: watch::Sender<u8>,
    /// Level 2 of `stop`, as the in-flight sends wait for it (`cancel`).
    cancel: Arc<cancel::Cancel>,
    /// The fail-fast rule, when on (`failfast`), and why it stopped the run.
    fail_fast: Option<Arc<std::sync::Mutex<FailFast>>>,
    /// The signal that stopped the run, when one did (`stop_by_signal`).
    signal: Arc<std::sync::OnceLock<String>>,
}

impl Default for Interrupt {
    fn default() -> Self {
        Self::new()
    }
}

impl Interrupt {
    pub fn new() -> Self {
        Interrupt {
            stop: watch::channel(0).0,
            cancel: Arc::default(),
            fail_fast: None,
            signal: Arc::default(),
        }
    }
    /// Also stop when the first requests show the target cannot work (`failfast`).
    pub fn with_fail_fast(mut self) -> Self {
        self.fail_fast = Some(Arc::default());
        self
    }
    /// One finished request (warm-ups included), for the fail-fast rule.
    fn observe(&self, record: &RequestRecord) {
        let Some(ff) = &self.fail_fast else { return };
        let tripped = ff.lock().is_ok_and(|mut g| g.observe(record).is_some());
        if tripped {
            self.stop();
        }
    }
    /// Why the run stopped early, when the fail-fast rule stopped it.
    pub fn tripped(&self) -> Option<Tripped> {
        self.fail_fast
            .as_ref()
            .and_then(|ff| ff.lock().ok().and_then(|g| g.tripped.clone()))
    }
    /// Why the run stopped before its plan ended: the fail-fast rule, else a signal; `None`
    /// while it has not stopped.
    pub fn stopped_by(&self) -> Option<StoppedBy> {
        if let Some(t) = self.tripped() {
            return Some(t.stopped_by());
        }
        self.is_stopped().then(|| StoppedBy::Interrupted {
            signal: self.signal.get().cloned(),
        })
    }
    /// Start no new request, because of the stop signal `name` (`SIGTERM`).
    pub fn stop_by_signal(&self, name: &str) {
        let _ = self.signal.set(name.to_string());
        self.stop();
    }
    /// Start no new request.
    pub fn stop(&self) {
        self.stop.send_if_modified(|v| {
            if *v < 1 {
                *v = 1;
                true
            } else {
                false
            }
        });
    }
    /// End in-flight requests now (they are recorded as `interrupted`).
    pub fn cancel(&self) {
        // Level 2 says so to whoever reads the stop signal; the sends wait on `cancel`.
        self.stop.send_replace(2);
        self.cancel.cancel();
    }
    pub fn is_stopped(&self) -> bool {
        *self.stop.borrow() >= 1
    }
    fn subscribe(&self) -> watch::Receiver<u8> {
        self.stop.subscribe()
    }
}

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

/// Everything a worker needs, shared.
struct Shared<B> {
    backend: Arc<B>,
    retry: RetryPolicy,
    redactor: Redactor,
    run_start: Instant,
    ids: RequestIds,
    next_id: AtomicU64,
    in_flight: AtomicUsize,
    progress: Arc<dyn Progress>,
    /// The clock open-loop steps are paced on.
    pacing: Pacing,
}

/// When a run starts and how its steps are timed. The default starts at once and separates
/// steps by the scenario's pause; sharded runs (`--start-at`) start every shard's step k at the
/// same wall-clock time and run the shard's share of each step.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Schedule {
    /// Wall-clock time of the first step; records' `started_at_ms` count from it.
    pub start: Option<SystemTime>,
    /// Step k (model × step runs counted from 0) starts at `start + k × every`, replacing the
    /// pause between steps. A step that overruns its slot delays the next one.
    pub every: Option<Duration>,
    /// Run only this shard's share of each step (`shard::step_share`).
    pub shard: Option<crate::shard::ShardSpec>,
    /// Steps already run (`refine` runs its steps after the planned ones): the first step
    /// here is number `first_step + 1`.
    pub first_step: u32,
    /// The clock open-loop steps are paced on: the kernel's high-resolution timers (the
    /// default), or tokio's timer for runs on a paused clock.
    pub pacing: Pacing,
}

#[cfg(test)]
impl Schedule {
    /// Starts now, paced on tokio's timer: for runs on a paused clock (the runner's tests,
    /// `make calibrate`).
    fn pretend_time() -> Schedule {
        Schedule {
            pacing: Pacing::Tokio,
            ..Schedule::default()
        }
    }
}

/// Runs every step of every model of the scenario on `schedule`, handing records and finished
/// steps to `sink`; returns whether the run was interrupted. A step of concurrency 0 (a shard's share of a step smaller than
/// the number of shards) sends nothing.
pub async fn run_scheduled<B: Backend>(
    scenario: &Scenario,
    backend: Arc<B>,
    progress: Arc<dyn Progress>,
    interrupt: Interrupt,
    sink: &mut dyn RunSink,
    schedule: Schedule,
) -> bool {
    let run_start = schedule.start.map_or_else(Instant::now, instant_at);
    let shared = Arc::new(Shared {
        backend,
        retry: scenario.retry.clone(),
        redactor: scenario.target.redactor().for_files(),
        run_start,
        ids: RequestIds::random(),
        next_id: AtomicU64::new(0),
        in_flight: AtomicUsize::new(0),
        progress,
        pacing: schedule.pacing,
    });
    // An extra step (search, refine) counts the steps already run: "step 5/5", not "5/1".
    let steps_total = schedule.first_step + scenario.load.ladder.len() as u32;
    // Models are interleaved per step (A@5, B@5, A@10, B@10, ...) rather than run one whole
    // ladder after another, so that drift in the provider's load over the run affects every
    // model's step alike and a side-by-side comparison stays fair.
    let total_runs = scenario.load.ladder.len() * scenario.target.models.len();
    let mut runs_done = 0usize;
    if schedule.start.is_some() && !wait_until(run_start, &interrupt).await {
        return true;
    }
    let mut slot = 0u32;
    'steps: for (idx, &value) in scenario.load.ladder.iter().enumerate() {
        let step = schedule.first_step + idx as u32 + 1;
        // The step's load: its ladder value, or the fixed level of a prompt-size ladder.
        let level = match scenario.load.ladder_over {
            LadderOver::Load => value,
            LadderOver::PromptTokens { level } => level,
        };
        for model in &scenario.target.models {
            if interrupt.is_stopped() {
                break 'steps;
            }
            if let Some(every) = schedule.every {
                if !wait_until(run_start + every * slot, &interrupt).await {
                    break 'steps;
                }
            }
            slot += 1;
            let at = LadderSlot {
                model,
                step,
                steps_total,
                share: step_share(scenario, schedule.shard, level, value),
            };
            let outcome = run_model_step(&shared, scenario, schedule.shard, &at, &interrupt, sink);
            match outcome.await {
                SlotOutcome::Stopped => break 'steps,
                SlotOutcome::Empty => runs_done += 1,
                SlotOutcome::Ran => {
                    runs_done += 1;
                    let pause = scenario.load.pause_between_steps;
                    if !pause.is_zero() && runs_done < total_runs && schedule.every.is_none() {
                        let mut rx = interrupt.subscribe();
                        tokio::select! {
                            _ = tokio::time::sleep(pause) => {}
                            _ = rx.wait_for(|v| *v >= 1) => {}
                        }
                    }
                }
            }
        }
    }
    interrupt.is_stopped()
}

/// The share of a step this process runs: all of it, or a shard's share of the load (whole
/// streams, or an exact share of the requests/s) and of the requests.
struct StepShare {
    /// Streams, or requests/s in rate mode.
    load: f64,
    warmup: u64,
    /// The step's value on its records: a shard's share of the streams; a rate share need not
    /// be whole, so rate steps keep the step's rate as their value and carry the share as the
    /// offered rate.
    value: u32,
    budget: Budget,
}

fn step_share(
    scenario: &Scenario,
    shard: Option<crate::shard::ShardSpec>,
    level: u32,
    value: u32,
) -> StepShare {
    let rate_mode = scenario.load.mode.open_loop();
    let share = |requests: u64| match shard {
        None => (f64::from(level), requests),
        Some(spec) if rate_mode => crate::shard::rate_share(spec, f64::from(level), requests),
        Some(spec) => {
            let (streams, n) = crate::shard::step_share(spec, level, requests);
            (f64::from(streams), n)
        }
    };
    let (load, warmup) = share(u64::from(scenario.load.warmup_requests));
    let value = match scenario.load.ladder_over {
        LadderOver::Load if !rate_mode => load as u32,
        _ => value,
    };
    let budget = match scenario.load.budget {
        Budget::RequestsPerStep(n) => Budget::RequestsPerStep(share(n).1),
        other => other,
    };
    StepShare {
        load,
        warmup,
        value,
        budget,
    }
}

/// One model's step, where the ladder is.
struct LadderSlot<'a> {
    model: &'a str,
    step: u32,
    steps_total: u32,
    share: StepShare,
}

/// How one model's step ended.
enum SlotOutcome {
    /// It ran and its step was handed to the sink.
    Ran,
    /// Nothing to send (a shard's share of a step smaller than the number of shards).
    Empty,
    /// The run was stopped before its recorded requests began.
    Stopped,
}

/// Runs one model's step: its warmup, then its recorded requests, closed- or open-loop, timed
/// and self-checked (the client's CPU and event-loop lag), handed to `sink` when done.
async fn run_model_step<B: Backend>(
    shared: &Arc<Shared<B>>,
    scenario: &Scenario,
    shard: Option<crate::shard::ShardSpec>,
    at: &LadderSlot<'_>,
    interrupt: &Interrupt,
    sink: &mut dyn RunSink,
) -> SlotOutcome {
    let (model, step) = (at.model, at.step);
    let StepShare {
        load,
        warmup,
        value,
        ..
    } = at.share;
    let rate_mode = scenario.load.mode.open_loop();
    if load <= 0.0 {
        sink.step_finished(StepRun {
            model: model.to_string(),
            step,
            concurrency: 0,
            duration_s: 0.0,
            ladder_unit: scenario.load.ladder_unit(),
            ..StepRun::default()
        });
        return SlotOutcome::Empty;
    }
    let tag = shared.ids.tag_hex();
    let work = StepWorkload::new(&*shared.backend, scenario, model, step, value, &tag);
    let work = Arc::new(work);
    // Closed-loop workers; a rate step's warmup runs on one.
    let workers = if rate_mode { 1 } else { load as u32 };
    let plan = |budget, ramp_up, record| StepPlan {
        model: model.to_string(),
        step,
        concurrency: workers,
        value,
        budget,
        ramp_up,
        record,
        work: Arc::clone(&work),
        turns: scenario.request.session_turns,
    };
    if warmup > 0 {
        let warm = plan(Budget::RequestsPerStep(warmup), Duration::ZERO, false);
        run_step(shared, &warm, interrupt, &mut Discard).await;
    }
    if interrupt.is_stopped() {
        return SlotOutcome::Stopped;
    }
    let plan = plan(at.share.budget, scenario.load.ramp_up, true);
    let label = step_label(scenario.load.ladder_unit(), value, load, rate_mode);
    let planned = planned_total(&plan.budget, workers);
    shared
        .progress
        .step_started(model, step, at.steps_total, &label, planned);
    shared.progress.step_load(load);
    let cpu = ProcessCpu::start();
    let lag = LoopLagProbe::start();
    let (duration_s, dropped, offered_rps) =
        match open_loop::plan(scenario, shard, step, load, &plan.budget) {
            None => (run_step(shared, &plan, interrupt, sink).await, 0, None),
            Some((open, offered)) => {
                let (d, dropped) =
                    open_loop::run_open_step(shared, &plan, open, interrupt, sink).await;
                (d, dropped, Some(offered))
            }
        };
    let client_cpu_pct = cpu.finish();
    let loop_lag_p99_ms = lag.finish().await;
    shared.progress.step_finished(model, step);
    sink.step_finished(StepRun {
        model: model.to_string(),
        step,
        concurrency: value,
        duration_s,
        client_cpu_pct,
        loop_lag_p99_ms,
        dropped,
        offered_rps,
        ladder_unit: scenario.load.ladder_unit(),
    });
    SlotOutcome::Ran
}

/// How often `RunSink::tick` is called while a step runs.
const TICK: Duration = Duration::from_secs(1);

/// Where warmup records go.
struct Discard;

impl RunSink for Discard {
    fn record(&mut self, _: RequestRecord) {}
    fn step_finished(&mut self, _: StepRun) {}
}

/// The monotonic instant of wall-clock time `t` (in the past: as far back as the clock allows).
fn instant_at(t: SystemTime) -> Instant {
    let (now, wall) = (Instant::now(), SystemTime::now());
    match t.duration_since(wall) {
        Ok(ahead) => now + ahead,
        Err(behind) => now.checked_sub(behind.duration()).unwrap_or(now),
    }
}

/// Sleeps until `at`; `false` when a stop signal came first.
async fn wait_until(at: Instant, interrupt: &Interrupt) -> bool {
    let mut rx = interrupt.subscribe();
    tokio::select! {
        _ = tokio::time::sleep_until(at) => !interrupt.is_stopped(),
        _ = rx.wait_for(|v| *v >= 1) => false,
    }
}

/// A step for the progress line: `16 streams`, `4 req/s`, `2000-token prompts at 4 req/s`.
/// `load` is what this process runs: streams, or requests/s (`rate`); a shard's share of a rate
/// need not be whole (`2.5 req/s`).
fn step_label(unit: crate::model::LadderUnit, value: u32, load: f64, rate: bool) -> String {
    use crate::model::LadderUnit;
    let load = if unit == LadderUnit::Speed {
        return unit.describe(value);
    } else if unit == LadderUnit::Agents {
        unit.describe(load as u32)
    } else if rate {
        format!("{} req/s", crate::scenario::arrivals::rate_text(load))
    } else {
        LadderUnit::Streams.describe(load as u32)
    };
    match unit {
        LadderUnit::PromptTokens => format!("{} at {load}", unit.describe(value)),
        LadderUnit::Rps | LadderUnit::Streams | LadderUnit::Speed | LadderUnit::Agents => load,
    }
}

fn planned_total(budget: &Budget, concurrency: u32) -> Option<u64> {
    match budget {
        Budget::RequestsPerStep(n) => Some(*n),
        Budget::RequestsPerWorker(k) => Some(k * u64::from(concurrency)),
        Budget::Duration(_) => None,
    }
}

struct StepPlan {
    model: String,
    step: u32,
    /// Closed-loop workers of the step.
    concurrency: u32,
    /// The step's ladder value (the records' `concurrency` column).
    value: u32,
    budget: Budget,
    ramp_up: Duration,
    record: bool,
    work: Arc<StepWorkload>,
    /// Turns per conversation (1 = no sessions).
    turns: u32,
}

/// Runs one step with exactly `concurrency` closed-loop workers, handing each record to `sink`
/// as it ends; returns the step's wall time in seconds.
async fn run_step<B: Backend>(
    shared: &Arc<Shared<B>>,
    plan: &StepPlan,
    interrupt: &Interrupt,
    sink: &mut dyn RunSink,
) -> f64 {
    let c = plan.concurrency.max(1);
    let tickets = Arc::new(AtomicU64::new(0));
    let step_start = Instant::now();
    let deadline = match plan.budget {
        Budget::Duration(d) => Some(step_start + plan.ramp_up + d),
        _ => None,
    };
    // Each record travels with its end time (ms since run start): with retries, a record's
    // `started_at_ms + e2e_ms` is not when it ended (e2e covers the last attempt only).
    let (tx, rx) = mpsc::unbounded_channel::<(RequestRecord, f64)>();
    let mut handles = Vec::with_capacity(c as usize);
    for worker in 0..c {
        let shared = Arc::clone(shared);
        let tx = tx.clone();
        let tickets = Arc::clone(&tickets);
        let work = Arc::clone(&plan.work);
        let turns = plan.turns;
        let interrupt = interrupt.clone();
        let delay = if c > 1 {
            plan.ramp_up.mul_f64(f64::from(worker) / f64::from(c))
        } else {
            Duration::ZERO
        };
        let budget = plan.budget;
        let model = plan.model.clone();
        let (step, concurrency, record) = (plan.step, plan.value, plan.record);
        handles.push(spawn_sender(async move {
            let mut stop_rx = interrupt.subscribe();
            if !delay.is_zero() {
                tokio::select! {
                    _ = tokio::time::sleep_until(step_start + delay) => {}
                    _ = stop_rx.wait_for(|v| *v >= 1) => return,
                }
            }
            let mut seq = 0u32;
            let mut session = work.session(worker, turns);
            let mut held = HeldTurn::default();
            loop {
                if interrupt.is_stopped() {
                    break;
                }
                // An agent's tool runs (and it thinks) before its next turn.
                let wait = session.as_mut().map_or(Duration::ZERO, |s| s.take_wait());
                if !wait.is_zero() {
                    tokio::select! {
                        _ = tokio::time::sleep(wait) => {}
                        _ = stop_rx.wait_for(|v| *v >= 1) => break,
                    }
                }
                let ticket = tickets.fetch_add(1, Ordering::Relaxed);
                let go = match budget {
                    Budget::RequestsPerStep(n) => ticket < n,
                    Budget::RequestsPerWorker(k) => u64::from(seq) < k,
                    Budget::Duration(_) => deadline.is_some_and(|d| Instant::now() < d),
                };
                // The held turn is sent once its next turn surely goes.
                if !go || !held.next_sent(&tx) {
                    break;
                }
                let prepared = work.prepare(&*shared.backend, ticket, session.as_mut());
                let key = RequestKey {
                    model: &model,
                    step,
                    concurrency,
                    worker,
                    seq,
                };
                let turn = session.as_ref().map(|s| s.turn());
                let mut rec = one_request(&shared, key, prepared, None, &interrupt).await;
                if let Some(s) = session.as_mut() {
                    s.answered(&mut rec);
                }
                if let Some((turn, of)) = turn {
                    (rec.turn, rec.task_turns) = (Some(turn), Some(of));
                }
                seq += 1;
                if record {
                    let ended_ms = shared.run_start.elapsed().as_secs_f64() * 1000.0;
                    shared.progress.record(&rec);
                    if !held.send(&tx, rec, ended_ms) {
                        return;
                    }
                }
            }
            held.finish(&tx);
        }));
    }
    drop(tx);
    let duration_s = drain_records(rx, step_start, sink).await;
    for h in handles {
        let _ = h.await;
    }
    duration_s
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
async fn drain_records(
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

mod cancel;
mod request;

use request::{one_request, spawn_sender, RequestKey};
#[cfg(test)]
use request::{retry_delay, short};
mod failfast;
mod held_turn;
use held_turn::HeldTurn;
mod open_loop;
mod pacing;
#[cfg(target_os = "linux")]
mod timerfd;
pub use pacing::Pacing;
mod replay;
pub mod selfcheck;
pub mod workload;
use failfast::FailFast;
pub use failfast::Tripped;

#[cfg(test)]
mod calibrate;
#[cfg(test)]
mod fake;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_agent;
