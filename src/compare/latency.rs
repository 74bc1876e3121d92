//! The latency rules of the gate (docs/gate.md) for one model × step × metric × percentile: the bootstrap rule
//! when both sides kept per-request samples, the approximate rule otherwise, the minimum-sample
//! skip, and P50 as information only. Pure: data in, verdict and a one-line explanation out.
//!
//! With a CI, the verdicts are: *regressed* / *improved* (the CI excludes 0 and the change is
//! beyond the gate and the floor), *below gate* (the CI excludes 0, the change is smaller than the
//! gate or the floor), *no change* (the whole CI lies inside ±gate, or every change it allows is
//! under the floor), and *inconclusive* (the CI spans 0 and reaches past the gate: the data cannot
//! tell; the verdict says how many requests per step would decide it).

use super::{fmt_ms, fmt_pct, Method, Metric, Percentile, Verdict};
use crate::model::ItlHistogram;
use crate::scenario::MetricGate;
use crate::stats::inference::{
    bootstrap_gaps_ratio_ci, bootstrap_mean_ratio_ci, bootstrap_ratio_ci, generator,
    lower_bound_order_stat, GapRequests, Resampled,
};
use crate::stats::{drift, quantile_sorted, PooledGaps};
use crate::util::duration::signed_ms_text as signed_ms;

/// Confidence of the bootstrap CI that gates a verdict.
pub(crate) const CI_LEVEL: f64 = 0.99;
/// Confidence of the distribution-free bound used by the approximate rule.
const LOWER_BOUND_LEVEL: f64 = 0.95;

/// What one side offers for one metric at one step.
#[derive(Debug, Clone, Default)]
pub(crate) struct Evidence {
    /// Per-request values, sorted ascending and finite; `None` when the side kept no samples.
    pub sorted: Option<Vec<f64>>,
    /// Effective number of independent requests behind `sorted` (≤ its length; see
    /// `inference::effective_size`); `None` means all of them.
    pub effective: Option<f64>,
    /// ITL: each request's inter-token gaps (successful requests that have gaps), when the side
    /// recorded them (`itl_hist`); the unit of resampling and of the sample-size rule.
    pub gaps: Option<Vec<ItlHistogram>>,
    /// The percentile from `summary.csv`.
    pub summary_q: Option<f64>,
    /// Requests behind the summary (its `succeeded`).
    pub summary_n: u64,
    /// Requests the step attempted (its `attempted`; 0 when unknown): with failures, the
    /// requests per step that give `min` successes are more than `min`.
    pub summary_attempted: u64,
}

impl Evidence {
    fn point(&self, pct: Percentile) -> Option<f64> {
        if pct == Percentile::Mean {
            return match &self.sorted {
                Some(v) if !v.is_empty() => Some(v.iter().sum::<f64>() / v.len() as f64),
                Some(_) => None,
                None => self.summary_q,
            };
        }
        match (&self.gaps, &self.sorted) {
            (Some(g), _) => PooledGaps::of(g).quantile(pct.q()),
            (None, Some(v)) => quantile_sorted(v, pct.q()),
            (None, None) => self.summary_q,
        }
    }
    /// Requests behind the figure (for ITL: requests with gaps, never gaps).
    fn n(&self) -> u64 {
        match (&self.gaps, &self.sorted) {
            (Some(g), _) => g.len() as u64,
            (None, Some(v)) => v.len() as u64,
            (None, None) => self.summary_n,
        }
    }
    /// How many requests a resample draws: the effective number, within 2..=n.
    fn draws(&self, n: usize) -> usize {
        self.effective
            .map_or(n, |e| (e.round() as usize).clamp(2.min(n), n))
    }
    fn resampled(&self) -> Option<Resampled<'_>> {
        let v = self.sorted.as_ref()?;
        Some(Resampled {
            sorted: v,
            m: self.draws(v.len()),
        })
    }
    fn gap_requests(&self) -> Option<GapRequests<'_>> {
        let g = self.gaps.as_ref().filter(|g| !g.is_empty())?;
        Some(GapRequests {
            requests: g,
            m: self.draws(g.len()),
        })
    }
}

/// The judged numbers and verdict, ready to be put into a `Check`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Judged {
    pub base: Option<f64>,
    pub new: Option<f64>,
    pub ratio: Option<f64>,
    pub ci: Option<(f64, f64)>,
    pub method: Method,
    pub verdict: Verdict,
    pub detail: String,
}

pub(crate) struct Rule<'a> {
    pub metric: Metric,
    pub pct: Percentile,
    pub gate: &'a MetricGate,
    pub resamples: usize,
    pub seed: u64,
    /// A pooled baseline's between-run SD of this quantile's log (τ) and its number of runs:
    /// widens the CI (`drift::widen`); `None` for within-run sampling only.
    pub drift: Option<(f64, usize)>,
    /// The step is at or past the queueing knee on both sides and the metric includes the
    /// queue's wait (TTFT, TTFC): its P90 and P99 are queued requests, so P50 is judged there,
    /// with the P90 gate and sample size, and the tail is shown, not gated.
    pub queued: bool,
}

impl Rule<'_> {
    /// Whether this rule's percentile is gated: P90 and P99, or P50 and the mean on a queued
    /// step.
    pub(crate) fn gates(&self) -> bool {
        matches!(self.pct, Percentile::P50 | Percentile::Mean) == self.queued
    }
}

/// The CI widened for drift between runs when the baseline pools ≥ 3 runs, and the words that
/// say so (empty when nothing was widened). One rule for latency and throughput checks.
pub(crate) fn widen_for_drift(
    r: f64,
    ci: (f64, f64),
    tau: Option<(f64, usize)>,
) -> ((f64, f64), String) {
    let Some((tau, k)) = tau else {
        return (ci, String::new());
    };
    let words = if tau > 0.0 {
        format!(
            ", widened for drift between runs (±{:.1}% per run over {k} baseline runs)",
            tau * 100.0
        )
    } else {
        format!(", not widened (the {k} baseline runs agree exactly)")
    };
    (drift::widen(r, ci, tau, drift::z_of(CI_LEVEL)), words)
}

/// An ITL CI widened by the histogram's resolution: each side's pooled quantile is known within
/// a factor 2^(1/64) (`stats::itl`), so their ratio within 2^(1/32). Thousands of pooled gaps
/// make the bootstrap land in the same bin every time, and without this a one-bin move (2.2%)
/// would read as a real change. Bounds within 1e-9 of 0 are 0 (the bins' ratios are exact
/// powers of 2^(1/32) up to rounding).
fn widen_for_bins((lo, hi): (f64, f64)) -> (f64, f64) {
    let step = (1.0 / f64::from(crate::model::itl::BINS_PER_OCTAVE)).exp2();
    let snap = |x: f64| if x.abs() < 1e-9 { 0.0 } else { x };
    (snap((1.0 + lo) / step - 1.0), snap((1.0 + hi) * step - 1.0))
}

/// Requests per step that give each side `min` successful requests at the success rate it had
/// (`sides`: attempted, succeeded per side): 15 of 20 succeeded and 40 needed → 54. A side
/// with no known attempts or no success counts as all-successful (never below `min`).
pub(crate) fn requests_for(min: u64, sides: &[(u64, u64)]) -> u64 {
    sides
        .iter()
        .filter(|&&(attempted, succeeded)| succeeded > 0 && attempted > succeeded)
        .map(|&(attempted, succeeded)| (min * attempted).div_ceil(succeeded))
        .fold(min, u64::max)
}

/// " (40 successes at the 75% success rate seen)" when the advice accounts for failures (the
/// side that succeeded least), else "".
pub(crate) fn success_words(min: u64, sides: &[(u64, u64)]) -> String {
    let worst = sides
        .iter()
        .filter(|&&(a, s)| s > 0 && a > s)
        .map(|&(a, s)| s as f64 / a as f64)
        .fold(1.0, f64::min);
    if worst < 1.0 {
        format!(
            " ({min} successes at the {:.0}% success rate seen)",
            worst * 100.0
        )
    } else {
        String::new()
    }
}

/// The half-width at `n_to` requests of a CI whose half-width is `half` at `n_from`: the width
/// of a CI falls like 1/√n. The one rule for how a CI's width moves with the sample size: the
/// inconclusive verdict's advice (`requests_to_decide`, its inverse) and the smallest change a
/// gate can detect before a run (`budget`).
pub(crate) fn half_width_at(half: f64, n_from: f64, n_to: f64) -> f64 {
    half * (n_from / n_to).sqrt()
}

/// Requests per step that would shrink a CI of half-width `half` (relative) at `n` to the gate
/// (`half_width_at` solved for the sample size): about n × (half-width / gate)², rounded up to 10.
pub(crate) fn requests_to_decide(n: u64, half: f64, gate: f64) -> Option<u64> {
    let need = n as f64 * (half / gate).powi(2);
    need.is_finite()
        .then(|| ((need / 10.0).ceil() as u64 * 10).max(n + 10))
}

/// Judges one metric × percentile of a step: measure both sides, see whether the change can be
/// gated at all, then apply the bootstrap rule (both sides resampled) or the approximate one.
pub(crate) fn judge(rule: &Rule<'_>, base: &Evidence, new: &Evidence) -> Judged {
    let mut out = measure(rule, base, new);
    let (verdict, detail) = match gateable(rule, base, new, &out) {
        Err(decided) => decided,
        Ok(change) if out.method == Method::Bootstrap => match out.ci {
            None => skipped(format!(
                "{}: the bootstrap produced no usable resamples",
                change.name
            )),
            Some(ci) => {
                let (ci, widened) = widen_for_drift(change.r, ci, rule.drift);
                out.ci = Some(ci);
                by_ci(&change, ci, &widened)
            }
        },
        Ok(change) => by_points(&change, rule, base, new),
    };
    out.verdict = verdict;
    out.detail = detail;
    out
}

/// A verdict and the words that explain it.
type Decision = (Verdict, String);

fn skipped(reason: String) -> Decision {
    (
        Verdict::Skipped {
            reason: reason.clone(),
        },
        reason,
    )
}

/// Whether both sides kept what the bootstrap resamples: ITL resamples whole requests (their
/// gaps travel together); the others, request values.
fn both_resampled(metric: Metric, base: &Evidence, new: &Evidence) -> bool {
    if metric == Metric::Itl {
        base.gaps.is_some() && new.gaps.is_some()
    } else {
        base.sorted.is_some() && new.sorted.is_some()
    }
}

/// The two points, their ratio, the bootstrap CI when both sides can be resampled (not yet
/// widened for drift), and the method; the verdict is still to be decided.
fn measure(rule: &Rule<'_>, base: &Evidence, new: &Evidence) -> Judged {
    let (bq, nq) = (base.point(rule.pct), new.point(rule.pct));
    let ratio = match (bq, nq) {
        (Some(b), Some(n)) if b > 0.0 => Some(n / b - 1.0),
        _ => None,
    };
    let itl = rule.metric == Metric::Itl;
    let both = both_resampled(rule.metric, base, new);
    // An ITL bootstrap costs a pass over every drawn request's bins: not spent on P50 (shown,
    // not gated) nor on a P99 that the sample-size rule will skip anyway.
    let wasted = itl && (!rule.gates() || base.n().min(new.n()) < rule.pct.min_samples());
    let ci = match ratio {
        Some(_) if both && !wasted => bootstrap_ci(rule, base, new),
        _ => None,
    };
    let method = if both {
        Method::Bootstrap
    } else {
        Method::Approximate
    };
    Judged {
        base: bq,
        new: nq,
        ratio,
        ci,
        method,
        verdict: Verdict::Info,
        detail: String::new(),
    }
}

/// The bootstrap CI of the ratio of the rule's percentile, new over base; ITL's is widened by
/// the histogram's resolution.
fn bootstrap_ci(rule: &Rule<'_>, base: &Evidence, new: &Evidence) -> Option<(f64, f64)> {
    let mut rng = generator(rule.seed);
    let (q, k) = (rule.pct.q(), rule.resamples);
    if rule.metric == Metric::Itl {
        base.gap_requests()
            .zip(new.gap_requests())
            .and_then(|(b, n)| bootstrap_gaps_ratio_ci(b, n, q, k, CI_LEVEL, &mut rng))
            .map(widen_for_bins)
    } else if rule.pct == Percentile::Mean {
        base.resampled()
            .zip(new.resampled())
            .and_then(|(b, n)| bootstrap_mean_ratio_ci(b, n, k, CI_LEVEL, &mut rng))
    } else {
        base.resampled()
            .zip(new.resampled())
            .and_then(|(b, n)| bootstrap_ratio_ci(b, n, q, k, CI_LEVEL, &mut rng))
    }
}

/// A change that the gate can judge: both points recorded, enough samples on each side, a
/// baseline above 0.
struct Change {
    /// "TTFT P90".
    name: String,
    /// The baseline's point value and the relative change.
    b: f64,
    r: f64,
    gate: f64,
    floor: f64,
    /// Requests behind each side's figure.
    bn: u64,
    nn: u64,
    /// "TTFT P90 +30.0% (+150.0 ms)".
    words: String,
    /// "gate ±10%, floor 50.0 ms".
    thresholds: String,
    /// The point change passes the gate and the floor, upwards / downwards.
    up_ok: bool,
    down_ok: bool,
}

/// The change to gate, or the outcome when there is none: P50 is shown, not gated; ITL without
/// per-request gaps on both sides is information only; a percentile missing on a side, fewer
/// samples than the percentile needs, or a baseline of 0 is skipped, saying why.
fn gateable(
    rule: &Rule<'_>,
    base: &Evidence,
    new: &Evidence,
    measured: &Judged,
) -> Result<Change, Decision> {
    let name = format!("{} {}", rule.metric.label(), rule.pct.label());
    if rule.queued && !matches!(rule.pct, Percentile::P50 | Percentile::Mean) {
        return Err((Verdict::Info, format!(
            "shown, not gated: at or past the queueing knee on both sides, {name} is a request that waited in the queue, which tells little; the whole distribution's shift is judged at P50"
        )));
    }
    if !rule.gates() {
        return Err((Verdict::Info, "shown, not gated".into()));
    }
    // On a queued step P50 stands in for P90: its gate and its sample size.
    let judged_as = if rule.queued {
        Percentile::P90
    } else {
        rule.pct
    };
    if rule.metric == Metric::Itl && measured.method != Method::Bootstrap {
        let side = match (base.gaps.is_some(), new.gaps.is_some()) {
            (false, false) => "neither side kept",
            (false, true) => "the baseline did not keep",
            _ => "the new run did not keep",
        };
        return Err((Verdict::Info, format!(
            "information only: {side} per-request inter-token gaps (`itl_hist`, recorded since this version; re-save an older baseline), so there is no CI to judge ITL by; TPOT gates decode speed"
        )));
    }
    let (Some(b), Some(n)) = (measured.base, measured.new) else {
        if measured.base.is_none() && measured.new.is_none() {
            // Neither side has it: a run without streaming has no TTFT, TTFC or TPOT.
            return Err(skipped(format!(
                "{name} is measured on neither side (not streamed, request.stream: false, or no success)"
            )));
        }
        let side = if measured.base.is_none() {
            "the baseline"
        } else {
            "the new run"
        };
        return Err(skipped(format!("{name} is not recorded in {side}")));
    };
    let min = judged_as.min_samples();
    let (bn, nn) = (base.n(), new.n());
    if bn < min || nn < min {
        let sides = [
            (base.summary_attempted, base.summary_n),
            (new.summary_attempted, new.summary_n),
        ];
        return Err(skipped(format!(
            "{name} needs ≥ {min} samples per side (have {bn} / {nn}): use requests_per_step ≥ {}{}",
            requests_for(min, &sides),
            success_words(min, &sides)
        )));
    }
    let Some(r) = measured.ratio else {
        return Err(skipped(format!(
            "baseline {name} is {}, so a relative change is undefined",
            fmt_ms(b)
        )));
    };
    let gate = judged_as.gate(rule.gate);
    let floor = rule.gate.floor_ms;
    let why = if rule.queued {
        ", judged at P50 and the mean: P90 is a queued request on both sides"
    } else {
        ""
    };
    Ok(Change {
        words: format!("{name} {} ({}){why}", fmt_pct(r), signed_ms(n - b)),
        thresholds: format!("gate ±{:.0}%, floor {}", gate * 100.0, fmt_ms(floor)),
        up_ok: r > gate && n - b >= floor,
        down_ok: r < -gate && b - n >= floor,
        name,
        b,
        r,
        gate,
        floor,
        bn,
        nn,
    })
}

/// The bootstrap rule on the (drift-widened) CI `lo..hi`: regressed or improved when it
/// excludes 0 and the change passes the gate and the floor, below gate when it excludes 0
/// otherwise, inconclusive when it spans 0 and allows a change past the gate, else no change.
fn by_ci(c: &Change, (lo, hi): (f64, f64), widened: &str) -> Decision {
    let Change {
        words: change,
        thresholds,
        ..
    } = c;
    let ci_txt = format!("99% CI [{}, {}]{widened}", fmt_pct(lo), fmt_pct(hi));
    // A change the CI allows counts only if it passes the gate and the floor.
    let can_rise = hi > c.gate && hi * c.b >= c.floor;
    let can_fall = lo < -c.gate && -lo * c.b >= c.floor;
    if lo > 0.0 && c.up_ok {
        (
            Verdict::Regressed,
            format!("{change}, {ci_txt}: beyond {thresholds}"),
        )
    } else if hi < 0.0 && c.down_ok {
        (
            Verdict::Improved,
            format!("{change}, {ci_txt}: beyond {thresholds}"),
        )
    } else if lo > 0.0 || hi < 0.0 {
        let which = if c.r.abs() <= c.gate {
            "the gate"
        } else {
            "the floor"
        };
        (
            Verdict::BelowGate,
            format!("below gate: {change}, {ci_txt} excludes 0 but the change is within {which} ({thresholds})"),
        )
    } else if can_rise || can_fall {
        let needed = requests_to_decide(c.bn.max(c.nn), (hi - lo) / 2.0, c.gate);
        let more = needed.map_or_else(String::new, |k| {
            format!("; about {k} requests per step would decide it")
        });
        (
            Verdict::Inconclusive {
                requests_per_step: needed,
            },
            format!(
                "inconclusive: {change}, {ci_txt} spans 0 and reaches past the gate ({thresholds}){more}"
            ),
        )
    } else {
        (
            Verdict::NoChange,
            format!("no change: {change}, {ci_txt} lies within {thresholds}"),
        )
    }
}

/// The approximate rule: the point values, plus the new run's distribution-free lower bound
/// when it has samples (a rise counts only if that bound exceeds the baseline).
fn by_points(c: &Change, rule: &Rule<'_>, base: &Evidence, new: &Evidence) -> Decision {
    let approx_why = if base.sorted.is_none() {
        "approximate: the baseline has no per-request samples"
    } else {
        "approximate: the new run has no per-request samples"
    };
    let Change {
        words: change,
        thresholds,
        b,
        ..
    } = c;
    // An order statistic bounds a quantile, not a mean: the mean has the point rule alone.
    let bound = new
        .sorted
        .as_ref()
        .filter(|_| rule.pct != Percentile::Mean)
        .map(|v| lower_bound_order_stat(v, rule.pct.q(), LOWER_BOUND_LEVEL));
    if c.up_ok {
        match bound {
            None => (Verdict::Regressed, format!("{approx_why}; {change}: beyond {thresholds}")),
            Some(Some(lb)) if lb > *b => (
                Verdict::Regressed,
                format!(
                    "{approx_why}; {change}: beyond {thresholds}, and the new run's lower 95% bound {} exceeds the baseline",
                    fmt_ms(lb)
                ),
            ),
            Some(lb) => (
                Verdict::Inconclusive { requests_per_step: None },
                format!(
                    "{approx_why}; inconclusive: {change} is beyond {thresholds}, but the new run's lower 95% bound ({}) does not exceed the baseline {}",
                    lb.map_or_else(|| "none".to_string(), fmt_ms),
                    fmt_ms(*b)
                ),
            ),
        }
    } else if c.down_ok {
        (
            Verdict::Improved,
            format!("{approx_why}; {change}: beyond {thresholds}"),
        )
    } else {
        (
            Verdict::NoChange,
            format!("{approx_why}; {change}: within {thresholds}"),
        )
    }
}

#[cfg(test)]
#[path = "latency_tests.rs"]
mod tests;
