//! Open-loop (rate-mode) notes: throughput saturation, dropped arrivals and a client that fell
//! behind its schedule.
//!
//! Saturation is judged against the arrivals the step really had, not the nominal rate: a seeded
//! Poisson schedule of 120 arrivals at 10 req/s may well span 14 s instead of 12, and a server
//! that answered every one of them on time has kept up. The signal is the backlog: when the
//! server serves μ requests/s below the arrival rate λ, each request waits for those before it,
//! so its time from scheduled send to last byte grows along the step with slope λ/μ − 1. A
//! least-squares fit of that delay against the scheduled time (a streaming [`Backlog`] kept per
//! step) gives the served rate λ̂/(1 + slope), and a standard error that keeps latency scatter
//! from being read as a trend. Without records (findings rebuilt from `summary.csv` alone) the
//! old comparison with the nominal rate remains, widened by the chance spread of the schedule.

use super::kept_up::{client_fault, Shortfall};
use super::self_check::LOOP_LAG_SUSPECT_MS;
use crate::model::RequestRecord;
use crate::stats::StepSummary;
use serde::{Deserialize, Serialize};

/// Served rate below this share of the arrival rate means the server did not keep up.
pub const ACHIEVED_RATE_MIN_SHARE: f64 = 0.9;
/// Successful requests a step needs before its saturation is judged.
const MIN_SATURATION_SAMPLES: u64 = 20;
/// The backlog trend must exceed this many standard errors: latency scatter is not a trend.
const SLOPE_SE: f64 = 3.0;
/// Without records: the nominal rate is allowed this many relative standard deviations (1/√n)
/// of a Poisson schedule's span before the achieved rate is called short of it.
const NOMINAL_SD: f64 = 3.0;

/// Streaming least-squares fit of each successful request's delay (scheduled send → last byte)
/// against its scheduled send time, plus the first and last scheduled times of the step.
/// Rate-mode records only (they carry a send lag).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Backlog {
    n: u64,
    mean_x: f64,
    mean_y: f64,
    /// Σ (x − x̄)², Σ (y − ȳ)², Σ (x − x̄)(y − ȳ) (Welford's co-moments).
    sxx: f64,
    syy: f64,
    sxy: f64,
    /// Scheduled times of every attempted request (ms from the run's start).
    first_ms: f64,
    last_ms: f64,
    arrivals: u64,
}

/// What the fit says about a step.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Served {
    /// Realized arrival rate: (arrivals − 1) / (last − first scheduled time), requests/s.
    pub arriving: f64,
    /// Served rate: `arriving` / (1 + slope).
    pub served: f64,
    /// Extra delay per second of the step (dimensionless) and its standard error.
    pub slope: f64,
    pub slope_se: f64,
}

impl Backlog {
    /// Counts one record (closed-loop records, without a send lag, are ignored).
    pub fn add(&mut self, r: &RequestRecord) {
        let Some(lag) = r.send_lag_ms.filter(|l| l.is_finite()) else {
            return;
        };
        let x = r.started_at_ms - lag;
        if self.arrivals == 0 {
            (self.first_ms, self.last_ms) = (x, x);
        }
        self.arrivals += 1;
        self.first_ms = self.first_ms.min(x);
        self.last_ms = self.last_ms.max(x);
        let Some(e2e) = r.e2e_ms.filter(|e| r.is_ok() && e.is_finite()) else {
            return;
        };
        self.push(x, e2e + lag);
    }

    fn push(&mut self, x: f64, y: f64) {
        self.n += 1;
        let n = self.n as f64;
        let dx = x - self.mean_x;
        let dy = y - self.mean_y;
        self.mean_x += dx / n;
        self.mean_y += dy / n;
        self.sxx += dx * (x - self.mean_x);
        self.syy += dy * (y - self.mean_y);
        self.sxy += dx * (y - self.mean_y);
    }

    /// The fit, when there are enough successes over a schedule of non-zero length.
    pub fn served(&self) -> Option<Served> {
        let span_s = (self.last_ms - self.first_ms) / 1000.0;
        if self.n < MIN_SATURATION_SAMPLES || self.arrivals < 2 || span_s <= 0.0 || self.sxx <= 0.0
        {
            return None;
        }
        let arriving = (self.arrivals - 1) as f64 / span_s;
        let slope = self.sxy / self.sxx;
        let resid = ((self.syy - slope * self.sxy) / (self.n as f64 - 2.0)).max(0.0);
        let slope_se = (resid / self.sxx).sqrt();
        Some(Served {
            arriving,
            served: arriving / (1.0 + slope.max(0.0)),
            slope,
            slope_se,
        })
    }
}

/// The one saturation rule. With a backlog fit: the served rate is below 90% of the realized
/// arrival rate and the trend clears 3 standard errors. Without one: the step's achieved RPS is
/// below 90% of the nominal rate after allowing 3/√n for the schedule's chance spread.
/// Returns the sentence.
pub fn saturation(s: &StepSummary, fit: Option<Served>, step: &str) -> Option<String> {
    let offered = s.offered_rps?;
    if s.succeeded < MIN_SATURATION_SAMPLES {
        return None;
    }
    match fit {
        Some(f) => (f.served < ACHIEVED_RATE_MIN_SHARE * f.arriving
            && f.slope > SLOPE_SE * f.slope_se)
            .then(|| {
                format!(
                    "{step}: throughput saturation: about {:.1} req/s served of {:.1} arriving ({offered:.0} offered); each request waited {:.0} ms longer per second of the step: the server does not keep up with this rate.",
                    f.served, f.arriving, f.slope * 1000.0
                )
            }),
        None => {
            let n = s.attempted.max(1) as f64;
            let floor = ACHIEVED_RATE_MIN_SHARE * offered / (1.0 + NOMINAL_SD / n.sqrt());
            (s.rps < floor).then(|| {
                format!(
                    "{step}: throughput saturation: {:.1} req/s achieved of {offered:.0} offered (below {floor:.1}, which allows for the chance spread of {} arrivals); the server does not keep up with this rate.",
                    s.rps, s.attempted
                )
            })
        }
    }
}

/// Open-loop steps: saturation, dropped arrivals, and a send lag that says the client could not
/// keep the schedule. `extra` has one entry per row (empty without records). A step whose sends
/// fell behind beyond the tolerance (`kept_up`) gets no saturation note: its backlog counts
/// from the scheduled times, so it would blame the server for the client's lateness.
pub(super) fn rate_notes(rows: &[&StepSummary], extra: &[super::StepExtras]) -> Vec<String> {
    let fits: Vec<Option<Served>> = extra.iter().map(|e| e.backlog.served()).collect();
    let mut notes = Vec::new();
    for (i, s) in rows.iter().enumerate() {
        if s.offered_rps.is_none() {
            continue;
        }
        let step = format!("At {}", s.ladder_unit.describe(s.concurrency));
        let late = client_fault(s).is_some_and(|f| {
            f.shortfalls
                .iter()
                .any(|x| matches!(x, Shortfall::LateSends { .. }))
        });
        if !late {
            notes.extend(saturation(s, fits.get(i).copied().flatten(), &step));
        }
        if s.dropped > 0 {
            notes.push(format!(
                "{step}: {} arrivals dropped (max_concurrency requests were in flight); they are not in n.",
                s.dropped
            ));
        }
        if let Some(lag) = s.send_lag_p99_ms.filter(|l| *l > LOOP_LAG_SUSPECT_MS) {
            notes.push(format!(
                "{step}: requests went out {lag:.1} ms after their scheduled time (P99): the client fell behind the schedule; see TTFT from the scheduled time."
            ));
        }
    }
    notes
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::LadderUnit;

    /// A successful rate-mode record scheduled at `sched_ms`, sent `lag_ms` late, ending
    /// `e2e_ms` after it was sent.
    fn rec(sched_ms: f64, lag_ms: f64, e2e_ms: f64) -> RequestRecord {
        RequestRecord {
            started_at_ms: sched_ms + lag_ms,
            send_lag_ms: Some(lag_ms),
            e2e_ms: Some(e2e_ms),
            ..RequestRecord::default()
        }
    }

    /// The summary row of a 10 req/s step whose records are `recs`, with the whole-step RPS
    /// computed as `summarize_step` does (successes / first send to last end).
    fn step(recs: &[RequestRecord]) -> StepSummary {
        let first = recs
            .iter()
            .map(|r| r.started_at_ms)
            .fold(f64::MAX, f64::min);
        let last = recs
            .iter()
            .map(|r| r.started_at_ms + r.e2e_ms.unwrap())
            .fold(0.0, f64::max);
        let n = recs.len() as u64;
        StepSummary {
            concurrency: 10,
            ladder_unit: LadderUnit::Rps,
            offered_rps: Some(10.0),
            attempted: n,
            succeeded: n,
            rps: n as f64 / ((last - first) / 1000.0),
            ..StepSummary::default()
        }
    }

    fn fit(recs: &[RequestRecord]) -> Option<Served> {
        let mut b = Backlog::default();
        recs.iter().for_each(|r| b.add(r));
        b.served()
    }

    /// Latency scatter that is not a trend: 400-900 ms, deterministic.
    fn scatter(i: usize) -> f64 {
        400.0 + ((i * 37) % 11) as f64 * 50.0
    }

    #[test]
    fn a_long_schedule_the_server_kept_up_with_is_not_saturation() {
        // 120 arrivals at 10 req/s that happened to span 14.3 s (one seed does that): every
        // request answered in under a second, no backlog.
        let recs: Vec<RequestRecord> = (0..120)
            .map(|i| rec(i as f64 * 120.0, 0.2, scatter(i)))
            .collect();
        let s = step(&recs);
        // The nominal comparison alone would have called it: 8.1 < 9 req/s.
        assert!(s.rps < ACHIEVED_RATE_MIN_SHARE * 10.0, "{}", s.rps);
        let f = fit(&recs).expect("a fit");
        assert!((f.arriving - 119.0 / 14.28).abs() < 1e-9, "{f:?}");
        assert!(f.slope.abs() < 0.05, "{f:?}");
        assert_eq!(saturation(&s, Some(f), "At 10 req/s"), None);
        // Without records the chance allowance for 120 arrivals (3/√120) keeps it quiet too.
        assert_eq!(saturation(&s, None, "At 10 req/s"), None);
    }

    #[test]
    fn a_server_serving_five_per_second_of_ten_is_saturated() {
        // One request at a time, 200 ms each, arrivals every 100 ms: a growing queue.
        let mut end = 0.0_f64;
        let recs: Vec<RequestRecord> = (0..120)
            .map(|i| {
                let sched = i as f64 * 100.0;
                end = end.max(sched) + 200.0;
                rec(sched, 0.1, end - sched - 0.1)
            })
            .collect();
        let s = step(&recs);
        let f = fit(&recs).expect("a fit");
        assert!((f.served - 5.0).abs() < 0.1, "{f:?}");
        let note = saturation(&s, Some(f), "At 10 req/s").expect("saturation");
        assert!(
            note.starts_with("At 10 req/s: throughput saturation: about 5.0 req/s served of 10.0 arriving (10 offered)"),
            "{note}"
        );
        let note = saturation(&s, None, "At 10 req/s").expect("saturation without records");
        assert!(note.contains("5.0 req/s achieved of 10 offered"), "{note}");
        // The same backlog from a client whose sends went out late is not the server's.
        let extra = super::super::StepExtras {
            backlog: {
                let mut b = Backlog::default();
                recs.iter().for_each(|r| b.add(r));
                b
            },
            ..Default::default()
        };
        let said = |lag: f64| {
            let s = StepSummary {
                send_lag_p99_ms: Some(lag),
                ..s.clone()
            };
            rate_notes(&[&s], std::slice::from_ref(&extra))
        };
        assert!(said(1.0)[0].contains("throughput saturation"));
        let late = said(900.0);
        assert!(!late.iter().any(|n| n.contains("saturation")), "{late:?}");
        assert!(late
            .iter()
            .any(|n| n.contains("900.0 ms after their scheduled time")));
    }

    #[test]
    fn scatter_alone_or_too_few_requests_is_not_saturation() {
        // A weak upward drift buried in large scatter: below 3 standard errors.
        let recs: Vec<RequestRecord> = (0..40)
            .map(|i| {
                rec(
                    i as f64 * 100.0,
                    0.0,
                    300.0 + ((i * 7919) % 13) as f64 * 400.0,
                )
            })
            .collect();
        let f = fit(&recs).expect("a fit");
        assert!(f.slope < SLOPE_SE * f.slope_se, "{f:?}");
        assert_eq!(saturation(&step(&recs), Some(f), "x"), None);
        // 19 successes are too few to judge at all.
        let few: Vec<RequestRecord> = (0..19).map(|i| rec(i as f64, 0.0, 1.0)).collect();
        assert_eq!(fit(&few), None);
        let mut s = step(&few);
        s.rps = 0.1;
        assert_eq!(saturation(&s, None, "x"), None);
        // Closed-loop records carry no send lag and are not counted.
        let mut b = Backlog::default();
        b.add(&RequestRecord {
            e2e_ms: Some(5.0),
            ..RequestRecord::default()
        });
        assert_eq!(b, Backlog::default());
    }
}
