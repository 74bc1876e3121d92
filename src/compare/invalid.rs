//! Steps whose client did not keep up, on either side of a comparison (docs/gate.md, "The client
//! must keep up"). Such a step measured a lighter or later load than it says, so its checks are
//! set aside: each gated check there that was judged becomes inconclusive, its detail opening
//! with the cause and the fix, and the comparison lists the step (`Comparison::invalid`), which
//! keeps it from passing (`Comparison::outcome`). A regression elsewhere is still one.
//!
//! The rule itself is `findings::kept_up::client_fault`, read from each side's step summaries;
//! a side without self-check figures (another tool's run, a production log) has no invalid step.

use serde::Serialize;

use super::{Check, Metric, Side, Verdict};
use crate::findings::kept_up::{client_fault, fix, Shortfall};
use crate::model::LadderUnit;

/// A step of one side whose client did not keep up with its plan.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct InvalidStep {
    pub model: String,
    /// The step's ladder value, counted in `ladder_unit`.
    pub concurrency: u32,
    pub ladder_unit: LadderUnit,
    /// `baseline` or `new`.
    pub side: &'static str,
    /// What the client measured of itself there, beyond the tolerances.
    pub shortfalls: Vec<Shortfall>,
    /// "the client did not keep up at 8 streams in the new run: only 4.0 of 8 streams in flight
    /// (steady window; at least 6.4 needed); fix: fewer streams per process or `--shard`".
    pub sentence: String,
}

/// How the detail of a check set aside opens; [`Check::is_set_aside`] reads it back.
const SET_ASIDE: &str = "set aside, invalid for the gate: ";

/// Where the detail of a check set aside says what it measured: after this and the verdict it
/// had (`… ; as measured (regressed): TPM -50.0% …`).
const AS_MEASURED: &str = "; as measured (";

impl Check {
    /// Whether the check was set aside because it rests on a step whose client did not keep
    /// up (its inconclusive verdict says nothing of how many requests would decide it).
    pub fn is_set_aside(&self) -> bool {
        matches!(self.verdict, Verdict::Inconclusive { .. }) && self.detail.starts_with(SET_ASIDE)
    }

    /// The verdict's label and the detail as the check measured them: for a check set aside,
    /// those it had before (`("regressed", "TPM -50.0% …")`); otherwise its own.
    pub fn as_measured(&self) -> (&str, &str) {
        let measured = self
            .is_set_aside()
            .then(|| self.detail.split_once(AS_MEASURED)?.1.split_once("): "))
            .flatten();
        measured.unwrap_or((self.verdict.label(), self.detail.as_str()))
    }
}

impl InvalidStep {
    /// "the client did not keep up at 8 streams in the new run".
    pub fn short(&self) -> String {
        let side = if self.side == "baseline" {
            "in the baseline"
        } else {
            "in the new run"
        };
        format!(
            "the client did not keep up {} {side}",
            self.ladder_unit.at(self.concurrency)
        )
    }
}

/// The invalid steps of both sides, the baseline's first, each side in its summaries' order.
pub(crate) fn invalid_steps(base: &Side, new: &Side) -> Vec<InvalidStep> {
    let mut out = Vec::new();
    for (side, key) in [(base, "baseline"), (new, "new")] {
        for s in &side.summaries {
            let Some(fault) = client_fault(s) else {
                continue;
            };
            let mut step = InvalidStep {
                model: s.model.clone(),
                concurrency: s.concurrency,
                ladder_unit: s.ladder_unit,
                side: key,
                sentence: String::new(),
                shortfalls: fault.shortfalls.clone(),
            };
            step.sentence = format!(
                "{}: {}; {}",
                step.short(),
                fault.causes(),
                fix(s.ladder_unit)
            );
            out.push(step);
        }
    }
    out
}

/// Sets aside every gated, judged check that rests on an invalid step: the checks at that step,
/// and the model's knee, wall, cap and SLO capacity unless both sides found them below it.
/// Skipped checks stay skipped (they were not judged); P50 and other information is left as is.
pub(crate) fn set_aside(checks: &mut [Check], invalid: &[InvalidStep], base: &Side, new: &Side) {
    for k in checks.iter_mut() {
        if !k.gated || matches!(k.verdict, Verdict::Skipped { .. } | Verdict::Info) {
            continue;
        }
        let reach = k.concurrency.or_else(|| rests_up_to(k, base, new));
        let under: Vec<&InvalidStep> = invalid
            .iter()
            .filter(|i| i.model == k.model)
            .filter(|i| match (k.concurrency, reach) {
                (Some(at), _) => i.concurrency == at,
                (None, Some(top)) => i.concurrency <= top,
                (None, None) => true,
            })
            .collect();
        if under.is_empty() {
            continue;
        }
        k.detail = format!(
            "{SET_ASIDE}the client did not keep up {}{AS_MEASURED}{}): {}",
            steps_words(&under),
            k.verdict.label(),
            k.detail
        );
        k.verdict = Verdict::Inconclusive {
            requests_per_step: None,
        };
    }
}

/// "at 5 and 40 req/s in the new run and at 40 req/s in the baseline".
fn steps_words(steps: &[&InvalidStep]) -> String {
    let mut parts = Vec::new();
    for (key, side) in [("new", "in the new run"), ("baseline", "in the baseline")] {
        let mine: Vec<&&InvalidStep> = steps.iter().filter(|i| i.side == key).collect();
        let Some(first) = mine.first() else { continue };
        let values: Vec<u32> = mine.iter().map(|i| i.concurrency).collect();
        parts.push(format!(
            "at {} {side}",
            first.ladder_unit.describe_all(&values)
        ));
    }
    parts.join(" and ")
}

/// The highest step a run-level check rests on: a knee or wall (or the cap, estimated at the
/// knee) that both sides found rests on the steps up to it; `None` when it rests on every step
/// (one side found none, so every step of it was clean; the SLO capacity).
fn rests_up_to(k: &Check, base: &Side, new: &Side) -> Option<u32> {
    let both = |b: Option<u32>, n: Option<u32>| Some(b?.max(n?));
    let m = k.model.as_str();
    match k.metric {
        Metric::Knee => both(base.knee.get(m).copied()?, new.knee.get(m).copied()?),
        Metric::Wall => both(base.wall.get(m).copied()?, new.wall.get(m).copied()?),
        Metric::Cap => both(
            base.caps.get(m).map(|c| c.at),
            new.caps.get(m).map(|c| c.at),
        ),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::{Method, Percentile};
    use crate::stats::StepSummary;

    fn step(value: u32, steady: f64) -> StepSummary {
        StepSummary {
            model: "m".into(),
            concurrency: value,
            attempted: 10 * u64::from(value),
            succeeded: 10 * u64::from(value),
            concurrency_steady: Some(steady),
            ..StepSummary::default()
        }
    }

    fn side(rows: Vec<StepSummary>) -> Side {
        Side {
            label: "x".into(),
            summaries: rows,
            ..Side::default()
        }
    }

    fn check(at: Option<u32>, metric: Metric, verdict: Verdict) -> Check {
        Check {
            model: "m".into(),
            step: at.map(|_| 1),
            concurrency: at,
            ladder_unit: LadderUnit::Streams,
            metric,
            percentile: at.map(|_| Percentile::P90),
            gated: true,
            base: Some(1.0),
            new: Some(2.0),
            ratio: Some(1.0),
            ci: None,
            method: Method::Point,
            verdict,
            detail: "regressed: +100%".into(),
        }
    }

    #[test]
    fn each_side_s_starved_steps_are_listed_with_cause_and_fix() {
        let base = side(vec![step(2, 2.0), step(8, 7.9)]);
        let new = side(vec![step(2, 2.0), step(8, 4.0)]);
        let invalid = invalid_steps(&base, &new);
        assert_eq!(invalid.len(), 1);
        let i = &invalid[0];
        assert_eq!((i.model.as_str(), i.concurrency, i.side), ("m", 8, "new"));
        assert_eq!(
            i.sentence,
            "the client did not keep up at 8 streams in the new run: only 4.0 of 8 streams in flight (steady window; at least 6.4 needed); fix: fewer streams per process or `--shard`"
        );
        // Swapped: the baseline's step is the invalid one, and says so.
        let swapped = invalid_steps(&new, &base);
        assert_eq!(swapped[0].side, "baseline");
        assert!(swapped[0].sentence.contains("in the baseline:"));
        // A side without self-check figures (another tool's run) has none.
        let imported = side(vec![StepSummary {
            concurrency_steady: None,
            ..step(8, 0.0)
        }]);
        assert!(invalid_steps(&imported, &imported).is_empty());
    }

    #[test]
    fn checks_at_an_invalid_step_become_inconclusive_with_the_cause() {
        let base = side(vec![step(2, 2.0), step(8, 7.9)]);
        let new = side(vec![step(2, 2.0), step(8, 4.0)]);
        let invalid = invalid_steps(&base, &new);
        let skipped = Verdict::Skipped {
            reason: "too few".into(),
        };
        let mut checks = vec![
            check(Some(8), Metric::Tpm, Verdict::Regressed),
            check(Some(8), Metric::Ttft, Verdict::NoChange),
            check(Some(8), Metric::Ttft, skipped.clone()),
            check(Some(2), Metric::Tpm, Verdict::Regressed),
        ];
        let mut info = check(Some(8), Metric::Ttft, Verdict::Info);
        info.gated = false;
        checks.push(info.clone());
        set_aside(&mut checks, &invalid, &base, &new);
        let undecided = Verdict::Inconclusive {
            requests_per_step: None,
        };
        assert_eq!(checks[0].verdict, undecided);
        assert!(checks[0].is_set_aside() && !checks[3].is_set_aside());
        assert_eq!(
            checks[0].detail,
            "set aside, invalid for the gate: the client did not keep up at 8 streams in the new run; as measured (regressed): regressed: +100%"
        );
        assert_eq!(checks[0].as_measured(), ("regressed", "regressed: +100%"));
        assert_eq!(checks[3].as_measured(), ("regressed", "regressed: +100%"));
        // A pass at an invalid step is no evidence either.
        assert_eq!(checks[1].verdict, undecided);
        // Not judged, or not gated: left as they were; another step keeps its regression.
        assert_eq!(checks[2].verdict, skipped);
        assert_eq!(checks[3].verdict, Verdict::Regressed);
        assert_eq!(checks[4], info);
    }

    #[test]
    fn run_level_checks_are_set_aside_when_they_rest_on_the_step() {
        let base = side(vec![step(2, 2.0), step(4, 4.0), step(8, 7.9)]);
        let new = side(vec![step(2, 2.0), step(4, 4.0), step(8, 4.0)]);
        let invalid = invalid_steps(&base, &new);
        let knees = |b: Option<u32>, n: Option<u32>| {
            let (mut bs, mut ns) = (base.clone(), new.clone());
            bs.knee.insert("m".into(), b);
            ns.knee.insert("m".into(), n);
            let mut checks = vec![
                check(None, Metric::Knee, Verdict::Regressed),
                check(None, Metric::Capacity, Verdict::Improved),
            ];
            set_aside(&mut checks, &invalid, &bs, &ns);
            checks
        };
        // Both knees at 4, below the invalid step: the knee stands; the SLO capacity rests on
        // every step.
        let below = knees(Some(4), Some(4));
        assert_eq!(below[0].verdict, Verdict::Regressed);
        assert!(matches!(below[1].verdict, Verdict::Inconclusive { .. }));
        // A knee at the invalid step, or gone on one side (every step of it clean): set aside.
        for (b, n) in [(Some(8), Some(4)), (Some(4), None)] {
            let k = knees(b, n);
            assert!(
                matches!(k[0].verdict, Verdict::Inconclusive { .. }),
                "{b:?} {n:?}"
            );
        }
        // Steps of both sides, named once per side.
        let both = invalid_steps(&new, &new);
        let mut knee = vec![check(None, Metric::Knee, Verdict::Regressed)];
        set_aside(&mut knee, &both, &base, &new);
        assert!(
            knee[0].detail.starts_with("set aside, invalid for the gate: the client did not keep up at 8 streams in the new run and at 8 streams in the baseline; as measured (regressed)"),
            "{}",
            knee[0].detail
        );
        // The cap rests on the knee steps where it was estimated.
        let (mut bs, mut ns) = (base.clone(), new.clone());
        let at = |at| crate::compare::CapBasis {
            at,
            reference: 2,
            max_clean: 2,
            estimate: 3.0,
        };
        bs.caps.insert("m".into(), at(4));
        ns.caps.insert("m".into(), at(4));
        let mut cap = vec![check(None, Metric::Cap, Verdict::Regressed)];
        set_aside(&mut cap, &invalid, &bs, &ns);
        assert_eq!(cap[0].verdict, Verdict::Regressed);
        ns.caps.insert("m".into(), at(8));
        set_aside(&mut cap, &invalid, &bs, &ns);
        assert!(matches!(cap[0].verdict, Verdict::Inconclusive { .. }));
    }
}
