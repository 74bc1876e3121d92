//! One model × step's `summary.csv` row from its records: one pass over the records (counts,
//! the latencies of successful requests, error classes, SLO hits), then the percentile, rate
//! and steady-window columns.

use super::{
    describe, p90_bounds, server, steady_window, PooledGaps, StepSummary, Timed, SCHEMA_VERSION,
};
use crate::model::Slo;
use crate::model::{ErrorClass, RequestRecord, TokensSource};

/// What `summarize_step` needs besides the records: identity of the row, the step's wall time
/// (first request start to last request end) and the SLO used for goodput.
#[derive(Debug, Clone, Copy)]
pub struct StepContext<'a> {
    pub scenario: &'a str,
    pub fingerprint: &'a str,
    pub model: &'a str,
    pub step: u32,
    pub concurrency: u32,
    pub duration_s: f64,
    pub slo: &'a Slo,
    /// `request.short_below`: the truncation threshold as a share of `max_tokens`.
    pub short_below: f64,
}

/// Builds the `summary.csv` row of one model × step from its records (docs/metrics.md, docs/files.md).
///
/// Latency percentiles, token sums and goodput count successful requests only; errors are split
/// into 429 (`Http429`; `Quota` counts as other), 5xx, timeouts and other (incl. interrupted).
/// A zero or invalid duration gives rates of 0 and no `achieved_concurrency`.
/// `client_cpu_pct` and `loop_lag_p99_ms` are left `None` for the runner to fill.
pub fn summarize_step(ctx: &StepContext, records: &[RequestRecord]) -> StepSummary {
    let duration_s = if ctx.duration_s.is_finite() && ctx.duration_s > 0.0 {
        ctx.duration_s
    } else {
        0.0
    };
    let mut s = StepSummary {
        schema_version: SCHEMA_VERSION,
        scenario: ctx.scenario.to_string(),
        fingerprint: ctx.fingerprint.to_string(),
        model: ctx.model.to_string(),
        step: ctx.step,
        concurrency: ctx.concurrency,
        attempted: records.len() as u64,
        duration_s,
        ..StepSummary::default()
    };
    let mut tally = Tally::new();
    for r in records {
        tally.add(&mut s, r, ctx);
    }
    s.error_classes = ErrorClass::ALL
        .iter()
        .zip(tally.by_class)
        .filter(|&(_, n)| n > 0)
        .map(|(c, n)| format!("{}:{n}", c.as_str()))
        .collect::<Vec<_>>()
        .join(" ");
    s.failed = s.attempted - s.succeeded;
    latency_columns(&mut s, &tally);
    server::client_split(&mut s, records);
    rate_columns(&mut s, &tally, records);
    super::turns::turn_columns(&mut s, records);
    super::waits::wait_columns(&mut s, records);
    s
}

/// What one pass over a step's records collects besides the counts it adds to the row.
struct Tally {
    /// Successful requests' TTFT, TTFC, TPOT and E2E, ms.
    ttft: Vec<f64>,
    ttfc: Vec<f64>,
    tpot: Vec<f64>,
    e2e: Vec<f64>,
    itl: PooledGaps,
    /// Requests meeting the SLO.
    good: u64,
    /// Failed requests per `ErrorClass::ALL` entry.
    by_class: [u64; ErrorClass::ALL.len()],
    /// Every request's E2E, for the achieved concurrency.
    e2e_all_ms: f64,
    /// Open loop: send lag, and TTFT and E2E counted from the scheduled send.
    lag: Vec<f64>,
    ttft_sched: Vec<f64>,
    e2e_sched: Vec<f64>,
    /// Sum of the successes' reported reasoning tokens; `None` when none reported a count.
    reasoning_tokens: Option<u64>,
    /// The priced successes (`cost` set): how many, their cost and their output tokens.
    priced: u64,
    cost: f64,
    priced_output_tokens: u64,
}

impl Tally {
    fn new() -> Self {
        Tally {
            ttft: Vec::new(),
            ttfc: Vec::new(),
            tpot: Vec::new(),
            e2e: Vec::new(),
            itl: PooledGaps::default(),
            good: 0,
            by_class: [0; ErrorClass::ALL.len()],
            e2e_all_ms: 0.0,
            lag: Vec::new(),
            ttft_sched: Vec::new(),
            e2e_sched: Vec::new(),
            reasoning_tokens: None,
            priced: 0,
            cost: 0.0,
            priced_output_tokens: 0,
        }
    }

    /// Takes one record: its figures into the tally, its counts into `s`.
    fn add(&mut self, s: &mut StepSummary, r: &RequestRecord, ctx: &StepContext) {
        if let Some(l) = r.send_lag_ms {
            self.lag.push(l);
            if r.is_ok() {
                self.ttft_sched.extend(r.ttft_ms.map(|t| t + l));
                self.e2e_sched.extend(r.e2e_ms.map(|t| t + l));
            }
        }
        if r.is_short(ctx.short_below) {
            s.short += 1;
        }
        if let Some(ms) = r.e2e_ms.filter(|v| v.is_finite()) {
            self.e2e_all_ms += ms;
        }
        match r.error_class {
            None => {
                s.succeeded += 1;
                self.ttft.extend(r.ttft_ms);
                self.ttfc.extend(r.ttfc_ms);
                if r.reasoned() {
                    s.reasoned += 1;
                }
                if let Some(n) = r.reasoning_tokens {
                    let sum = self.reasoning_tokens.get_or_insert(0);
                    *sum = sum.saturating_add(n);
                }
                self.tpot.extend(r.tpot_ms);
                self.e2e.extend(r.e2e_ms);
                if let Some(h) = &r.itl {
                    self.itl.add(h);
                }
                // Counts come from servers: sums saturate, never wrap (implausible ones are
                // already flagged per request by the client).
                s.output_tokens = s.output_tokens.saturating_add(r.output_tokens.unwrap_or(0));
                s.input_tokens = s.input_tokens.saturating_add(r.input_tokens.unwrap_or(0));
                s.cached_tokens = s.cached_tokens.saturating_add(r.cached_tokens.unwrap_or(0));
                if meets_slo(r, ctx.slo) {
                    self.good += 1;
                }
                if let Some(c) = r.cost.filter(|c| c.is_finite()) {
                    self.priced += 1;
                    self.cost += c;
                    let out = r.output_tokens.unwrap_or(0);
                    self.priced_output_tokens = self.priced_output_tokens.saturating_add(out);
                }
            }
            Some(c) => {
                let at = ErrorClass::ALL.iter().position(|&x| x == c).unwrap_or(0);
                self.by_class[at] += 1;
                match c {
                    ErrorClass::Http429 => s.err_429 += 1,
                    ErrorClass::Http5xx => s.err_5xx += 1,
                    c if c.is_timeout() => s.err_timeout += 1,
                    _ => s.err_other += 1,
                }
            }
        }
    }
}

/// The latency percentiles of a step: TTFT (with its P90's bounds), TPOT, pooled ITL, E2E, and
/// the open loop's send lag and scheduled-send latencies.
fn latency_columns(s: &mut StepSummary, t: &Tally) {
    let mut ttft_sorted: Vec<f64> = t.ttft.iter().copied().filter(|v| v.is_finite()).collect();
    ttft_sorted.sort_by(f64::total_cmp);
    if let Some((lo, hi)) = p90_bounds(&ttft_sorted) {
        (s.ttft_p90_lo_ms, s.ttft_p90_hi_ms) = (Some(lo), Some(hi));
    }
    let (lag, ttft_sched, e2e_sched) = (
        describe(&t.lag),
        describe(&t.ttft_sched),
        describe(&t.e2e_sched),
    );
    s.send_lag_p50_ms = lag.map(|d| d.p50);
    s.send_lag_p99_ms = lag.map(|d| d.p99);
    s.ttft_sched_p90_ms = ttft_sched.map(|d| d.p90);
    s.ttft_sched_p99_ms = ttft_sched.map(|d| d.p99);
    s.e2e_sched_p90_ms = e2e_sched.map(|d| d.p90);
    s.e2e_sched_p99_ms = e2e_sched.map(|d| d.p99);
    let (ttft, tpot, e2e) = (describe(&t.ttft), describe(&t.tpot), describe(&t.e2e));
    s.ttft_p50_ms = ttft.map(|d| d.p50);
    s.ttft_p90_ms = ttft.map(|d| d.p90);
    s.ttft_p99_ms = ttft.map(|d| d.p99);
    s.ttft_mean_ms = ttft.map(|d| d.mean);
    let ttfc = describe(&t.ttfc);
    s.ttfc_p50_ms = ttfc.map(|d| d.p50);
    s.ttfc_p90_ms = ttfc.map(|d| d.p90);
    s.ttfc_p99_ms = ttfc.map(|d| d.p99);
    s.tpot_p50_ms = tpot.map(|d| d.p50);
    s.tpot_p90_ms = tpot.map(|d| d.p90);
    s.tpot_p99_ms = tpot.map(|d| d.p99);
    // ITL: the pooled gaps at their bins' midpoints (within 1.09% of the exact percentile).
    s.itl_p50_ms = t.itl.quantile(0.5);
    s.itl_p90_ms = t.itl.quantile(0.9);
    s.itl_p99_ms = t.itl.quantile(0.99);
    s.e2e_p50_ms = e2e.map(|d| d.p50);
    s.e2e_p90_ms = e2e.map(|d| d.p90);
    s.e2e_p99_ms = e2e.map(|d| d.p99);
    s.e2e_mean_ms = e2e.map(|d| d.mean);
}

/// The requests in flight on average over the steady window of `records` (`None` without
/// one): what a closed-loop step kept in flight. An A/B step's is measured over both models'
/// records together.
pub fn steady_concurrency(records: &[RequestRecord]) -> Option<f64> {
    let timed: Vec<Timed> = records.iter().map(Timed::from).collect();
    steady_window(&timed).map(|w| w.concurrency)
}

/// Throughput over the step's duration, goodput, achieved concurrency, the steady window's
/// throughput (the one every throughput check judges) and the share of usage-counted tokens.
fn rate_columns(s: &mut StepSummary, t: &Tally, records: &[RequestRecord]) {
    let duration_s = s.duration_s;
    let per_s = |x: f64| {
        if duration_s > 0.0 {
            x / duration_s
        } else {
            0.0
        }
    };
    s.tpm = per_s(s.output_tokens as f64) * 60.0;
    s.tpm_total = per_s(s.input_tokens as f64 + s.output_tokens as f64) * 60.0;
    s.rps = per_s(s.succeeded as f64);
    s.goodput = (s.attempted > 0).then(|| t.good as f64 / s.attempted as f64);
    s.achieved_concurrency = (duration_s > 0.0).then(|| t.e2e_all_ms / (duration_s * 1000.0));
    let timed: Vec<Timed> = records.iter().map(Timed::from).collect();
    if let Some(w) = steady_window(&timed) {
        let rate = w.rate();
        s.steady_s = Some(w.length_ms() / 1000.0);
        s.concurrency_steady = Some(w.concurrency);
        s.rps_steady = Some(rate.rps());
        s.tpm_steady = Some(rate.tpm());
    }
    let usage = records
        .iter()
        .filter(|r| r.is_ok() && r.tokens_source == Some(TokensSource::Usage))
        .count();
    s.tokens_usage_share = (s.succeeded > 0).then(|| usage as f64 / s.succeeded as f64);
    s.reasoning_share = reasoning_share(t.reasoning_tokens, s.output_tokens);
    cost_columns(s, t);
}

/// What the step cost (docs/cost.md), from its priced successful requests (those with a
/// `cost`: a scenario with `pricing:` and a server that reported usage): per 1,000 of them (the
/// mean cost per successful request, the figure `diff` judges, × 1,000) and per 1M of their
/// output tokens. `None` when no success was priced. A failed request the server billed keeps
/// its cost in `requests.csv` but is not an answer, so it is in neither figure.
fn cost_columns(s: &mut StepSummary, t: &Tally) {
    if t.priced == 0 {
        return;
    }
    s.cost_per_1k_ok = Some(t.cost / t.priced as f64 * 1000.0);
    s.cost_per_1m_output =
        (t.priced_output_tokens > 0).then(|| t.cost / t.priced_output_tokens as f64 * 1e6);
}

/// The reasoning share of a step (docs/metrics.md): its successes' reasoning tokens over their
/// output tokens, both as the server reported them (reasoning is part of the output count);
/// `None` when no success reported a reasoning count or nothing was output. At most 1.
fn reasoning_share(reasoning_tokens: Option<u64>, output_tokens: u64) -> Option<f64> {
    let r = reasoning_tokens?;
    (output_tokens > 0).then(|| (r as f64 / output_tokens as f64).min(1.0))
}

/// Every SLO bound that is set must hold. An undefined TPOT (≤ 1 token) passes the TPOT bound;
/// a missing TTFT, TTFC (no answer token: all of it was reasoning) or E2E fails its bound.
fn meets_slo(r: &RequestRecord, slo: &Slo) -> bool {
    let within = |value: Option<f64>, bound: Option<std::time::Duration>, missing_ok: bool| match (
        value.filter(|v| !v.is_nan()),
        bound,
    ) {
        (_, None) => true,
        (Some(v), Some(b)) => v <= b.as_secs_f64() * 1000.0,
        (None, Some(_)) => missing_ok,
    };
    within(r.ttft_ms, slo.ttft, false)
        && within(r.ttfc_ms, slo.ttfc, false)
        && within(r.tpot_ms, slo.tpot, true)
        && within(r.e2e_ms, slo.e2e, false)
}
