//! `load: {refine: N}`: which step to run next so that the ladder narrows its own intervals.
//! Two intervals are worth narrowing: the TTFT knee's (max clean step, knee step], and the
//! interval where the SLO first fails (last step meeting it, first step missing it]. The knee
//! comes first: it is where the cap is estimated and what a comparison of two runs judges, so
//! the next step bisects the widest knee interval while one is open (by ratio, as ladders are
//! geometric), and the SLO edge gets the steps left. A step already run is never repeated, and
//! an interval of adjacent whole values is done.

use super::slo::miss;
use super::{KneeFinding, ModelFindings};
use crate::model::{LadderUnit, Slo};
use crate::stats::StepSummary;

/// An open-closed interval `(lo, hi]` of ladder values and what it brackets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bracket {
    pub lo: u32,
    pub hi: u32,
    pub what: Bracketed,
    /// A queueing knee's first guess: the first stream count above its estimated cap (where
    /// requests must start to wait), tried before bisecting when it lies inside the interval,
    /// then the count just below it (the cap itself).
    pub guess: Option<u32>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bracketed {
    Knee,
    Slo,
}

/// The knee's and the SLO's intervals of one model's rows (a step misses the SLO by
/// `findings::slo`; no SLO: it never does).
pub fn brackets(rows: &[StepSummary], f: &ModelFindings, slo: Option<&Slo>) -> Vec<Bracket> {
    let mut out = Vec::new();
    if let KneeFinding::Knee(k) = &f.knee {
        let guess = k
            .estimated_cap
            .filter(|c| c.is_finite() && *c > 0.0 && f.ladder_unit == LadderUnit::Streams)
            .map(|c| c.floor() as u32 + 1);
        out.push(Bracket {
            lo: k.max_clean_concurrency,
            hi: k.concurrency,
            what: Bracketed::Knee,
            guess,
        });
    }
    let mut sorted: Vec<&StepSummary> = rows.iter().filter(|r| r.model == f.model).collect();
    sorted.sort_by_key(|r| r.concurrency);
    if let Some(i) = sorted.iter().position(|r| miss(r, slo).is_some()) {
        if i > 0 {
            out.push(Bracket {
                lo: sorted[i - 1].concurrency,
                hi: sorted[i].concurrency,
                what: Bracketed::Slo,
                guess: None,
            });
        }
    }
    out
}

/// The next step value: for the widest knee interval that still has a whole value inside, its
/// guess (the first stream count above the estimated cap), then the count below it, when inside
/// and not yet run, else its midpoint when not yet run; then the same for the widest SLO interval. `None`: nothing left to
/// narrow. The midpoint is geometric on a wide interval (more than 2×: ladders are geometric)
/// and arithmetic on a narrow one, where whole values are few and halving the count of them
/// narrows fastest ((10, 20] → 15, not 14).
pub fn next_value(brackets: &[Bracket], done: &[u32]) -> Option<u32> {
    let mut open: Vec<(u8, f64, u32)> = brackets
        .iter()
        .filter(|b| b.hi > b.lo.saturating_add(1) && b.lo > 0)
        .filter_map(|b| {
            let (lo, hi) = (f64::from(b.lo), f64::from(b.hi));
            let mid = if hi > 2.0 * lo {
                (lo * hi).sqrt()
            } else {
                (lo + hi) / 2.0
            };
            let mid = (mid.round() as u32).clamp(b.lo + 1, b.hi - 1);
            // The guess, then the stream count just below it (the cap itself, which should be
            // clean): together they bracket the knee one stream wide.
            let inside = |g: &u32| *g > b.lo && *g < b.hi && !done.contains(g);
            let guesses = b.guess.into_iter().flat_map(|g| [g, g.saturating_sub(1)]);
            let mid = guesses.into_iter().find(inside).unwrap_or(mid);
            let knee_first = u8::from(b.what != Bracketed::Knee);
            (!done.contains(&mid)).then_some((knee_first, f64::from(b.hi) / f64::from(b.lo), mid))
        })
        .collect();
    open.sort_by(|a, b| a.0.cmp(&b.0).then(b.1.total_cmp(&a.1)));
    open.first().map(|x| x.2)
}

/// "Refined with 2 more steps (15, 17): knee in (15, 17] streams, SLO first missed in (20, 35]
/// streams." for the report.
pub fn note(values: &[u32], brackets: &[Bracket], unit: LadderUnit) -> Option<String> {
    if values.is_empty() {
        return None;
    }
    let list: Vec<String> = values.iter().map(u32::to_string).collect();
    let parts: Vec<String> = brackets
        .iter()
        .map(|b| {
            let what = match b.what {
                Bracketed::Knee => "TTFT knee",
                Bracketed::Slo => "SLO first missed",
            };
            format!("{what} in ({}, {}] {}", b.lo, b.hi, unit.plural())
        })
        .collect();
    let n = values.len();
    let s = if n == 1 { "" } else { "s" };
    let tail = if parts.is_empty() {
        String::new()
    } else {
        format!(": {}", parts.join(", "))
    };
    Some(format!(
        "Refined with {n} more step{s} ({}){tail}.",
        list.join(", ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn b(lo: u32, hi: u32, what: Bracketed) -> Bracket {
        Bracket {
            lo,
            hi,
            what,
            guess: None,
        }
    }

    #[test]
    fn a_queueing_knee_tries_just_above_its_estimated_cap_first() {
        let guessed = |g| Bracket {
            guess: Some(g),
            ..b(10, 20, Bracketed::Knee)
        };
        assert_eq!(next_value(&[guessed(17)], &[]), Some(17));
        // 17 run and found to be the knee, (10, 17]: the cap itself, 16, next.
        let knee_at_17 = Bracket {
            guess: Some(17),
            ..b(10, 17, Bracketed::Knee)
        };
        assert_eq!(next_value(&[knee_at_17], &[17]), Some(16));
        assert_eq!(next_value(&[knee_at_17], &[16, 17]), Some(14));
        // Both run already, or outside the interval: bisect.
        assert_eq!(next_value(&[guessed(17)], &[16, 17]), Some(15));
        // A guess at the interval's end: the count below it when inside, else bisect.
        assert_eq!(next_value(&[guessed(20)], &[]), Some(19));
        assert_eq!(next_value(&[guessed(21)], &[]), Some(15));
        assert_eq!(next_value(&[guessed(10)], &[]), Some(15));
    }

    #[test]
    fn bisects_the_knee_first_then_the_slo_edge_and_never_repeats() {
        // The SLO interval is wider, but the knee is narrowed first.
        let both = [b(10, 20, Bracketed::Knee), b(20, 50, Bracketed::Slo)];
        assert_eq!(next_value(&both, &[]), Some(15)); // (10 + 20) / 2: a narrow interval
        let narrowed = [b(14, 15, Bracketed::Knee), b(20, 50, Bracketed::Slo)];
        assert_eq!(next_value(&narrowed, &[14]), Some(32)); // √(20·50) ≈ 31.6: a wide one
                                                            // Of two knees (two models), the wider first.
        let knees = [b(10, 20, Bracketed::Knee), b(20, 50, Bracketed::Knee)];
        assert_eq!(next_value(&knees, &[]), Some(32));
        assert_eq!(next_value(&[b(15, 17, Bracketed::Knee)], &[]), Some(16));
        assert_eq!(next_value(&[b(15, 16, Bracketed::Knee)], &[]), None);
        assert_eq!(next_value(&[b(15, 17, Bracketed::Knee)], &[16]), None);
        assert_eq!(next_value(&[], &[]), None);
    }

    #[test]
    fn the_note_names_the_steps_and_the_narrowed_intervals() {
        let n = note(
            &[15, 17],
            &[b(15, 17, Bracketed::Knee)],
            LadderUnit::Streams,
        )
        .unwrap();
        assert_eq!(
            n,
            "Refined with 2 more steps (15, 17): TTFT knee in (15, 17] streams."
        );
        assert_eq!(note(&[], &[], LadderUnit::Streams), None);
    }
}
