//! `ladder run --shard`: the sharding flags resolved before traffic, and a shard's `meta.json`
//! block (clock offset, time origin).

use super::Output;
use crate::cli::RunArgs;
use crate::error::UsageError;
use crate::runner;
use crate::scenario::Scenario;
use crate::store;
use anyhow::Result;
use std::time::SystemTime;

/// What `--shard`, `--start-at` and `--step-every` (or the environment) ask of a run.
pub(super) struct ShardPlan {
    pub(super) schedule: runner::Schedule,
}

/// Resolves and checks the sharding flags for scenario `s` (before any traffic).
pub(super) fn shard_plan(args: &RunArgs, s: &Scenario) -> Result<ShardPlan> {
    let spec = match args.shard {
        Some(spec) => Some(spec),
        None => crate::shard::from_env(|n| std::env::var(n).ok()).map_err(UsageError)?,
    };
    let start = match args.start_at.as_deref() {
        Some(t) => Some(crate::shard::parse_start_at(t).map_err(UsageError)?),
        None => None,
    };
    let every = match args.step_every {
        Some(every) => Some(every),
        None if spec.is_none() || start.is_none() => None,
        None => Some(crate::shard::step_slot(&s.load).ok_or_else(|| {
            UsageError(format!(
                "{}: --shard with --start-at needs --step-every DURATION with a request budget: \
                 every shard must start step k at the same time, so each step gets a fixed time \
                 slot (long enough for the step), e.g. --step-every 2m",
                s.path.display()
            ))
        })?),
    };
    if spec.is_some() && (args.against.is_some() || args.save_baseline) {
        return Err(UsageError(
            "--shard runs part of the load: merge the shards (`ladder merge`), then diff or save \
             the merged run"
                .into(),
        )
        .into());
    }
    Ok(ShardPlan {
        schedule: runner::Schedule {
            start,
            every,
            shard: spec,
            first_step: 0,
            pacing: runner::Pacing::Precise,
        },
    })
}

/// A shard's `meta.json` block: its clock offset against the target (measured now, before the
/// common start) and the time origin of its records.
pub(super) async fn shard_meta(
    spec: crate::shard::ShardSpec,
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
