//! A plan sized from a search's answer (`load: {search: …}` in the run): the highest load
//! meeting the plan's SLO with its uncertainty (`findings::search::capacity`, the rule `run`,
//! `diff` and the findings use), the request rates measured at its edges, whether the target
//! rate fits in it, and how many copies of what was measured a larger rate needs.

use crate::findings::search::{capacity, Capacity};
use crate::model::{LadderUnit, Slo};
use crate::stats::StepSummary;
use serde::Serialize;

/// What the plan's figures were sized from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SizedFrom {
    /// The capacity the run's search found (`capacity` in the model's plan).
    Search,
    /// The ladder's steps (no search in the run, or its capacity cannot size a rate).
    Steps,
}

/// How the target rate compares with the capacity's rates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Fit {
    /// At most the rate of the highest step meeting the SLO with confidence.
    Fits,
    /// Above that, at most the rate at the capacity's point value: within its uncertainty.
    Edge,
    /// Above the rate at the capacity: more copies of the measured service are needed.
    Beyond,
}

/// The capacity under the plan's SLO and the rates it carries.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CapacityPlan {
    #[serde(flatten)]
    pub capacity: Capacity,
    /// "max concurrency meeting TTFT P90 ≤ 1 s: 23 (20–26)", as the findings say it.
    pub sentence: String,
    /// Requests/s measured at the step `max`.
    pub rps: f64,
    /// Requests/s measured at the step `lo` (`None` when no step met the SLO with confidence).
    pub rps_lo: Option<f64>,
    /// Requests/s measured at the lowest step that missed the SLO with confidence: the rate
    /// within the SLO lies below the higher of it and `rps` (`None` when no step missed).
    pub rps_missed: Option<f64>,
    /// The target rate as a share of `rps`, in %.
    pub target_share_pct: f64,
    pub fit: Fit,
    /// For a target beyond the capacity: copies of the measured service the rate needs at the
    /// capacity's rate (`replicas`), at the missed step's rate (`replicas_lo`, fewest) and at
    /// the `lo` step's rate (`replicas_hi`, most; `replicas_lo` is `None` when no step missed).
    pub replicas: Option<u32>,
    pub replicas_lo: Option<u32>,
    pub replicas_hi: Option<u32>,
}

impl CapacityPlan {
    /// The ladder value the plan rests on: the capacity's own step.
    pub fn step_value(&self) -> u32 {
        self.capacity.max
    }
}

/// The rate a step carried (its first row at `value`).
fn rps_at(steps: &[&StepSummary], value: u32) -> Option<f64> {
    steps
        .iter()
        .find(|s| s.concurrency == value)
        .map(|s| s.rps)
        .filter(|r| r.is_finite() && *r > 0.0)
}

/// One model's capacity plan for `target_rps` under `slo`, or why there is none (`Err`, a note
/// for the reader; `Ok(None)` when nothing met the SLO: the steps say so).
pub fn capacity_plan(
    steps: &[&StepSummary],
    slo: &Slo,
    target_rps: f64,
) -> Result<Option<CapacityPlan>, String> {
    let Some(c) = capacity(steps, slo) else {
        return Ok(None);
    };
    if c.unit == LadderUnit::PromptTokens {
        return Err(
            "The search's capacity is a prompt size, not a load: the plan is sized from the ladder's steps."
                .into(),
        );
    }
    let Some(rps) = rps_at(steps, c.max) else {
        return Err(format!(
            "The search's capacity step ({}) measured no request rate: the plan is sized from the ladder's steps.",
            c.unit.describe(c.max)
        ));
    };
    // `lo` is a measured step when some step met the SLO with confidence.
    let rps_lo = rps_at(steps, c.lo);
    let rps_missed = if c.open_ended {
        None
    } else {
        steps
            .iter()
            .filter(|s| s.concurrency > c.hi)
            .min_by_key(|s| s.concurrency)
            .map(|s| s.rps)
            .filter(|r| r.is_finite() && *r > 0.0)
    };
    // A saturated server carries about the same rate at every step past its cap, so the
    // measured rates need not rise with the load: the rate met with confidence is the lower of
    // the two, the most the service carries the higher of the capacity's and the missed step's.
    let confident = rps_lo.map(|lo| lo.min(rps));
    let most = rps_missed.map_or(rps, |m| m.max(rps));
    let fit = if confident.is_some_and(|lo| target_rps <= lo) {
        Fit::Fits
    } else if target_rps <= rps {
        Fit::Edge
    } else {
        Fit::Beyond
    };
    let copies = |rate: f64| (target_rps / rate).ceil().max(1.0) as u32;
    let beyond = fit == Fit::Beyond;
    Ok(Some(CapacityPlan {
        sentence: c.sentence(slo),
        capacity: c,
        rps,
        rps_lo,
        rps_missed,
        target_share_pct: target_rps / rps * 100.0,
        fit,
        replicas: beyond.then(|| copies(rps)),
        // No step missed: the capacity is at least `max`, so the fewest is unknown.
        replicas_lo: (beyond && !c.open_ended).then(|| copies(most)),
        replicas_hi: beyond.then(|| copies(confident.unwrap_or(rps))),
    }))
}
