//! Confirmation (`ladder run --confirm`): a run that regressed or is inconclusive re-measures
//! only the steps concerned, and each check that regressed or was undecided is decided again.
//! A regression stands only when the rerun, judged alone against the same reference, regresses
//! on that check too *and* the pooled evidence (both measurements' requests together) does;
//! otherwise the pooled evidence decides, and a regression that one of the two does not show
//! is inconclusive. The rule's false-alarm and detection rates are measured in pretend time
//! (`make calibrate`, docs/gate.md "Confirmation"). A rerun shares the day's drift: it cures
//! noise, not a provider that is slower today (interleaved A/B runs cure that).
//!
//! Pure: the caller runs the steps, judges the rerun and the pooled side ([`pooled`]) with
//! `compare`, and hands the three comparisons to [`settle`].

use super::{Check, Comparison, Metric, Percentile, RequestSample, Side, Verdict};
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// The steps a first judgement leaves to confirm: per model, the ladder values where a gated
/// check regressed or could not decide, regressions' steps first (a budget that cannot rerun
/// them all reruns those).
pub fn steps_to_confirm(first: &Comparison) -> Vec<(String, u32)> {
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
/// time): the pooled evidence. Summaries, knees and walls stay the first run's; the latency
/// checks, which read the requests, see both measurements.
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
    rerun_steps: &[(String, u32)],
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
        let (Some(r), Some(p)) = (again.get(&k), both.get(&k)) else {
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

fn summary_note(confirmed: usize, not_confirmed: usize, steps: &[(String, u32)]) -> String {
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
