//! The load generator: for each model and each ladder step, a closed loop (`closed_loop`: `c`
//! workers back to back until the step's budget is used) or an open loop (`open_loop`: requests
//! at their scheduled instants). Every attempted request becomes one `RequestRecord`, handed to
//! the `RunSink` as soon as it ends (so the caller can append it to disk and summarize the step
//! as records arrive; nothing is kept here). Warmup requests are sent and not recorded. What a
//! step sends is its workload's (`workload`: prompts, sessions, agents, a replayed trace, behind
//! one interface); the loops only pace and send. The network is behind `client::Backend`, so
//! tests drive whole ladders with a scripted backend on paused time. Cancellation is
//! cooperative: a stop signal stops new requests, a cancel signal ends in-flight ones as
//! `interrupted`.

use crate::client::request_id::RequestIds;
use crate::client::Backend;
use crate::model::StepRun;
use crate::scenario::{Budget, LadderOver, Scenario};
use plan::{planned_total, step_label, step_share, LadderSlot, SlotOutcome, StepPlan, StepShare};
use selfcheck::{LoopLagProbe, ProcessCpu};
use shared::Shared;
use sink::Discard;
use std::sync::atomic::{AtomicU64, AtomicUsize};
use std::sync::Arc;
use std::time::{Duration, SystemTime};
use tokio::time::Instant;

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
    /// At most this many requests in flight in this process, whatever a step asks: a test hook
    /// that starves the client on purpose, so that a step's client does not keep up
    /// (`LADDER_TEST_MAX_IN_FLIGHT`, read by `app`; docs/development.md). `None`: no ceiling.
    pub max_in_flight: Option<u32>,
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
    run_with(
        scenario,
        backend,
        progress,
        interrupt,
        sink,
        schedule,
        Arc::new(workload::for_step),
    )
    .await
}

/// [`run_scheduled`], each step's workload chosen by `workloads` (a test's own kind).
async fn run_with<B: Backend>(
    scenario: &Scenario,
    backend: Arc<B>,
    progress: Arc<dyn Progress>,
    interrupt: Interrupt,
    sink: &mut dyn RunSink,
    schedule: Schedule,
    workloads: workload::Choose,
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
        workloads,
        ceiling: schedule
            .max_in_flight
            .map(|n| tokio::sync::Semaphore::new(n as usize)),
    });
    // An extra step (search, refine) counts the steps already run: "step 5/5", not "5/1".
    let steps_total = schedule.first_step + scenario.load.ladder.len() as u32;
    // Models are interleaved per step (A@5, B@5, A@10, B@10, ...) rather than run one whole
    // ladder after another, so that drift in the provider's load over the run affects every
    // model's step alike and a side-by-side comparison stays fair.
    let slots = model_slots(scenario);
    let total_runs = scenario.load.ladder.len() * slots.len();
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
        for &(model, also) in &slots {
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
                also,
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

/// What each step runs, in order: every model in turn; an A/B run's two models together, the
/// baseline first (`compare: {interleave: true}`).
fn model_slots(scenario: &Scenario) -> Vec<(&str, Option<&str>)> {
    let models = &scenario.target.models;
    match (&scenario.compare_baseline, scenario.compare_interleave) {
        (Some(a), true) => models
            .iter()
            .find(|m| *m != a)
            .map(|b| vec![(a.as_str(), Some(b.as_str()))])
            .unwrap_or_default(),
        _ => models.iter().map(|m| (m.as_str(), None)).collect(),
    }
}

/// Runs one model's step (an A/B step: both models' at once): its warmup, then its recorded
/// requests, closed- or open-loop, timed and self-checked (the client's CPU and event-loop
/// lag), handed to `sink` when done, one step per model.
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
        for m in std::iter::once(model).chain(at.also) {
            sink.step_finished(StepRun::new(m, step, 0, scenario.load.ladder_unit()));
        }
        return SlotOutcome::Empty;
    }
    let SlotWork {
        work,
        warm,
        budget,
        name,
    } = slot_work(shared, scenario, at);
    // Closed-loop workers; a rate step's warmup runs on one.
    let workers = if rate_mode { 1 } else { load as u32 };
    let plan = |budget, ramp_up, record, work: &Arc<dyn workload::Workload>| StepPlan {
        model: model.to_string(),
        step,
        concurrency: workers,
        value,
        budget,
        ramp_up,
        record,
        work: Arc::clone(work),
    };
    if warmup > 0 {
        let budget = Budget::RequestsPerStep(warmup * (1 + u64::from(at.also.is_some())));
        let warm = plan(budget, Duration::ZERO, false, &warm);
        closed_loop::run_step(shared, &warm, interrupt, &mut Discard).await;
    }
    if interrupt.is_stopped() {
        return SlotOutcome::Stopped;
    }
    let plan = plan(budget, scenario.load.ramp_up, true, &work);
    let label = step_label(scenario.load.ladder_unit(), value, load, rate_mode);
    let planned = planned_total(&plan.budget, workers);
    shared
        .progress
        .step_started(&name, step, at.steps_total, &label, planned);
    shared.progress.step_load(load);
    let cpu = ProcessCpu::start();
    let lag = LoopLagProbe::start();
    let mut run = StepRun::new(model, step, value, scenario.load.ladder_unit());
    match plan::open_plan(scenario, shard, step, load, &*work) {
        None => run.duration_s = closed_loop::run_step(shared, &plan, interrupt, sink).await,
        Some((open, offered)) => {
            (run.duration_s, run.dropped) =
                open_loop::run_open_step(shared, &plan, open, interrupt, sink).await;
            run.offered_rps = Some(offered);
        }
    }
    run.client_cpu_pct = cpu.finish();
    run.loop_lag_p99_ms = lag.finish().await;
    shared.progress.step_finished(&name, step);
    if let Some(b) = at.also {
        run.interleaved = true;
        let mut other = run.clone();
        other.model = b.to_string();
        // Each model's records live under its own name in the live metrics.
        shared.progress.step_finished(model, step);
        shared.progress.step_finished(b, step);
        sink.step_finished(run);
        sink.step_finished(other);
    } else {
        sink.step_finished(run);
    }
    SlotOutcome::Ran
}

/// What one slot of the ladder sends: one model's step workload, or an A/B step's two models'
/// interleaved (and its warmup's, whose requests are not counted against the step's).
struct SlotWork {
    work: Arc<dyn workload::Workload>,
    warm: Arc<dyn workload::Workload>,
    /// The recorded part's budget: an A/B step's counts both models' requests.
    budget: Budget,
    /// The step's name for the progress display and live metrics: `a ⇄ b` for an A/B step.
    name: String,
}

fn slot_work<B: Backend>(
    shared: &Arc<Shared<B>>,
    scenario: &Scenario,
    at: &LadderSlot<'_>,
) -> SlotWork {
    let tag = shared.ids.tag_hex();
    let share = &at.share;
    let work_of = |m: &str| {
        (shared.workloads)(workload::StepInput {
            scenario,
            step: at.step,
            value: share.value,
            load: share.load,
            budget: share.budget,
            run_tag: &tag,
            bodies: workload::bodies(&shared.backend, m),
        })
    };
    let (a, work) = (at.model, work_of(at.model));
    let Some(b) = at.also else {
        return SlotWork {
            warm: Arc::clone(&work),
            work,
            budget: share.budget,
            name: a.to_string(),
        };
    };
    let other = work_of(b);
    let both = |per_side| -> Arc<dyn workload::Workload> {
        let (wa, wb) = ((a, Arc::clone(&work)), (b, Arc::clone(&other)));
        Arc::new(workload::Interleaved::new(wa, wb, per_side))
    };
    let per_side = match share.budget {
        Budget::RequestsPerStep(n) => Some(n),
        _ => None,
    };
    SlotWork {
        work: both(per_side),
        warm: both(Some(share.warmup)),
        budget: plan::both_sides(share.budget),
        name: format!("{a} ⇄ {b}"),
    }
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

mod cancel;
mod closed_loop;
mod failfast;
mod interrupt;
mod open_loop;
mod outbox;
mod pacing;
mod plan;
pub mod record;
mod request;
pub mod selfcheck;
mod shared;
mod sink;
#[cfg(target_os = "linux")]
mod timerfd;
mod workload;

pub use failfast::Tripped;
pub use interrupt::Interrupt;
pub use pacing::Pacing;
pub use sink::{NoProgress, Progress, RunSink, SummarizingSink};

#[cfg(test)]
use request::{retry_delay, short};
#[cfg(test)]
mod calibrate;
#[cfg(test)]
mod calibrate_ab;
#[cfg(test)]
mod fake;
#[cfg(test)]
mod tests;
