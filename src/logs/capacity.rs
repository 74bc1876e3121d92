//! Capacity over time: what limit would have kept requests from queueing at every minute of the
//! log, and for how many minutes the traffic was over the cap it shows. Production traffic has
//! peaks; a load test's single cap does not say how often they crossed it. Per minute, Little's
//! law on that minute's arrivals and the service time below the knee (the mean E2E of the
//! knee's clean level: a request that did not wait) gives the requests in flight the minute
//! needed; the cap is the knee's estimate. Pure: `incident` fills the minutes and the sentence.

use super::timeline::{clock, Minute};
use crate::findings::KneeFinding;
use crate::stats::{quantile, StepSummary};

/// One group's capacity over time.
#[derive(Debug, Clone, PartialEq)]
pub struct Needs {
    /// The service time Little's law multiplies the arrivals by (ms).
    pub service_ms: f64,
    /// The knee's estimated cap, when it found one.
    pub cap: Option<f64>,
    /// The minute that needed the most in flight, and how many.
    pub peak: (i64, f64),
    /// The 95th-percentile minute's need.
    pub p95: f64,
    /// Minutes whose need exceeded the cap (0 without a cap), of all minutes.
    pub over: usize,
    pub minutes: usize,
}

impl Needs {
    /// "Capacity over time: without queueing, the peak minute (14:23) needed ≈ 61 requests in
    /// flight and the 95th-percentile minute ≈ 55, against a cap ≈ 48: 12 of 41 minutes were
    /// over it (Little's law: each minute's arrivals × 3.9 s of service below the knee)."
    pub fn sentence(&self) -> String {
        let against = match self.cap {
            Some(cap) => format!(
                ", against a cap ≈ {}: {} of {} minutes were over it",
                count(cap),
                self.over,
                self.minutes
            ),
            None => ": the log shows no cap to hold them against".to_string(),
        };
        format!(
            "Capacity over time: without queueing, the peak minute ({}) needed ≈ {} requests in flight and the 95th-percentile minute ≈ {}{against} (Little's law: each minute's arrivals × {} of service below the knee).",
            clock(self.peak.0),
            count(self.peak.1),
            count(self.p95),
            duration(self.service_ms)
        )
    }
}

/// A count of requests in flight: one decimal below 20, where rounding would hide that 6.4 is
/// over a cap of 5.8.
fn count(v: f64) -> String {
    if v < 20.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.0}")
    }
}

fn duration(ms: f64) -> String {
    if ms >= 1000.0 {
        format!("{:.1} s", ms / 1000.0)
    } else {
        format!("{ms:.0} ms")
    }
}

/// Fills each minute's `needed_in_flight` and returns the group's needs; `None` when no level
/// has a mean E2E to serve as the service time. `levels` are the group's summaries; the
/// service time is the knee's clean level's mean E2E, or without a knee the successes' mean E2E
/// over every level (none of them queued by the knee rule's measure).
pub fn needs(minutes: &mut [Minute], levels: &[StepSummary], knee: &KneeFinding) -> Option<Needs> {
    let (service_ms, cap) = match knee {
        KneeFinding::Knee(k) => (
            levels
                .iter()
                .find(|s| s.concurrency == k.reference.concurrency)
                .and_then(|s| s.e2e_mean_ms)?,
            k.estimated_cap,
        ),
        _ => {
            let (sum, n) = levels
                .iter()
                .filter_map(|s| Some((s.e2e_mean_ms? * s.succeeded as f64, s.succeeded)))
                .fold((0.0, 0), |(a, n), (v, k)| (a + v, n + k));
            ((n > 0).then(|| sum / n as f64)?, None)
        }
    };
    if service_ms.is_nan() || service_ms <= 0.0 || minutes.is_empty() {
        return None;
    }
    for m in minutes.iter_mut() {
        m.needed_in_flight = Some(m.rps * service_ms / 1000.0);
    }
    let need: Vec<f64> = minutes.iter().filter_map(|m| m.needed_in_flight).collect();
    let peak = minutes
        .iter()
        .filter_map(|m| Some((m.minute, m.needed_in_flight?)))
        .fold(
            (minutes[0].minute, 0.0),
            |a, b| if b.1 > a.1 { b } else { a },
        );
    Some(Needs {
        service_ms,
        cap,
        peak,
        p95: quantile(&need, 0.95).unwrap_or(peak.1),
        over: cap.map_or(0, |c| need.iter().filter(|&&n| n > c).count()),
        minutes: need.len(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn minute(minute: i64, rps: f64) -> Minute {
        Minute {
            minute,
            rps,
            ..Minute::default()
        }
    }

    #[test]
    fn each_minute_needs_its_arrivals_times_the_unqueued_service_time() {
        let mut minutes: Vec<Minute> = (0..20)
            .map(|i| minute(840 + i, 2.0 + f64::from(i as u32)))
            .collect();
        let levels = vec![StepSummary {
            concurrency: 8,
            succeeded: 100,
            e2e_mean_ms: Some(2_000.0),
            ..StepSummary::default()
        }];
        let n = needs(&mut minutes, &levels, &KneeFinding::NoSteps).unwrap();
        // 2 to 21 requests/s × 2 s: 4 to 42 in flight; no knee, no cap.
        assert_eq!(minutes[0].needed_in_flight, Some(4.0));
        assert_eq!(n.peak, (859, 42.0));
        assert_eq!((n.over, n.minutes, n.cap), (0, 20, None));
        assert!(n.p95 > 38.0 && n.p95 <= 42.0, "{}", n.p95);
        let s = n.sentence();
        assert!(s.contains("the peak minute (14:19) needed ≈ 42"), "{s}");
        assert!(s.contains("no cap"), "{s}");
        assert!(s.contains("2.0 s of service"), "{s}");
        // With a cap of 30: minutes needing more than 30 (rps above 15) are over it.
        let n = Needs {
            cap: Some(30.0),
            over: 6,
            ..n
        };
        assert!(n
            .sentence()
            .contains("against a cap ≈ 30: 6 of 20 minutes were over it"));
        // Nothing to multiply by: no answer.
        assert!(needs(&mut minutes, &[], &KneeFinding::NoSteps).is_none());
    }
}
