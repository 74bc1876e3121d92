//! Another tool's sweep as ladder's steps: each sweep point is a step (numbered by its
//! concurrency or rate, in order), each request a `RequestRecord` of that step, and each model ×
//! step summarized by the run's own rule (`stats::summarize_step`), so the table, the knee, the
//! wall, `diff`, `report` and `plan` read it as a run. The run carries no client self-check
//! (the other tool measured it): `concurrency_steady`, CPU and loop lag stay empty. Its
//! workload fingerprint names the requested token sizes, so results of two tools on the same
//! workload pair up in `diff`, and different sizes are refused as different workloads.

use super::{PeerRequest, PeerRun, Point, Requested};
use crate::logs::ladder::tpot_ms;
use crate::logs::LogError;
use crate::model::{ErrorClass, ItlHistogram, LadderUnit, RequestRecord, Slo, TokensSource};
use crate::stats::{summarize_step, StepContext, StepSummary};
use std::collections::BTreeMap;

/// What shapes an imported run.
#[derive(Debug, Clone, Default)]
pub struct PeerOptions {
    /// Share of requests the tool kept (1 = all): rates are divided by it.
    pub sample_rate: f64,
    pub slo: Slo,
    /// A scenario's name and fingerprint (`--scenario`), instead of the tool's name and the
    /// requested sizes.
    pub scenario: Option<(String, String)>,
}

/// The tools' runs as one ladder run.
#[derive(Debug, Clone, Default)]
pub struct PeerLadder {
    pub records: Vec<RequestRecord>,
    pub summaries: Vec<StepSummary>,
    pub unit: LadderUnit,
    /// The first request's start and the last one's end, on the tool's clock (ms).
    pub span_ms: (f64, f64),
    /// "GuideLLM 0.8.1": who measured it.
    pub client: String,
    pub scenario: String,
    pub fingerprint: String,
    pub models: Vec<String>,
    pub notes: Vec<String>,
}

/// The steps of `runs` (one tool's files: a GuideLLM report holds a sweep, AIPerf and vLLM
/// write one file per point).
pub fn build(runs: &[PeerRun], opts: &PeerOptions) -> Result<PeerLadder, LogError> {
    let first = runs
        .first()
        .ok_or_else(|| LogError::Usage("no results to read".into()))?;
    if let Some(other) = runs.iter().find(|r| r.tool != first.tool) {
        return Err(LogError::Usage(format!(
            "the files mix {} and {} results; import each tool's into its own run and `ladder diff` the two",
            first.tool.name(),
            other.tool.name()
        )));
    }
    let mut versions: Vec<&str> = runs.iter().map(|r| r.version.as_str()).collect();
    versions.dedup();
    let points = merge_points(runs)?;
    let unit = match points.first().map(|p| p.0) {
        Some(Point::Rate(_)) => LadderUnit::Rps,
        _ => LadderUnit::Streams,
    };
    let origin = points
        .iter()
        .flat_map(|p| &p.2)
        .map(|r| r.req.start_ms)
        .fold(f64::INFINITY, f64::min);
    let origin = if origin.is_finite() { origin } else { 0.0 };
    let (scenario, fingerprint) = opts.scenario.clone().unwrap_or_else(|| {
        (
            first.tool.as_str().to_string(),
            fingerprint_of(first.requested, runs),
        )
    });
    let mut out = PeerLadder {
        unit,
        client: match versions.as_slice() {
            ["unknown"] => format!("{} (version unknown)", first.tool.name()),
            vs => format!("{} {}", first.tool.name(), vs.join(", ")),
        },
        scenario,
        fingerprint,
        span_ms: (origin, origin),
        notes: runs.iter().flat_map(|r| r.notes.iter().cloned()).collect(),
        ..PeerLadder::default()
    };
    for (n, (point, duration_s, requests)) in points.iter().enumerate() {
        let step = n as u32 + 1;
        let value = step_value(*point);
        let mut by_model: BTreeMap<&str, Vec<RequestRecord>> = BTreeMap::new();
        for (i, r) in requests.iter().enumerate() {
            let rec = record_of(r, step, value, origin, i);
            out.span_ms.1 = out.span_ms.1.max(r.req.end_ms);
            by_model.entry(&r.req.model).or_default().push(rec);
        }
        let duration_s = duration_s.unwrap_or_else(|| span_s(requests));
        for (model, recs) in by_model {
            let ctx = StepContext {
                scenario: &out.scenario,
                fingerprint: &out.fingerprint,
                model,
                step,
                concurrency: value,
                duration_s,
                slo: &opts.slo,
                short_below: 0.0,
            };
            let mut s = summarize_step(&ctx, &recs);
            for v in [&mut s.rps, &mut s.tpm, &mut s.tpm_total] {
                *v /= opts.sample_rate;
            }
            // Measured by another client: no steady window of ladder's own.
            s.concurrency_steady = None;
            out.summaries.push(s);
            if !out.models.iter().any(|m| m == model) {
                out.models.push(model.to_string());
            }
            out.records.extend(recs);
        }
    }
    Ok(out)
}

/// A point, its summed duration (when every file said one) and its requests.
type Merged<'a> = (Point, Option<f64>, Vec<&'a PeerRequest>);

/// The runs' points in order of their value; points of equal value (the same concurrency in
/// two files) are one step.
fn merge_points(runs: &[PeerRun]) -> Result<Vec<Merged<'_>>, LogError> {
    let mut points: Vec<Merged> = Vec::new();
    for p in runs.iter().flat_map(|r| &r.points) {
        if let Some(q) = points.iter_mut().find(|q| q.0 == p.point) {
            q.1 = q.1.zip(p.duration_s).map(|(a, b)| a + b);
            q.2.extend(&p.requests);
        } else {
            points.push((p.point, p.duration_s, p.requests.iter().collect()));
        }
    }
    let rates = points
        .iter()
        .filter(|p| matches!(p.0, Point::Rate(_)))
        .count();
    if rates > 0 && rates < points.len() {
        return Err(LogError::Usage(
            "the results mix concurrency and rate sweeps; import each sweep into its own run"
                .into(),
        ));
    }
    points.sort_by(|a, b| a.0.value().total_cmp(&b.0.value()));
    for w in points.windows(2) {
        if step_value(w[0].0) == step_value(w[1].0) {
            return Err(LogError::Usage(format!(
                "rates {} and {} req/s round to the same step; ladder's rate steps are whole requests per second",
                w[0].0.value(),
                w[1].0.value()
            )));
        }
    }
    if points.iter().all(|p| p.2.is_empty()) {
        return Err(LogError::Usage("the results hold no requests".into()));
    }
    Ok(points)
}

/// A step's value: the concurrency, or the rate rounded to whole requests per second.
fn step_value(p: Point) -> u32 {
    match p {
        Point::Streams(n) => n,
        Point::Rate(r) => r.round().max(1.0) as u32,
    }
}

/// The time the point's requests spanned, when the tool did not record the point's duration.
fn span_s(requests: &[&PeerRequest]) -> f64 {
    let start = requests
        .iter()
        .map(|r| r.req.start_ms)
        .fold(f64::INFINITY, f64::min);
    let end = requests
        .iter()
        .map(|r| r.req.end_ms)
        .fold(f64::NEG_INFINITY, f64::max);
    ((end - start) / 1000.0).max(0.0)
}

/// The workload as the tool requested it: the synthetic prompts' and answers' sizes, else the
/// median sizes recorded.
fn fingerprint_of(requested: Requested, runs: &[PeerRun]) -> String {
    let median = |f: fn(&PeerRequest) -> Option<u64>| {
        let mut v: Vec<u64> = runs
            .iter()
            .flat_map(|r| &r.points)
            .flat_map(|p| &p.requests)
            .filter_map(f)
            .collect();
        v.sort_unstable();
        v.get(v.len() / 2).copied()
    };
    let input = requested
        .input_tokens
        .or_else(|| median(|r| r.req.input_tokens));
    let output = requested
        .output_tokens
        .or_else(|| median(|r| r.req.output_tokens));
    let words = |n: Option<u64>| n.map_or("unknown".to_string(), |n| n.to_string());
    format!("import-in{}-out{}", words(input), words(output))
}

fn record_of(r: &PeerRequest, step: u32, value: u32, origin: f64, i: usize) -> RequestRecord {
    let q = &r.req;
    let e2e = q.e2e_ms();
    let ok = q.error_class.is_none();
    RequestRecord {
        model: q.model.clone(),
        step,
        concurrency: value,
        worker: 0,
        seq: i as u32,
        request_id: format!("line-{}", q.line),
        started_at_ms: q.start_ms - origin,
        error_class: q.error_class,
        http_status: q.http_status,
        error_message: q.error_message.clone(),
        ttft_ms: q.ttft_ms,
        tpot_ms: if ok {
            r.tpot_ms
                .or_else(|| tpot_ms(e2e, q.ttft_ms, q.output_tokens))
        } else {
            None
        },
        e2e_ms: Some(e2e),
        output_tokens: q.output_tokens,
        input_tokens: q.input_tokens,
        tokens_source: q.output_tokens.map(|_| {
            if r.tokens_from_usage {
                TokensSource::Usage
            } else {
                TokensSource::Chunks
            }
        }),
        token_events: r.gaps_ms.len() as u64 + u64::from(q.ttft_ms.is_some()),
        itl: (ok && !r.gaps_ms.is_empty()).then(|| ItlHistogram::from_gaps(&r.gaps_ms)),
        attempts: 1,
        first_attempt_429: q.error_class == Some(ErrorClass::Http429),
        ..RequestRecord::default()
    }
}
