//! The rate-limit wall: the first step from which on 429s stay frequent, the limit it hit named
//! by its rule (requests, tokens, input or output tokens, requests in flight, or a ramp refused
//! while every limit had room), and the report sentence with what counted toward it.

use super::limit_rule::{compact, counted_sentence, what_counted};
use super::{rate, rate_limited, StepExtras, WallFinding};
use crate::model::LadderUnit;
use crate::model::LimitKind;
use crate::stats::StepSummary;
use std::collections::BTreeMap;

pub(super) fn find_wall(rows: &[&StepSummary], n429: &[u64], extra: &[StepExtras]) -> WallFinding {
    let hit = |i: usize| rate_limited(n429[i], rows[i].attempted);
    if let Some(w) = (0..rows.len()).find(|&w| (w..rows.len()).all(hit)) {
        let s = rows[w];
        let ramp_from = w
            .checked_sub(1)
            .map(|p| rows[p].concurrency)
            .filter(|&c| c < s.concurrency);
        let kind = wall_kind(&extra[w..], ramp_from.is_some());
        let limit = kind.and_then(|k| extra[w].limit_values.get(&k).copied());
        let counted = match (kind, limit) {
            (Some(k), Some(l)) => what_counted(
                k,
                l,
                &extra[w].usage,
                s.duration_s,
                f64::from(s.concurrency),
            ),
            _ => None,
        };
        return WallFinding::Wall {
            step: s.step,
            concurrency: s.concurrency,
            count_429: n429[w],
            rate_429: rate(n429[w], s.attempted),
            kind,
            limit,
            counted,
            ramp_from: ramp_from.filter(|_| kind == Some(LimitKind::Acceleration)),
            tpm_total_at_wall: s.tpm_total,
            rps_at_wall: s.rps,
            duration_s_at_wall: s.duration_s,
        };
    }
    match n429.iter().sum::<u64>() {
        0 => WallFinding::None,
        total => WallFinding::IsolatedRateLimits { total },
    }
}

/// The limit most 429s named from the wall step on (none on a tie); an acceleration limit when
/// more of the wall step's 429s named no limit while their headers showed room, on a ramp.
fn wall_kind(from_wall: &[StepExtras], ramp: bool) -> Option<LimitKind> {
    let wall = &from_wall[0];
    let named_at_wall: u64 = wall.limits_named.values().sum();
    if ramp && wall.refused_with_headroom > named_at_wall {
        return Some(LimitKind::Acceleration);
    }
    let mut named: BTreeMap<LimitKind, u64> = BTreeMap::new();
    for e in from_wall {
        for (k, n) in &e.limits_named {
            *named.entry(*k).or_default() += n;
        }
    }
    let top = named.values().copied().max().filter(|&n| n > 0)?;
    let mut at_top = named.iter().filter(|(_, n)| **n == top);
    match (at_top.next(), at_top.next()) {
        (Some((k, _)), None) => Some(*k),
        _ => None,
    }
}

pub(super) fn wall_sentence(wall: &WallFinding, unit: LadderUnit) -> Option<String> {
    match wall {
        WallFinding::None => None,
        WallFinding::IsolatedRateLimits { total } => Some(format!(
            "Isolated 429s ({total} in total); no rate-limit wall."
        )),
        WallFinding::Wall {
            concurrency,
            rate_429,
            kind: Some(LimitKind::Acceleration),
            ramp_from,
            ..
        } => {
            let from = ramp_from.map_or(String::new(), |f| {
                format!(", on the ramp from {}", unit.describe(f))
            });
            Some(format!(
                "Acceleration limit {}: {:.1}% of requests got 429 naming no limit while the rate-limit headers still showed room{from}: the provider refused the sudden rise in traffic, not a rate. Ramp up gradually (steps in between, or `duration` long enough for it to settle).",
                unit.at(*concurrency),
                rate_429 * 100.0
            ))
        }
        WallFinding::Wall {
            concurrency,
            rate_429,
            kind,
            limit,
            counted,
            tpm_total_at_wall,
            rps_at_wall,
            duration_s_at_wall,
            ..
        } => {
            let tokens = format!("{} tokens/min", compact(*tpm_total_at_wall));
            let requests = format!("{} requests/min", compact(rps_at_wall * 60.0));
            let of = |k: LimitKind| match limit {
                Some(l) => format!("{}, limit {}", k.words(), compact(*l as f64)),
                None => k.words().to_string(),
            };
            let detail = match kind {
                Some(k) if k.counts_tokens() => {
                    format!("{}; ≈ {tokens} got through at the wall step", of(*k))
                }
                Some(k @ LimitKind::Requests) => {
                    format!("{}; ≈ {requests} got through at the wall step", of(*k))
                }
                Some(k) => of(*k),
                None => format!(
                    "limit kind unknown; ≈ {tokens} and {requests} got through at the wall step"
                ),
            };
            let at = unit.at(*concurrency);
            let what = counted.as_ref().map_or(String::new(), |c| {
                let here = unit.describe(*concurrency);
                let s = counted_sentence(c, &here, |w| unit.describe(w.round().max(1.0) as u32));
                format!(" {s}")
            });
            // A per-minute bucket starts full: a step shorter than a minute sees its burst, so
            // the rate that got through overstates the sustained limit.
            let caveat = if *duration_s_at_wall > 0.0
                && *duration_s_at_wall < 60.0
                && kind != &Some(LimitKind::Concurrency)
            {
                format!(
                    " That step lasted {duration_s_at_wall:.0} s: a per-minute limit lets a burst through in less than a minute, so the sustained limit is lower; use `duration: 1m` steps to measure it."
                )
            } else {
                String::new()
            };
            Some(format!(
                "Rate-limit wall {at}: {:.1}% of requests got 429 ({detail}).{what}{caveat}",
                rate_429 * 100.0
            ))
        }
    }
}

/// Quota and spend-limit 429s said apart: never a wall.
pub(super) fn quota_note(extra: &[StepExtras]) -> Option<String> {
    let quota: u64 = extra.iter().map(|e| e.quota_errors).sum();
    (quota > 0).then(|| {
        format!(
            "{quota} requests failed with quota errors (out of credit or spend limit): not a rate limit, never a wall."
        )
    })
}

/// Below this share left of a limit, a step's rate-limit headers warn of the wall ahead.
const LOW_HEADROOM: f64 = 0.2;
/// From this share of the requests' time spent waiting to retry, the wait is said.
const WAIT_SAID: f64 = 0.05;

/// What the rate-limit headers and the retries said besides the wall: the last step before any
/// wall whose headers showed little left of a limit (the next step up meets it), and the steps
/// whose requests spent a noticeable share of their time waiting to retry, which no latency
/// figure includes.
pub(super) fn limit_notes(rows: &[&StepSummary], wall: &WallFinding) -> Vec<String> {
    let mut out = Vec::new();
    let unit = rows.first().map(|s| s.ladder_unit).unwrap_or_default();
    let before_wall = match wall.step() {
        Some(step) => rows
            .iter()
            .take_while(|s| s.step != step)
            .collect::<Vec<_>>(),
        None => rows.iter().collect(),
    };
    fn low_at<'a>(s: &&'a StepSummary) -> Option<(&'a StepSummary, f64)> {
        s.ratelimit_headroom_min
            .filter(|h| *h < LOW_HEADROOM)
            .map(|h| (*s, h))
    }
    // Before a wall, the first warning the headers gave; without one, the latest.
    let wall_at = match wall {
        WallFinding::Wall { concurrency, .. } => Some(*concurrency),
        _ => None,
    };
    let low = match wall_at {
        Some(_) => before_wall.iter().find_map(|s| low_at(s)),
        None => before_wall.iter().rev().find_map(|s| low_at(s)),
    };
    if let Some((s, h)) = low {
        let then = match wall_at {
            Some(c) => format!("they warned of the wall {}", unit.at(c)),
            None => "a step above it will likely meet 429s".to_string(),
        };
        out.push(format!(
            "{} the rate-limit headers showed as little as {:.0}% of a limit left: {then}.",
            capitalized(&unit.at(s.concurrency)),
            h * 100.0
        ));
    }
    let waited: Vec<String> = rows
        .iter()
        .filter_map(|s| {
            let share = s.retry_wait_share.filter(|w| *w >= WAIT_SAID)?;
            Some(format!(
                "{} {:.0}% ({:.0} s)",
                unit.describe(s.concurrency),
                share * 100.0,
                s.retry_wait_s.unwrap_or(0.0)
            ))
        })
        .collect();
    if !waited.is_empty() {
        out.push(format!(
            "Waiting to retry took a share of the requests' time ({}); no latency figure includes it.",
            waited.join(", ")
        ));
    }
    out
}

fn capitalized(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map(|f| f.to_uppercase().chain(c).collect())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(step: u32, concurrency: u32, headroom: Option<f64>, wait: Option<f64>) -> StepSummary {
        StepSummary {
            step,
            concurrency,
            ratelimit_headroom_min: headroom,
            retry_wait_share: wait,
            retry_wait_s: wait.map(|w| w * 100.0),
            ..StepSummary::default()
        }
    }

    #[test]
    fn low_headroom_warns_before_the_wall_and_waits_are_said() {
        let rows = [
            step(1, 2, Some(0.9), None),
            step(2, 4, Some(0.08), None),
            step(3, 8, Some(0.0), Some(0.3)),
        ];
        let rows: Vec<&StepSummary> = rows.iter().collect();
        let wall = WallFinding::IsolatedRateLimits { total: 1 };
        let notes = limit_notes(&rows, &wall);
        assert_eq!(
            notes[0],
            "At 8 streams the rate-limit headers showed as little as 0% of a limit left: a step above it will likely meet 429s."
        );
        assert!(notes[1].contains("8 streams 30% (30 s)"), "{notes:?}");
        let at_3 = WallFinding::Wall {
            step: 3,
            concurrency: 8,
            count_429: 10,
            rate_429: 0.1,
            kind: None,
            limit: None,
            counted: None,
            ramp_from: None,
            tpm_total_at_wall: 0.0,
            rps_at_wall: 0.0,
            duration_s_at_wall: 0.0,
        };
        let notes = limit_notes(&rows, &at_3);
        assert!(
            notes[0].starts_with("At 4 streams the rate-limit headers showed as little as 8%")
                && notes[0].ends_with("they warned of the wall at 8 streams."),
            "{notes:?}"
        );
        let calm = [step(1, 2, Some(0.9), Some(0.01))];
        let calm: Vec<&StepSummary> = calm.iter().collect();
        assert!(limit_notes(&calm, &WallFinding::None).is_empty());
    }
}
