//! `load: {search: {slo: {...}, max: N}}`: the highest load (streams, requests/s or replay
//! speed) that meets an SLO, found by the ladder itself: doubling from the lowest step until a
//! step misses, then bisecting between the highest step that meets it and the lowest that
//! misses. Every decision is made on a confidence bound, not a point: a step meets the SLO when
//! the upper 95% bound of its TTFT P90 is within the bound, misses it when the lower bound is
//! beyond, and is undecided in between (TPOT and E2E P90 have no interval in `summary.csv` and
//! are judged on their value). Undecided steps narrow nothing; the answer is a point with its
//! uncertainty: "max concurrency meeting TTFT P90 ≤ 1 s: 23 (20–26)".

use super::slo::{judge, Verdict};
use crate::model::{LadderUnit, Slo};
use crate::stats::StepSummary;
use crate::util::duration::ms_text;
use serde::{Deserialize, Serialize};

/// The answer: `max` is the highest step whose values meet the SLO below the first miss; the
/// load meeting it lies in `lo`–`hi` (`lo` the highest step meeting it with confidence, `hi`
/// one below the lowest step missing it with confidence, or the highest step tried when none
/// did: then the capacity is at least that).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Capacity {
    pub max: u32,
    pub lo: u32,
    pub hi: u32,
    pub unit: LadderUnit,
    /// No step missed: the capacity is at least `hi` (the search's `max`, or the top step).
    #[serde(default)]
    pub open_ended: bool,
}

impl Capacity {
    /// A drop beyond the uncertainty: this capacity's interval lies wholly below `base`'s.
    pub fn dropped_from(&self, base: &Capacity) -> bool {
        self.hi < base.lo && !self.open_ended
    }

    /// "max concurrency meeting TTFT P90 ≤ 1 s, TPOT P90 ≤ 50 ms: 23 (20–26)".
    pub fn sentence(&self, slo: &Slo) -> String {
        let what = match self.unit {
            LadderUnit::Streams => "max concurrency",
            LadderUnit::Agents => "max agents",
            LadderUnit::Rps => "max rate",
            LadderUnit::Speed => "max speed",
            LadderUnit::PromptTokens => "max prompt size",
        };
        let bounds: Vec<String> = slo
            .bounds_ms()
            .into_iter()
            .filter_map(|(name, b)| b.map(|b| format!("{name} P90 ≤ {}", ms_text(b))))
            .collect();
        let value = |v: u32| match self.unit {
            LadderUnit::Rps => format!("{v} req/s"),
            LadderUnit::Speed => format!("{v}×"),
            _ => v.to_string(),
        };
        let range = if self.open_ended {
            format!("at least {}: no step tried missed it", value(self.hi))
        } else if self.lo == self.hi {
            value(self.max)
        } else {
            format!("{} ({}–{})", value(self.max), self.lo, self.hi)
        };
        format!("{what} meeting {}: {range}", bounds.join(", "))
    }
}

/// One model's rows as (value, verdict), ascending.
fn verdicts(rows: &[&StepSummary], slo: &Slo) -> Vec<(u32, Verdict)> {
    let mut v: Vec<(u32, Verdict)> = rows
        .iter()
        .map(|r| (r.concurrency, judge(r, slo).verdict))
        .collect();
    v.sort_by_key(|x| x.0);
    v.dedup_by_key(|x| x.0);
    v
}

/// The capacity over one model's rows (`None` without rows, or when even the lowest step
/// missed: then nothing meets the SLO, said by [`none_meets`]).
pub fn capacity(rows: &[&StepSummary], slo: &Slo) -> Option<Capacity> {
    let unit = rows.first()?.ladder_unit;
    let v = verdicts(rows, slo);
    let first_miss = v.iter().position(|x| x.1 == Verdict::Misses);
    let below = &v[..first_miss.unwrap_or(v.len())];
    let max = below
        .iter()
        .rev()
        .find(|x| {
            matches!(
                x.1,
                Verdict::Meets | Verdict::Undecided { point_meets: true }
            )
        })?
        .0;
    let lo = below
        .iter()
        .rev()
        .find(|x| x.1 == Verdict::Meets)
        .map_or(max.min(below[0].0).saturating_sub(1).max(1), |x| x.0);
    let (hi, open_ended) = match first_miss {
        Some(i) => (v[i].0 - 1, false),
        None => (v[v.len() - 1].0, true),
    };
    Some(Capacity {
        max,
        lo: lo.min(max),
        hi: hi.max(max),
        unit,
        open_ended,
    })
}

/// Whether even the lowest step missed the SLO with confidence.
pub fn none_meets(rows: &[&StepSummary], slo: &Slo) -> bool {
    verdicts(rows, slo)
        .first()
        .is_some_and(|x| x.1 == Verdict::Misses)
}

/// The next load to try, or `None` when the search is done. Doubling from the highest step
/// meeting the SLO (at most `max`) until one misses; then the geometric midpoint of the widest
/// gap between tried steps that lies above the highest step meeting the SLO with confidence
/// and below the lowest step missing it (an undecided step splits the gap it sits in).
pub fn next_value(rows: &[&StepSummary], slo: &Slo, max: u32) -> Option<u32> {
    let v = verdicts(rows, slo);
    let first = v.first()?;
    if first.1 == Verdict::Misses {
        // Even the lowest step misses: halve towards 1.
        return (first.0 > 1).then_some(first.0 / 2);
    }
    let miss = v.iter().find(|x| x.1 == Verdict::Misses).map(|x| x.0);
    let Some(miss) = miss else {
        let top = v[v.len() - 1].0;
        return (top < max).then(|| top.saturating_mul(2).min(max));
    };
    let pass = v
        .iter()
        .filter(|x| x.0 < miss && x.1 == Verdict::Meets)
        .map(|x| x.0)
        .max()
        .unwrap_or(0);
    let tried: Vec<u32> = v
        .iter()
        .map(|x| x.0)
        .filter(|&x| x >= pass && x <= miss)
        .collect();
    let mut best: Option<(f64, u32)> = None;
    for w in tried.windows(2) {
        let (a, b) = (w[0], w[1]);
        if b <= a + 1 {
            continue;
        }
        let mid = (f64::from(a.max(1)) * f64::from(b)).sqrt().round() as u32;
        let mid = mid.clamp(a + 1, b - 1);
        let ratio = f64::from(b) / f64::from(a.max(1));
        if best.is_none() || best.is_some_and(|(r, _)| ratio > r) {
            best = Some((ratio, mid));
        }
    }
    best.map(|b| b.1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// A step at `c` with TTFT P90 `p` ms and its 95% bounds ± `half`.
    fn row(c: u32, p: f64, half: f64) -> StepSummary {
        StepSummary {
            model: "m".into(),
            concurrency: c,
            attempted: 100,
            succeeded: 100,
            ttft_p90_ms: Some(p),
            ttft_p90_lo_ms: Some(p - half),
            ttft_p90_hi_ms: Some(p + half),
            ..StepSummary::default()
        }
    }

    fn slo() -> Slo {
        Slo {
            ttft: Some(Duration::from_secs(1)),
            ..Slo::default()
        }
    }

    /// A server whose TTFT P90 is 200 ms up to 23 streams, then grows by 150 ms a stream.
    fn server(c: u32) -> StepSummary {
        let p = if c <= 23 {
            200.0
        } else {
            200.0 + 150.0 * f64::from(c - 23) + 800.0
        };
        row(c, p, 60.0)
    }

    #[test]
    fn doubles_then_bisects_to_the_cap() {
        let mut rows = vec![server(1)];
        let mut tried = vec![1];
        while let Some(next) = {
            let refs: Vec<&StepSummary> = rows.iter().collect();
            next_value(&refs, &slo(), 512)
        } {
            assert!(!tried.contains(&next), "{next} tried twice: {tried:?}");
            tried.push(next);
            rows.push(server(next));
            assert!(tried.len() < 20, "{tried:?}");
        }
        assert_eq!(&tried[..7], &[1, 2, 4, 8, 16, 32, 23], "{tried:?}");
        let refs: Vec<&StepSummary> = rows.iter().collect();
        let c = capacity(&refs, &slo()).unwrap();
        assert_eq!((c.max, c.lo, c.hi), (23, 23, 23), "{tried:?}");
        assert_eq!(
            c.sentence(&slo()),
            "max concurrency meeting TTFT P90 ≤ 1 s: 23"
        );
    }

    #[test]
    fn undecided_steps_widen_the_answer_and_never_decide_it() {
        let rows = [
            row(20, 500.0, 100.0),
            row(23, 990.0, 80.0),
            row(27, 1300.0, 50.0),
        ];
        let refs: Vec<&StepSummary> = rows.iter().collect();
        assert_eq!(
            judge(&rows[1], &slo()).verdict,
            Verdict::Undecided { point_meets: true }
        );
        let c = capacity(&refs, &slo()).unwrap();
        assert_eq!((c.max, c.lo, c.hi), (23, 20, 26));
        assert_eq!(
            c.sentence(&slo()),
            "max concurrency meeting TTFT P90 ≤ 1 s: 23 (20–26)"
        );
        // The undecided step splits its gap: 20..23 and 23..27 are both still open.
        assert!(matches!(
            next_value(&refs, &slo(), 512),
            Some(21 | 22 | 25 | 24 | 26)
        ));
        // A capacity lower beyond the uncertainty is a drop; an overlapping one is not.
        let base = Capacity {
            max: 40,
            lo: 36,
            hi: 44,
            unit: c.unit,
            open_ended: false,
        };
        assert!(c.dropped_from(&base));
        let near = Capacity {
            max: 25,
            lo: 22,
            hi: 28,
            ..base
        };
        assert!(!c.dropped_from(&near));
    }

    #[test]
    fn failures_miss_and_no_miss_is_open_ended() {
        let mut bad = row(4, 100.0, 10.0);
        bad.succeeded = 90;
        bad.failed = 10;
        assert_eq!(judge(&bad, &slo()).verdict, Verdict::Misses);
        let rows = [row(1, 100.0, 10.0), row(2, 100.0, 10.0)];
        let refs: Vec<&StepSummary> = rows.iter().collect();
        assert_eq!(next_value(&refs, &slo(), 3), Some(3));
        assert_eq!(next_value(&refs, &slo(), 2), None);
        let c = capacity(&refs, &slo()).unwrap();
        assert!(c.open_ended && c.hi == 2);
        assert!(
            c.sentence(&slo()).contains("at least 2"),
            "{}",
            c.sentence(&slo())
        );
        let worst = [row(8, 3000.0, 10.0)];
        let refs: Vec<&StepSummary> = worst.iter().collect();
        assert_eq!(next_value(&refs, &slo(), 512), Some(4));
        assert!(capacity(&refs, &slo()).is_none() && none_meets(&refs, &slo()));
    }
}
