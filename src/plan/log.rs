//! `ladder plan` on a run `ladder logs` wrote, asked no target rate: the log's own minutes are
//! the targets. From `timeline.csv`'s requests in flight each minute needed without queueing
//! (`logs::capacity`) and the cap the log's knee shows: the limit (a hosted API) or the copies
//! of the server (one you run) that would have kept every minute, and 95% of them, unqueued,
//! and how many minutes were over the cap. A log does not say which kind of target served it,
//! so both levers are named. Pure: minutes and caps in, plans and words out.

use crate::stats::quantile;
use crate::store::TimelineMinute;
use serde::Serialize;
use std::collections::BTreeMap;

/// One group's plan from its minutes.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LogPlan {
    /// The model (and key) as the log grouped it.
    pub group: String,
    /// Minutes with a need.
    pub minutes: usize,
    /// The minute that needed the most (as written in `timeline.csv`) and how many in flight.
    pub peak_minute: String,
    pub peak_in_flight: f64,
    /// What 95% of minutes needed at most.
    pub p95_in_flight: f64,
    /// The cap the log's knee shows, when it found one.
    pub cap: Option<f64>,
    /// Minutes that needed more than the cap.
    pub minutes_over_cap: usize,
    /// Copies of a server with that cap for the peak, and for 95% of minutes.
    pub replicas_peak: Option<u32>,
    pub replicas_p95: Option<u32>,
}

/// The plan of every group with a need, in the file's order; `caps` by group.
pub fn log_plans(minutes: &[TimelineMinute], caps: &BTreeMap<String, f64>) -> Vec<LogPlan> {
    let mut groups: Vec<&str> = Vec::new();
    for m in minutes {
        if !groups.contains(&m.group.as_str()) {
            groups.push(&m.group);
        }
    }
    groups
        .into_iter()
        .filter_map(|g| {
            let own: Vec<(&str, f64)> = minutes
                .iter()
                .filter(|m| m.group == g)
                .filter_map(|m| Some((m.minute.as_str(), m.needed_in_flight?)))
                .collect();
            let (peak_minute, peak) =
                own.iter()
                    .copied()
                    .fold(None, |a: Option<(&str, f64)>, b| match a {
                        Some(a) if a.1 >= b.1 => Some(a),
                        _ => Some(b),
                    })?;
            let needs: Vec<f64> = own.iter().map(|m| m.1).collect();
            let p95 = quantile(&needs, 0.95).unwrap_or(peak);
            let cap = caps.get(g).copied().filter(|c| *c > 0.0);
            let copies = |need: f64| cap.map(|c| (need / c).ceil().max(1.0) as u32);
            Some(LogPlan {
                group: g.to_string(),
                minutes: needs.len(),
                peak_minute: peak_minute.to_string(),
                peak_in_flight: peak,
                p95_in_flight: p95,
                cap,
                minutes_over_cap: cap.map_or(0, |c| needs.iter().filter(|&&n| n > c).count()),
                replicas_peak: copies(peak),
                replicas_p95: copies(p95),
            })
        })
        .collect()
}

/// `HH:MM` of an RFC 3339 minute ("2026-12-07T14:23:00Z" → "14:23"); the text itself otherwise.
fn clock(minute: &str) -> &str {
    minute.get(11..16).unwrap_or(minute)
}

/// The plans in plain words.
pub fn log_words(plans: &[LogPlan]) -> String {
    let mut out = String::new();
    if plans.is_empty() {
        out.push_str("The log's timeline has no minute to size from (timeline.csv lacks needed_in_flight: rerun `ladder logs`).\n");
        return out;
    }
    for p in plans {
        let n = |v: f64| (v.ceil() as u64).max(1);
        out.push_str(&format!(
            "{} (from the log's {} minutes: each minute's arrivals × the service time below the knee):\n",
            p.group, p.minutes
        ));
        out.push_str(&format!(
            "  without queueing: ≈ {} requests in flight at the peak ({}), ≈ {} for 95% of minutes\n",
            n(p.peak_in_flight),
            clock(&p.peak_minute),
            n(p.p95_in_flight)
        ));
        match (p.cap, p.replicas_peak, p.replicas_p95) {
            (Some(cap), Some(peak), Some(p95)) => {
                out.push_str(&format!(
                    "  against the cap the log shows (≈ {cap:.0}): {} of {} minutes were over it\n",
                    p.minutes_over_cap, p.minutes
                ));
                out.push_str(&format!(
                    "  a hosted API: ask for a concurrency limit of at least {} ({} covers 95% of minutes)\n",
                    n(p.peak_in_flight),
                    n(p.p95_in_flight)
                ));
                out.push_str(&format!(
                    "  a server you run: {peak} {} of the cap ≈ {cap:.0} for the peak ({p95} for 95% of minutes)\n",
                    if peak == 1 { "copy" } else { "copies" }
                ));
            }
            _ => out.push_str(
                "  the log shows no cap (no knee): the limit it had was never reached, so it says only what the traffic needed\n",
            ),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn minute(group: &str, hh_mm: &str, need: Option<f64>) -> TimelineMinute {
        TimelineMinute {
            group: group.into(),
            minute: format!("2026-12-07T{hh_mm}:00Z"),
            requests: 10,
            needed_in_flight: need,
        }
    }

    #[test]
    fn the_peak_the_95th_minute_and_the_minutes_over_the_cap() {
        let mut minutes: Vec<TimelineMinute> = (0..40)
            .map(|i| minute("gpt-4o", &format!("14:{i:02}"), Some(20.0 + f64::from(i))))
            .collect();
        minutes.push(minute("gpt-4o", "14:40", None));
        minutes.push(minute("other", "14:00", Some(3.0)));
        let caps = BTreeMap::from([("gpt-4o".to_string(), 48.0)]);
        let plans = log_plans(&minutes, &caps);
        assert_eq!(plans.len(), 2);
        let p = &plans[0];
        assert_eq!((p.minutes, p.peak_in_flight), (40, 59.0));
        assert_eq!(p.peak_minute, "2026-12-07T14:39:00Z");
        // 49 to 59 are over 48: 11 minutes; the peak needs two copies of 48.
        assert_eq!(p.minutes_over_cap, 11);
        assert_eq!((p.replicas_peak, p.replicas_p95), (Some(2), Some(2)));
        assert!(p.p95_in_flight > 56.0 && p.p95_in_flight < 59.0);
        let w = log_words(&plans);
        assert!(
            w.contains("≈ 59 requests in flight at the peak (14:39)"),
            "{w}"
        );
        assert!(w.contains("11 of 40 minutes were over it"), "{w}");
        assert!(w.contains("concurrency limit of at least 59"), "{w}");
        assert!(w.contains("2 copies of the cap ≈ 48"), "{w}");
        // A group without a knee says only what the traffic needed.
        assert_eq!((plans[1].cap, plans[1].replicas_peak), (None, None));
        assert!(w.contains("the log shows no cap"), "{w}");
        // Minutes of an older timeline (no need): nothing to plan.
        assert!(log_plans(&[minute("m", "14:00", None)], &caps).is_empty());
        assert!(log_words(&[]).contains("rerun `ladder logs`"));
    }
}
