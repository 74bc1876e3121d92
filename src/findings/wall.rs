//! The rate-limit wall: the first step from which on 429s stay frequent, its limit kind from
//! the rate-limit headers, and the report sentence with the throughput at the wall.

use super::{rate, rate_limited, StepExtras, WallFinding};
use crate::model::LadderUnit;
use crate::model::LimitKind;
use crate::stats::StepSummary;

pub(super) fn find_wall(rows: &[&StepSummary], n429: &[u64], extra: &[StepExtras]) -> WallFinding {
    let hit = |i: usize| rate_limited(n429[i], rows[i].attempted);
    if let Some(w) = (0..rows.len()).find(|&w| (w..rows.len()).all(hit)) {
        let (requests, tokens) = extra[w..].iter().fold((0, 0), |(r, t), e| {
            (r + e.limit_requests, t + e.limit_tokens)
        });
        let kind = match requests.cmp(&tokens) {
            std::cmp::Ordering::Greater => Some(LimitKind::Requests),
            std::cmp::Ordering::Less => Some(LimitKind::Tokens),
            std::cmp::Ordering::Equal => None,
        };
        let s = rows[w];
        return WallFinding::Wall {
            step: s.step,
            concurrency: s.concurrency,
            count_429: n429[w],
            rate_429: rate(n429[w], s.attempted),
            kind,
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

pub(super) fn wall_sentence(wall: &WallFinding, unit: LadderUnit) -> Option<String> {
    match wall {
        WallFinding::None => None,
        WallFinding::IsolatedRateLimits { total } => Some(format!(
            "Isolated 429s ({total} in total); no rate-limit wall."
        )),
        WallFinding::Wall {
            concurrency,
            rate_429,
            kind,
            tpm_total_at_wall,
            rps_at_wall,
            duration_s_at_wall,
            ..
        } => {
            let tokens = format!("{} tokens/min", compact(*tpm_total_at_wall));
            let requests = format!("{} requests/min", compact(rps_at_wall * 60.0));
            let detail = match kind {
                Some(LimitKind::Tokens) => {
                    format!("token limit; ≈ {tokens} got through at the wall step")
                }
                Some(LimitKind::Requests) => {
                    format!("request limit; ≈ {requests} got through at the wall step")
                }
                None => format!(
                    "limit kind unknown; ≈ {tokens} and {requests} got through at the wall step"
                ),
            };
            // A per-minute bucket starts full: a step shorter than a minute sees its burst, so
            // the rate that got through overstates the sustained limit.
            let caveat = if *duration_s_at_wall > 0.0 && *duration_s_at_wall < 60.0 {
                format!(
                    " That step lasted {duration_s_at_wall:.0} s: a per-minute limit lets a burst through in less than a minute, so the sustained limit is lower; use `duration: 1m` steps to measure it."
                )
            } else {
                String::new()
            };
            Some(format!(
                "Rate-limit wall {}: {:.1}% of requests got 429 ({detail}).{caveat}",
                unit.at(*concurrency),
                rate_429 * 100.0
            ))
        }
    }
}

/// 1.9M, 45k, 1.2k, 720.
fn compact(x: f64) -> String {
    if x >= 1e6 {
        format!("{:.1}M", x / 1e6)
    } else if x >= 1e4 {
        format!("{:.0}k", x / 1e3)
    } else if x >= 1e3 {
        format!("{:.1}k", x / 1e3)
    } else {
        format!("{x:.0}")
    }
}
