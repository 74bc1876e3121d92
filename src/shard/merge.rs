//! Pure core of `ladder merge`: joins the results of the shards of one sharded run
//! (`run --shard I/N`) into one result, exactly. Percentiles are recomputed by
//! `stats::summarize_step` from the union of the per-request records (never averaged); records
//! are put on one time line (each shard's time origin, corrected by its clock offset estimate)
//! and numbered as one process would have numbered its workers. Shards that do not belong
//! together (fingerprint, ladder, models, shard count, common start) are refused; a missing,
//! incomplete or late shard, or one whose clock disagrees, is reported as a `Problem`, never
//! dropped silently. No files here: `store::shards` reads and writes them.

use crate::model::RequestRecord;
use crate::model::Slo;
use crate::shard::share;
use crate::stats::{self, StepContext, StepSummary};
use crate::store::Meta;
use crate::store::{MergedShard, ShardMeta};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

/// A step of a shard that began later than this after the earliest shard's start of the same
/// step is flagged (or 5% of the step's duration, whichever is larger).
pub const LATE_TOLERANCE_MS: f64 = 500.0;
/// Rate steps: mean arrival gaps a shard's first send may come after the others' (see `merge`).
pub const RATE_FIRST_GAPS: f64 = 5.0;
/// A shard whose clock offset differs from the shards' median by more than this (plus both
/// estimates' error) is flagged.
pub const CLOCK_TOLERANCE_MS: f64 = 250.0;

/// One shard's result as read from its run directory.
#[derive(Debug, Clone)]
pub struct ShardRun {
    /// The run directory, for messages.
    pub label: String,
    pub meta: Meta,
    pub summaries: Vec<StepSummary>,
    pub records: Vec<RequestRecord>,
    /// Why the shard did not finish (`None` when it did).
    pub stopped: Option<String>,
}

/// Shards that cannot be merged into one result (exit 1).
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum MergeError {
    #[error("nothing to merge: no shard run directories given")]
    Empty,
    #[error(
        "{label} is not a shard: its meta.json has no `shard` (it was not run with \
         --shard I/N); merge joins the shards of one sharded run"
    )]
    NotAShard { label: String },
    #[error(
        "{label} ran a different workload than {first} (fingerprint {theirs} vs {ours}): the \
         shards of one run must use the same scenario; `ladder diff --allow-different-workload` \
         compares different workloads instead"
    )]
    Fingerprint {
        label: String,
        first: String,
        theirs: String,
        ours: String,
    },
    #[error("{label} does not belong with {first}: {what}")]
    Plan {
        label: String,
        first: String,
        what: String,
    },
    #[error(
        "shard {index} appears twice ({a} and {b}): pass one run directory per shard (a rerun \
         of a shard writes a new directory; remove the one you do not want)"
    )]
    Duplicate { index: u32, a: String, b: String },
}

/// Something a merged result must say about its shards.
#[derive(Debug, Clone, PartialEq)]
pub enum Problem {
    /// No run directory for this shard index.
    Missing { index: u32, total: u32 },
    /// The shard stopped before its end (killed, crashed, interrupted).
    Incomplete {
        index: u32,
        label: String,
        why: String,
    },
    /// The shard began a step later than the others.
    Late {
        index: u32,
        model: String,
        step: u32,
        late_ms: f64,
    },
    /// The shard's clock differs from the others'.
    Clock {
        index: u32,
        offset_ms: f64,
        median_ms: f64,
    },
}

impl Problem {
    /// Missing or incomplete shards lose data: the merged result is partial (exit 1).
    pub fn is_partial(&self) -> bool {
        matches!(self, Problem::Missing { .. } | Problem::Incomplete { .. })
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Problem::Missing { index, total } => write!(
                f,
                "shard {index}/{total} is missing (no run directory): its share of the load \
                 was not measured, so the merged result is partial"
            ),
            Problem::Incomplete { index, label, why } => write!(
                f,
                "shard {index} ({label}) did not finish ({why}): its records are merged, but \
                 the result is partial"
            ),
            Problem::Late {
                index,
                model,
                step,
                late_ms,
            } => write!(
                f,
                "shard {index} started step {step} ({model}) {:.1} s after the first shard: the \
                 shards did not load the target together (check --start-at and the step slot)",
                late_ms / 1000.0
            ),
            Problem::Clock {
                index,
                offset_ms,
                median_ms,
            } => write!(
                f,
                "shard {index}'s clock is {:+.0} ms off the target's, the others' {:+.0} ms: its \
                 records were shifted by its estimate, but it followed the common start on its \
                 own clock",
                offset_ms, median_ms
            ),
        }
    }
}

/// The merged result.
#[derive(Debug, Clone)]
pub struct Merged {
    pub meta: Meta,
    pub summaries: Vec<StepSummary>,
    pub records: Vec<RequestRecord>,
    pub problems: Vec<Problem>,
}

/// Merges the shards of one run. `slo` is the scenario's (for goodput).
pub fn merge(mut shards: Vec<ShardRun>, slo: &Slo) -> Result<Merged, MergeError> {
    check(&shards)?;
    shards.sort_by_key(|s| shard_of(s).index);
    let mut problems = shard_problems(&shards);
    let first = &shards[0].meta;
    let (records, spans) = on_one_time_line(&shards, &first.ladder, &first.models);
    let mut summaries = Vec::new();
    for (key, rows) in &spans {
        let (begin, duration_s) = step_span(rows);
        problems.extend(late_shards(rows, key.1, begin, duration_s));
        let recs = records.get(key).map(Vec::as_slice).unwrap_or(&[]);
        summaries.push(merged_step(first, slo, key.1, rows, recs, duration_s));
    }
    let model_index = |m: &str| model_index(&first.models, m);
    let mut all: Vec<RequestRecord> = records.into_values().flatten().collect();
    all.sort_by(|a, b| {
        (model_index(&a.model), a.step)
            .cmp(&(model_index(&b.model), b.step))
            .then(a.started_at_ms.total_cmp(&b.started_at_ms))
    });
    let mut meta = merged_meta(&shards, &problems);
    meta.steps = summaries.iter().map(StepSummary::step_run).collect();
    Ok(Merged {
        meta,
        summaries,
        records: all,
        problems,
    })
}

/// A step of the merged run: (the model's place in the run's model list, step number).
type Key = (usize, u32);
/// A shard's part of a step: its index, its first record's start on the common time line (none
/// when it has no records there), its summary row.
type Span<'a> = (u32, Option<f64>, &'a StepSummary);
/// The merged records of each step.
type Records = BTreeMap<Key, Vec<RequestRecord>>;
/// Each shard's span of each step.
type Spans<'a> = BTreeMap<Key, Vec<Span<'a>>>;

/// The model's place in the run's model list (unknown models last).
fn model_index(models: &[String], m: &str) -> usize {
    models.iter().position(|x| x == m).unwrap_or(usize::MAX)
}

/// What the shard set lacks before any record is read: missing shard indexes, shards that did
/// not finish, clocks that disagree.
fn shard_problems(shards: &[ShardRun]) -> Vec<Problem> {
    let total = shard_of(&shards[0]).total;
    let mut problems = Vec::new();
    let present: BTreeSet<u32> = shards.iter().map(|s| shard_of(s).index).collect();
    for index in (0..total).filter(|i| !present.contains(i)) {
        problems.push(Problem::Missing { index, total });
    }
    for s in shards {
        if let Some(why) = &s.stopped {
            problems.push(Problem::Incomplete {
                index: shard_of(s).index,
                label: s.label.clone(),
                why: why.clone(),
            });
        }
    }
    problems.extend(clock_problems(shards));
    problems
}

/// Every shard's records on one time line (the earliest clock-corrected origin is 0), workers
/// numbered as one process would have, concurrency the step's total; per step, each shard's
/// span (`Span`).
fn on_one_time_line<'a>(
    shards: &'a [ShardRun],
    ladder: &[u32],
    models: &[String],
) -> (Records, Spans<'a>) {
    let corrected = |s: &ShardRun| {
        let m = shard_of(s);
        m.origin_unix_ms + m.clock_offset_ms.unwrap_or(0.0)
    };
    let t0 = shards.iter().map(corrected).fold(f64::INFINITY, f64::min);
    let mut records = Records::new();
    let mut spans = Spans::new();
    for s in shards {
        let m = shard_of(s);
        let shift = corrected(s) - t0;
        let mut first_start: BTreeMap<Key, f64> = BTreeMap::new();
        for r in &s.records {
            let key = (model_index(models, &r.model), r.step);
            let mut r = r.clone();
            r.started_at_ms += shift;
            let c = step_concurrency(ladder, r.step, r.concurrency);
            // Each shard's workers continue the numbering; an open-loop shard (its records
            // carry a send lag) is one dispatcher, numbered by its shard index.
            r.worker = if r.send_lag_ms.is_some() {
                m.index
            } else {
                r.worker
                    .saturating_add(share(c.into(), m.index, m.total).first as u32)
            };
            r.concurrency = c;
            let e = first_start.entry(key).or_insert(f64::INFINITY);
            *e = e.min(r.started_at_ms);
            records.entry(key).or_default().push(r);
        }
        for row in &s.summaries {
            let key = (model_index(models, &row.model), row.step);
            spans
                .entry(key)
                .or_default()
                .push((m.index, first_start.get(&key).copied(), row));
        }
    }
    (records, spans)
}

/// A merged step's first start and its duration: from the earliest shard's first start to the
/// latest shard's end, or the longest shard's duration when no start is known.
fn step_span(rows: &[Span<'_>]) -> (f64, f64) {
    let starts: Vec<f64> = rows.iter().filter_map(|r| r.1).collect();
    let begin = starts.iter().copied().fold(f64::INFINITY, f64::min);
    let end = rows
        .iter()
        .filter_map(|(_, start, row)| start.map(|s| s + row.duration_s * 1000.0))
        .fold(f64::NEG_INFINITY, f64::max);
    let duration_s = if begin.is_finite() && end.is_finite() {
        ((end - begin) / 1000.0).max(0.0)
    } else {
        rows.iter().map(|r| r.2.duration_s).fold(0.0, f64::max)
    };
    (begin, duration_s)
}

/// The shards that began `step` later than the tolerance after `begin` (`LATE_TOLERANCE_MS`
/// or 5% of the step, plus `RATE_FIRST_GAPS` mean arrival gaps for a rate step).
fn late_shards(rows: &[Span<'_>], step: u32, begin: f64, duration_s: f64) -> Vec<Problem> {
    let model = &rows[0].2.model;
    // An open-loop shard's first send comes one random arrival gap after the step's start
    // (exponential, mean 1 / its rate): allow five mean gaps (a false alarm in < 1%).
    let first_gap_ms = rows
        .iter()
        .filter_map(|r| r.2.offered_rps)
        .filter(|r| *r > 0.0)
        .map(|r| RATE_FIRST_GAPS * 1000.0 / r)
        .fold(0.0, f64::max);
    let tolerance = LATE_TOLERANCE_MS.max(duration_s * 1000.0 * 0.05) + first_gap_ms;
    rows.iter()
        .filter_map(|(index, start, _)| {
            let late_ms = start.map(|s| s - begin).filter(|l| *l > tolerance)?;
            Some(Problem::Late {
                index: *index,
                model: model.clone(),
                step,
                late_ms,
            })
        })
        .collect()
}

/// The merged step's summary row: recomputed from the union of its records
/// (`stats::summarize_step`), with the rate-mode figures added up over the shards and the
/// self-check figures of the worst shard.
fn merged_step(
    first: &Meta,
    slo: &Slo,
    step: u32,
    rows: &[Span<'_>],
    recs: &[RequestRecord],
    duration_s: f64,
) -> StepSummary {
    let ctx = StepContext {
        scenario: &first.scenario,
        fingerprint: &first.fingerprint,
        model: &rows[0].2.model,
        step,
        concurrency: step_concurrency(&first.ladder, step, rows[0].2.concurrency),
        duration_s,
        slo,
        short_below: first.short_below,
    };
    let mut row = stats::summarize_step(&ctx, recs);
    // Rate mode: the shards' offered rates and drops add up.
    row.ladder_unit = rows[0].2.ladder_unit;
    row.dropped = rows.iter().map(|r| r.2.dropped).sum();
    row.offered_rps = rows
        .iter()
        .filter_map(|r| r.2.offered_rps)
        .reduce(|a, b| a + b);
    // Self-check figures: the worst shard's (a warning about any shard holds for the run).
    let worst =
        |f: fn(&StepSummary) -> Option<f64>| rows.iter().filter_map(|r| f(r.2)).reduce(f64::max);
    row.client_cpu_pct = worst(|r| r.client_cpu_pct);
    row.loop_lag_p99_ms = worst(|r| r.loop_lag_p99_ms);
    // A step that a shard with a part of it did not finish (killed, missing) held fewer streams
    // than the ladder says for a reason no client measured: its steady window's requests in
    // flight are no self-check of the step, so the thin-load note and the rule of an invalid
    // step (`findings::kept_up`) say nothing of it; `merge` reports the shard.
    let total = first.shard.as_ref().map_or(1, |m| m.total);
    let missing = (0..total)
        .filter(|&i| share(u64::from(ctx.concurrency), i, total).count > 0)
        .any(|i| !rows.iter().any(|r| r.0 == i));
    if missing {
        row.concurrency_steady = None;
    }
    row
}

fn shard_of(s: &ShardRun) -> &ShardMeta {
    s.meta.shard.as_ref().expect("checked by `check`")
}

/// The step's total concurrency (the scenario's ladder), whatever share a shard ran.
fn step_concurrency(ladder: &[u32], step: u32, fallback: u32) -> u32 {
    (step as usize)
        .checked_sub(1)
        .and_then(|i| ladder.get(i))
        .copied()
        .unwrap_or(fallback)
}

fn check(shards: &[ShardRun]) -> Result<(), MergeError> {
    let first = shards.first().ok_or(MergeError::Empty)?;
    let shard = |s: &ShardRun| {
        s.meta.shard.clone().ok_or_else(|| MergeError::NotAShard {
            label: s.label.clone(),
        })
    };
    let f = shard(first)?;
    let mut seen: BTreeMap<u32, &str> = BTreeMap::new();
    for s in shards {
        let m = shard(s)?;
        let plan = |what: String| MergeError::Plan {
            label: s.label.clone(),
            first: first.label.clone(),
            what,
        };
        if s.meta.fingerprint != first.meta.fingerprint {
            return Err(MergeError::Fingerprint {
                label: s.label.clone(),
                first: first.label.clone(),
                theirs: s.meta.fingerprint.clone(),
                ours: first.meta.fingerprint.clone(),
            });
        }
        if s.meta.ladder != first.meta.ladder || s.meta.models != first.meta.models {
            return Err(plan(format!(
                "its step plan differs (ladder {:?}, models {:?} vs ladder {:?}, models {:?})",
                s.meta.ladder, s.meta.models, first.meta.ladder, first.meta.models
            )));
        }
        if m.total != f.total {
            return Err(plan(format!(
                "it is one of {} shards, the other of {}: merge the shards of one run",
                m.total, f.total
            )));
        }
        if m.start_at != f.start_at || m.step_every_s != f.step_every_s {
            return Err(plan(format!(
                "a different schedule (start {} every {:?} s vs start {} every {:?} s): these \
                 shards come from different runs",
                m.start_at.as_deref().unwrap_or("unset"),
                m.step_every_s,
                f.start_at.as_deref().unwrap_or("unset"),
                f.step_every_s
            )));
        }
        if let Some(a) = seen.insert(m.index, &s.label) {
            return Err(MergeError::Duplicate {
                index: m.index,
                a: a.to_string(),
                b: s.label.clone(),
            });
        }
    }
    Ok(())
}

fn clock_problems(shards: &[ShardRun]) -> Vec<Problem> {
    let mut offsets: Vec<(u32, f64, f64)> = shards
        .iter()
        .filter_map(|s| {
            let m = shard_of(s);
            m.clock_offset_ms
                .map(|o| (m.index, o, m.clock_offset_error_ms.unwrap_or(0.0)))
        })
        .collect();
    if offsets.len() < 2 {
        return Vec::new();
    }
    let mut sorted: Vec<f64> = offsets.iter().map(|o| o.1).collect();
    sorted.sort_by(f64::total_cmp);
    let median_ms = stats::quantile_sorted(&sorted, 0.5).unwrap_or(0.0);
    let max_err = offsets.iter().map(|o| o.2).fold(0.0, f64::max);
    offsets.retain(|(_, o, err)| (o - median_ms).abs() > CLOCK_TOLERANCE_MS + err + max_err);
    offsets
        .into_iter()
        .map(|(index, offset_ms, _)| Problem::Clock {
            index,
            offset_ms,
            median_ms,
        })
        .collect()
}

fn merged_meta(shards: &[ShardRun], problems: &[Problem]) -> Meta {
    let first = &shards[0].meta;
    let mut hosts: Vec<String> = shards.iter().map(|s| s.meta.host.clone()).collect();
    hosts.dedup();
    let started_at = shards.iter().map(|s| &s.meta.started_at).min().cloned();
    let finished_at = shards.iter().map(|s| &s.meta.finished_at).max().cloned();
    let mut meta = first.clone();
    meta.host = hosts.join(",");
    meta.started_at = started_at.unwrap_or_default();
    meta.finished_at = finished_at.unwrap_or_default();
    meta.command_line = Vec::new();
    meta.interrupted = problems.iter().any(Problem::is_partial);
    // The first shard that stopped early says why the merged run is partial.
    meta.stopped_by = shards.iter().find_map(|s| s.meta.stopped_by.clone());
    meta.notes = problems.iter().map(ToString::to_string).collect();
    meta.shard = None;
    meta.complete = true;
    meta.merged_from = shards
        .iter()
        .map(|s| MergedShard {
            index: shard_of(s).index,
            total: shard_of(s).total,
            source: s.label.clone(),
            host: s.meta.host.clone(),
            complete: s.stopped.is_none(),
            clock_offset_ms: shard_of(s).clock_offset_ms,
            records: s.records.len() as u64,
        })
        .collect();
    meta
}

#[cfg(test)]
mod tests;
