//! The client's self-check notes: plain warnings when a step's figures may reflect the client
//! rather than the server (a busy client CPU, an event loop that ran late, streams that sat idle
//! between requests). A step whose client did not keep up at all is invalid for the gate, which
//! `kept_up` says. The thresholds are shared with the rate notes (`rate`).

use super::kept_up::thin_load;
use crate::model::LadderUnit;
use crate::stats::StepSummary;

/// Client CPU at or above this share of one core makes a step's latencies suspect.
pub const CLIENT_CPU_SUSPECT_PCT: f64 = 90.0;
/// Event-loop lateness (P99) above this means ready work waited for the client: a suspicion,
/// far below the tolerance that makes a step invalid (`kept_up::LATE_TOLERANCE_MS`).
pub const LOOP_LAG_SUSPECT_MS: f64 = 5.0;

/// Plain warnings when a step's figures may reflect the client rather than the server.
pub(super) fn self_check_notes(rows: &[&StepSummary]) -> Vec<String> {
    let mut notes = Vec::new();
    let mut late: Vec<(u32, f64)> = Vec::new();
    for s in rows {
        let step = format!("At {}", s.ladder_unit.describe(s.concurrency));
        if let Some(cpu) = s.client_cpu_pct.filter(|c| *c >= CLIENT_CPU_SUSPECT_PCT) {
            notes.push(format!(
                "{step}: client CPU {cpu:.0}% of a core: the client may be inflating TTFT; use fewer streams per process or shard the load."
            ));
        }
        if let Some(lag) = s.loop_lag_p99_ms.filter(|l| *l > LOOP_LAG_SUSPECT_MS) {
            late.push((s.concurrency, lag));
        }
        notes.extend(thin_load_note(s));
    }
    let unit = rows.first().map_or(LadderUnit::Streams, |s| s.ladder_unit);
    notes.extend(late_loop_note(unit, &late));
    notes
}

/// "At 90 streams: only 70.4 requests were in flight …": a closed-loop step whose streams sat
/// idle between requests in its steady window (after the ramp-up, before the first stream ran
/// out of work), so the server saw a lighter load than the step's value. The step's average
/// over its whole time (`achieved_concurrency`) is not used: every step drains at its end, and
/// that tail would fire this on ordinary steps. Without a steady window (too short a step, or
/// production logs, whose levels are not steps a client held) there is nothing to say.
pub(super) fn thin_load_note(s: &StepSummary) -> Option<String> {
    let steady = thin_load(s)?;
    let busy = s
        .client_cpu_pct
        .filter(|c| *c >= CLIENT_CPU_SUSPECT_PCT / 2.0)
        .map_or_else(String::new, |c| format!(" (client CPU {c:.0}% of a core)"));
    Some(format!(
        "At {step}: only {steady:.1} requests were in flight on average in the steady window (Little's law), not {n}: the streams sat idle between requests, so the server saw a lighter load than the step says. The time between a response and the next request is the client's{busy}: a busy client (shard the load or run fewer streams per process) or new connections (a server or proxy that closes keep-alive connections); the step's figures are those of ≈ {steady:.0} streams.",
        step = s.ladder_unit.describe(s.concurrency),
        n = s.concurrency,
    ))
}

/// One note for every step whose client event loop ran late (P99 above
/// `LOOP_LAG_SUSPECT_MS`): "At 5, 10 and 20 streams: the client's event loop ran late (P99 10.0,
/// 6.2 and 5.6 ms): …", so a busy client is one line, not one per step.
pub(super) fn late_loop_note(unit: LadderUnit, late: &[(u32, f64)]) -> Option<String> {
    match late {
        [] => None,
        [(value, lag)] => Some(format!(
            "At {}: the client's event loop ran {lag:.1} ms late (P99): timings at this step include client delay.",
            unit.describe(*value)
        )),
        many => {
            let values: Vec<u32> = many.iter().map(|(v, _)| *v).collect();
            let lags: Vec<String> = many.iter().map(|(_, l)| format!("{l:.1}")).collect();
            let (init, last) = lags.split_at(lags.len() - 1);
            Some(format!(
                "At {}: the client's event loop ran late (P99 {} and {} ms): timings at these steps include client delay.",
                unit.describe_all(&values),
                init.join(", "),
                last[0]
            ))
        }
    }
}
