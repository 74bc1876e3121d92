//! A production ladder: logged requests become `RequestRecord`s whose step is the in-flight
//! level they met, and each group × level is summarized by the run's own rule
//! (`stats::summarize_step`), so the knee, the wall and the table are the run's. A level's
//! duration is the time the group spent at that level; its rates are the logged requests'
//! divided by the sample rate. Whether 429s follow the in-flight level or the minute's tokens
//! is told here ([`WallAxis`]).

use super::inflight::{counts_at_start, groups, step_function, time_at_counts, Levels};
use super::timeline::minute_of;
use super::LogRequest;
use crate::model::{ErrorClass, LimitKind, RequestRecord, Slo, TokensSource};
use crate::stats::{summarize_step, StepContext, StepSummary};
use std::collections::BTreeMap;

/// What shapes a production ladder.
#[derive(Debug, Clone)]
pub struct LogOptions {
    /// Share of requests the log keeps (1 = all).
    pub sample_rate: f64,
    /// Successful requests every level needs (the knee's own minimum by default).
    pub min_per_level: u64,
    pub max_levels: usize,
    pub slo: Slo,
    pub scenario: String,
    pub fingerprint: String,
    /// In-flight counts at which a group's levels are split further (`refine`), by group.
    pub splits: BTreeMap<String, Vec<u32>>,
}

/// Which of two limits a log's 429s follow.
#[derive(Debug, Clone, PartialEq)]
pub enum WallAxis {
    /// 429s start at an in-flight level and not below it, whatever the minute's tokens.
    Concurrency { level: u32 },
    /// 429s start above a minute's token count, at every in-flight level.
    Tokens { tpm: f64 },
    /// In-flight and tokens rose together: the log cannot tell which limit it is.
    Either { level: u32, tpm: f64 },
}

impl WallAxis {
    /// The 429 wall in words: which limit, and at what in-flight level or tokens per minute.
    pub fn sentence(&self) -> String {
        match self {
            WallAxis::Concurrency { level } => format!(
                "429s begin at {level} in flight, in quiet minutes too: a concurrency limit near {level}, not a tokens-per-minute limit."
            ),
            WallAxis::Tokens { tpm } => format!(
                "429s begin when a minute carries ≈{tpm:.0} tokens, at every in-flight level: a tokens-per-minute limit, not a concurrency limit."
            ),
            WallAxis::Either { level, tpm } => format!(
                "429s begin near {level} in flight and ≈{tpm:.0} tokens/min; both rose together in this log, so it cannot tell a concurrency limit from a tokens-per-minute one."
            ),
        }
    }
}

/// A log read as a ladder.
#[derive(Debug, Clone, Default)]
pub struct LogLadder {
    /// One per logged request, in the input's order; step = level index + 1 within its group,
    /// concurrency = the level's value, `started_at_ms` from `origin_ms`.
    pub records: Vec<RequestRecord>,
    pub summaries: Vec<StepSummary>,
    /// The in-flight count each request met, in the input's order.
    pub in_flight: Vec<u32>,
    pub levels: BTreeMap<String, Levels>,
    /// Epoch ms of the first request's start (the records' zero).
    pub origin_ms: f64,
    /// The log has no first-token time: TTFT is E2E throughout.
    pub ttft_from_e2e: bool,
    pub wall_axis: BTreeMap<String, WallAxis>,
}

impl LogLadder {
    /// Epoch ms of the first request's start and of the last request's end: the run's span.
    pub fn span_ms(&self) -> (f64, f64) {
        let last_end = self
            .records
            .iter()
            .map(|r| r.started_at_ms + r.e2e_ms.unwrap_or(0.0))
            .fold(0.0, f64::max);
        (self.origin_ms, self.origin_ms + last_end)
    }
}

/// The production ladder of `requests` (already free of skewed rows, see `limits`).
pub fn build_ladder(requests: &[LogRequest], opts: &LogOptions) -> LogLadder {
    let rate = opts.sample_rate;
    let in_flight = counts_at_start(requests, rate);
    let origin_ms = requests
        .iter()
        .map(|r| r.start_ms)
        .fold(f64::INFINITY, f64::min);
    let ttft_from_e2e = !requests.iter().any(|r| r.ttft_ms.is_some());
    let mut out = LogLadder {
        in_flight: in_flight.clone(),
        origin_ms: if origin_ms.is_finite() {
            origin_ms
        } else {
            0.0
        },
        ttft_from_e2e,
        records: vec![RequestRecord::default(); requests.len()],
        ..LogLadder::default()
    };
    for (group, idx) in groups(requests) {
        let counts: Vec<u32> = idx.iter().map(|&i| in_flight[i]).collect();
        let ok: Vec<bool> = idx
            .iter()
            .map(|&i| requests[i].error_class.is_none())
            .collect();
        let mut levels = Levels::choose(&counts, &ok, opts.min_per_level, opts.max_levels);
        for &at in opts.splits.get(&group).into_iter().flatten() {
            levels.split(at, &counts, &ok, opts.min_per_level);
        }
        for (&i, &c) in idx.iter().zip(&counts) {
            let level = levels.index_of(c);
            out.records[i] = record_of(&requests[i], &group, level, levels.levels[level].hi, &out);
        }
        let members: Vec<&LogRequest> = idx.iter().map(|&i| &requests[i]).collect();
        let axis = wall_axis(&members, &counts);
        // A 429 whose message did not say which limit takes the one its log's 429s follow.
        let kind = match axis {
            Some(WallAxis::Concurrency { .. }) => Some(LimitKind::Requests),
            Some(WallAxis::Tokens { .. }) => Some(LimitKind::Tokens),
            _ => None,
        };
        for &i in &idx {
            let r = &mut out.records[i];
            if r.first_attempt_429 && r.limit_kind.is_none() {
                r.limit_kind = kind;
            }
        }
        let steps = step_function(&members, rate);
        let at = time_at_counts(&steps, f64::NEG_INFINITY, f64::INFINITY);
        for (n, level) in levels.levels.iter().enumerate() {
            let recs: Vec<RequestRecord> = idx
                .iter()
                .filter(|&&i| out.records[i].step as usize == n + 1)
                .map(|&i| out.records[i].clone())
                .collect();
            let ms: f64 = at.range(level.lo..=level.hi).map(|(_, t)| t).sum();
            let weighted: f64 = at
                .range(level.lo..=level.hi)
                .map(|(&c, t)| f64::from(c) * t)
                .sum();
            let ctx = StepContext {
                scenario: &opts.scenario,
                fingerprint: &opts.fingerprint,
                model: &group,
                step: n as u32 + 1,
                concurrency: level.hi,
                duration_s: ms / 1000.0,
                slo: &opts.slo,
                short_below: 0.0,
            };
            let mut s = summarize_step(&ctx, &recs);
            for v in [&mut s.rps, &mut s.tpm, &mut s.tpm_total] {
                *v /= rate;
            }
            // In flight while the group was at this level (a run's is its requests' E2E over
            // the step's time; a level's requests also live through other levels).
            s.achieved_concurrency = (ms > 0.0).then(|| weighted / ms);
            // A level is not a step a client held: no steady window (and no note that the
            // load was lighter than the level says).
            s.concurrency_steady = None;
            out.summaries.push(s);
        }
        if let Some(axis) = axis {
            out.wall_axis.insert(group.clone(), axis);
        }
        out.levels.insert(group, levels);
    }
    out
}

fn record_of(
    r: &LogRequest,
    group: &str,
    level: usize,
    value: u32,
    l: &LogLadder,
) -> RequestRecord {
    let e2e = r.e2e_ms();
    let ttft = if l.ttft_from_e2e {
        Some(e2e)
    } else {
        r.ttft_ms
    };
    let tpot = if l.ttft_from_e2e {
        None
    } else {
        tpot_ms(e2e, ttft, r.output_tokens)
    };
    RequestRecord {
        model: group.to_string(),
        step: level as u32 + 1,
        concurrency: value,
        worker: 0,
        seq: r.line as u32,
        request_id: format!("line-{}", r.line),
        started_at_ms: r.start_ms - l.origin_ms,
        error_class: r.error_class,
        http_status: r.http_status,
        error_message: r.error_message.clone(),
        ttft_ms: ttft,
        tpot_ms: tpot,
        e2e_ms: Some(e2e),
        output_tokens: r.output_tokens,
        input_tokens: r.input_tokens,
        tokens_source: r.output_tokens.map(|_| TokensSource::Usage),
        attempts: 1,
        first_attempt_429: r.error_class == Some(ErrorClass::Http429),
        limit_kind: r.limit_kind,
        ..RequestRecord::default()
    }
}

/// A logged request's TPOT, as a run measures it: the time after the first token over the
/// tokens after the first ((E2E − TTFT) / (tokens − 1)); none for one token or no TTFT.
pub fn tpot_ms(e2e_ms: f64, ttft_ms: Option<f64>, output_tokens: Option<u64>) -> Option<f64> {
    match (ttft_ms, output_tokens) {
        (Some(t), Some(n)) if n > 1 => Some((e2e_ms - t) / (n - 1) as f64),
        _ => None,
    }
}

/// How much better one axis must separate 429s from the rest (Youden's J) to be called the
/// limit; closer than this, the log cannot tell the limits apart.
const AXIS_MARGIN: f64 = 0.2;

/// Whether one group's 429s follow its in-flight count or its minute's tokens (input +
/// output of the requests started in the minute). On each axis the threshold is the value that
/// best separates 429s from the other requests (the largest share of 429s at or above it minus
/// the share of other requests there); the axis separating clearly better is the limit. `None`
/// without a 429.
pub fn wall_axis(members: &[&LogRequest], in_flight: &[u32]) -> Option<WallAxis> {
    let is429 = |r: &LogRequest| r.error_class == Some(ErrorClass::Http429);
    if !members.iter().any(|r| is429(r)) {
        return None;
    }
    let mut tpm: BTreeMap<i64, f64> = BTreeMap::new();
    for r in members {
        let tokens = r.input_tokens.unwrap_or(0) + r.output_tokens.unwrap_or(0);
        *tpm.entry(minute_of(r.start_ms)).or_insert(0.0) += tokens as f64;
    }
    let by_level: Vec<(f64, bool)> = members
        .iter()
        .zip(in_flight)
        .map(|(r, &c)| (f64::from(c), is429(r)))
        .collect();
    let by_tpm: Vec<(f64, bool)> = members
        .iter()
        .map(|r| (tpm[&minute_of(r.start_ms)], is429(r)))
        .collect();
    let (level, j_level) = threshold(&by_level);
    let (tokens, j_tpm) = threshold(&by_tpm);
    Some(if j_level >= j_tpm + AXIS_MARGIN {
        WallAxis::Concurrency {
            level: level as u32,
        }
    } else if j_tpm >= j_level + AXIS_MARGIN {
        WallAxis::Tokens { tpm: tokens }
    } else {
        WallAxis::Either {
            level: level as u32,
            tpm: tokens,
        }
    })
}

/// The threshold best separating hits from the rest, and its Youden's J (share of hits at or
/// above it minus share of the rest at or above it).
fn threshold(points: &[(f64, bool)]) -> (f64, f64) {
    let mut sorted = points.to_vec();
    sorted.sort_by(|a, b| b.0.total_cmp(&a.0));
    let hits = sorted.iter().filter(|p| p.1).count().max(1) as f64;
    let rest = sorted.iter().filter(|p| !p.1).count().max(1) as f64;
    let (mut h, mut m) = (0.0, 0.0);
    let (mut best, mut best_j) = (f64::INFINITY, f64::NEG_INFINITY);
    for (i, &(v, hit)) in sorted.iter().enumerate() {
        if hit {
            h += 1.0;
        } else {
            m += 1.0;
        }
        let last_of_value = sorted.get(i + 1).map_or(true, |n| n.0 != v);
        if last_of_value && h / hits - m / rest > best_j {
            best_j = h / hits - m / rest;
            best = v;
        }
    }
    (best, best_j)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(start: f64, dur: f64, tokens: u64, err: bool) -> LogRequest {
        LogRequest {
            start_ms: start,
            end_ms: start + dur,
            ttft_ms: Some(10.0),
            model: "m".into(),
            output_tokens: Some(tokens),
            error_class: err.then_some(ErrorClass::Http429),
            ..LogRequest::default()
        }
    }

    #[test]
    fn a_concurrency_wall_is_told_from_a_token_wall() {
        // Concurrency wall: bursts of 10 at once are refused beyond 5, in quiet minutes too.
        let mut rs = Vec::new();
        for minute in 0..20 {
            let t0 = minute as f64 * 60_000.0;
            let (burst, tokens) = if minute % 2 == 0 { (10, 10) } else { (3, 1000) };
            for k in 0..burst {
                rs.push(req(t0 + k as f64, 1000.0, tokens, k >= 5));
            }
        }
        let refs: Vec<&LogRequest> = rs.iter().collect();
        let counts = counts_at_start(&rs, 1.0);
        assert_eq!(
            wall_axis(&refs, &counts),
            Some(WallAxis::Concurrency { level: 6 })
        );
        // Token wall: one request at a time, refused in minutes with many tokens.
        let mut rs = Vec::new();
        for minute in 0..20 {
            let t0 = minute as f64 * 60_000.0;
            let heavy = minute >= 10;
            for k in 0..10 {
                rs.push(req(
                    t0 + k as f64 * 2000.0,
                    100.0,
                    if heavy { 5000 } else { 100 },
                    heavy && k >= 6,
                ));
            }
        }
        let refs: Vec<&LogRequest> = rs.iter().collect();
        let counts = counts_at_start(&rs, 1.0);
        assert!(
            matches!(wall_axis(&refs, &counts), Some(WallAxis::Tokens { tpm }) if tpm == 50_000.0)
        );
    }
}
