//! The estimated cap, compared: what the seed's engineer needed to see when TTFT went from
//! 0.6 s to 2.3 s. Each run's knee line estimates the concurrency limit its queueing knee
//! implies (Little's law on the requests in service, `findings::knee`); this puts the two
//! estimates side by side and judges the change with a 99% CI from the steps behind them, so a
//! lower cap reads as a lower cap, not as a throughput dip or a P90 that was already a queued
//! request.
//!
//! The estimate at a knee step of N streams: cap = N × S / E2E, with E2E the step's mean
//! end-to-end time and S = E2E − (TTFT − the reference step's TTFT) the mean time in service
//! (what a request spent beyond the unqueued TTFT was its wait).
//!
//! **Its CI is Little's law's.** In a closed loop N / E2E is the step's throughput, so
//! cap = throughput × S: the requests the server holds at once. A step past the knee mixes
//! queued and unqueued requests in a share the closed loop fixes (at 20 streams behind 16 slots,
//! 4 of every 20 wait), which a bootstrap of requests reads as chance: an unchanged rerun of the
//! demo drew a 99% CI of ±11% around 0 that way. So the spread of N / E2E is taken from the
//! steady window's throughput (batch means over time blocks of about one service cycle, the
//! throughput check's own evidence), and the spread of S from the requests (the variance of a
//! mean at the effective number of independent requests past the step's start). The two add
//! on the log scale; the ratio of the sides gets a Welch t interval (`inference::rate_factor_ci`).
//! Closed-loop ladders only: an open loop's cap needs the arrival rate, which the ladder does
//! not fix; there, without samples or without a steady window to cut into blocks, the check
//! shows the knee lines' estimates and is not gated.

use super::rules::{by_ci_fall, Rate};
use super::step::shared_start;
use super::{fmt_pct, CapBasis, Check, Indexed, Method, Metric, Verdict};
use crate::compare::latency::CI_LEVEL;
use crate::model::LadderUnit;
use crate::stats::inference::{
    effective_size_of_values, effective_size_past_start, rate_factor_ci, summed_spread, RateSpread,
};

/// Fewest successful requests at a knee step (and its reference step) for a cap CI.
pub const MIN_CAP_SAMPLES: usize = 20;

/// One side's evidence for its cap: the knee step's requests and throughput, and the reference
/// step's TTFTs.
struct Evidence {
    streams: f64,
    /// (TTFT, E2E) of the knee step's successful requests, in start order.
    pairs: Vec<(f64, f64)>,
    /// TTFT of the reference step's successful requests.
    reference: Vec<f64>,
    /// The spread of the knee step's steady throughput (N / E2E by Little's law); `None` when
    /// its steady window could not be cut into blocks.
    throughput: Option<RateSpread>,
    /// Effective independent requests past the start: of the knee step's E2E − TTFT, and of
    /// the reference step's TTFTs.
    m: f64,
    m_ref: f64,
}

impl Evidence {
    fn of(ix: &Indexed<'_>, model: &str, basis: &CapBasis) -> Option<Evidence> {
        let at = ix.steps.get(&(model.to_string(), basis.at))?;
        let reference_step = ix.steps.get(&(model.to_string(), basis.reference))?;
        let pairs: Vec<(f64, f64)> = ix
            .rows(at)?
            .iter()
            .filter(|r| r.ok)
            .filter_map(|r| Some((r.ttft_ms?, r.e2e_ms?)))
            .filter(|(t, e)| t.is_finite() && e.is_finite() && *e > 0.0)
            .collect();
        let reference: Vec<f64> = ix
            .rows(reference_step)?
            .iter()
            .filter(|r| r.ok)
            .filter_map(|r| r.ttft_ms)
            .filter(|t| t.is_finite())
            .collect();
        if pairs.len() < MIN_CAP_SAMPLES || reference.len() < MIN_CAP_SAMPLES {
            return None;
        }
        let service: Vec<f64> = pairs.iter().map(|(t, e)| e - t).collect();
        let m = effective_size_past_start(&service, shared_start(at), effective_size_of_values);
        let m_ref = effective_size_past_start(
            &reference,
            shared_start(reference_step),
            effective_size_of_values,
        );
        let rate = Rate {
            summary: at,
            window: ix.window(at),
        };
        Some(Evidence {
            streams: f64::from(basis.at),
            throughput: rate.spread(Metric::Rps),
            m: m.max(2.0),
            m_ref: m_ref.max(2.0),
            pairs,
            reference,
        })
    }

    fn point(&self) -> f64 {
        let n = self.pairs.len() as f64;
        let (t, e) = self
            .pairs
            .iter()
            .fold((0.0, 0.0), |(t, e), p| (t + p.0, e + p.1));
        let r = self.reference.iter().sum::<f64>() / self.reference.len() as f64;
        cap_of(self.streams, t / n, e / n, r)
    }

    /// The spread of the cap's log: the throughput's, plus the mean service time's
    /// (S = mean(E2E − TTFT) + mean(reference TTFT), each a mean at its effective size).
    fn spread(&self) -> Option<RateSpread> {
        let service: Vec<f64> = self.pairs.iter().map(|(t, e)| e - t).collect();
        let (d, d_var) = mean_var(&service);
        let (r, r_var) = mean_var(&self.reference);
        let s = d + r;
        if s.is_nan() || s <= 0.0 {
            return None;
        }
        let of = |var: f64, m: f64| RateSpread {
            rel_var: var / m / (s * s),
            df: m - 1.0,
        };
        let service = summed_spread(of(d_var, self.m), of(r_var, self.m_ref));
        Some(summed_spread(self.throughput?, service))
    }
}

/// N × S / E2E from the means: the requests in service at N streams.
fn cap_of(streams: f64, ttft: f64, e2e: f64, reference: f64) -> f64 {
    streams * (e2e - (ttft - reference)) / e2e
}

/// The mean and the sample variance of `v` (at least 2 values).
fn mean_var(v: &[f64]) -> (f64, f64) {
    let n = v.len() as f64;
    let mean = v.iter().sum::<f64>() / n;
    let var = v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0).max(1.0);
    (mean, var)
}

/// How the cap check is run: the gate (a relative fall).
pub(super) struct CapRule {
    pub gate: f64,
}

/// The cap check of `model` when both sides estimated one; `None` otherwise (a knee that
/// appeared, moved or went away is the knee check's to judge).
pub(super) fn cap_check(
    model: &str,
    unit_: LadderUnit,
    rule: &CapRule,
    (bb, b): (Option<&CapBasis>, &Indexed<'_>),
    (nb, n): (Option<&CapBasis>, &Indexed<'_>),
) -> Option<Check> {
    let (bb, nb) = (bb?, nb?);
    let mut c = Check {
        model: model.to_string(),
        step: None,
        concurrency: None,
        ladder_unit: unit_,
        metric: Metric::Cap,
        percentile: None,
        gated: true,
        base: Some(bb.estimate),
        new: Some(nb.estimate),
        ratio: Some(nb.estimate / bb.estimate - 1.0),
        ci: None,
        method: Method::Point,
        verdict: Verdict::Info,
        detail: String::new(),
    };
    let at = |x: &CapBasis| unit_.at(x.at);
    let ev = (
        Evidence::of(b, model, bb).filter(|_| unit_.closed_loop()),
        Evidence::of(n, model, nb).filter(|_| unit_.closed_loop()),
    );
    let (Some(be), Some(ne)) = ev else {
        c.gated = false;
        let why = if unit_.closed_loop() {
            format!("a side has fewer than {MIN_CAP_SAMPLES} per-request samples at its knee or reference step")
        } else {
            "an open loop's cap needs the arrival rate, which a resample of requests does not carry"
                .to_string()
        };
        c.detail = format!(
            "cap ≈ {:.0} → {:.0} (the knee lines' estimates, {} / {}): shown, not gated: {why}",
            bb.estimate,
            nb.estimate,
            at(bb),
            at(nb)
        );
        return Some(c);
    };
    let (bp, np) = (be.point(), ne.point());
    (c.base, c.new) = (Some(bp), Some(np));
    if !(bp > 0.0 && np.is_finite()) {
        c.gated = false;
        c.detail = format!("cap ≈ {bp:.0} → {np:.0}: a relative change is undefined");
        return Some(c);
    }
    let r = np / bp - 1.0;
    c.ratio = Some(r);
    let (Some(bs), Some(ns)) = (be.spread(), ne.spread()) else {
        c.gated = false;
        c.detail = format!(
            "cap ≈ {bp:.0} → {np:.0}: shown, not gated: a knee step's steady window is too short \
             to cut into time blocks for a CI"
        );
        return Some(c);
    };
    let (f_lo, f_hi) = rate_factor_ci(bs, ns, CI_LEVEL);
    let (lo, hi) = (
        (1.0 + r) * (1.0 + f_lo) - 1.0,
        (1.0 + r) * (1.0 + f_hi) - 1.0,
    );
    c.method = Method::BatchMeans;
    c.ci = Some((lo, hi));
    let change = format!("cap ≈ {bp:.0} → {np:.0} ({})", fmt_pct(r));
    let ci_txt = format!("99% CI [{}, {}]", fmt_pct(lo), fmt_pct(hi));
    let thresholds = format!("gate -{:.0}%", rule.gate * 100.0);
    let context = format!(
        "estimated at the knee steps, {} / {}, from {} / {} requests",
        unit_.at(bb.at),
        unit_.at(nb.at),
        be.pairs.len(),
        ne.pairs.len()
    );
    let n_req = be.pairs.len().max(ne.pairs.len()) as u64;
    (c.verdict, c.detail) = by_ci_fall(
        (r, (lo, hi), rule.gate),
        n_req,
        (&change, &ci_txt, &thresholds),
        &context,
    );
    Some(c)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::{compare, CompareOptions, RequestSample, Side};
    use crate::findings::{KneeKind, RunCause};
    use crate::stats::StepSummary;
    use rand::{Rng, SeedableRng};

    /// A closed-loop step of `n` requests on `streams` workers, each sending its next request
    /// when the last one ends: TTFT = 30 ms + the wait, E2E = 150 ms of service + the wait,
    /// waits drawn around `wait` ms (0 below the knee).
    fn step(step: u32, streams: u32, n: usize, wait: f64, seed: u64) -> Vec<RequestSample> {
        let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
        let mut clock = vec![0.0; streams as usize];
        (0..n)
            .map(|i| {
                let w = if wait > 0.0 {
                    wait * rng.gen_range(0.5..1.5)
                } else {
                    0.0
                };
                let jitter = rng.gen_range(-3.0..3.0);
                let worker = i % streams as usize;
                let e2e = 150.0 + w + jitter;
                let started_at_ms = clock[worker] + i as f64 * 0.01;
                clock[worker] += e2e;
                RequestSample {
                    model: "m".into(),
                    step,
                    worker: worker as u32,
                    started_at_ms,
                    ok: true,
                    ttft_ms: Some(30.0 + w + jitter),
                    e2e_ms: Some(e2e),
                    output_tokens: Some(20),
                    ..RequestSample::default()
                }
            })
            .collect()
    }

    /// A 30/60 ladder whose knee at 60 streams hides a cap of `cap`: 60 × 150 / E2E = cap.
    fn side(cap: f64, seed: u64) -> Side {
        let wait = 60.0 * 150.0 / cap - 150.0;
        let rows = |step_: u32, conc: u32| StepSummary {
            model: "m".into(),
            step: step_,
            concurrency: conc,
            fingerprint: "fp".into(),
            succeeded: 270,
            attempted: 270,
            ..StepSummary::default()
        };
        let mut samples = step(1, 30, 270, 0.0, seed);
        samples.extend(step(2, 60, 270, wait, seed + 1));
        let mut s = Side {
            label: format!("cap {cap}"),
            fingerprint: "fp".into(),
            summaries: vec![rows(1, 30), rows(2, 60)],
            samples: Some(samples),
            ..Side::default()
        };
        s.caps.insert(
            "m".into(),
            CapBasis {
                at: 60,
                reference: 30,
                max_clean: 30,
                estimate: cap,
            },
        );
        let cause = RunCause {
            kind: KneeKind::Queueing,
            seen: true,
            words: "queueing, confirmed by the server".into(),
        };
        s.knee_cause.insert("m".into(), (60, cause));
        s.knee.insert("m".into(), Some(60));
        s
    }

    fn judged(base: &Side, new: &Side) -> crate::compare::Comparison {
        let opts = CompareOptions {
            resamples: 2_000,
            ..CompareOptions::default()
        };
        compare(base, new, &opts)
    }

    fn cap(c: &crate::compare::Comparison) -> &Check {
        c.checks
            .iter()
            .find(|k| k.metric == Metric::Cap)
            .expect("a cap check")
    }

    #[test]
    fn the_estimate_recovers_the_cap_from_the_waits() {
        let s = side(45.0, 1);
        let mut notes = Vec::new();
        let ix = Indexed::new(&s, "x", &mut notes);
        let e = Evidence::of(&ix, "m", &s.caps["m"]).unwrap();
        assert!((e.point() - 45.0).abs() < 2.0, "{}", e.point());
        assert!(e.m >= 2.0 && e.m <= 270.0 && e.m_ref >= 2.0);
        assert!(
            e.throughput.is_some(),
            "a closed loop's steady window has blocks"
        );
    }

    #[test]
    fn a_lower_cap_regresses_and_leads_the_headline() {
        let c = judged(&side(45.0, 1), &side(35.0, 9));
        let k = cap(&c);
        assert_eq!(k.verdict, Verdict::Regressed, "{}", k.detail);
        assert_eq!(k.method, Method::BatchMeans);
        let (lo, hi) = k.ci.unwrap();
        assert!(lo < -0.2 && hi < 0.0, "{lo} {hi}");
        assert!(k.detail.contains("cap ≈ 45 → 35 (-2"), "{}", k.detail);
        let h = &c.headline[0];
        assert!(h.starts_with("capacity: cap ≈ 45 → 35 streams (-2"), "{h}");
        assert!(
            h.contains("queueing at a lower concurrency limit, confirmed by the server"),
            "{h}"
        );
        // A higher cap is the mirror image.
        let up = judged(&side(35.0, 9), &side(45.0, 1));
        assert_eq!(cap(&up).verdict, Verdict::Improved);
        assert!(up.headline[0].contains("a higher concurrency limit"));
    }

    #[test]
    fn the_same_cap_measured_twice_does_not_regress() {
        for seed in 0..20 {
            let c = judged(&side(45.0, 100 + seed), &side(45.0, 200 + seed));
            let k = cap(&c);
            assert!(
                matches!(k.verdict, Verdict::NoChange | Verdict::BelowGate),
                "seed {seed}: {}",
                k.detail
            );
        }
        // A fall within the gate is no regression, however certain.
        let c = judged(&side(45.0, 1), &side(42.0, 2));
        assert_ne!(cap(&c).verdict, Verdict::Regressed, "{}", cap(&c).detail);
    }

    #[test]
    fn without_samples_or_on_an_open_loop_the_estimates_are_shown_not_gated() {
        let (b, mut n) = (side(45.0, 1), side(35.0, 2));
        n.samples = None;
        let k = cap(&judged(&b, &n)).clone();
        assert!(!k.gated && k.verdict == Verdict::Info, "{}", k.detail);
        assert!(k.detail.contains("cap ≈ 45 → 35"), "{}", k.detail);
        let rate = |mut s: Side| {
            for r in &mut s.summaries {
                r.ladder_unit = LadderUnit::Rps;
            }
            s
        };
        let k = cap(&judged(&rate(side(45.0, 1)), &rate(side(35.0, 2)))).clone();
        assert!(!k.gated, "{}", k.detail);
        assert!(k.detail.contains("open loop"), "{}", k.detail);
    }

    #[test]
    fn a_cap_on_one_side_only_is_the_knees_to_judge_and_the_headline_says_it() {
        let mut b = side(45.0, 1);
        b.caps.clear();
        let c = judged(&b, &side(35.0, 2));
        assert!(c.checks.iter().all(|k| k.metric != Metric::Cap));
        assert!(
            c.headline[0]
                .contains("a queueing cap ≈ 35 streams now (none estimated in the baseline)"),
            "{:?}",
            c.headline
        );
    }

    #[test]
    fn past_both_knees_ttft_is_judged_at_p50_and_the_mean_not_at_the_tail() {
        let c = judged(&side(45.0, 1), &side(35.0, 9));
        let at = |p: crate::compare::Percentile| {
            c.checks
                .iter()
                .find(|k| {
                    k.metric == Metric::Ttft && k.concurrency == Some(60) && k.percentile == Some(p)
                })
                .unwrap()
        };
        use crate::compare::Percentile::*;
        assert!(at(P50).gated && at(Mean).gated);
        assert_eq!(at(P50).verdict, Verdict::Regressed, "{}", at(P50).detail);
        assert_eq!(at(Mean).verdict, Verdict::Regressed, "{}", at(Mean).detail);
        assert!(at(P50).detail.contains("judged at P50 and the mean"));
        assert!(!at(P90).gated && at(P90).verdict == Verdict::Info);
        // Below the knees nothing changes: P90 gated, P50 shown, no mean.
        let below = |p: crate::compare::Percentile| {
            c.checks.iter().find(|k| {
                k.metric == Metric::Ttft && k.concurrency == Some(30) && k.percentile == Some(p)
            })
        };
        assert!(below(P90).unwrap().gated && !below(P50).unwrap().gated);
        assert!(below(Mean).is_none());
    }
}
