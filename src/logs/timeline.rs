//! A log minute by minute (time-weighted mean and peak in flight, requests/s, tokens/min, TTFT
//! P50/P90 and errors of the requests started in the minute), the minute the knee's level was
//! first crossed, and the one sentence that tells the incident.

use super::inflight::step_function;
use super::LogRequest;
use crate::findings::{Knee, KneeFinding, KneeKind, TPOT_SATURATION_RISE};
use crate::stats::{quantile, StepSummary};
use std::collections::BTreeMap;

const MINUTE_MS: f64 = 60_000.0;

/// The minute (since the epoch, or since a run's start) holding `t_ms`.
pub fn minute_of(t_ms: f64) -> i64 {
    (t_ms / MINUTE_MS).floor() as i64
}

/// One minute (or several joined, see `timeline`) of one group.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Minute {
    pub minute: i64,
    /// Time-weighted mean of the in-flight count over the minute.
    pub in_flight_mean: f64,
    pub in_flight_max: u32,
    pub requests: u64,
    pub rps: f64,
    /// Input + output tokens of the requests started in the minute.
    pub tpm: f64,
    pub ttft_p50_ms: Option<f64>,
    pub ttft_p90_ms: Option<f64>,
    pub errors: u64,
    /// The first minute with a request that met more than the knee's clean level.
    pub knee_crossed: bool,
    /// The first minute whose TTFT P90 reached the knee's threshold (`findings::rise`), from
    /// at least [`MIN_MINUTE_TTFTS`] requests: when the queue began to show.
    pub ttft_rose: bool,
    /// Requests in flight this minute's arrivals needed without queueing (`capacity`).
    pub needed_in_flight: Option<f64>,
}

/// Fewest first-token times in a minute for its TTFT P90 to mark the onset.
pub const MIN_MINUTE_TTFTS: usize = 10;

/// The minutes of one group's requests (`in_flight` in the same order), from its first start
/// to its last end, `bucket_minutes` joined in each row (rates stay per second and per minute). `knee_above`: the knee's clean level, to mark the minute it was first
/// crossed, and `threshold_ms`, the knee's TTFT threshold, to mark the first minute whose TTFT
/// P90 reached it. `ttft_of` gives each request's TTFT as the ladder uses it.
pub fn timeline(
    members: &[&LogRequest],
    in_flight: &[u32],
    sample_rate: f64,
    (knee_above, threshold_ms): (Option<u32>, Option<f64>),
    bucket_minutes: u32,
    ttft_of: impl Fn(&LogRequest) -> Option<f64>,
) -> Vec<Minute> {
    let k = i64::from(bucket_minutes.max(1));
    let bucket_ms = MINUTE_MS * k as f64;
    let bucket_of = |t: f64| minute_of(t).div_euclid(k) * k;
    let steps = step_function(members, sample_rate);
    let mut rows: BTreeMap<i64, (Minute, Vec<f64>)> = BTreeMap::new();
    let (Some(first), Some(last)) = (steps.first(), steps.last()) else {
        return Vec::new();
    };
    for m in (bucket_of(first.0)..=bucket_of(last.0)).step_by(k as usize) {
        rows.insert(
            m,
            (
                Minute {
                    minute: m,
                    ..Minute::default()
                },
                Vec::new(),
            ),
        );
    }
    for w in steps.windows(2) {
        let (a, b, c) = (w[0].0, w[1].0, w[0].1);
        let mut t = a;
        while t < b {
            let m = bucket_of(t);
            let end = ((m + k) as f64 * MINUTE_MS).min(b);
            if let Some((row, _)) = rows.get_mut(&m) {
                row.in_flight_mean += f64::from(c) * (end - t) / bucket_ms;
                row.in_flight_max = row.in_flight_max.max(c);
            }
            t = end;
        }
    }
    let (mut crossed, mut rose) = (false, false);
    for r in members {
        let Some((row, ttfts)) = rows.get_mut(&bucket_of(r.start_ms)) else {
            continue;
        };
        row.requests += 1;
        let tokens = r.input_tokens.unwrap_or(0) + r.output_tokens.unwrap_or(0);
        row.tpm += tokens as f64 / sample_rate / k as f64;
        if r.error_class.is_some() {
            row.errors += 1;
        } else if let Some(t) = ttft_of(r) {
            ttfts.push(t);
        }
    }
    let first_cross = knee_above.and_then(|k| {
        members
            .iter()
            .zip(in_flight)
            .filter(|(_, &c)| c > k)
            .map(|(r, _)| r.start_ms)
            .reduce(f64::min)
    });
    rows.into_values()
        .map(|(mut row, ttfts)| {
            row.rps = row.requests as f64 / (60.0 * k as f64) / sample_rate;
            row.ttft_p50_ms = quantile(&ttfts, 0.5);
            row.ttft_p90_ms = quantile(&ttfts, 0.9);
            if !crossed && first_cross.is_some_and(|t| bucket_of(t) == row.minute) {
                row.knee_crossed = true;
                crossed = true;
            }
            let risen = threshold_ms.is_some_and(|t| row.ttft_p90_ms.is_some_and(|p| p >= t));
            if !rose && risen && ttfts.len() >= MIN_MINUTE_TTFTS {
                row.ttft_rose = true;
                rose = true;
            }
            row
        })
        .collect()
}

/// `HH:MM` (UTC) of a minute since the epoch.
pub fn clock(minute: i64) -> String {
    let m = minute.rem_euclid(24 * 60);
    format!("{:02}:{:02}", m / 60, m % 60)
}

/// The incident in one sentence: "14:02–14:40: in flight 30 → 90; TTFT P90 0.6 → 2.3 s once
/// more than 64 were in flight (first at 14:17): queueing at a concurrency limit near 64, TPOT
/// flat". `levels` are the group's summary rows; `e2e_only` names the metric E2E when the log
/// has no first-token time.
pub fn story(
    minutes: &[Minute],
    knee: &KneeFinding,
    levels: &[StepSummary],
    e2e_only: bool,
) -> String {
    let (Some(first), Some(last)) = (minutes.first(), minutes.last()) else {
        return "The log holds no requests.".into();
    };
    let peak = minutes.iter().map(|m| m.in_flight_mean).fold(0.0, f64::max);
    let span = format!(
        "{}–{}: in flight {:.0} → {:.0}",
        clock(first.minute),
        clock(last.minute + 1),
        first.in_flight_mean,
        peak
    );
    let metric = if e2e_only {
        "E2E P90 (the log has no first-token time)"
    } else {
        "TTFT P90"
    };
    match knee {
        KneeFinding::Knee(k) => {
            let top = levels
                .iter()
                .filter(|s| s.concurrency >= k.concurrency)
                .filter_map(|s| if e2e_only { s.e2e_p90_ms } else { s.ttft_p90_ms })
                .fold(k.at_knee.ttft_p90_ms, f64::max);
            let when = onset_words(minutes, k.max_clean_concurrency, e2e_only);
            format!(
                "{span}; {metric} {} once more than {} were in flight{when}: {}",
                from_to(k.reference.ttft_p90_ms, top),
                k.max_clean_concurrency,
                cause(k)
            )
        }
        KneeFinding::None { highest_concurrency, .. } => {
            format!("{span}; no knee: {metric} stayed flat up to {highest_concurrency} in flight")
        }
        KneeFinding::NotEnoughSamples { concurrency, n, needed, .. } => format!(
            "{span}; no knee judged: {n} successful requests at {concurrency} in flight, {needed} needed"
        ),
        KneeFinding::NoSteps => format!("{span}; no levels to judge"),
    }
}

/// When the incident began: " (first at 14:12)", the first minute whose TTFT P90 reached the
/// knee's threshold, with the minute the knee's level was first exceeded beside it when that
/// came earlier or later: " (TTFT first rose at 14:12; more than 48 were first in flight at
/// 14:07)". Without a risen minute, the crossing's minute; empty without either.
fn onset_words(minutes: &[Minute], above: u32, e2e_only: bool) -> String {
    let rose = minutes.iter().find(|m| m.ttft_rose).map(|m| m.minute);
    let crossed = minutes.iter().find(|m| m.knee_crossed).map(|m| m.minute);
    let metric = if e2e_only { "E2E" } else { "TTFT" };
    match (rose, crossed) {
        (Some(r), Some(c)) if r != c => format!(
            " ({metric} first rose at {}; more than {above} were first in flight at {})",
            clock(r),
            clock(c)
        ),
        (Some(m), _) | (None, Some(m)) => format!(" (first at {})", clock(m)),
        (None, None) => String::new(),
    }
}

fn from_to(a_ms: f64, b_ms: f64) -> String {
    if b_ms >= 1000.0 {
        format!("{:.1} → {:.1} s", a_ms / 1000.0, b_ms / 1000.0)
    } else {
        format!("{a_ms:.0} → {b_ms:.0} ms")
    }
}

fn cause(k: &Knee) -> String {
    let tpot = match (k.reference.tpot_p50_ms, k.at_knee.tpot_p50_ms) {
        (Some(a), Some(b)) if a > 0.0 && (b / a - 1.0).abs() <= TPOT_SATURATION_RISE => {
            ", TPOT flat".to_string()
        }
        (Some(a), Some(b)) => format!(", TPOT {a:.1} → {b:.1} ms"),
        _ => String::new(),
    };
    match k.kind {
        KneeKind::Queueing => match k.estimated_cap {
            Some(cap) => format!("queueing at a concurrency limit near {cap:.0}{tpot}"),
            None => format!("queueing at a concurrency limit{tpot}"),
        },
        KneeKind::Saturation => format!("the backend slowed every request down{tpot}"),
        KneeKind::RateLimited => format!("rate-limited ({:.0}% 429s){tpot}", k.rate_429 * 100.0),
        KneeKind::Prefill => format!("longer prompts{tpot}"),
        KneeKind::CacheMisses => format!("prefill of cache misses{tpot}"),
        KneeKind::Unclassified => "cause not classified (no TPOT in the log)".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn minutes_hold_means_peaks_rates_and_the_first_crossing() {
        let rs: Vec<LogRequest> = (0..4)
            .map(|i| LogRequest {
                start_ms: 60_000.0 + f64::from(i) * 30_000.0,
                end_ms: 60_000.0 + f64::from(i) * 30_000.0 + 60_000.0,
                ttft_ms: Some(100.0 * f64::from(i + 1)),
                output_tokens: Some(10),
                ..LogRequest::default()
            })
            .collect();
        let refs: Vec<&LogRequest> = rs.iter().collect();
        let counts = super::super::inflight::counts_at_start(&rs, 1.0);
        assert_eq!(counts, [1, 2, 2, 2]);
        let m = timeline(&refs, &counts, 1.0, (Some(1), Some(150.0)), 1, |r| {
            r.ttft_ms
        });
        let joined = timeline(&refs, &counts, 1.0, (Some(1), None), 2, |r| r.ttft_ms);
        assert_eq!(
            joined
                .iter()
                .map(|m| (m.minute, m.requests))
                .collect::<Vec<_>>(),
            [(0, 2), (2, 2)]
        );
        assert!((joined[0].rps - 2.0 / 120.0).abs() < 1e-9);
        assert_eq!(m.iter().map(|m| m.minute).collect::<Vec<_>>(), [1, 2, 3]);
        assert!((m[0].in_flight_mean - 1.5).abs() < 1e-9, "{m:?}");
        assert_eq!((m[0].in_flight_max, m[0].requests, m[0].tpm), (2, 2, 20.0));
        assert!(m[0].knee_crossed && !m[1].knee_crossed);
        assert_eq!(m[1].ttft_p50_ms, Some(350.0));
        assert_eq!(clock(14 * 60 + 2), "14:02");
    }
}
