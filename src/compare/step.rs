//! The checks of one matched step (a model at the same concurrency on both sides): each latency
//! at each percentile, the error and short-response rates, and throughput. `compare` walks the
//! models and steps; this file judges one step, so that each reads on its own.

use super::cache::cache_check;
use super::cost::cost_check;
use super::latency::{self, Evidence, Rule};
use super::rules::{self, error_rate, short_rate, throughput};
use super::{
    gate_for, summary_q, Check, CompareOptions, Drift, Indexed, Method, Metric, Percentile,
    Verdict, MIN_THROUGHPUT_SAMPLES,
};
use crate::model::ItlHistogram;
use crate::stats::{inference, StepSummary};

/// A latency's per-request values on one side of a step: sorted, and in start order.
type Values = Option<(Vec<f64>, Vec<f64>)>;

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
    /// Why TPM and RPS are shown but not gated: the answers' lengths differ (`lengths_differ`).
    lengths_differ: Option<String>,
    /// At or past the queueing knee on both sides: TTFT and TTFC are judged at P50.
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
        lengths_differ: lengths_differ(bs, ns, opts.gates.throughput),
    };
    // TTFC only when either side reasoned: otherwise it is TTFT again, and older baselines
    // and runs of models that do not reason add nothing to the verdict table.
    let reasoned = bs.any_reasoning() || ns.any_reasoning();
    for metric in Metric::LATENCIES {
        if metric != Metric::Ttfc || reasoned {
            step.latency_checks(out, metric);
        }
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
        Check {
            model: self.ns.model.clone(),
            step: Some(self.ns.step),
            concurrency: Some(self.ns.concurrency),
            ladder_unit: self.ns.ladder_unit,
            metric,
            percentile,
            gated,
            base: None,
            new: None,
            ratio: None,
            ci: None,
            method: Method::Point,
            verdict: Verdict::NoChange,
            detail: String::new(),
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
        let queued = self.queued && matches!(metric, Metric::Ttft | Metric::Ttfc);
        let mean = queued.then_some(Percentile::Mean);
        for p in Percentile::ALL.into_iter().chain(mean) {
            if let (Metric::Tpot, Some(why)) = (metric, &self.tokens_differ) {
                let mut c = self.blank(metric, Some(p), p != Percentile::P50);
                let reason = format!("{} {why}", c.name());
                rules::skip(&mut c, reason);
                out.push(c);
                continue;
            }
            let rule = Rule {
                metric,
                pct: p,
                gate: gate_for(&self.opts.gates, metric),
                resamples: self.opts.resamples,
                seed: check_seed(self.opts.seed, &ns.model, ns.concurrency, metric, p),
                drift: self.drift.get(&(metric, Some(p))).copied(),
                queued,
            };
            let j = latency::judge(
                &rule,
                &evidence(bs, metric, p, &bv, &bg),
                &evidence(ns, metric, p, &nv, &ng),
            );
            // ITL without per-request gaps on both sides has no CI: information only.
            let gated = rule.gates() && !(metric == Metric::Itl && j.verdict == Verdict::Info);
            out.push(Check {
                base: j.base,
                new: j.new,
                ratio: j.ratio,
                ci: j.ci,
                method: j.method,
                verdict: j.verdict,
                detail: j.detail,
                ..self.blank(metric, Some(p), gated)
            });
        }
    }

    /// TPM, RPS or the decode rate: skipped with too few successes on a side (a rate from a
    /// handful of requests is mostly the step's start-up and tail) or, for the token rates,
    /// tokens counted differently; otherwise judged over the steady windows
    /// (`rules::throughput`). TPM and RPS are information only when the answers' lengths
    /// differ: then they measure the answers, and the decode rate alone judges the server.
    fn throughput_check(&self, metric: Metric) -> Check {
        let mut c = self.judge_throughput(metric);
        if let (Metric::Tpm | Metric::Rps, Some(why)) = (metric, &self.lengths_differ) {
            c.gated = false;
            if !matches!(c.verdict, Verdict::Skipped { .. }) {
                c.detail = format!("{why}: {}", c.detail);
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
        let input_only = |s: &StepSummary| StepSummary::input_only(std::iter::once(s));
        if matches!(metric, Metric::Tpm | Metric::DecodeRate) && input_only(bs) && input_only(ns) {
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
            (Some((_, in_order)), None) => Some(
                inference::effective_size_at(in_order, p.q())
                    .min(inference::effective_size(in_order)),
            ),
            (None, None) => None,
        },
        gaps: g.clone(),
        summary_q: summary_q(s, metric, p),
        summary_n: s.succeeded,
        summary_attempted: s.attempted,
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

/// Why TPM and RPS cannot judge the server, if they cannot: the mean answer differs by more than
/// the throughput gate between the sides (a model that answers in half the tokens halves TPM
/// on an unchanged server, and raises RPS). The decode rate does not depend on it.
fn lengths_differ(bs: &StepSummary, ns: &StepSummary, gate: f64) -> Option<String> {
    let (b, n) = (bs.mean_output_tokens()?, ns.mean_output_tokens()?);
    let r = n / b - 1.0;
    (b > 0.0 && r.abs() > gate).then(|| {
        format!(
            "answers {:.0}% {} ({b:.0} → {n:.0} tokens per success): TPM and RPS follow the answers' length, so they are shown, not gated; the decode rate judges the server",
            r.abs() * 100.0,
            if r < 0.0 { "shorter" } else { "longer" }
        )
    })
}
