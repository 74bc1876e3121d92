//! What a gate can decide before the run is sent: for each gated check, the smallest change it
//! can detect at the scenario's requests per step, from the baseline's own spread (issue 34,
//! part 4). The baseline is compared with itself by the gate's own rules (`compare`), so every
//! check's 99% CI is what an unchanged server at the baseline's sample size would give; the CI
//! is then scaled to the planned requests per step by the rule behind "about N requests per
//! step would decide it" (`latency::half_width_at`, the inverse of `requests_to_decide`). A
//! change is detected when the CI excludes 0 and the change passes the gate (and the floor), so
//! the smallest detectable change is the largest of the three. Pure: data in, lines out.

use std::collections::BTreeMap;

use super::latency::half_width_at;
use super::rules::share_change_detectable;
use super::{compare, gate_for, Check, CompareOptions, Metric, Percentile, Side, Verdict};
use crate::model::LadderUnit;
use crate::scenario::Gates;

/// Bootstrap resamples for the estimate: a CI's width, not a verdict, so fewer than the gate's.
const RESAMPLES: usize = 2_000;

/// The smallest change one gated check can detect at one step.
#[derive(Debug, Clone, PartialEq)]
pub struct Detectable {
    pub model: String,
    /// "TTFT P90", "error rate", "decode rate".
    pub name: String,
    pub concurrency: u32,
    pub ladder_unit: LadderUnit,
    /// Requests per step the estimate is for.
    pub requests: u64,
    pub what: Reach,
}

/// What a check can decide at the planned requests per step.
#[derive(Debug, Clone, PartialEq)]
pub enum Reach {
    /// The smallest change, with the gate it is held to: relative for latencies (a rise) and
    /// throughput (a fall), percentage points for the error rate and short share.
    Change {
        smallest: f64,
        gate: f64,
        unit: ChangeUnit,
        /// What sets it: the gate, the floor (ms, latencies), or the spread.
        bound: Bound,
    },
    /// It cannot be estimated or will not be judged, and why.
    Cannot(String),
}

/// Which of the three limits sets the smallest detectable change.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Bound {
    Gate,
    /// The latency floor, in ms.
    Floor(f64),
    /// The CI's half-width at the planned requests per step.
    Spread,
}

/// How a change is written: a relative rise, a relative fall, or percentage points.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChangeUnit {
    Rise,
    Fall,
    Points,
}

/// The smallest detectable change of every gated step check of `base` at `planned` requests
/// per step (`planned(value)`; `None`: as many as the baseline had, a duration-based step).
pub fn detectable(
    base: &Side,
    gates: &Gates,
    planned: &dyn Fn(u32) -> Option<u64>,
) -> Vec<Detectable> {
    let opts = CompareOptions {
        resamples: RESAMPLES,
        ..CompareOptions::for_cli(gates.clone(), false, false)
    };
    let steps: BTreeMap<(&str, u32), &crate::stats::StepSummary> = base
        .summaries
        .iter()
        .map(|s| ((s.model.as_str(), s.concurrency), s))
        .collect();
    let self_compared = compare(base, base, &opts);
    let mut out = Vec::new();
    for c in self_compared.checks.iter().filter(|c| c.gated) {
        let (Some(conc), Some(s)) = (
            c.concurrency,
            c.concurrency
                .and_then(|k| steps.get(&(c.model.as_str(), k))),
        ) else {
            continue;
        };
        let requests = planned(conc).unwrap_or(s.attempted);
        // Successes the planned step would have, at the baseline's success share.
        let share = if s.attempted > 0 {
            s.succeeded as f64 / s.attempted as f64
        } else {
            1.0
        };
        let what = reach(
            c,
            gates,
            (s.succeeded as f64, requests as f64 * share),
            requests,
            s,
        );
        out.push(Detectable {
            model: c.model.clone(),
            name: c.name(),
            concurrency: conc,
            ladder_unit: c.ladder_unit,
            requests,
            what,
        });
    }
    out
}

/// One check's reach, from its self-comparison at `n_base` successes, at `n_new` successes.
fn reach(
    c: &Check,
    gates: &Gates,
    (n_base, n_new): (f64, f64),
    requests: u64,
    s: &crate::stats::StepSummary,
) -> Reach {
    // P50 and the mean are gated on queued steps only, standing in for P90: its gate and its
    // sample size.
    let judged_as = match c.percentile {
        Some(Percentile::P50 | Percentile::Mean) => Some(Percentile::P90),
        p => p,
    };
    let min = match (judged_as, c.metric.is_throughput()) {
        (Some(p), _) => p.min_samples(),
        (None, true) => super::MIN_THROUGHPUT_SAMPLES,
        (None, false) => 0,
    };
    if (n_new.floor() as u64) < min {
        return Reach::Cannot(format!("skipped: needs {min} successful requests per step"));
    }
    if let Metric::ErrorRate | Metric::ShortRate = c.metric {
        // The share and the requests it is of: attempted (error rate) or successes (short).
        let (p, n) = match c.metric {
            Metric::ErrorRate => (s.failed as f64 / s.attempted.max(1) as f64, requests as f64),
            _ => (s.short_share().unwrap_or(0.0), n_new),
        };
        let d = share_change_detectable(p, n);
        return Reach::Change {
            smallest: d.max(gates.error_rate),
            gate: gates.error_rate,
            unit: ChangeUnit::Points,
            bound: if d > gates.error_rate {
                Bound::Spread
            } else {
                Bound::Gate
            },
        };
    }
    let gate = if c.metric.is_throughput() {
        gates.throughput
    } else {
        match judged_as {
            Some(p) => p.gate(gate_for(gates, c.metric)),
            None => return Reach::Cannot("not a per-step statistic".into()),
        }
    };
    let Some((lo, hi)) = c.ci else {
        return Reach::Cannot(match &c.verdict {
            Verdict::Skipped { reason } if n_base < min as f64 => format!(
                "no spread to learn from: the baseline has {n_base:.0} successes at this step ({reason})"
            ),
            Verdict::Skipped { reason } => format!("no spread to learn from: {reason}"),
            _ => "no spread to learn from: the baseline kept no per-request samples".into(),
        });
    };
    let half = half_width_at((hi - lo) / 2.0, n_base, n_new);
    // The floor in ms, as a share of the baseline's value (latencies only).
    let floor_ms = gate_for(gates, c.metric).floor_ms;
    let floor = match (c.metric.is_latency(), c.base) {
        (true, Some(b)) if b > 0.0 => floor_ms / b,
        _ => 0.0,
    };
    let bound = if half > gate && half >= floor {
        Bound::Spread
    } else if floor > gate {
        Bound::Floor(floor_ms)
    } else {
        Bound::Gate
    };
    Reach::Change {
        smallest: half.max(gate).max(floor),
        gate,
        bound,
        unit: if c.metric.is_throughput() {
            ChangeUnit::Fall
        } else {
            ChangeUnit::Rise
        },
    }
}

/// The words: one header, then one line per gated check of each model, the steps whose reach is
/// the gate grouped, the others each with their own figure.
pub fn lines(all: &[Detectable], baseline: &str) -> Vec<String> {
    let Some(first) = all.first() else {
        return Vec::new();
    };
    let same_n = all.iter().all(|d| d.requests == first.requests);
    let at = if same_n {
        format!("{} requests per step", first.requests)
    } else {
        "the planned requests per step".into()
    };
    let models: std::collections::BTreeSet<&str> = all.iter().map(|d| d.model.as_str()).collect();
    let mut out = vec![format!(
        "smallest change each gate can detect at {at} (from the spread of {baseline}):"
    )];
    let mut groups: Vec<(&str, &str, Vec<&Detectable>)> = Vec::new();
    for d in all {
        match groups
            .iter_mut()
            .find(|(m, n, _)| *m == d.model && *n == d.name)
        {
            Some((_, _, v)) => v.push(d),
            None => groups.push((&d.model, &d.name, vec![d])),
        }
    }
    // Checks whose steps read the same share one line ("TPM, RPS, decode rate: …").
    let mut said: Vec<(&str, Vec<&str>, String)> = Vec::new();
    for (model, name, steps) in groups {
        // "at every step" means every step of the model any check is judged at.
        let of_model = all
            .iter()
            .filter(|d| d.model == model)
            .map(|d| d.concurrency)
            .collect::<std::collections::BTreeSet<u32>>()
            .len();
        let words = group_words(&steps, of_model);
        match said.iter_mut().find(|(m, _, w)| *m == model && *w == words) {
            Some((_, names, _)) => names.push(name),
            None => said.push((model, vec![name], words)),
        }
    }
    for (model, names, words) in said {
        let names = names.join(", ");
        let who = if models.len() > 1 {
            format!("{model} · {names}")
        } else {
            names
        };
        out.push(format!("  {who}: {words}"));
    }
    if all
        .iter()
        .any(|d| d.name.ends_with(" P50") || d.name.ends_with(" mean"))
    {
        out.push(
            "  (at and past the baseline's queueing knee TTFT and E2E are judged at P50 and the mean: their P90 is a request that waited in the queue; the mean counts when its CI decides)"
                .into(),
        );
    }
    out
}

/// "the gate (+10%) at 5 and 10 streams; +58% at 20 streams; skipped: needs 400 … at 50 streams".
fn group_words(steps: &[&Detectable], of_model: usize) -> String {
    let unit = steps[0].ladder_unit;
    let mut at_gate: Vec<u32> = Vec::new();
    let mut gate_txt = String::new();
    let mut rest: Vec<(String, Vec<u32>)> = Vec::new();
    for d in steps {
        let (txt, is_gate) = match &d.what {
            Reach::Change {
                smallest,
                gate,
                unit,
                bound,
            } => {
                let show = |x: f64| change_text(x, *unit);
                gate_txt = show(*gate);
                let why = match bound {
                    Bound::Gate => String::new(),
                    Bound::Floor(ms) => format!(" (the {ms:.0} ms floor)"),
                    Bound::Spread => " (the spread)".into(),
                };
                (format!("{}{why}", show(*smallest)), *bound == Bound::Gate)
            }
            Reach::Cannot(why) => (why.clone(), false),
        };
        if is_gate {
            at_gate.push(d.concurrency);
        } else if let Some((_, v)) = rest.iter_mut().find(|(t, _)| *t == txt) {
            v.push(d.concurrency);
        } else {
            rest.push((txt, vec![d.concurrency]));
        }
    }
    let every = |v: &[u32]| {
        if v.len() == of_model && of_model > 1 {
            "at every step".to_string()
        } else {
            format!("at {}", unit.describe_all(v))
        }
    };
    let mut parts = Vec::new();
    if !at_gate.is_empty() {
        parts.push(format!("the gate ({gate_txt}) {}", every(&at_gate)));
    }
    for (txt, v) in &rest {
        parts.push(format!("{txt} {}", every(v)));
    }
    parts.join("; ")
}

/// "+12%" (a rise is the regression), "−12%" for throughput, "+1.0 pp" for the error rate.
fn change_text(x: f64, unit: ChangeUnit) -> String {
    match unit {
        ChangeUnit::Points => format!("+{:.1} pp", x * 100.0),
        ChangeUnit::Fall => format!("−{:.0}%", x * 100.0),
        ChangeUnit::Rise => format!("+{:.0}%", x * 100.0),
    }
}
