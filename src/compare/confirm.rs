//! Confirmation (`ladder run --confirm`): a run that regressed or is inconclusive re-measures
//! only the steps concerned, and each check that regressed or was undecided is decided again.
//! A regression stands only when the rerun, judged alone against the same reference, regresses
//! on that check too *and* the pooled evidence (both measurements' requests together) does;
//! otherwise the pooled evidence decides, and a regression that one of the two does not show
//! is inconclusive. Latencies pool; a throughput or an error rate is the rerun's own (a steady
//! window does not span two runs). The rule's false-alarm and detection rates are measured in pretend time
//! (`make calibrate`, docs/gate.md "Confirmation"). A rerun shares the day's drift: it cures
//! noise, not a provider that is slower today (interleaved A/B runs cure that).
//!
//! Pure: the caller runs the steps, judges the rerun and the pooled side ([`pooled`]) with
//! `compare`, and hands the three comparisons to [`settle`].

use super::{Check, Comparison, Metric, Percentile, RequestSample, Side, Verdict};
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// A model's step: the model (an A/B run's pair, `A→B`) and the step's ladder value.
pub type ModelStep = (String, u32);

/// The steps a first judgement leaves to confirm: per model, the ladder values where a gated
/// check regressed or could not decide, regressions' steps first (a budget that cannot rerun
/// them all reruns those).
pub fn steps_to_confirm(first: &Comparison) -> Vec<ModelStep> {
    let mut regressed = BTreeSet::new();
    let mut undecided = BTreeSet::new();
    for c in first.checks.iter().filter(|c| c.gated) {
        let Some(at) = c.concurrency else { continue };
        match c.verdict {
            Verdict::Regressed => regressed.insert((c.model.clone(), at)),
            Verdict::Inconclusive { .. } => undecided.insert((c.model.clone(), at)),
            _ => false,
        };
    }
    let rest = undecided
        .difference(&regressed)
        .cloned()
        .collect::<Vec<_>>();
    regressed.into_iter().chain(rest).collect()
}

/// Whether a first judgement is worth confirming: it regressed, or decided nothing.
pub fn worth_confirming(first: &Comparison) -> bool {
    use super::Outcome;
    matches!(first.outcome(), Outcome::Regression | Outcome::Inconclusive)
}

/// `first` with the rerun's requests added to the steps it re-measured (matched by model and
/// ladder value, renumbered to the first run's steps and placed after its last request in
/// time): the pooled evidence. A re-measured step's summary is the rerun's; knees and walls
/// stay the first run's; the latency checks, which read the requests, see both measurements.
/// (A throughput's steady window does not span two runs, so `settle` takes rates and shares
/// from the rerun alone.)
pub fn pooled(first: &Side, rerun: &Side) -> Side {
    let mut out = first.clone();
    let step_of: BTreeMap<(&str, u32), u32> = first
        .summaries
        .iter()
        .map(|s| ((s.model.as_str(), s.concurrency), s.step))
        .collect();
    let value_of: BTreeMap<(&str, u32), u32> = rerun
        .summaries
        .iter()
        .map(|s| ((s.model.as_str(), s.step), s.concurrency))
        .collect();
    // A re-measured step's summary is the rerun's: its self-check (was the client able to
    // load it this time), its rates and counts.
    for row in &rerun.summaries {
        if let Some(at) = out
            .summaries
            .iter_mut()
            .find(|r| r.model == row.model && r.concurrency == row.concurrency)
        {
            *at = crate::stats::StepSummary {
                step: at.step,
                ..row.clone()
            };
        }
    }
    let (Some(samples), Some(more)) = (out.samples.as_mut(), rerun.samples.as_ref()) else {
        return out;
    };
    let end = samples
        .iter()
        .map(|s| s.started_at_ms + s.e2e_ms.unwrap_or(0.0))
        .fold(0.0, f64::max);
    for s in more {
        let Some(value) = value_of.get(&(s.model.as_str(), s.step)) else {
            continue;
        };
        let Some(step) = step_of.get(&(s.model.as_str(), *value)) else {
            continue;
        };
        samples.push(RequestSample {
            step: *step,
            started_at_ms: end + s.started_at_ms,
            ..s.clone()
        });
    }
    out
}

/// What identifies a check across the three comparisons.
type Key = (String, Option<u32>, Metric, Option<Percentile>);

fn key(c: &Check) -> Key {
    (c.model.clone(), c.concurrency, c.metric, c.percentile)
}

/// The first judgement with every check at a re-measured step decided again by the rule
/// (module doc), each saying what the first run, the rerun and the pooled evidence showed;
/// `rerun_steps` are the (model, value) pairs that were re-measured. A note says how many
/// regressions were confirmed.
pub fn settle(
    first: &Comparison,
    rerun: &Comparison,
    pooled: &Comparison,
    rerun_steps: &[ModelStep],
) -> Comparison {
    let index = |c: &Comparison| -> HashMap<Key, Check> {
        c.checks.iter().map(|x| (key(x), x.clone())).collect()
    };
    let (again, both) = (index(rerun), index(pooled));
    let mut out = first.clone();
    let (mut confirmed, mut not_confirmed) = (0usize, 0usize);
    for c in out.checks.iter_mut() {
        let concerned = c.gated
            && matches!(c.verdict, Verdict::Regressed | Verdict::Inconclusive { .. })
            && c.concurrency
                .is_some_and(|v| rerun_steps.iter().any(|(m, at)| *m == c.model && *at == v));
        if !concerned {
            continue;
        }
        let k = key(c);
        // Only the latencies read the pooled requests; a rate or a share is the rerun's own.
        let pool = if c.metric.is_latency() { &both } else { &again };
        let (Some(r), Some(p)) = (again.get(&k), pool.get(&k)) else {
            continue;
        };
        let was_regressed = c.verdict == Verdict::Regressed;
        let verdict = decide(&r.verdict, &p.verdict);
        let said = format!(
            "first {}, rerun {}, pooled {}",
            words(c),
            words(r),
            words(p)
        );
        if was_regressed {
            if verdict == Verdict::Regressed {
                confirmed += 1;
            } else {
                not_confirmed += 1;
            }
        }
        let lead = match (&verdict, was_regressed) {
            (Verdict::Regressed, _) => "confirmed on rerun",
            (_, true) => "not confirmed on rerun",
            _ => "re-measured",
        };
        *c = Check {
            detail: format!("{lead} ({said}): {}", p.detail),
            verdict,
            ..p.clone()
        };
    }
    // Whether the client kept up at a re-measured step is the rerun's to say.
    out.invalid = pooled.invalid.clone();
    out.notes
        .push(summary_note(confirmed, not_confirmed, rerun_steps));
    out
}

/// The rule: a regression needs the rerun alone and the pooled evidence to show it; a
/// regression only one of them shows is undecided; otherwise the pooled evidence decides.
pub fn decide(rerun: &Verdict, pooled: &Verdict) -> Verdict {
    match (rerun, pooled) {
        (Verdict::Regressed, Verdict::Regressed) => Verdict::Regressed,
        (_, Verdict::Regressed) | (Verdict::Regressed, _) => Verdict::Inconclusive {
            requests_per_step: None,
        },
        (_, p) => p.clone(),
    }
}

/// "regressed +12.0%" / "no change +1.0%".
fn words(c: &Check) -> String {
    match c.ratio {
        Some(r) => format!("{} {:+.1}%", c.verdict.label(), r * 100.0),
        None => c.verdict.label().to_string(),
    }
}

fn summary_note(confirmed: usize, not_confirmed: usize, steps: &[ModelStep]) -> String {
    let what = match (confirmed, not_confirmed) {
        (0, 0) => {
            "no regression to confirm; the undecided checks were decided on the pooled evidence"
                .to_string()
        }
        (c, 0) => format!("{c} regression{} confirmed on rerun", plural(c)),
        (0, n) => format!("{n} regression{} not confirmed on rerun", plural(n)),
        (c, n) => format!("{c} regression{} confirmed on rerun, {n} not", plural(c)),
    };
    format!(
        "confirmation: {} step{} re-measured; {what} (a regression stands when the rerun alone and both measurements pooled show it)",
        steps.len(),
        plural(steps.len())
    )
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::LadderUnit;

    fn check(model: &str, at: u32, verdict: Verdict, ratio: f64) -> Check {
        Check {
            model: model.into(),
            step: Some(1),
            concurrency: Some(at),
            ladder_unit: LadderUnit::Streams,
            metric: Metric::Ttft,
            percentile: Some(Percentile::P90),
            gated: true,
            base: Some(100.0),
            new: Some(100.0 * (1.0 + ratio)),
            ratio: Some(ratio),
            ci: None,
            method: super::super::Method::Bootstrap,
            verdict,
            detail: "why".into(),
        }
    }

    fn comparison(checks: Vec<Check>) -> Comparison {
        Comparison::of_checks(checks)
    }

    #[test]
    fn the_steps_to_confirm_put_regressions_first() {
        let c = comparison(vec![
            check("m", 5, INC, 0.2),
            check("m", 10, Verdict::Regressed, 0.3),
            check("m", 20, Verdict::NoChange, 0.0),
            check("m", 10, INC, 0.2),
        ]);
        assert_eq!(
            steps_to_confirm(&c),
            [("m".to_string(), 10), ("m".to_string(), 5)]
        );
        assert!(worth_confirming(&c));
        let fine = comparison(vec![check("m", 5, Verdict::NoChange, 0.0)]);
        assert!(!worth_confirming(&fine));
    }

    #[test]
    fn settle_keeps_a_regression_both_show_and_drops_one_the_rerun_does_not() {
        let first = comparison(vec![
            check("m", 5, Verdict::Regressed, 0.3),
            check("m", 10, Verdict::Regressed, 0.2),
            check("m", 20, Verdict::Regressed, 0.2),
        ]);
        let rerun = comparison(vec![
            check("m", 5, Verdict::Regressed, 0.28),
            check("m", 10, Verdict::NoChange, 0.01),
            check("m", 20, Verdict::Regressed, 0.2),
        ]);
        let pooled = comparison(vec![
            check("m", 5, Verdict::Regressed, 0.29),
            check("m", 10, Verdict::NoChange, 0.05),
            check("m", 20, Verdict::Regressed, 0.2),
        ]);
        // 20 streams was not re-measured (over the budget): its first verdict stands.
        let steps = [("m".to_string(), 5), ("m".to_string(), 10)];
        let out = settle(&first, &rerun, &pooled, &steps);
        let v: Vec<&Verdict> = out.checks.iter().map(|c| &c.verdict).collect();
        assert_eq!(
            v,
            [&Verdict::Regressed, &Verdict::NoChange, &Verdict::Regressed]
        );
        assert!(out.checks[0].detail.starts_with(
            "confirmed on rerun (first regressed +30.0%, rerun regressed +28.0%, pooled regressed +29.0%)"
        ));
        assert!(out.checks[1].detail.starts_with("not confirmed on rerun"));
        assert_eq!(out.checks[2].detail, "why");
        assert_eq!(
            out.checks[0].ratio,
            Some(0.29),
            "the pooled estimate is shown"
        );
        assert!(out
            .notes
            .last()
            .unwrap()
            .contains("2 steps re-measured; 1 regression confirmed on rerun, 1 not"));
    }

    #[test]
    fn the_pooled_side_adds_the_reruns_requests_to_the_same_steps() {
        use crate::stats::StepSummary;
        let summary = |step, concurrency| StepSummary {
            model: "m".into(),
            step,
            concurrency,
            ..StepSummary::default()
        };
        let sample = |step, at: f64| RequestSample {
            model: "m".into(),
            step,
            worker: 0,
            started_at_ms: at,
            ok: true,
            ttft_ms: Some(100.0),
            tpot_ms: None,
            e2e_ms: Some(500.0),
            ttfc_ms: None,
            output_tokens: None,
            input_tokens: None,
            cached_tokens: None,
            cache_write_tokens: None,
            reasoning_tokens: None,
            sent_to: None,
            ..Default::default()
        };
        let first = Side {
            summaries: vec![summary(1, 5), summary(2, 10)],
            samples: Some(vec![sample(1, 0.0), sample(2, 1000.0)]),
            ..Side::default()
        };
        // The rerun ran only the 10-stream step, as its step 1.
        let rerun = Side {
            summaries: vec![StepSummary {
                attempted: 7,
                ..summary(1, 10)
            }],
            samples: Some(vec![sample(1, 0.0), sample(1, 50.0)]),
            ..Side::default()
        };
        let p = pooled(&first, &rerun);
        let steps: Vec<(u32, f64)> = p
            .samples
            .unwrap()
            .iter()
            .map(|s| (s.step, s.started_at_ms))
            .collect();
        assert_eq!(steps, [(1, 0.0), (2, 1000.0), (2, 1500.0), (2, 1550.0)]);
        // The re-measured step's summary is the rerun's, under the first run's step number.
        let rows: Vec<(u32, u32, u64)> = p
            .summaries
            .iter()
            .map(|r| (r.step, r.concurrency, r.attempted))
            .collect();
        assert_eq!(rows, [(1, 5, 0), (2, 10, 7)]);
    }

    const INC: Verdict = Verdict::Inconclusive {
        requests_per_step: None,
    };

    #[test]
    fn a_regression_needs_the_rerun_and_the_pooled_evidence() {
        use Verdict::*;
        assert_eq!(decide(&Regressed, &Regressed), Regressed);
        assert_eq!(decide(&NoChange, &Regressed), INC);
        assert_eq!(decide(&INC, &Regressed), INC);
        assert_eq!(decide(&Regressed, &INC), INC);
        assert_eq!(decide(&Regressed, &NoChange), INC);
        assert_eq!(decide(&NoChange, &NoChange), NoChange);
        assert_eq!(decide(&INC, &BelowGate), BelowGate);
        assert_eq!(decide(&Improved, &Improved), Improved);
        assert_eq!(decide(&NoChange, &INC), INC);
    }
}
