//! The one rule for "a step meets its SLO", used by the plan, the search, refine and replay.
//! A step misses when nothing succeeded, when more than 1% of its requests failed, or when a
//! P90 is beyond its bound. The search decides on confidence bounds (TTFT P90's interval from
//! `summary.csv`; TTFC, TPOT and E2E P90 have none and are judged on their value), so a step whose
//! TTFT bound straddles the SLO is undecided for it; the plan, refine and replay read the point
//! values and say why a step misses. Both readings come from the same pass. Pure.

use crate::model::slo::MAX_FAILED_SHARE;
use crate::model::Slo;
use crate::stats::StepSummary;

/// What one step says about the SLO, with confidence.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Within every bound, with confidence.
    Meets,
    /// Beyond a bound with confidence, or more than 1% failed, or nothing succeeded.
    Misses,
    /// Within on the point value, not on the bound (or the other way round).
    Undecided { point_meets: bool },
}

/// One step against an SLO.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Judgement {
    /// On confidence bounds (the search's reading).
    pub verdict: Verdict,
    /// On point values: why the step misses (`None`: it meets), e.g. `TTFT P90 1200 ms > 1000 ms`.
    pub miss: Option<String>,
}

/// The step's judgement against `slo` (P90 of each bound set).
pub fn judge(s: &StepSummary, slo: &Slo) -> Judgement {
    let missed = |why: String| Judgement {
        verdict: Verdict::Misses,
        miss: Some(why),
    };
    if s.succeeded == 0 {
        return missed("no request succeeded".into());
    }
    let failed = s.failed as f64 / s.attempted.max(1) as f64;
    if failed > MAX_FAILED_SHARE {
        return missed(format!("{:.1}% of requests failed", failed * 100.0));
    }
    let measured = [s.ttft_p90_ms, s.ttfc_p90_ms, s.tpot_p90_ms, s.e2e_p90_ms];
    let mut miss = None;
    let mut confident_miss = false;
    let mut undecided = false;
    let mut point_meets = true;
    for (i, ((name, bound), value)) in slo.bounds_ms().into_iter().zip(measured).enumerate() {
        let Some(b) = bound else { continue };
        // A TTFC bound on a step where no request answered (all reasoned to the limit) misses.
        let Some(v) = value.or((name == "TTFC").then_some(f64::INFINITY)) else {
            continue;
        };
        if v > b && miss.is_none() {
            miss = Some(format!("{name} P90 {v:.0} ms > {b:.0} ms"));
        }
        // TTFT P90 (the first bound) has a confidence interval; the others are their value.
        let (lo, hi) = if i == 0 {
            (s.ttft_p90_lo_ms.unwrap_or(v), s.ttft_p90_hi_ms.unwrap_or(v))
        } else {
            (v, v)
        };
        if lo > b {
            confident_miss = true;
        } else if hi > b {
            undecided = true;
            point_meets &= v <= b;
        }
    }
    let verdict = if confident_miss {
        Verdict::Misses
    } else if undecided {
        Verdict::Undecided { point_meets }
    } else {
        Verdict::Meets
    };
    Judgement { verdict, miss }
}

/// Why a step misses `slo` on its point values; never when there is no SLO.
pub fn miss(s: &StepSummary, slo: Option<&Slo>) -> Option<String> {
    slo.filter(|slo| !slo.is_empty())
        .and_then(|slo| judge(s, slo).miss)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn step(ttft: f64, lo: f64, hi: f64) -> StepSummary {
        StepSummary {
            attempted: 100,
            succeeded: 100,
            ttft_p90_ms: Some(ttft),
            ttft_p90_lo_ms: Some(lo),
            ttft_p90_hi_ms: Some(hi),
            tpot_p90_ms: Some(40.0),
            ..StepSummary::default()
        }
    }

    fn slo(ttft_ms: u64, tpot_ms: Option<u64>) -> Slo {
        Slo {
            ttft: Some(Duration::from_millis(ttft_ms)),
            tpot: tpot_ms.map(Duration::from_millis),
            ..Slo::default()
        }
    }

    #[test]
    fn the_verdict_uses_the_interval_and_the_reason_the_point() {
        let meets = judge(&step(800.0, 700.0, 900.0), &slo(1000, None));
        assert_eq!((meets.verdict, meets.miss), (Verdict::Meets, None));
        let straddles = judge(&step(1100.0, 950.0, 1300.0), &slo(1000, None));
        assert_eq!(straddles.verdict, Verdict::Undecided { point_meets: false });
        assert_eq!(
            straddles.miss.as_deref(),
            Some("TTFT P90 1100 ms > 1000 ms")
        );
        let misses = judge(&step(1500.0, 1200.0, 1800.0), &slo(1000, None));
        assert_eq!(misses.verdict, Verdict::Misses);
        let tpot = judge(&step(800.0, 700.0, 900.0), &slo(1000, Some(30)));
        assert_eq!(tpot.verdict, Verdict::Misses);
        assert_eq!(tpot.miss.as_deref(), Some("TPOT P90 40 ms > 30 ms"));
    }

    #[test]
    fn a_ttfc_bound_judges_the_answers_wait() {
        let ttfc = Slo {
            ttfc: Some(Duration::from_millis(800)),
            ..Slo::default()
        };
        let mut s = step(100.0, 90.0, 110.0);
        s.ttfc_p90_ms = Some(900.0);
        let j = judge(&s, &ttfc);
        assert_eq!(j.verdict, Verdict::Misses);
        assert_eq!(j.miss.as_deref(), Some("TTFC P90 900 ms > 800 ms"));
        s.ttfc_p90_ms = Some(700.0);
        assert_eq!(judge(&s, &ttfc).verdict, Verdict::Meets);
        // No request answered (all reasoning): the wait for an answer is unbounded.
        s.ttfc_p90_ms = None;
        assert_eq!(judge(&s, &ttfc).verdict, Verdict::Misses);
    }

    #[test]
    fn failures_miss_and_no_slo_never_does() {
        let mut s = step(100.0, 90.0, 110.0);
        s.failed = 5;
        let j = judge(&s, &slo(1000, None));
        assert_eq!(j.verdict, Verdict::Misses);
        assert_eq!(j.miss.as_deref(), Some("5.0% of requests failed"));
        assert_eq!(miss(&s, None), None);
        assert_eq!(miss(&s, Some(&Slo::default())), None);
        s.succeeded = 0;
        assert_eq!(
            miss(&s, Some(&slo(1000, None))).as_deref(),
            Some("no request succeeded")
        );
    }
}
