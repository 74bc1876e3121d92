//! Whether the client kept up with its own plan at a step (docs/gate.md, "The client must keep
//! up"): a load tester that fell behind measured a lighter or later load than the step says, so
//! the step is invalid for the gate. One rule over a step's self-check figures, read by the
//! run's findings (a line saying so) and by `compare` (the step's checks set aside as
//! inconclusive, on either side of a diff).
//!
//! The rule reads what the client measured of itself, never the server's figures: the steady
//! window's requests in flight against the streams (closed loop, the Little's-law measure of the
//! thin-load note), the send lag against the schedule (rate mode), and the event loop's lateness.
//! A step without these figures (a production log's level, another tool's run) is not invalid:
//! it is unverified, which the importers say ("client not verified").

use crate::model::LadderUnit;
use crate::stats::StepSummary;
use serde::Serialize;

/// Achieved concurrency below this share of the target means the client did not keep the
/// streams in flight. The thin-load note and the invalid step read the same measure
/// ([`thin_load`]).
pub const ACHIEVED_CONCURRENCY_MIN_SHARE: f64 = 0.8;

/// A steady window shorter than this says nothing of a client keeping its streams in flight: a
/// step of a few milliseconds against a server that answers in less than one (the end-to-end
/// suite's TLS and keep-alive tests) spends more time opening connections than in requests.
/// The same half second the event loop's probe needs for its P99.
pub const MIN_STEADY_S: f64 = 0.5;

/// Lateness (P99) beyond which the client fell behind its plan: a rate step's sends after their
/// scheduled time, or the event loop's 50 ms timer. Ordinary runs of the end-to-end suite on a
/// shared 2-core machine, four tests at a time with the simulator in the same process, stay
/// under a third of it (docs/gate.md has the figures); the notes' 5 ms (`LOOP_LAG_SUSPECT_MS`)
/// is a suspicion, this is a client that could not do what it was asked.
pub const LATE_TOLERANCE_MS: f64 = 250.0;

/// One way a step's client fell behind, with what was measured.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Shortfall {
    /// Closed loop: fewer requests in flight in the steady window than 80% of the streams.
    ThinLoad { in_flight: f64, streams: u32 },
    /// Rate mode: requests went out late against their schedule (send lag P99, ms).
    LateSends { p99_ms: f64 },
    /// The event loop's timer ran late (P99, ms): ready work waited for the client.
    LateLoop { p99_ms: f64 },
}

impl Shortfall {
    /// "only 31.2 of 50 streams in flight (steady window; at least 40.0 needed)".
    pub fn words(&self) -> String {
        match *self {
            Shortfall::ThinLoad { in_flight, streams } => format!(
                "only {in_flight:.1} of {streams} streams in flight (steady window; at least {:.1} needed)",
                ACHIEVED_CONCURRENCY_MIN_SHARE * f64::from(streams)
            ),
            Shortfall::LateSends { p99_ms } => format!(
                "requests went out {p99_ms:.0} ms after their scheduled time (P99; tolerance {LATE_TOLERANCE_MS:.0} ms)"
            ),
            Shortfall::LateLoop { p99_ms } => format!(
                "its event loop ran {p99_ms:.0} ms late (P99; tolerance {LATE_TOLERANCE_MS:.0} ms)"
            ),
        }
    }
}

/// Why a step is invalid for the gate: every way its client fell behind.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ClientFault {
    pub shortfalls: Vec<Shortfall>,
}

impl ClientFault {
    /// The shortfalls in words, joined: "only 4.0 of 8 streams in flight (…); its event loop …".
    pub fn causes(&self) -> String {
        let words: Vec<String> = self.shortfalls.iter().map(Shortfall::words).collect();
        words.join("; ")
    }
}

/// What to do about a client that did not keep up, for a ladder counted in `unit`.
pub fn fix(unit: LadderUnit) -> &'static str {
    match unit {
        LadderUnit::Streams => "fix: fewer streams per process or `--shard`",
        LadderUnit::Rps => "fix: a lower rate per process or `--shard`",
        LadderUnit::Agents => "fix: fewer agents per process or `--shard`",
        LadderUnit::PromptTokens | LadderUnit::Speed => {
            "fix: less load per process, or a machine whose cores are not busy with other work"
        }
    }
}

/// The steady window's requests in flight when a closed-loop step held fewer than 80% of its
/// streams there (Little's law), else `None`. Fast failures (a wrong key) are not a client
/// bottleneck, and a step of fewer than two requests per stream, or whose steady window lasted
/// under [`MIN_STEADY_S`], has no steady window worth reading; nor has a step without one (too
/// short, or a production log's level). Nor has a
/// step whose requests spent more than the missing 20% of their time waiting to retry (a 429's
/// Retry-After, a backoff: `retry_wait_share`): the measure counts attempts in flight, and those
/// streams waited at the server's request, which the rate-limit wall reports.
pub fn thin_load(s: &StepSummary) -> Option<f64> {
    // Only closed-loop steps promise a number of streams in flight.
    if s.ladder_unit != LadderUnit::Streams {
        return None;
    }
    let steady = s.concurrency_steady?;
    let worth = s.attempted >= 2 * u64::from(s.concurrency)
        && s.succeeded * 2 >= s.attempted
        && s.steady_s.map_or(true, |t| t >= MIN_STEADY_S);
    let retried = s.retry_wait_share.unwrap_or(0.0) > 1.0 - ACHIEVED_CONCURRENCY_MIN_SHARE;
    let thin = steady < ACHIEVED_CONCURRENCY_MIN_SHARE * f64::from(s.concurrency);
    (worth && !retried && thin).then_some(steady)
}

/// The one rule: a step is invalid for the gate when its client fell behind its own plan beyond
/// the tolerances (too few streams in flight, sends or the event loop later than
/// [`LATE_TOLERANCE_MS`] at P99). The client's CPU share alone is not a cause: with the
/// embedded simulator it counts the server's work too, a multi-threaded client may pass one
/// core and keep up, and when a busy CPU does hold the client back it shows in these three.
pub fn client_fault(s: &StepSummary) -> Option<ClientFault> {
    let late = |v: Option<f64>| v.filter(|ms| *ms > LATE_TOLERANCE_MS);
    let shortfalls: Vec<Shortfall> = [
        thin_load(s).map(|in_flight| Shortfall::ThinLoad {
            in_flight,
            streams: s.concurrency,
        }),
        late(s.send_lag_p99_ms).map(|p99_ms| Shortfall::LateSends { p99_ms }),
        late(s.loop_lag_p99_ms).map(|p99_ms| Shortfall::LateLoop { p99_ms }),
    ]
    .into_iter()
    .flatten()
    .collect();
    (!shortfalls.is_empty()).then_some(ClientFault { shortfalls })
}

/// The findings lines of a model's invalid steps, in ladder order: they come first among its
/// notes, before any note that reads the same step's figures as the server's.
pub(super) fn invalid_notes(rows: &[&StepSummary]) -> Vec<String> {
    rows.iter()
        .filter_map(|s| client_fault(s).map(|f| invalid_note(s, &f)))
        .collect()
}

/// The run's findings line for an invalid step: "At 8 streams: invalid for the gate: the client
/// did not keep up (only 4.0 of 8 streams in flight (…)); a diff sets its checks aside as
/// inconclusive; fix: fewer streams per process or `--shard`."
pub fn invalid_note(s: &StepSummary, fault: &ClientFault) -> String {
    format!(
        "At {}: invalid for the gate: the client did not keep up ({}); a diff sets this step's checks aside as inconclusive; {}.",
        s.ladder_unit.describe(s.concurrency),
        fault.causes(),
        fix(s.ladder_unit)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A closed-loop step of 10 streams, 100 requests, all successful, that kept up.
    fn kept_up() -> StepSummary {
        StepSummary {
            concurrency: 10,
            attempted: 100,
            succeeded: 100,
            concurrency_steady: Some(9.6),
            loop_lag_p99_ms: Some(3.0),
            client_cpu_pct: Some(40.0),
            ..StepSummary::default()
        }
    }

    #[test]
    fn a_step_that_kept_up_is_valid() {
        assert_eq!(client_fault(&kept_up()), None);
        // At the tolerances exactly: still valid.
        let edge = StepSummary {
            concurrency_steady: Some(8.0),
            loop_lag_p99_ms: Some(LATE_TOLERANCE_MS),
            send_lag_p99_ms: Some(LATE_TOLERANCE_MS),
            ..kept_up()
        };
        assert_eq!(client_fault(&edge), None);
    }

    #[test]
    fn too_few_streams_in_flight_is_invalid_with_the_measure() {
        let thin = StepSummary {
            concurrency_steady: Some(4.0),
            ..kept_up()
        };
        let fault = client_fault(&thin).unwrap();
        assert_eq!(
            fault.shortfalls,
            vec![Shortfall::ThinLoad {
                in_flight: 4.0,
                streams: 10
            }]
        );
        assert_eq!(
            fault.causes(),
            "only 4.0 of 10 streams in flight (steady window; at least 8.0 needed)"
        );
        let note = invalid_note(&thin, &fault);
        assert!(
            note.starts_with(
                "At 10 streams: invalid for the gate: the client did not keep up (only 4.0 of 10"
            ),
            "{note}"
        );
        assert!(
            note.ends_with("fix: fewer streams per process or `--shard`."),
            "{note}"
        );
    }

    #[test]
    fn the_thin_load_measure_has_the_notes_guards() {
        let thin = |f: fn(&mut StepSummary)| {
            let mut s = StepSummary {
                concurrency_steady: Some(4.0),
                ..kept_up()
            };
            f(&mut s);
            client_fault(&s)
        };
        // Fast failures: most requests failed, so idle streams are not the client's doing.
        assert_eq!(thin(|s| s.succeeded = 40), None);
        // Fewer than two requests per stream: no steady window worth reading.
        assert_eq!(thin(|s| s.attempted = 19), None);
        // No steady window at all (a production log's level, a short step), or one of a few
        // milliseconds (three requests to a server that answers in 0.3 ms).
        assert_eq!(thin(|s| s.concurrency_steady = None), None);
        assert_eq!(thin(|s| s.steady_s = Some(0.006)), None);
        assert!(thin(|s| s.steady_s = Some(MIN_STEADY_S)).is_some());
        // Streams that waited out 429s (faults.rs's RPM wall: 1.5 of 16 in flight, 96% of the
        // requests' time spent waiting to retry) waited at the server's request.
        assert_eq!(thin(|s| s.retry_wait_share = Some(0.96)), None);
        assert!(thin(|s| s.retry_wait_share = Some(0.1)).is_some());
        // Only streams promise requests in flight: agents think between turns, a rate step
        // holds what arrives.
        assert_eq!(thin(|s| s.ladder_unit = LadderUnit::Agents), None);
        assert_eq!(thin(|s| s.ladder_unit = LadderUnit::Rps), None);
    }

    #[test]
    fn late_sends_and_a_late_loop_are_invalid_and_say_by_how_much() {
        let rate = StepSummary {
            ladder_unit: LadderUnit::Rps,
            concurrency_steady: Some(1.0),
            send_lag_p99_ms: Some(918.0),
            loop_lag_p99_ms: Some(745.0),
            ..kept_up()
        };
        let fault = client_fault(&rate).unwrap();
        assert_eq!(
            fault.shortfalls,
            vec![
                Shortfall::LateSends { p99_ms: 918.0 },
                Shortfall::LateLoop { p99_ms: 745.0 }
            ]
        );
        assert_eq!(
            fault.causes(),
            "requests went out 918 ms after their scheduled time (P99; tolerance 250 ms); its event loop ran 745 ms late (P99; tolerance 250 ms)"
        );
        assert!(
            invalid_note(&rate, &fault).ends_with("fix: a lower rate per process or `--shard`.")
        );
        // The loop alone, at a closed-loop step whose streams stayed in flight.
        let late_loop = StepSummary {
            loop_lag_p99_ms: Some(300.0),
            ..kept_up()
        };
        assert_eq!(
            client_fault(&late_loop).unwrap().shortfalls,
            vec![Shortfall::LateLoop { p99_ms: 300.0 }]
        );
    }

    #[test]
    fn a_busy_cpu_alone_is_not_invalid() {
        let busy = StepSummary {
            client_cpu_pct: Some(180.0),
            ..kept_up()
        };
        assert_eq!(client_fault(&busy), None);
    }

    #[test]
    fn every_ladder_unit_has_a_fix() {
        for (unit, word) in [
            (LadderUnit::Streams, "streams"),
            (LadderUnit::Rps, "rate"),
            (LadderUnit::Agents, "agents"),
            (LadderUnit::PromptTokens, "less load"),
            (LadderUnit::Speed, "less load"),
        ] {
            assert!(fix(unit).contains(word), "{unit:?}: {}", fix(unit));
        }
    }
}
