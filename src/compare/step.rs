//! The checks of one matched step (a model at the same concurrency on both sides): each latency
//! at each percentile, the error and short-response rates, and throughput. `compare` walks the
//! models and steps; this file judges one step, so that each reads on its own.

use super::cache::cache_check;
use super::cost::cost_check;
use super::latency::{self, Evidence, Rule};
use super::length::{self, Lengths};
use super::rules::{self, error_rate, short_rate, throughput};
use super::{
    gate_for, summary_q, Check, CompareOptions, Drift, Indexed, Metric, Percentile, Verdict,
    MIN_THROUGHPUT_SAMPLES,
};
use crate::model::ItlHistogram;
use crate::stats::{inference, Profile, StepSummary};

/// A latency's per-request values on one side of a step: sorted, and in start order.
type Values = Option<(Vec<f64>, Vec<f64>)>;
/// ITL's per-request gaps on one side of a step, when kept.
type Gaps = Option<Vec<ItlHistogram>>;

/// One matched step and how to judge it.
struct Step<'a> {
    opts: &'a CompareOptions,
    drift: &'a Drift,
    bi: &'a Indexed<'a>,
    bs: &'a StepSummary,
    ni: &'a Indexed<'a>,
    ns: &'a StepSummary,
    /// Why token-based checks (TPOT, TPM, decode rate) cannot compare the two sides, if they cannot.
    tokens_differ: Option<String>,
    /// The answers' mean lengths when they differ (`Lengths::differ`): then TPM, RPS and E2E are
    /// shown but not gated, and E2E at equal length is judged.
    lengths: Option<Lengths>,
    /// At or past the queueing knee on both sides: TTFT, TTFC and E2E are judged at P50 and the mean.
    queued: bool,
}

/// Appends the checks of one matched step to `out`, in the order the tables show them:
/// latencies × percentiles, error rate, short share (when either side saw one), TPM, RPS,
/// decode rate, and cost per success (when the new run was priced).
pub(super) fn step_checks(
    out: &mut Vec<Check>,
    opts: &CompareOptions,
    drift: &Drift,
    (bi, bs): (&Indexed<'_>, &StepSummary),
    (ni, ns): (&Indexed<'_>, &StepSummary),
    queued_from: Option<u32>,
) {
    let step = Step {
        queued: queued_from.is_some_and(|at| ns.concurrency >= at),
        opts,
        drift,
        bi,
        bs,
        ni,
        ns,
        tokens_differ: tokens_differ(bs, ns),
        lengths: Lengths::differ(bs, ns, opts.gates.throughput),
    };
    // TTFC only when either side reasoned: otherwise it is TTFT again, and older baselines
    // and runs of models that do not reason add nothing to the verdict table.
    let reasoned = bs.any_reasoning() || ns.any_reasoning();
    for metric in Metric::LATENCIES {
        if metric != Metric::Ttfc || reasoned {
            step.latency_checks(out, metric);
        }
    }
    if let Some(lengths) = &step.lengths {
        step.equal_length_checks(out, lengths);
    }
    let mut c = step.blank(Metric::ErrorRate, None, true);
    error_rate(&mut c, bs, ns, opts.gates.error_rate);
    out.push(c);
    // Only when either side saw a short response: older baselines and runs without any add
    // nothing to the verdict table.
    if bs.short + ns.short > 0 {
        let mut c = step.blank(Metric::ShortRate, None, true);
        short_rate(&mut c, bs, ns, opts.gates.error_rate);
        out.push(c);
    }
    for metric in [Metric::Tpm, Metric::Rps, Metric::DecodeRate] {
        out.push(step.throughput_check(metric));
    }
    // Cost per success, when the new run was priced: both sides at its prices.
    if let Some(pricing) = &opts.pricing {
        let mut c = step.blank(Metric::Cost, None, true);
        let seed = check_seed(
            opts.seed,
            &ns.model,
            ns.concurrency,
            Metric::Cost,
            Percentile::P50,
        );
        cost_check(
            &mut c,
            pricing,
            (bi.rows(bs), ni.rows(ns)),
            opts.gates.cost,
            (opts.resamples, seed),
        );
        out.push(c);
    }
    // The cache hit share, when either side read from a cache: older runs add nothing.
    if bs.cached_tokens + ns.cached_tokens > 0 {
        let mut c = step.blank(Metric::CacheHit, None, true);
        let seed = check_seed(
            opts.seed,
            &ns.model,
            ns.concurrency,
            Metric::CacheHit,
            Percentile::P50,
        );
        let rows = (bi.rows(bs), ni.rows(ns));
        cache_check(
            &mut c,
            (bs, ns),
            rows,
            opts.gates.cache_hit,
            (opts.resamples, seed),
        );
        out.push(c);
    }
}

impl Step<'_> {
    /// A check of this step with nothing judged yet.
    fn blank(&self, metric: Metric, percentile: Option<Percentile>, gated: bool) -> Check {
        Check::unjudged(self.ns, metric, percentile, gated)
    }

    /// The latency rule of `metric` at `p` on this step: the gates, resamples, seed and drift
    /// every latency check of the step shares.
    fn rule(&self, metric: Metric, p: Percentile, queued: bool) -> Rule<'_> {
        Rule {
            metric,
            pct: p,
            gate: gate_for(&self.opts.gates, metric),
            resamples: self.opts.resamples,
            seed: check_seed(
                self.opts.seed,
                &self.ns.model,
                self.ns.concurrency,
                metric,
                p,
            ),
            drift: self.drift.get(&(metric, Some(p))).copied(),
            queued,
        }
    }

    /// One latency at every percentile; TPOT is skipped at each when the sides counted tokens
    /// differently.
    fn latency_checks(&self, out: &mut Vec<Check>, metric: Metric) {
        let (bi, bs, ni, ns) = (self.bi, self.bs, self.ni, self.ns);
        let (bv, nv) = (bi.values(bs, metric), ni.values(ns, metric));
        let (bg, ng) = match metric {
            Metric::Itl => (bi.gaps(bs), ni.gaps(ns)),
            _ => (None, None),
        };
        // E2E holds the wait too: past the knee its P90 is a queued request as well.
        let queued = self.queued && matches!(metric, Metric::Ttft | Metric::Ttfc | Metric::E2e);
        let mean = queued.then_some(Percentile::Mean);
        for p in Percentile::ALL.into_iter().chain(mean) {
            if let (Metric::Tpot, Some(why)) = (metric, &self.tokens_differ) {
                let mut c = self.blank(metric, Some(p), p != Percentile::P50);
                let reason = format!("{} {why}", c.name());
                rules::skip(&mut c, reason);
                out.push(c);
                continue;
            }
            let rule = self.rule(metric, p, queued);
            let mut c = self.judged(&rule, (&bv, &nv), (&bg, &ng));
            if let (Metric::E2e, Some(lengths)) = (metric, &self.lengths) {
                length::e2e_information(&mut c, lengths);
            }
            out.push(c);
        }
        if queued {
            mean_as_second_witness(out);
        }
    }

    /// One latency rule applied to both sides' values (and ITL gaps) at this step.
    fn judged(
        &self,
        rule: &Rule<'_>,
        (bv, nv): (&Values, &Values),
        (bg, ng): (&Gaps, &Gaps),
    ) -> Check {
        let (metric, p) = (rule.metric, rule.pct);
        let j = latency::judge(
            rule,
            &evidence(self.bs, metric, p, bv, bg),
            &evidence(self.ns, metric, p, nv, ng),
        );
        // ITL without per-request gaps on both sides has no CI: information only.
        let gated = rule.gates() && !(metric == Metric::Itl && j.verdict == Verdict::Info);
        Check {
            base: j.base,
            new: j.new,
            ratio: j.ratio,
            ci: j.ci,
            method: j.method,
            verdict: j.verdict,
            detail: j.detail,
            ..self.blank(metric, Some(p), gated)
        }
    }

    /// E2E at equal length at every percentile, in E2E's place when the answers' lengths differ
    /// (`length`): each side's requests re-timed to the baseline's mean answer (TTFT + TPOT ×
    /// (L − 1)) and judged by the latency rules with E2E's gate. Skipped when the sides counted
    /// tokens differently or a side kept no per-request samples.
    fn equal_length_checks(&self, out: &mut Vec<Check>, lengths: &Lengths) {
        let metric = Metric::E2eAtEqualLength;
        let values = |i: &Indexed<'_>, s: &StepSummary| -> Values {
            let in_order = length::at_length(i.rows(s)?, lengths.base);
            let mut sorted = in_order.clone();
            sorted.sort_by(f64::total_cmp);
            (!sorted.is_empty()).then_some((sorted, in_order))
        };
        let (bv, nv) = (values(self.bi, self.bs), values(self.ni, self.ns));
        for p in Percentile::ALL {
            let mut c = self.blank(metric, Some(p), p != Percentile::P50);
            let name = c.name();
            if let Some(why) = &self.tokens_differ {
                rules::skip(&mut c, format!("{name} {why}"));
                out.push(c);
                continue;
            }
            if bv.is_none() || nv.is_none() {
                rules::skip(&mut c, format!(
                    "{name} needs each request's TTFT and TPOT on both sides (per-request samples of streamed answers); TPOT and the decode rate judge the speed per token"
                ));
                out.push(c);
                continue;
            }
            let rule = self.rule(metric, p, false);
            let mut c = self.judged(&rule, (&bv, &nv), (&None, &None));
            if matches!(c.verdict, Verdict::Skipped { .. }) {
                out.push(c);
                continue;
            }
            c.detail = format!(
                "{}; each request re-timed to the baseline's {:.0} tokens per answer (TTFT + TPOT × (tokens − 1)), as E2E follows the length",
                c.detail, lengths.base
            );
            out.push(c);
        }
    }

    /// TPM, RPS or the decode rate: skipped with too few successes on a side (a rate from a
    /// handful of requests is mostly the step's start-up and tail) or, for the token rates,
    /// tokens counted differently; otherwise judged over the steady windows
    /// (`rules::throughput`). TPM and RPS are information only when the answers' lengths
    /// differ: then they measure the answers, and the decode rate alone judges the server.
    fn throughput_check(&self, metric: Metric) -> Check {
        let mut c = self.judge_throughput(metric);
        if let (Metric::Tpm | Metric::Rps, Some(lengths)) = (metric, &self.lengths) {
            c.gated = false;
            if !matches!(c.verdict, Verdict::Skipped { .. }) {
                c.detail = format!("{}: {}", lengths.rates_reason(), c.detail);
                c.verdict = Verdict::Info;
            }
        }
        c
    }

    fn judge_throughput(&self, metric: Metric) -> Check {
        let (bs, ns) = (self.bs, self.ns);
        let mut c = self.blank(metric, None, true);
        let fewest = bs.succeeded.min(ns.succeeded);
        let sides = [(bs.attempted, bs.succeeded), (ns.attempted, ns.succeeded)];
        if fewest < MIN_THROUGHPUT_SAMPLES {
            rules::skip(
                &mut c,
                format!(
                    "{} needs ≥ {MIN_THROUGHPUT_SAMPLES} successful requests per side (have {} / {}): use requests_per_step ≥ {}{}",
                    metric.label(),
                    bs.succeeded,
                    ns.succeeded,
                    latency::requests_for(MIN_THROUGHPUT_SAMPLES, &sides),
                    latency::success_words(MIN_THROUGHPUT_SAMPLES, &sides)
                ),
            );
            return c;
        }
        if let (Metric::Tpm | Metric::DecodeRate, Some(why)) = (metric, &self.tokens_differ) {
            rules::skip(&mut c, format!("{} {why}", metric.label()));
            return c;
        }
        let generates = |s: &StepSummary| Profile::of_step(s).generates();
        if matches!(metric, Metric::Tpm | Metric::DecodeRate) && !generates(bs) && !generates(ns) {
            let why = "does not apply: no output token was generated (embeddings); RPS judges \
                       the throughput";
            rules::skip(&mut c, format!("{} {why}", metric.label()));
            return c;
        }
        let rate = |i: &Indexed<'_>, s| rules::Rate {
            summary: s,
            window: i.window(s),
        };
        throughput(
            &mut c,
            (&rate(self.bi, bs), &rate(self.ni, ns)),
            self.opts.gates.throughput,
            self.drift.get(&(metric, None)).copied(),
        );
        c
    }
}

/// Past the knee the mean is P50's second witness, there to catch a shift P50 cannot see (more
/// requests queued while P50 stays in the unqueued mode). Its regression or improvement counts;
/// but a step past the knee mixes queued and unqueued requests in a share the closed loop fixes,
/// which a bootstrap reads as chance, so the mean's CI stays wide at sizes where P50 decides
/// (the demo's unchanged rerun at 20 streams: P50 within ±2%, the mean ±27–37%). When P50 decided the step, an
/// undecided mean is shown, not gated, instead of making the verdict inconclusive. `out` ends
/// with this latency's checks (P50, P90, P99, then the mean).
fn mean_as_second_witness(out: &mut [Check]) {
    let [.., median, _, _, mean] = out else {
        return;
    };
    let decided = matches!(
        median.verdict,
        Verdict::NoChange | Verdict::BelowGate | Verdict::Regressed | Verdict::Improved
    );
    if mean.percentile != Some(Percentile::Mean)
        || median.percentile != Some(Percentile::P50)
        || median.metric != mean.metric
        || !decided
        || !matches!(mean.verdict, Verdict::Inconclusive { .. })
    {
        return;
    }
    let p50 = median.verdict.label();
    mean.verdict = Verdict::Info;
    mean.gated = false;
    mean.detail = format!(
        "{} (shown, not gated: P50 decided this step ({p50}); the mean of a step past the knee \
         mixes queued and unqueued requests, so its CI stays wide at this size)",
        mean.detail
    );
}

/// What one side offers the latency rule for `metric` at `p`: its values (if kept), their
/// effective number of independent requests, its ITL gaps, and its summary's figures.
fn evidence(
    s: &StepSummary,
    metric: Metric,
    p: Percentile,
    v: &Values,
    g: &Option<Vec<ItlHistogram>>,
) -> Evidence {
    Evidence {
        sorted: v.as_ref().map(|(v, _)| v.clone()),
        // The indicator's correlation is what drives a quantile's variance, but with a
        // dozen exceedances it is a noisy estimate: take the more cautious of it and
        // the ranks' correlation. ITL: the per-request scores of the pooled quantile.
        effective: match (v, g) {
            (_, Some(g)) => Some(inference::effective_size_of_gaps(g, p.q())),
            (Some((_, in_order)), None) if p == Percentile::Mean => {
                Some(inference::effective_size_of_values(in_order))
            }
            (Some((_, in_order)), None) => {
                let of = |x: &[f64]| {
                    inference::effective_size_at(x, p.q()).min(inference::effective_size(x))
                };
                // P50 past the knee: the shared start's level shift is not read as correlation
                // (`inference::effective_size_past_start`). Elsewhere the whole step's estimate,
                // floored at a tenth of it, stays: the calibration measured more false alarms
                // when the tail percentiles and the mean dropped the start too.
                Some(if p == Percentile::P50 {
                    inference::effective_size_past_start(in_order, shared_start(s), of)
                } else {
                    of(in_order)
                })
            }
            (None, None) => None,
        },
        gaps: g.clone(),
        summary_q: summary_q(s, metric, p),
        summary_n: s.succeeded,
        summary_attempted: s.attempted,
    }
}

/// How many requests at the start of step `s` every run of it shares (its streams for a
/// closed-loop step, none for an open-loop one): see `inference::effective_size_past_start`.
pub(super) fn shared_start(s: &StepSummary) -> usize {
    if s.offered_rps.is_some() {
        0
    } else {
        s.concurrency as usize
    }
}

/// A per-check seed, so a verdict does not depend on which other checks ran before it.
pub(super) fn check_seed(seed: u64, model: &str, conc: u32, metric: Metric, p: Percentile) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325 ^ seed;
    for b in model
        .bytes()
        .chain(conc.to_le_bytes())
        .chain([metric as u8, p as u8])
    {
        h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// Token-count sources of a step: "usage" (server-reported for ≥ 99% of successes), "chunks"
/// (≤ 1%), or "mixed"; `None` when not recorded (older summaries).
fn token_source(s: &StepSummary) -> Option<&'static str> {
    s.tokens_usage_share.map(|u| {
        if u >= 0.99 {
            "server usage"
        } else if u <= 0.01 {
            "chunk counts"
        } else {
            "a mix of usage and chunk counts"
        }
    })
}

/// Why token-based checks (TPOT, TPM) cannot compare the two steps, if they cannot.
fn tokens_differ(bs: &StepSummary, ns: &StepSummary) -> Option<String> {
    let (b, n) = (token_source(bs)?, token_source(ns)?);
    (b != n).then(|| {
        format!(
            "skipped: the baseline counted tokens from {b}, the new run from {n}; token counts are not comparable"
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::Method;
    use crate::model::LadderUnit;

    fn check(p: Percentile, verdict: Verdict) -> Check {
        Check {
            model: "m".into(),
            step: Some(4),
            concurrency: Some(50),
            ladder_unit: LadderUnit::Streams,
            metric: Metric::Ttft,
            percentile: Some(p),
            gated: p != Percentile::P90,
            base: Some(1.0),
            new: Some(1.0),
            ratio: Some(0.0),
            ci: Some((-0.2, 0.3)),
            method: Method::Bootstrap,
            verdict,
            detail: "TTFT".into(),
        }
    }

    fn latency(p50: Verdict, mean: Verdict) -> Vec<Check> {
        let open = Verdict::Inconclusive {
            requests_per_step: Some(900),
        };
        vec![
            check(Percentile::P50, p50),
            check(Percentile::P90, open.clone()),
            check(Percentile::P99, Verdict::Info),
            check(Percentile::Mean, mean),
        ]
    }

    #[test]
    fn an_undecided_mean_is_shown_when_p50_decided_the_step() {
        let open = Verdict::Inconclusive {
            requests_per_step: Some(1240),
        };
        let mut out = latency(Verdict::NoChange, open.clone());
        mean_as_second_witness(&mut out);
        let mean = &out[3];
        assert_eq!(mean.verdict, Verdict::Info);
        assert!(!mean.gated);
        assert!(
            mean.detail.contains("P50 decided this step"),
            "{}",
            mean.detail
        );
        // P90 (not the mean) is never touched.
        assert!(matches!(out[1].verdict, Verdict::Inconclusive { .. }));
        // A decided mean counts whatever P50 says.
        for p50 in [Verdict::NoChange, open.clone()] {
            let mut out = latency(p50, Verdict::Regressed);
            mean_as_second_witness(&mut out);
            assert_eq!(out[3].verdict, Verdict::Regressed);
            assert!(out[3].gated);
        }
        // Both undecided: the step is inconclusive, as before.
        let mut out = latency(open.clone(), open.clone());
        mean_as_second_witness(&mut out);
        assert!(matches!(out[3].verdict, Verdict::Inconclusive { .. }));
        assert!(out[3].gated);
        // Not a mean (a step below the knee has none): nothing changes.
        let mut out = latency(Verdict::NoChange, open.clone());
        out[3].percentile = Some(Percentile::P99);
        mean_as_second_witness(&mut out);
        assert!(matches!(out[3].verdict, Verdict::Inconclusive { .. }));
    }
}
