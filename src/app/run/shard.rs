//! `ladder run --shard`: the sharding flags resolved before traffic, and a shard's `meta.json`
//! block (clock offset, time origin).

use super::Output;
use crate::error::UsageError;
use crate::runner;
use crate::scenario::Scenario;
use crate::shard::ShardSpec;
use crate::store;
use anyhow::Result;
use std::time::{Duration, SystemTime};

/// Scenario `s`'s schedule from the resolved sharding flags (`--shard` or the environment,
/// `--start-at`, `--step-every`), checked before any traffic.
pub(super) fn schedule(
    s: &Scenario,
    shard: Option<ShardSpec>,
    start: Option<SystemTime>,
    step_every: Option<Duration>,
) -> Result<runner::Schedule> {
    if shard.is_some() && s.load.refine > 0 {
        return Err(UsageError(format!(
            "{}: load.refine chooses each step from the results so far, which a shard cannot see; run without --shard, or remove refine",
            s.path.display()
        ))
        .into());
    }
    if shard.is_some() && matches!(s.load.mode, crate::scenario::LoadMode::Replay { .. }) {
        return Err(UsageError(format!(
            "{}: load.mode: replay sends one trace's arrivals in order, which --shard would split unevenly; run it from one process",
            s.path.display()
        ))
        .into());
    }
    let every = match step_every {
        Some(every) => Some(every),
        None if shard.is_none() || start.is_none() => None,
        None => Some(crate::shard::step_slot(&s.load).ok_or_else(|| {
            UsageError(format!(
                "{}: --shard with --start-at needs --step-every DURATION with a request budget: \
                 every shard must start step k at the same time, so each step gets a fixed time \
                 slot (long enough for the step), e.g. --step-every 2m",
                s.path.display()
            ))
        })?),
    };
    Ok(runner::Schedule {
        start,
        every,
        shard,
        first_step: 0,
        pacing: runner::Pacing::Precise,
        max_in_flight: None,
    })
}

/// A shard's `meta.json` block: its clock offset against the target (measured now, before the
/// common start) and the time origin of its records.
pub(super) async fn shard_meta(
    spec: ShardSpec,
    schedule: &runner::Schedule,
    http: &reqwest::Client,
    base_url: &str,
    out: &Output,
) -> crate::store::ShardMeta {
    let clock = crate::shard::clock::estimate_offset(http, base_url).await;
    let unix_ms = |t: SystemTime| {
        t.duration_since(std::time::UNIX_EPOCH)
            .map_or(0.0, |d| d.as_secs_f64() * 1000.0)
    };
    if !out.quiet {
        let clock_note = match clock {
            Some(c) => format!(
                "clock {:+.0} ms ± {:.0} ms vs the target",
                c.offset_ms, c.error_ms
            ),
            None => "clock offset unknown (no Date header from the target)".into(),
        };
        let start_note = match schedule.start {
            Some(t) => format!("starts at {}", store::rfc3339_utc(t)),
            None => {
                "starts now (no --start-at: the shards overlap only if launched together)".into()
            }
        };
        eprintln!("shard {spec}: {start_note}; {clock_note}");
    }
    crate::store::ShardMeta {
        index: spec.index,
        total: spec.total,
        start_at: schedule.start.map(store::rfc3339_utc),
        step_every_s: schedule.every.map(|d| d.as_secs_f64()),
        // The runner's time origin: the common start, or now (it starts right after this).
        origin_unix_ms: schedule
            .start
            .map_or_else(crate::shard::clock::now_unix_ms, unix_ms),
        clock_offset_ms: clock.map(|c| c.offset_ms),
        clock_offset_error_ms: clock.map(|c| c.error_ms),
    }
}
