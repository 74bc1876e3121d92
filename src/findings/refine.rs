//! `load: {refine: N}`: which step to run next so that the ladder narrows its own intervals.
//! Two intervals are worth narrowing: the TTFT knee's (max clean step, knee step], and the
//! interval where the SLO first fails (last step meeting it, first step missing it]. The next
//! step bisects the wider of the two (by ratio, as ladders are geometric); a step already run is
//! never repeated, and an interval of adjacent whole values is done.

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
        out.push(Bracket {
            lo: k.max_clean_concurrency,
            hi: k.concurrency,
            what: Bracketed::Knee,
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
            });
        }
    }
    out
}

/// The next step value: the midpoint (geometric, rounded) of the widest interval that still has
/// a whole value inside and whose midpoint was not run. `None`: nothing left to narrow.
pub fn next_value(brackets: &[Bracket], done: &[u32]) -> Option<u32> {
    let mut open: Vec<(f64, u32)> = brackets
        .iter()
        .filter(|b| b.hi > b.lo.saturating_add(1) && b.lo > 0)
        .filter_map(|b| {
            let mid = (f64::from(b.lo) * f64::from(b.hi)).sqrt().round() as u32;
            let mid = mid.clamp(b.lo + 1, b.hi - 1);
            (!done.contains(&mid)).then_some((f64::from(b.hi) / f64::from(b.lo), mid))
        })
        .collect();
    open.sort_by(|a, b| b.0.total_cmp(&a.0));
    open.first().map(|x| x.1)
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
        Bracket { lo, hi, what }
    }

    #[test]
    fn bisects_the_widest_interval_first_and_never_repeats() {
        let both = [b(10, 20, Bracketed::Knee), b(20, 50, Bracketed::Slo)];
        assert_eq!(next_value(&both, &[]), Some(32)); // √(20·50) ≈ 31.6
        assert_eq!(next_value(&both, &[32]), Some(14)); // √200 ≈ 14.1
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
