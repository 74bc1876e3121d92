//! The estimated cap, compared: what the seed's engineer needed to see when TTFT went from
//! 0.6 s to 2.3 s. Each run's knee line estimates the concurrency limit its queueing knee
//! implies (Little's law on the requests in service, `findings::knee`); this puts the two
//! estimates side by side and judges the change with a 99% bootstrap CI from the per-request
//! samples of the steps behind them, so a lower cap reads as a lower cap, not as a throughput
//! dip or a P90 that was already a queued request.
//!
//! The estimate at a knee step of N streams: cap = N × S / E2E, with E2E the step's mean
//! end-to-end time and S = E2E − (TTFT − the reference step's TTFT) the mean time in service
//! (what a request spent beyond the unqueued TTFT was its wait). A resample draws the knee
//! step's (TTFT, E2E) pairs and the reference step's TTFTs with replacement, each as many as
//! the effective number of independent requests (requests in a queue are correlated).
//! Closed-loop ladders only: an open loop's cap needs the arrival rate, which a resample of
//! requests does not carry; there, and without samples, the check shows the knee lines'
//! estimates and is not gated.

use super::rules::by_ci_fall;
use super::{fmt_pct, CapBasis, Check, Indexed, Method, Metric, Verdict};
use crate::compare::latency::CI_LEVEL;
use crate::model::LadderUnit;
use crate::stats::inference::{effective_size_of_values, generator, ratio_ci, unit};

/// Fewest successful requests at a knee step (and its reference step) for a cap CI.
pub const MIN_CAP_SAMPLES: usize = 20;

/// One side's evidence for its cap: the knee step's requests and the reference step's TTFTs.
struct Evidence {
    streams: f64,
    /// (TTFT, E2E) of the knee step's successful requests, in start order.
    pairs: Vec<(f64, f64)>,
    /// TTFT of the reference step's successful requests.
    reference: Vec<f64>,
    /// Draws per resample (effective independent requests) of each.
    m: usize,
    m_ref: usize,
}

fn cap_of(streams: f64, ttft: f64, e2e: f64, reference: f64) -> f64 {
    streams * (e2e - (ttft - reference)) / e2e
}

impl Evidence {
    fn of(ix: &Indexed<'_>, model: &str, basis: &CapBasis) -> Option<Evidence> {
        let at = ix.steps.get(&(model.to_string(), basis.at))?;
        let reference = ix.steps.get(&(model.to_string(), basis.reference))?;
        let pairs: Vec<(f64, f64)> = ix
            .rows(at)?
            .iter()
            .filter(|r| r.ok)
            .filter_map(|r| Some((r.ttft_ms?, r.e2e_ms?)))
            .filter(|(t, e)| t.is_finite() && e.is_finite() && *e > 0.0)
            .collect();
        let reference: Vec<f64> = ix
            .rows(reference)?
            .iter()
            .filter(|r| r.ok)
            .filter_map(|r| r.ttft_ms)
            .filter(|t| t.is_finite())
            .collect();
        if pairs.len() < MIN_CAP_SAMPLES || reference.len() < MIN_CAP_SAMPLES {
            return None;
        }
        let e2e: Vec<f64> = pairs.iter().map(|p| p.1).collect();
        let draws = |v: &[f64]| (effective_size_of_values(v).round() as usize).clamp(2, v.len());
        Some(Evidence {
            streams: f64::from(basis.at),
            m: draws(&e2e),
            m_ref: draws(&reference),
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

    fn draw<R: rand::RngCore>(&self, rng: &mut R) -> f64 {
        let pick = |len: usize, rng: &mut R| ((unit(rng) * len as f64) as usize).min(len - 1);
        let (mut t, mut e) = (0.0, 0.0);
        for _ in 0..self.m {
            let p = self.pairs[pick(self.pairs.len(), rng)];
            (t, e) = (t + p.0, e + p.1);
        }
        let r: f64 = (0..self.m_ref)
            .map(|_| self.reference[pick(self.reference.len(), rng)])
            .sum();
        let m = self.m as f64;
        cap_of(self.streams, t / m, e / m, r / self.m_ref as f64)
    }
}

/// How the cap check is run: the gate (a relative fall), the bootstrap's resamples and seed.
pub(super) struct CapRule {
    pub gate: f64,
    pub resamples: usize,
    pub seed: u64,
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
    let mut rng = generator(rule.seed);
    let Some((lo, hi)) = ratio_ci(rule.resamples, CI_LEVEL, &mut rng, |rng| {
        (be.draw(rng), ne.draw(rng))
    }) else {
        c.gated = false;
        c.detail = format!("cap ≈ {bp:.0} → {np:.0}: no CI could be drawn");
        return Some(c);
    };
    c.method = Method::Bootstrap;
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

    /// A step of `n` requests: TTFT = 30 ms + the wait, E2E = 150 ms of service + the wait,
    /// waits drawn around `wait` ms (0 below the knee).
    fn step(step: u32, n: usize, wait: f64, seed: u64) -> Vec<RequestSample> {
        let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
        (0..n)
            .map(|i| {
                let w = if wait > 0.0 {
                    wait * rng.gen_range(0.5..1.5)
                } else {
                    0.0
                };
                let jitter = rng.gen_range(-3.0..3.0);
                RequestSample {
                    model: "m".into(),
                    step,
                    worker: (i % 30) as u32,
                    started_at_ms: i as f64,
                    ok: true,
                    ttft_ms: Some(30.0 + w + jitter),
                    e2e_ms: Some(150.0 + w + jitter),
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
        let mut samples = step(1, 270, 0.0, seed);
        samples.extend(step(2, 270, wait, seed + 1));
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
        assert!(e.m >= 2 && e.m <= 270 && e.m_ref >= 2);
    }

    #[test]
    fn a_lower_cap_regresses_and_leads_the_headline() {
        let c = judged(&side(45.0, 1), &side(35.0, 9));
        let k = cap(&c);
        assert_eq!(k.verdict, Verdict::Regressed, "{}", k.detail);
        assert_eq!(k.method, Method::Bootstrap);
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
