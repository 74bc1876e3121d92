//! The plan of one model's step: this process's share of it (its load, warmup, value and
//! budget, a shard's share when sharded), how it is named for people, what its senders run
//! (`StepPlan`: workers, budget, ramp-up, the workload) and, for an open-loop step, its pacing
//! (`OpenPlan`: a seeded arrival schedule, or the workload's own arrivals).

use super::workload::Workload;
use crate::scenario::arrivals::{step_seed, ArrivalProcess, Schedule};
use crate::scenario::{Budget, LadderOver, LoadMode, Scenario};
use std::sync::Arc;
use std::time::Duration;

/// The share of a step this process runs: all of it, or a shard's share of the load (whole
/// streams, or an exact share of the requests/s) and of the requests.
pub(super) struct StepShare {
    /// Streams, or requests/s in rate mode.
    pub(super) load: f64,
    pub(super) warmup: u64,
    /// The step's value on its records: a shard's share of the streams; a rate share need not
    /// be whole, so rate steps keep the step's rate as their value and carry the share as the
    /// offered rate.
    pub(super) value: u32,
    pub(super) budget: Budget,
}

pub(super) fn step_share(
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
pub(super) struct LadderSlot<'a> {
    pub(super) model: &'a str,
    /// An A/B step: the model whose requests are interleaved with `model`'s.
    pub(super) also: Option<&'a str>,
    pub(super) step: u32,
    pub(super) steps_total: u32,
    pub(super) share: StepShare,
}

/// How one model's step ended.
pub(super) enum SlotOutcome {
    /// It ran and its step was handed to the sink.
    Ran,
    /// Nothing to send (a shard's share of a step smaller than the number of shards).
    Empty,
    /// The run was stopped before its recorded requests began.
    Stopped,
}

/// A step for the progress line: `16 streams`, `4 req/s`, `2000-token prompts at 4 req/s`.
/// `load` is what this process runs: streams, or requests/s (`rate`); a shard's share of a rate
/// need not be whole (`2.5 req/s`).
pub(super) fn step_label(
    unit: crate::model::LadderUnit,
    value: u32,
    load: f64,
    rate: bool,
) -> String {
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

pub(super) fn planned_total(budget: &Budget, concurrency: u32) -> Option<u64> {
    match budget {
        Budget::RequestsPerStep(n) => Some(*n),
        Budget::RequestsPerWorker(k) => Some(k * u64::from(concurrency)),
        Budget::Duration(_) => None,
    }
}

/// What the senders of one run of a step (its warmup, or its recorded part) run.
pub(super) struct StepPlan {
    pub(super) model: String,
    pub(super) step: u32,
    /// Closed-loop workers of the step.
    pub(super) concurrency: u32,
    /// The step's ladder value (the records' `concurrency` column).
    pub(super) value: u32,
    pub(super) budget: Budget,
    pub(super) ramp_up: Duration,
    pub(super) record: bool,
    /// What the step sends.
    pub(super) work: Arc<dyn Workload>,
}

/// The pacing of one open-loop step: when each request is meant to go out (seconds after the
/// step's start, increasing), and the cap on requests in flight.
pub(super) struct OpenPlan {
    pub(super) times: Box<dyn Iterator<Item = f64> + Send>,
    pub(super) max_concurrency: Option<u32>,
}

/// How a step of `scenario` is paced when it is open loop: its plan and the offered rate
/// (requests/s: the step's rate or a shard's share of it; a replay's, from its workload's own
/// arrivals); `None` for a closed-loop step. `load` is the step's rate.
pub(super) fn open_plan(
    scenario: &Scenario,
    shard: Option<crate::shard::ShardSpec>,
    step: u32,
    load: f64,
    work: &dyn Workload,
) -> Option<(OpenPlan, f64)> {
    match scenario.load.mode {
        LoadMode::Concurrency => None,
        LoadMode::Rate {
            arrivals,
            max_concurrency,
        } => {
            let seed = step_seed(scenario.load.seed, step);
            let seed = shard.map_or(seed, |spec| crate::shard::arrival_seed(spec, seed));
            rate_plan(load, arrivals, seed, max_concurrency).map(|p| (p, load))
        }
        LoadMode::Replay { max_concurrency } => {
            let own = work.arrivals()?;
            let plan = OpenPlan {
                times: Box::new(own.times.into_iter()),
                max_concurrency,
            };
            Some((plan, own.offered_rps))
        }
    }
}

/// A rate step: a seeded arrival schedule at `rate` requests/s (`None` when the rate or
/// process cannot draw gaps).
fn rate_plan(
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

/// An A/B step's budget: each model's requests as the scenario says a step's are (so a side
/// gets `requests_per_step` requests, as it would alone), sent by the step's senders in total.
pub(super) fn both_sides(budget: Budget) -> Budget {
    match budget {
        Budget::RequestsPerStep(n) => Budget::RequestsPerStep(n.saturating_mul(2)),
        Budget::RequestsPerWorker(k) => Budget::RequestsPerWorker(k.saturating_mul(2)),
        d @ Budget::Duration(_) => d,
    }
}
