//! The non-latency rules of DESIGN §5 for one matched step or model: error rate (size and
//! significance), throughput (point rule), and the knee/wall findings diff.

use super::{fmt_pct, inference, Check, Method, Metric, Verdict};
use crate::stats::StepSummary;

/// Significance level of the error-rate test.
const ERROR_RATE_ALPHA: f64 = 0.01;

pub(super) fn skip(c: &mut Check, reason: String) {
    c.detail = reason.clone();
    c.verdict = Verdict::Skipped { reason };
}

pub(super) fn error_rate(c: &mut Check, bs: &StepSummary, ns: &StepSummary, gate: f64) {
    c.method = Method::TwoProportion;
    if bs.attempted == 0 || ns.attempted == 0 {
        let side = if bs.attempted == 0 {
            "the baseline"
        } else {
            "the new run"
        };
        return skip(c, format!("error rate: no attempted requests in {side}"));
    }
    let (br, nr) = (
        bs.failed as f64 / bs.attempted as f64,
        ns.failed as f64 / ns.attempted as f64,
    );
    (c.base, c.new) = (Some(br), Some(nr));
    let p_rise = inference::two_proportion_p_rise(bs.failed, bs.attempted, ns.failed, ns.attempted);
    let p_fall = inference::two_proportion_p_rise(ns.failed, ns.attempted, bs.failed, bs.attempted);
    let d = nr - br;
    let (p, significant) = if d >= 0.0 {
        (p_rise, p_rise < ERROR_RATE_ALPHA)
    } else {
        (p_fall, p_fall < ERROR_RATE_ALPHA)
    };
    let change = format!(
        "error rate {} → {} ({:+.2} pp, one-sided p = {p:.4}; gate {:.2} pp, significance 1%)",
        fmt_share(br),
        fmt_share(nr),
        d * 100.0,
        gate * 100.0
    );
    (c.verdict, c.detail) = match (significant, d.abs() > gate) {
        (true, true) if d > 0.0 => (Verdict::Regressed, change),
        (true, true) => (Verdict::Improved, change),
        (true, false) => (
            Verdict::WithinNoise,
            format!("within noise threshold: {change}"),
        ),
        (false, _) => (Verdict::NoChange, format!("no change: {change}")),
    };
}

pub(super) fn throughput(c: &mut Check, (bv, bd): (f64, f64), (nv, nd): (f64, f64), gate: f64) {
    let name = c.metric.label();
    if !(bd > 0.0 && nd > 0.0) {
        return skip(
            c,
            format!("{name}: a step duration is 0 (baseline {bd} s, new {nd} s)"),
        );
    }
    (c.base, c.new) = (Some(bv), Some(nv));
    if !(bv > 0.0 && nv.is_finite()) {
        return skip(
            c,
            format!("{name}: baseline {bv}, new {nv}: a relative change is undefined"),
        );
    }
    let r = nv / bv - 1.0;
    c.ratio = Some(r);
    let change = format!("{name} {} (gate -{:.0}%)", fmt_pct(r), gate * 100.0);
    (c.verdict, c.detail) = if r < -gate {
        (Verdict::Regressed, change)
    } else if r > gate {
        (Verdict::Improved, change)
    } else {
        (Verdict::NoChange, format!("no change: {change}"))
    };
}

pub(super) fn findings_check(
    model: &str,
    metric: Metric,
    b: Option<&Option<u32>>,
    n: Option<&Option<u32>>,
) -> Option<Check> {
    let name = metric.label();
    let mut c = Check {
        model: model.to_string(),
        step: None,
        concurrency: None,
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
            format!("the {name} at step {b} in the baseline is gone"),
        ),
        (None, Some(n)) => (
            Verdict::Regressed,
            format!("new {name} at step {n} (none in the baseline)"),
        ),
        (Some(b), Some(n)) if n < b => (
            Verdict::Regressed,
            format!("{name} moved down from step {b} to step {n}"),
        ),
        (Some(b), Some(n)) if n > b => (
            Verdict::Improved,
            format!("{name} moved up from step {b} to step {n}"),
        ),
        (Some(b), Some(_)) => (Verdict::NoChange, format!("{name} still at step {b}")),
    };
    Some(c)
}

/// A failure share as "1.50%".
fn fmt_share(x: f64) -> String {
    format!("{:.2}%", x * 100.0)
}
