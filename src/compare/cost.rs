//! The cost check of one matched step (docs/cost.md, docs/gate.md): the mean cost per
//! successful request, both sides' token counts priced at the new run's prices, so the check
//! isolates what the tokens did (a model that reasons twice as long) from a change of price
//! list. A 99% percentile-bootstrap CI of the ratio of the means (each side resampled at its
//! effective number of independent requests, `stats::inference`), judged against
//! `gates.cost.mean` like a latency's CI against its gate; the detail names which tokens moved.

use super::latency::{requests_to_decide, CI_LEVEL};
use super::rules::skip;
use super::{fmt_pct, Check, Method, RequestSample, Verdict};
use crate::model::pricing::Usage;
use crate::model::{cost_text, Pricing};
use crate::stats::inference::{
    bootstrap_mean_ratio_ci, effective_size_of_values, generator, Resampled,
};

/// Fewest priced successes per side for a cost verdict.
pub const MIN_COST_SAMPLES: u64 = 40;

/// What one side's priced successes of a step say: their costs in start order and their mean
/// token counts.
struct Priced {
    costs: Vec<f64>,
    input: f64,
    cached: f64,
    output: f64,
    reasoning: f64,
    /// A model of the side's successes that the pricing does not list.
    unlisted: Option<String>,
}

impl Priced {
    fn of(pricing: &Pricing, rows: &[&RequestSample]) -> Priced {
        let mut p = Priced {
            costs: Vec::new(),
            input: 0.0,
            cached: 0.0,
            output: 0.0,
            reasoning: 0.0,
            unlisted: None,
        };
        for r in rows.iter().filter(|r| r.ok) {
            let usage = Usage {
                input: r.input_tokens,
                cached: r.cached_tokens,
                cache_write: r.cache_write_tokens,
                output: r.output_tokens,
                reasoning: r.reasoning_tokens,
            };
            let model = r.sent_to.as_deref().unwrap_or(&r.model);
            if !pricing.models.contains_key(model) {
                p.unlisted.get_or_insert_with(|| model.to_string());
            }
            let Some(c) = pricing.cost(model, usage).filter(|c| c.is_finite()) else {
                continue;
            };
            p.costs.push(c);
            let n = |v: Option<u64>| v.unwrap_or(0) as f64;
            p.input += n(r.input_tokens);
            p.cached += n(r.cached_tokens);
            p.output += n(r.output_tokens);
            p.reasoning += n(r.reasoning_tokens);
        }
        let k = p.costs.len().max(1) as f64;
        (p.input, p.cached, p.output, p.reasoning) =
            (p.input / k, p.cached / k, p.output / k, p.reasoning / k);
        p
    }

    fn mean(&self) -> Option<f64> {
        (!self.costs.is_empty()).then(|| self.costs.iter().sum::<f64>() / self.costs.len() as f64)
    }
}

/// One side's rows of the step, `None` when the side kept no per-request records.
pub(super) type Rows<'a> = Option<&'a [&'a RequestSample]>;

/// Judges the step's cost per success into `c` (`base`/`new`: per 1,000 successes, in the
/// pricing's currency).
pub(super) fn cost_check(
    c: &mut Check,
    pricing: &Pricing,
    (base, new): (Rows<'_>, Rows<'_>),
    gate: f64,
    (resamples, seed): (usize, u64),
) {
    let (Some(base), Some(new)) = (base, new) else {
        let side = if base.is_none() {
            "the baseline"
        } else {
            "the new run"
        };
        return skip(
            c,
            format!("cost per success is judged from each request's tokens, and {side} kept no per-request records (requests.csv or the baseline's .requests.csv)"),
        );
    };
    let (b, n) = (Priced::of(pricing, base), Priced::of(pricing, new));
    let (bn, nn) = (b.costs.len() as u64, n.costs.len() as u64);
    c.base = b.mean().map(|m| m * 1000.0);
    c.new = n.mean().map(|m| m * 1000.0);
    if let Some(m) = b.unlisted.as_ref().or(n.unlisted.as_ref()) {
        return skip(
            c,
            format!(
                "cost per success: `{m}` has no price in the new run's pricing (both sides are priced with it): list every compared model there, e.g. in a shared pricing file"
            ),
        );
    }
    if bn < MIN_COST_SAMPLES || nn < MIN_COST_SAMPLES {
        return skip(
            c,
            format!(
                "cost per success needs ≥ {MIN_COST_SAMPLES} priced successes per side (have {bn} / {nn}; a request is priced when the server reports its usage)"
            ),
        );
    }
    let (Some(bm), Some(nm)) = (b.mean(), n.mean()) else {
        return;
    };
    if bm <= 0.0 {
        return skip(
            c,
            "the baseline's cost per success is 0, so a relative change is undefined".into(),
        );
    }
    let r = nm / bm - 1.0;
    c.ratio = Some(r);
    c.method = Method::Bootstrap;
    let side = |v: &[f64]| {
        let m = effective_size_of_values(v).round() as usize;
        (v.to_vec(), m.clamp(2.min(v.len()), v.len()))
    };
    let ((bv, bm_draws), (nv, nm_draws)) = (side(&b.costs), side(&n.costs));
    let ci = bootstrap_mean_ratio_ci(
        Resampled {
            sorted: &bv,
            m: bm_draws,
        },
        Resampled {
            sorted: &nv,
            m: nm_draws,
        },
        resamples,
        CI_LEVEL,
        &mut generator(seed),
    );
    let Some((lo, hi)) = ci else {
        return skip(
            c,
            "cost per success: the bootstrap produced no usable resamples".into(),
        );
    };
    c.ci = Some((lo, hi));
    let change = format!(
        "cost per success {} ({} → {} {cur} per 1,000 successes), 99% CI [{}, {}]",
        fmt_pct(r),
        cost_text(bm * 1000.0),
        cost_text(nm * 1000.0),
        fmt_pct(lo),
        fmt_pct(hi),
        cur = pricing.currency
    );
    (c.verdict, c.detail) = decide(&change, (lo, hi), r, gate, bn.max(nn), &why(&b, &n));
}

/// The verdict on the CI `lo..hi` of the relative change `r`, like a latency's against its
/// gate (no floor: any rise beyond the gate costs money): regressed or improved when it
/// excludes 0 and the change passes the gate, below gate when it excludes 0 otherwise,
/// inconclusive when it spans 0 and reaches past the gate, else no change.
fn decide(
    change: &str,
    (lo, hi): (f64, f64),
    r: f64,
    gate: f64,
    n: u64,
    why: &str,
) -> (Verdict, String) {
    let thresholds = format!("gate ±{:.0}%", gate * 100.0);
    if lo > 0.0 && r > gate {
        (
            Verdict::Regressed,
            format!("{change}: beyond {thresholds}; {why}"),
        )
    } else if hi < 0.0 && r < -gate {
        (
            Verdict::Improved,
            format!("{change}: beyond {thresholds}; {why}"),
        )
    } else if lo > 0.0 || hi < 0.0 {
        (
            Verdict::BelowGate,
            format!(
                "below gate: {change} excludes 0 but the change is within the {thresholds}; {why}"
            ),
        )
    } else if hi > gate || lo < -gate {
        let needed = requests_to_decide(n, (hi - lo) / 2.0, gate);
        let more = needed.map_or_else(String::new, |k| {
            format!("; about {k} requests per step would decide it")
        });
        (
            Verdict::Inconclusive {
                requests_per_step: needed,
            },
            format!("inconclusive: {change} spans 0 and reaches past the {thresholds}{more}"),
        )
    } else {
        (
            Verdict::NoChange,
            format!("no change: {change} lies within the {thresholds}"),
        )
    }
}

/// Which tokens moved the cost, in words: "more reasoning: reasoning tokens per success
/// 40 → 120 (output 50 → 130, input 12 → 12)". The part (input or output) whose count moved
/// most is named first; reasoning is named when it carries most of the output's move.
fn why(b: &Priced, n: &Priced) -> String {
    let t = |x: f64| format!("{x:.0}");
    let d_out = n.output - b.output;
    let d_in = n.input - b.input;
    let counts = format!(
        "output {} → {}, reasoning {} → {}, input {} → {} (cached {} → {})",
        t(b.output),
        t(n.output),
        t(b.reasoning),
        t(n.reasoning),
        t(b.input),
        t(n.input),
        t(b.cached),
        t(n.cached)
    );
    let more = |d: f64| if d >= 0.0 { "more" } else { "less" };
    let same = |a: f64, b: f64| (a - b).abs() <= 0.005 * a.abs().max(b.abs()).max(1.0);
    let cause = if same(b.output, n.output) && same(b.input, n.input) && same(b.cached, n.cached) {
        // The same tokens: the two sides are models of different prices (a pair).
        "the price (the same tokens per success)".to_string()
    } else if d_out.abs() >= d_in.abs() {
        let d_reason = n.reasoning - b.reasoning;
        if d_out != 0.0 && d_reason / d_out >= 0.5 {
            format!("{} reasoning", more(d_reason))
        } else if d_out >= 0.0 {
            "longer answers".to_string()
        } else {
            "shorter answers".to_string()
        }
    } else if (n.cached - b.cached).abs() > d_in.abs() / 2.0 {
        format!("{} prompt caching", more(n.cached - b.cached))
    } else {
        format!("{} input", more(d_in))
    };
    format!("{cause} (tokens per success: {counts}; both sides at the new run's prices)")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::Metric;
    use crate::model::LadderUnit;
    use crate::model::Price;

    fn pricing() -> Pricing {
        Pricing {
            currency: "USD".into(),
            models: [(
                "m".to_string(),
                Price {
                    input: 1.0,
                    cached_input: None,
                    cache_write_input: None,
                    output: 4.0,
                },
            )]
            .into(),
        }
    }

    /// `n` successes of `input` prompt tokens and `output` output tokens of which `reasoning`
    /// reasoned, the output varying by ±2 tokens.
    fn rows(n: usize, input: u64, output: u64, reasoning: u64) -> Vec<RequestSample> {
        (0..n)
            .map(|i| RequestSample {
                model: "m".into(),
                step: 1,
                started_at_ms: i as f64,
                ok: true,
                input_tokens: Some(input),
                output_tokens: Some(output + (i % 5) as u64 - 2),
                reasoning_tokens: Some(reasoning),
                ..RequestSample::default()
            })
            .collect()
    }

    fn judge(base: &[RequestSample], new: &[RequestSample]) -> Check {
        let at = crate::stats::StepSummary {
            model: "m".into(),
            step: 1,
            concurrency: 4,
            ladder_unit: LadderUnit::Streams,
            ..Default::default()
        };
        let mut c = Check::unjudged(&at, Metric::Cost, None, true);
        let (b, n): (Vec<&RequestSample>, Vec<&RequestSample>) =
            (base.iter().collect(), new.iter().collect());
        cost_check(&mut c, &pricing(), (Some(&b), Some(&n)), 0.10, (2000, 7));
        c
    }

    #[test]
    fn twice_the_reasoning_is_a_cost_regression_that_names_the_reasoning() {
        let c = judge(&rows(60, 100, 50, 40), &rows(60, 100, 130, 120));
        assert_eq!(c.verdict, Verdict::Regressed, "{}", c.detail);
        // 100 × 1 + 50 × 4 = 300 per 1M → 0.3 per 1,000 successes; 100 + 130 × 4 = 620.
        assert!((c.base.unwrap() - 0.3).abs() < 1e-9 && (c.new.unwrap() - 0.62).abs() < 1e-9);
        assert!(c.detail.contains("more reasoning"), "{}", c.detail);
        assert!(c.detail.contains("reasoning 40 → 120"), "{}", c.detail);
        assert!(c.detail.contains("USD"), "{}", c.detail);
    }

    #[test]
    fn the_same_tokens_are_no_change_and_fewer_are_an_improvement() {
        let c = judge(&rows(60, 100, 50, 0), &rows(60, 100, 50, 0));
        assert_eq!(c.verdict, Verdict::NoChange, "{}", c.detail);
        let c = judge(&rows(60, 400, 50, 0), &rows(60, 100, 50, 0));
        assert_eq!(c.verdict, Verdict::Improved, "{}", c.detail);
        assert!(c.detail.contains("less input"), "{}", c.detail);
    }

    #[test]
    fn a_pair_is_priced_under_the_names_sent_and_an_unlisted_model_is_named() {
        let mut p = pricing();
        p.models.insert(
            "big".into(),
            Price {
                input: 10.0,
                cached_input: None,
                cache_write_input: None,
                output: 40.0,
            },
        );
        let renamed = |model: &str| -> Vec<RequestSample> {
            rows(60, 100, 50, 0)
                .into_iter()
                .map(|r| RequestSample {
                    model: "m→big".into(),
                    sent_to: Some(model.into()),
                    ..r
                })
                .collect()
        };
        let (b, n) = (renamed("m"), renamed("big"));
        let (b, n): (Vec<&RequestSample>, Vec<&RequestSample>) =
            (b.iter().collect(), n.iter().collect());
        let mut c = judge(&rows(60, 100, 50, 0), &rows(60, 100, 50, 0));
        cost_check(&mut c, &p, (Some(&b), Some(&n)), 0.10, (500, 1));
        assert_eq!(c.verdict, Verdict::Regressed, "{}", c.detail);
        assert!(
            (c.ratio.unwrap() - 9.0).abs() < 1e-9,
            "ten times the price: {}",
            c.detail
        );
        assert!(
            c.detail.contains("the price (the same tokens per success)"),
            "{}",
            c.detail
        );
        let other = renamed("gpt-x");
        let other: Vec<&RequestSample> = other.iter().collect();
        cost_check(&mut c, &p, (Some(&other), Some(&n)), 0.10, (500, 1));
        assert!(c.detail.contains("`gpt-x` has no price"), "{}", c.detail);
    }

    #[test]
    fn too_few_priced_successes_or_no_records_are_skipped_saying_why() {
        let c = judge(&rows(10, 100, 50, 0), &rows(60, 100, 50, 0));
        assert!(matches!(c.verdict, Verdict::Skipped { .. }), "{}", c.detail);
        assert!(c.detail.contains("have 10 / 60"), "{}", c.detail);
        let mut c = judge(&rows(60, 100, 50, 0), &rows(60, 100, 50, 0));
        let n = rows(60, 100, 50, 0);
        let n: Vec<&RequestSample> = n.iter().collect();
        cost_check(&mut c, &pricing(), (None, Some(&n)), 0.10, (100, 1));
        assert!(
            c.detail
                .contains("the baseline kept no per-request records"),
            "{}",
            c.detail
        );
    }
}
