//! What a run will send, before it sends anything (`run --dry-run`, the limit warnings of
//! `run`): requests, input and output tokens per step, and, where a latency is known, the step's
//! duration and the tokens per minute it will ask for. Latency comes from the scenario's saved
//! baseline when one exists (measured mean E2E and tokens per step), else from the embedded
//! simulator's parameters, else it is unknown and the estimate says so.

use super::DeclaredLimits;
use crate::scenario::{Budget, Endpoint, Scenario};
use crate::stats::StepSummary;
use serde::Serialize;

/// Where an estimate's latency and token figures come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    Baseline,
    Simulator,
    /// Prompt length / 4 and max_tokens; no latency.
    Guess,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StepEstimate {
    pub model: String,
    pub concurrency: u32,
    /// Measured requests (warmup excluded); `None` for a duration budget with unknown latency.
    pub requests: Option<u64>,
    pub warmup: u64,
    pub input_tokens: Option<f64>,
    /// At most this many (max_tokens), or the expected count when known.
    pub output_tokens: Option<f64>,
    pub duration_s: Option<f64>,
    /// (input + output) tokens per minute while the step runs.
    pub tpm_total: Option<f64>,
    pub rpm: Option<f64>,
    pub input_per_request: f64,
    pub output_per_request: f64,
    pub source: Source,
}

/// Rough token count of a text (≈ 4 characters per token for English).
fn guess_tokens(text: &str) -> f64 {
    (text.chars().count() as f64 / 4.0).ceil()
}

/// Per model × step. `baseline` holds the scenario's saved baseline rows, if any.
pub fn estimate(s: &Scenario, baseline: Option<&[StepSummary]>) -> Vec<StepEstimate> {
    let mut out = Vec::new();
    let prompt_tokens =
        guess_tokens(&s.request.prompt) + s.request.system.as_deref().map_or(0.0, guess_tokens);
    for model in &s.target.models {
        let base_rows: Vec<&StepSummary> = baseline
            .into_iter()
            .flatten()
            .filter(|r| &r.model == model && r.succeeded > 0)
            .collect();
        for &c in &s.load.ladder {
            // Measured at this concurrency, else the nearest measured one below (latency only
            // grows with load, so this errs towards a shorter, cheaper estimate: say so).
            let measured = base_rows
                .iter()
                .filter(|r| r.concurrency <= c)
                .max_by_key(|r| r.concurrency)
                .or_else(|| base_rows.iter().min_by_key(|r| r.concurrency));
            let (source, input, output, rate) = match (measured, &s.target.endpoint) {
                (Some(r), _) if r.rps > 0.0 => {
                    let n = r.succeeded as f64;
                    // Measured throughput per stream, scaled to this step's streams.
                    let per_stream = r.rps / f64::from(r.concurrency.max(1));
                    let rate = if r.concurrency == c {
                        r.rps
                    } else {
                        per_stream * f64::from(c)
                    };
                    (
                        Source::Baseline,
                        r.input_tokens as f64 / n,
                        r.output_tokens as f64 / n,
                        Some(rate),
                    )
                }
                (_, Endpoint::Sim(p)) => {
                    let t = p.timing_for(model);
                    let out = f64::from(t.output_tokens.min(s.request.max_tokens).max(1));
                    let e2e = t.ttft.as_secs_f64()
                        + p.prefill_per_token.as_secs_f64() * prompt_tokens
                        + t.tpot.as_secs_f64() * (out - 1.0);
                    let served = p.concurrency_cap.map_or(c, |cap| cap.min(c));
                    let rate = (e2e > 0.0).then(|| f64::from(served) / e2e);
                    (Source::Simulator, prompt_tokens, out, rate)
                }
                _ => (
                    Source::Guess,
                    prompt_tokens,
                    f64::from(s.request.max_tokens),
                    None,
                ),
            };
            let warmup = u64::from(s.load.warmup_requests);
            let (requests, duration_s) = match s.load.budget {
                Budget::RequestsPerStep(n) => (Some(n), rate.map(|r| n as f64 / r)),
                Budget::RequestsPerWorker(k) => {
                    let n = k * u64::from(c);
                    (Some(n), rate.map(|r| n as f64 / r))
                }
                Budget::Duration(d) => {
                    let secs = d.as_secs_f64();
                    (rate.map(|r| (r * secs).round() as u64), Some(secs))
                }
            };
            // The warmup requests run first, at the same rate; then the ramp-up spreads starts.
            let warmup_s = rate.map_or(0.0, |r| warmup as f64 / r);
            let duration_s = duration_s.map(|d| d + warmup_s + s.load.ramp_up.as_secs_f64());
            out.push(StepEstimate {
                model: model.clone(),
                concurrency: c,
                requests,
                warmup,
                input_tokens: requests.map(|n| n as f64 * input),
                output_tokens: requests.map(|n| n as f64 * output),
                duration_s,
                tpm_total: rate.map(|r| r * 60.0 * (input + output)),
                rpm: rate.map(|r| r * 60.0),
                input_per_request: input,
                output_per_request: output,
                source,
            });
        }
    }
    out
}

/// Total wall time of the run: every step plus the pauses, when every step's time is known.
pub fn total_duration_s(s: &Scenario, steps: &[StepEstimate]) -> Option<f64> {
    let mut total = 0.0;
    for e in steps {
        total += e.duration_s?;
    }
    let pauses = s.load.ladder.len().saturating_sub(1) * s.target.models.len().max(1);
    Some(total + pauses as f64 * s.load.pause_between_steps.as_secs_f64())
}

/// Warnings before traffic: the ladder above the declared concurrency, or a step's planned
/// tokens or requests per minute above the declared TPM or RPM.
pub fn limit_warnings(limits: &DeclaredLimits, steps: &[StepEstimate]) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(limit) = limits.concurrency {
        if let Some(top) = steps
            .iter()
            .map(|e| e.concurrency)
            .max()
            .filter(|c| *c > limit)
        {
            out.push(format!(
                "load.ladder goes to {top} streams, above limits.concurrency {limit}: expect 429s or queueing from there on"
            ));
        }
    }
    let first_over = |f: &dyn Fn(&StepEstimate) -> Option<f64>, limit: f64| {
        steps
            .iter()
            .find(|e| f(e).is_some_and(|v| v > limit))
            .map(|e| (e, f(e).unwrap_or(0.0)))
    };
    if let Some(limit) = limits.tpm {
        if let Some((e, v)) = first_over(&|e| e.tpm_total, limit as f64) {
            out.push(format!(
                "{} at {} streams: planned ≈ {:.0} tokens/min (input + output, from the {}) exceeds limits.tpm {limit}: expect a token-limit wall",
                e.model,
                e.concurrency,
                v,
                source_words(e.source)
            ));
        }
    }
    if let Some(limit) = limits.rpm {
        if let Some((e, v)) = first_over(&|e| e.rpm, limit as f64) {
            out.push(format!(
                "{} at {} streams: planned ≈ {:.0} requests/min (from the {}) exceeds limits.rpm {limit}: expect a request-limit wall",
                e.model,
                e.concurrency,
                v,
                source_words(e.source)
            ));
        }
    }
    out
}

pub fn source_words(s: Source) -> &'static str {
    match s {
        Source::Baseline => "saved baseline",
        Source::Simulator => "simulator's parameters",
        Source::Guess => "prompt length and max_tokens",
    }
}
