//! The non-latency rules of the gate (docs/gate.md) for one matched step or model: error rate (size, and
//! significance by Fisher's exact test), throughput, and the knee/wall findings diff.

use super::latency::{requests_to_decide, widen_for_drift, CI_LEVEL};
use super::{fmt_pct, Check, Method, Metric, Verdict};
use crate::model::LadderUnit;
use crate::stats::inference;
use crate::stats::{Progress, SteadyWindow, StepSummary};

/// Significance level of the error-rate test.
const ERROR_RATE_ALPHA: f64 = 0.01;

pub(super) fn skip(c: &mut Check, reason: String) {
    c.detail = reason.clone();
    c.verdict = Verdict::Skipped { reason };
}

pub(super) fn error_rate(c: &mut Check, bs: &StepSummary, ns: &StepSummary, gate: f64) {
    let counts = ((bs.failed, bs.attempted), (ns.failed, ns.attempted));
    share_rule(c, "error rate", "attempted requests", counts, gate);
}

/// Short responses (possible truncation) as a share of successes: the error-rate rule.
pub(super) fn short_rate(c: &mut Check, bs: &StepSummary, ns: &StepSummary, gate: f64) {
    let counts = ((bs.short, bs.succeeded), (ns.short, ns.succeeded));
    share_rule(c, "short share", "successful requests", counts, gate);
}

/// A rise of a share (`hits / n`) is a regression when it exceeds `gate` and a one-sided
/// Fisher exact test says it is significant at 1%.
fn share_rule(
    c: &mut Check,
    name: &str,
    of_what: &str,
    ((bh, bn), (nh, nn)): ((u64, u64), (u64, u64)),
    gate: f64,
) {
    c.method = Method::FisherExact;
    if bn == 0 || nn == 0 {
        let side = if bn == 0 {
            "the baseline"
        } else {
            "the new run"
        };
        return skip(c, format!("{name}: no {of_what} in {side}"));
    }
    let (br, nr) = (bh as f64 / bn as f64, nh as f64 / nn as f64);
    (c.base, c.new) = (Some(br), Some(nr));
    let d = nr - br;
    let p = if d >= 0.0 {
        inference::fisher_p_rise(bh, bn, nh, nn)
    } else {
        inference::fisher_p_rise(nh, nn, bh, bn)
    };
    let significant = p < ERROR_RATE_ALPHA;
    let change = format!(
        "{name} {} → {} ({:+.2} pp, Fisher one-sided p = {p:.4}; gate {:.2} pp, significance 1%)",
        fmt_share(br),
        fmt_share(nr),
        d * 100.0,
        gate * 100.0
    );
    (c.verdict, c.detail) = match (significant, d.abs() > gate) {
        (true, true) if d > 0.0 => (Verdict::Regressed, change),
        (true, true) => (Verdict::Improved, change),
        (true, false) => (Verdict::BelowGate, format!("below gate: {change}")),
        // A change past the gate that the test cannot confirm: the data cannot tell.
        (false, true) => {
            let needed = error_rate_requests(br, nr, gate, bn.max(nn));
            let more = needed.map_or_else(String::new, |k| {
                format!("; about {k} requests per step would decide it")
            });
            (
                Verdict::Inconclusive {
                    requests_per_step: needed,
                },
                format!("inconclusive: {change} is past the gate but not significant{more}"),
            )
        }
        (false, false) => (Verdict::NoChange, format!("no change: {change}")),
    };
}

/// The variance term of a share's rise between two sides of n requests each, for a one-sided
/// 1% test (normal approximation): 2 z² p̄(1 − p̄), with p̄ kept within [1e-4, 0.5]. A rise d
/// is confirmed with about this / d² requests per side.
fn share_test_scale(pooled: f64) -> f64 {
    const Z_99: f64 = 2.326_347_874;
    let p = pooled.clamp(1e-4, 0.5);
    2.0 * Z_99 * Z_99 * p * (1.0 - p)
}

/// Requests per side for a one-sided 1% test to confirm a rise of max(|d|, gate) at the pooled
/// rate (n ≈ 2 z² p̄(1 − p̄) / d²), rounded up to 10.
fn error_rate_requests(br: f64, nr: f64, gate: f64, n: u64) -> Option<u64> {
    let d = (nr - br).abs().max(gate);
    let need = share_test_scale((br + nr) / 2.0) / (d * d);
    need.is_finite()
        .then(|| ((need / 10.0).ceil() as u64 * 10).max(n + 10))
}

/// The smallest rise of a share (as a fraction) that `n` requests per side confirm at a share
/// of `p`: the same approximation solved for d (`budget`).
pub(super) fn share_change_detectable(p: f64, n: f64) -> f64 {
    (share_test_scale(p) / n.max(1.0)).sqrt()
}

/// One side's throughput evidence: the summary values, and the steady window when the side kept
/// per-request samples with start times.
pub(super) struct Rate<'a> {
    pub summary: &'a StepSummary,
    pub window: Option<SteadyWindow>,
}

impl Rate<'_> {
    /// The judged value: the step's steady-window rate as `summary.csv` has it
    /// (`StepSummary::throughput`), from the window when an older summary lacks it; the decode
    /// rate from the window, or from the summary's means without one.
    fn point(&self, metric: Metric) -> f64 {
        if metric == Metric::DecodeRate {
            return match &self.window {
                Some(w) => w.rate().decode_rate(),
                None => self.summary.decode_rate().unwrap_or(f64::NAN),
            };
        }
        let tpm = metric == Metric::Tpm;
        let recorded = if tpm {
            self.summary.tpm_steady
        } else {
            self.summary.rps_steady
        };
        match (recorded, &self.window) {
            (None, Some(w)) if w.rate().length_ms > 0.0 => rate_of(&w.rate(), metric),
            _ => self.summary.throughput(tpm),
        }
    }

    /// The spread of the steady rate, from the window's time blocks. A block in which no
    /// request decoded has no decode rate and is left out of the decode rate's spread: agents
    /// that start together wait on their prefill and their tools together, so whole blocks of
    /// an agent step can hold no decoding, and they say nothing of the decode speed.
    pub(super) fn spread(&self, metric: Metric) -> Option<inference::RateSpread> {
        let blocks = self.window.as_ref()?.blocks();
        let rates: Vec<f64> = blocks
            .iter()
            .map(|b| rate_of(b, metric))
            .filter(|r| metric != Metric::DecodeRate || r.is_finite())
            .collect();
        inference::rate_spread(&rates)
    }
}

/// One throughput metric of a stretch of the steady window.
fn rate_of(p: &Progress, metric: Metric) -> f64 {
    match metric {
        Metric::Tpm => p.tpm(),
        Metric::DecodeRate => p.decode_rate(),
        _ => p.rps(),
    }
}

/// Throughput (TPM, RPS, decode rate) over the steady windows: the recorded steady rates, judged with a 99%
/// CI of their ratio from batch means over time blocks of about one service cycle (see
/// `stats::steady` and `inference::rate_factor_ci`) when both sides have windows, the point rule
/// on the summaries otherwise.
pub(super) fn throughput(
    c: &mut Check,
    (base, new): (&Rate<'_>, &Rate<'_>),
    gate: f64,
    drift: Option<(f64, usize)>,
) {
    let name = c.metric.label();
    let (bv, nv) = (base.point(c.metric), new.point(c.metric));
    (c.base, c.new) = (Some(bv), Some(nv));
    if c.metric == Metric::DecodeRate && !(bv > 0.0 && nv > 0.0) {
        return skip(
            c,
            format!("{name}: a side has no successful request that streamed more than one token"),
        );
    }
    if !(bv > 0.0 && nv.is_finite()) {
        return skip(
            c,
            format!("{name}: baseline {bv}, new {nv}: a relative change is undefined"),
        );
    }
    let r = nv / bv - 1.0;
    c.ratio = Some(r);
    let change = RateChange {
        r,
        gate,
        words: format!("{name} {}", fmt_pct(r)),
        thresholds: format!("gate ±{:.0}%", gate * 100.0),
    };
    match (&base.window, &new.window) {
        (Some(bw), Some(nw)) => throughput_by_blocks(c, &change, (base, new), (bw, nw), drift),
        _ => throughput_by_points(c, &change, base.summary, new.summary),
    }
}

/// A throughput ratio to judge, and the words for it.
struct RateChange {
    r: f64,
    gate: f64,
    /// "TPM -12.0%".
    words: String,
    /// "gate ±5%".
    thresholds: String,
}

/// The point rule, when a side has no steady window (no per-request samples): a fall past the
/// gate regresses, a rise past it improves.
fn throughput_by_points(c: &mut Check, rc: &RateChange, bs: &StepSummary, ns: &StepSummary) {
    let name = c.metric.label();
    let (b_d, n_d) = (bs.duration_s, ns.duration_s);
    if !(b_d > 0.0 && n_d > 0.0) {
        return skip(
            c,
            format!("{name}: a step duration is 0 (baseline {b_d} s, new {n_d} s)"),
        );
    }
    let RateChange {
        r,
        gate,
        words: change,
        thresholds,
    } = rc;
    c.method = Method::Point;
    let how = "point values (no per-request samples)";
    (c.verdict, c.detail) = if *r < -gate {
        (
            Verdict::Regressed,
            format!("{how}; {change} ({thresholds})"),
        )
    } else if r > gate {
        (Verdict::Improved, format!("{how}; {change} ({thresholds})"))
    } else {
        (
            Verdict::NoChange,
            format!("{how}; no change: {change} ({thresholds})"),
        )
    };
}

/// The batch-means rule over both steady windows: the ratio's 99% CI from the windows' time
/// blocks, widened for drift with a pooled baseline, judged like a latency's CI (a fall is the
/// regression).
fn throughput_by_blocks(
    c: &mut Check,
    rc: &RateChange,
    (base, new): (&Rate<'_>, &Rate<'_>),
    (bw, nw): (&SteadyWindow, &SteadyWindow),
    drift: Option<(f64, usize)>,
) {
    c.method = Method::BatchMeans;
    let (Some(bs), Some(ns)) = (base.spread(c.metric), new.spread(c.metric)) else {
        return skip(
            c,
            format!(
                "{}: the steady windows hold no usable completed requests",
                c.metric.label()
            ),
        );
    };
    let RateChange {
        r,
        gate,
        words: change,
        thresholds,
    } = rc;
    let (r, gate) = (*r, *gate);
    let (f_lo, f_hi) = inference::rate_factor_ci(bs, ns, CI_LEVEL);
    let ((lo, hi), widened) = widen_for_drift(
        r,
        (
            (1.0 + r) * (1.0 + f_lo) - 1.0,
            (1.0 + r) * (1.0 + f_hi) - 1.0,
        ),
        drift,
    );
    c.ci = Some((lo, hi));
    let window = format!(
        "steady windows {:.1} s / {:.1} s with {:.1} / {:.1} requests in flight, {} / {} time blocks",
        bw.length_ms() / 1000.0,
        nw.length_ms() / 1000.0,
        bw.concurrency,
        nw.concurrency,
        bs.df.round() + 1.0,
        ns.df.round() + 1.0,
    );
    let ci_txt = format!("99% CI [{}, {}]{widened}", fmt_pct(lo), fmt_pct(hi));
    let n = base.summary.succeeded.max(new.summary.succeeded);
    (c.verdict, c.detail) = by_ci_fall(
        (r, (lo, hi), gate),
        n,
        (change, &ci_txt, thresholds),
        &window,
    );
}

/// The CI rule for a quantity whose fall is the regression (throughput, the cap), on the
/// change `r` with its CI `lo..hi`: regressed or improved when the CI excludes 0 and `r` is
/// beyond the gate, below gate when it excludes 0 otherwise, inconclusive when it spans 0 and
/// reaches past the gate (with about how many requests per step would decide it, from `n`
/// requests behind it), else no change. `words` are the change ("TPM -12.0%"), the CI and the
/// thresholds; `context` says what was measured.
pub(super) fn by_ci_fall(
    (r, (lo, hi), gate): (f64, (f64, f64), f64),
    n: u64,
    (change, ci_txt, thresholds): (&str, &str, &str),
    context: &str,
) -> (Verdict, String) {
    if hi < 0.0 && r < -gate {
        (
            Verdict::Regressed,
            format!("{change}, {ci_txt}: beyond {thresholds} ({context})"),
        )
    } else if lo > 0.0 && r > gate {
        (
            Verdict::Improved,
            format!("{change}, {ci_txt}: beyond {thresholds} ({context})"),
        )
    } else if lo > 0.0 || hi < 0.0 {
        (
            Verdict::BelowGate,
            format!("below gate: {change}, {ci_txt} excludes 0 but the change is within the gate ({thresholds}; {context})"),
        )
    } else if lo < -gate || hi > gate {
        let needed = requests_to_decide(n, (hi - lo) / 2.0, gate);
        let more = needed.map_or_else(String::new, |k| {
            format!("; about {k} requests per step would decide it")
        });
        (
            Verdict::Inconclusive {
                requests_per_step: needed,
            },
            format!("inconclusive: {change}, {ci_txt} spans 0 and reaches past the gate ({thresholds}; {context}){more}"),
        )
    } else {
        (
            Verdict::NoChange,
            format!("no change: {change}, {ci_txt} lies within {thresholds} ({context})"),
        )
    }
}

pub(super) fn findings_check(
    model: &str,
    unit: LadderUnit,
    metric: Metric,
    b: Option<&Option<u32>>,
    n: Option<&Option<u32>>,
) -> Option<Check> {
    let name = metric.label();
    let mut c = Check {
        model: model.to_string(),
        step: None,
        concurrency: None,
        ladder_unit: unit,
        metric,
        percentile: None,
        gated: true,
        base: b.copied().flatten().map(f64::from),
        new: n.copied().flatten().map(f64::from),
        ratio: None,
        ci: None,
        method: Method::Point,
        verdict: Verdict::NoChange,
        detail: String::new(),
    };
    let (b, n) = match (b, n) {
        (None, None) => return None,
        (Some(b), Some(n)) => (*b, *n),
        (None, _) => {
            skip(&mut c, format!("{name} was not analysed for the baseline"));
            return Some(c);
        }
        (_, None) => {
            skip(&mut c, format!("{name} was not analysed for the new run"));
            return Some(c);
        }
    };
    (c.verdict, c.detail) = match (b, n) {
        (None, None) => (Verdict::NoChange, format!("no {name} on either side")),
        (Some(b), None) => (
            Verdict::Improved,
            format!("the {name} {} in the baseline is gone", unit.at(b)),
        ),
        (None, Some(n)) => (
            Verdict::Regressed,
            format!("new {name} {} (none in the baseline)", unit.at(n)),
        ),
        (Some(b), Some(n)) if n < b => (
            Verdict::Regressed,
            format!("{name} moved down from {b} to {}", unit.describe(n)),
        ),
        (Some(b), Some(n)) if n > b => (
            Verdict::Improved,
            format!("{name} moved up from {b} to {}", unit.describe(n)),
        ),
        (Some(b), Some(_)) => (Verdict::NoChange, format!("{name} still {}", unit.at(b))),
    };
    Some(c)
}

/// Which limit the walls hit, after a wall check's words: ` (tokens per minute: limit 1.0M →
/// 600k)`, ` (requests per minute, limit 500)` when it did not change, empty when the 429s named
/// none.
pub(super) fn wall_rule_words(
    (base, new): (Option<&super::WallRule>, Option<&super::WallRule>),
) -> String {
    let limit = |l: &Option<u64>| l.map(|v| crate::findings::limit_rule::compact(v as f64));
    match (base, new) {
        (Some((Some(bk), bl)), Some((Some(nk), nl))) if bk == nk => match (limit(bl), limit(nl)) {
            (Some(b), Some(n)) if b != n => format!(" ({}: limit {b} → {n})", bk.words()),
            (_, Some(n)) => format!(" ({}, limit {n})", bk.words()),
            _ => format!(" ({})", bk.words()),
        },
        (Some((Some(bk), _)), Some((Some(nk), _))) => {
            format!(" (was {}, now {})", bk.words(), nk.words())
        }
        (_, Some((Some(nk), nl))) => match limit(nl) {
            Some(n) => format!(" ({}, limit {n})", nk.words()),
            None => format!(" ({})", nk.words()),
        },
        (Some((Some(bk), _)), _) => format!(" (the baseline's: {})", bk.words()),
        _ => String::new(),
    }
}

/// A failure share as "1.50%".
fn fmt_share(x: f64) -> String {
    format!("{:.2}%", x * 100.0)
}

/// The SLO capacity, the highest load each side's steps show meeting the SLO
/// (`findings::search`; `load.search`'s SLO, else the scenario's). A drop beyond its
/// uncertainty (the new interval wholly below the baseline's) and past `gate` (a relative fall
/// of the highest load) is a regression, a drop beyond the uncertainty within the gate is below
/// gate, a rise beyond it an improvement; overlapping intervals are no change.
pub(super) fn capacity_check(
    model: &str,
    unit: LadderUnit,
    (slo, gate): (&crate::model::Slo, f64),
    base: &[&StepSummary],
    new: &[&StepSummary],
) -> Option<Check> {
    use crate::findings::search::{capacity, none_meets, Capacity};
    let (b, n) = (capacity(base, slo), capacity(new, slo));
    let mut c = Check {
        model: model.to_string(),
        step: None,
        concurrency: None,
        ladder_unit: unit,
        metric: Metric::Capacity,
        percentile: None,
        gated: true,
        base: b.map(|x| f64::from(x.max)),
        new: n.map(|x| f64::from(x.max)),
        ratio: None,
        ci: None,
        method: Method::Point,
        verdict: Verdict::NoChange,
        detail: String::new(),
    };
    let show = |x: &Capacity| {
        let v = unit.describe(x.max);
        if x.open_ended {
            format!("at least {v}")
        } else {
            format!("{v} ({}–{})", x.lo, x.hi)
        }
    };
    (c.verdict, c.detail) = match (b, n) {
        (None, None) => return None,
        (Some(b), Some(n)) if n.dropped_from(&b) => (
            if f64::from(n.max) < f64::from(b.max) * (1.0 - gate) {
                Verdict::Regressed
            } else {
                Verdict::BelowGate
            },
            format!(
                "capacity dropped beyond its uncertainty: {} → {} (gate -{:.0}%)",
                show(&b),
                show(&n),
                gate * 100.0
            ),
        ),
        (Some(b), Some(n)) if b.dropped_from(&n) => (
            Verdict::Improved,
            format!(
                "capacity rose beyond its uncertainty: {} → {}",
                show(&b),
                show(&n)
            ),
        ),
        (Some(b), Some(n)) => (
            Verdict::NoChange,
            format!(
                "capacity {} → {}: within the uncertainty",
                show(&b),
                show(&n)
            ),
        ),
        (Some(b), None) if none_meets(new, slo) => (
            Verdict::Regressed,
            format!(
                "capacity {} in the baseline; no load tried meets the SLO now",
                show(&b)
            ),
        ),
        (None, Some(n)) if none_meets(base, slo) => (
            Verdict::Improved,
            format!(
                "no load met the SLO in the baseline; capacity {} now",
                show(&n)
            ),
        ),
        (Some(_), None) | (None, Some(_)) => {
            skip(&mut c, "capacity was not found on both sides".into());
            return Some(c);
        }
    };
    Some(c)
}

#[cfg(test)]
mod wall_rule_tests {
    use super::*;
    use crate::model::LimitKind;

    #[test]
    fn a_moved_wall_says_which_limit_and_how_it_changed() {
        let tpm = |l| (Some(LimitKind::Tokens), Some(l));
        assert_eq!(
            wall_rule_words((Some(&tpm(1_000_000)), Some(&tpm(600_000)))),
            " (tokens per minute: limit 1.0M → 600k)"
        );
        assert_eq!(
            wall_rule_words((Some(&tpm(30_000)), Some(&tpm(30_000)))),
            " (tokens per minute, limit 30k)"
        );
        let rpm = (Some(LimitKind::Requests), None);
        assert_eq!(
            wall_rule_words((Some(&tpm(1)), Some(&rpm))),
            " (was tokens per minute, now requests per minute)"
        );
        assert_eq!(
            wall_rule_words((None, Some(&rpm))),
            " (requests per minute)"
        );
        assert_eq!(wall_rule_words((None, None)), "");
        assert_eq!(wall_rule_words((Some(&(None, None)), None)), "");
    }
}
