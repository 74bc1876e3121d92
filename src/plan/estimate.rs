//! What a run will send, before it sends anything (`run --dry-run`, the limit warnings of
//! `run`): requests, input and output tokens per step, and, where a latency is known, the step's
//! duration and the tokens per minute it will ask for. Latency comes from the scenario's saved
//! baseline when one exists (measured mean E2E and tokens per step), else from the embedded
//! simulator's parameters, else it is unknown and the estimate says so.

use super::Limits;
use crate::model::LadderUnit;
use crate::scenario::{Budget, Endpoint, LadderOver, PromptContent, PromptSource, Scenario};
use crate::stats::StepSummary;
use serde::Serialize;

/// Where an estimate's latency and token figures come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    Baseline,
    /// The steps a run in progress has measured so far.
    Measured,
    Simulator,
    /// Prompt length / 4 and max_tokens; no latency.
    Guess,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StepEstimate {
    pub model: String,
    /// The step's ladder value, in `unit`.
    pub value: u32,
    pub unit: LadderUnit,
    /// Rate mode: the requests/s the step offers (arrivals, whether or not they are served).
    pub offered_rps: Option<f64>,
    /// Measured requests (warmup excluded); `None` for a duration budget with unknown latency.
    /// Rate mode: arrivals (dropped ones included).
    pub requests: Option<u64>,
    pub warmup: u64,
    pub input_tokens: Option<f64>,
    /// At most this many (max_tokens), or the expected count when known.
    pub output_tokens: Option<f64>,
    pub duration_s: Option<f64>,
    /// (input + output) tokens per minute while the step runs.
    pub tpm_total: Option<f64>,
    pub rpm: Option<f64>,
    /// Requests in flight on average (closed loop: the streams; rate mode: offered rate × mean
    /// E2E, Little's law, when the latency is known).
    pub in_flight: Option<f64>,
    pub input_per_request: f64,
    pub output_per_request: f64,
    /// Of the input, read from the provider's cache (measured steps only).
    #[serde(skip)]
    pub cached_per_request: f64,
    pub source: Source,
}

/// Rough token count of a text (≈ 4 characters per token for English).
fn guess_tokens(text: &str) -> f64 {
    (text.chars().count() as f64 / 4.0).ceil()
}

/// Input tokens per request at a step of value `value`, before anything is measured: the
/// synthetic size (one word per token), a prompt set's mean, or the prompt file's length / 4;
/// plus the system prompt and the tool definitions (their JSON / 4: providers count them as
/// input).
fn prompt_tokens(s: &Scenario, value: u32) -> f64 {
    let system = s.request.system.as_deref().map_or(0.0, guess_tokens);
    let tools = s.request.tools.as_ref().map_or(0.0, |t| {
        let raw: Vec<&serde_json::Value> = t.list.iter().map(|t| &t.raw).collect();
        guess_tokens(&serde_json::to_string(&raw).unwrap_or_default())
    });
    let prompt = match (&s.request.prompts, s.load.ladder_over) {
        (_, LadderOver::PromptTokens { .. }) => f64::from(value),
        (PromptSource::Synthetic { tokens }, _) => f64::from(*tokens),
        (PromptSource::Set(set), _) if !set.items.is_empty() => {
            let text = |i: &crate::scenario::PromptItem| match &i.content {
                PromptContent::Text(t) => guess_tokens(t),
                PromptContent::Messages(m) => m
                    .iter()
                    .filter_map(|v| v.get("content").and_then(|c| c.as_str()))
                    .map(guess_tokens)
                    .sum(),
            };
            set.items.iter().map(text).sum::<f64>() / set.items.len() as f64
        }
        (PromptSource::Trace, _) => s
            .load
            .trace
            .as_ref()
            .map_or(0.0, |t| t.mean_tokens(replayed(s, t, 1), asked_output(s)).0),
        _ => guess_tokens(&s.request.prompt),
    };
    prompt + system + tools
}

/// How many of the trace's requests a replay step sends (`speed` matters for a duration).
fn replayed(s: &Scenario, t: &crate::scenario::trace::Trace, speed: u32) -> usize {
    match s.load.budget {
        Budget::RequestsPerStep(n) => n as usize,
        Budget::Duration(d) => t.within(f64::from(speed), d),
        Budget::RequestsPerWorker(_) => t.requests.len(),
    }
}

/// A replay step's offered rate: the trace's own rate over the requests it replays × the
/// speed (a trace of one instant: all of them within a second). `None` outside replay.
fn replay_rate(s: &Scenario, speed: u32) -> Option<f64> {
    let t = s.load.trace.as_ref()?;
    let n = replayed(s, t, speed);
    Some(t.rate(n).unwrap_or(n.max(1) as f64) * f64::from(speed))
}

/// The output limit a request asks for; without one (`max_tokens: null`) the server decides, and
/// the loader's default stands in for it.
fn asked_output(s: &Scenario) -> u32 {
    s.request
        .max_tokens
        .unwrap_or(crate::scenario::token_limit::DEFAULT_MAX_TOKENS)
}

/// Output tokens a request may ask for: `max_tokens`, or a prompt set's mean of its own.
fn max_output(s: &Scenario) -> f64 {
    let base = asked_output(s);
    match &s.request.prompts {
        PromptSource::Trace => s.load.trace.as_ref().map_or(f64::from(base), |t| {
            t.mean_tokens(replayed(s, t, 1), base).1
        }),
        PromptSource::Set(set) if !set.items.is_empty() => {
            let sum: f64 = set
                .items
                .iter()
                .map(|i| f64::from(i.max_tokens.unwrap_or(base)))
                .sum();
            sum / set.items.len() as f64
        }
        _ => f64::from(base),
    }
}

/// What one request costs, from a measured step, the simulator's parameters or a guess.
struct PerRequest {
    source: Source,
    input: f64,
    /// Of the input, read from the provider's cache (measured only).
    cached: f64,
    output: f64,
    /// Mean E2E in seconds, when known.
    e2e_s: Option<f64>,
}

/// What the planned steps would cost at the scenario's `pricing:`, per model in the
/// scenario's order: every request sent, warmup included, at the step's tokens per request
/// (`Pricing::estimate`: prompts at the uncached price). A model's figure is `None` when a
/// step's number of requests is not known before the run (a duration budget without a
/// latency). `None` for an unpriced scenario.
#[derive(Debug, Clone, PartialEq)]
pub struct CostEstimate {
    pub currency: String,
    pub models: Vec<(String, Option<f64>)>,
}

pub fn cost(s: &Scenario, steps: &[StepEstimate]) -> Option<CostEstimate> {
    let pricing = s.pricing.as_ref()?;
    let models = s
        .target
        .models
        .iter()
        .map(|model| {
            let figure = steps
                .iter()
                .filter(|e| &e.model == model)
                .map(|e| {
                    let sent = (e.requests? + e.warmup) as f64;
                    pricing.estimate(
                        model,
                        sent * e.input_per_request,
                        sent * e.output_per_request,
                    )
                })
                .sum::<Option<f64>>();
            (model.clone(), figure)
        })
        .collect();
    Some(CostEstimate {
        currency: pricing.currency.clone(),
        models,
    })
}

/// The steps of a run in progress that it has not measured yet, estimated from those it has
/// (each from the nearest measured step below it, as from a baseline).
pub fn estimate_ahead(s: &Scenario, measured: &[StepSummary]) -> Vec<StepEstimate> {
    estimate(s, Some(measured))
        .into_iter()
        .filter(|e| {
            !measured
                .iter()
                .any(|m| m.model == e.model && m.concurrency == e.value)
        })
        .map(|e| StepEstimate {
            source: match e.source {
                Source::Baseline => Source::Measured,
                other => other,
            },
            ..e
        })
        .collect()
}

/// Per model × step. `baseline` holds the scenario's saved baseline rows, if any.
pub fn estimate(s: &Scenario, baseline: Option<&[StepSummary]>) -> Vec<StepEstimate> {
    let mut out = Vec::new();
    let unit = s.load.ladder_unit();
    let rate_mode = s.load.mode.open_loop();
    for model in &s.target.models {
        let base_rows: Vec<&StepSummary> = baseline
            .into_iter()
            .flatten()
            .filter(|r| &r.model == model && r.succeeded > 0)
            .collect();
        for &value in &s.load.ladder {
            // The step's load: its value, or the fixed level of a prompt-size ladder.
            let level = match s.load.ladder_over {
                LadderOver::Load => value,
                LadderOver::PromptTokens { level } => level,
            };
            // Measured at this value, else the nearest measured one below (latency only grows
            // with load and prompt size, so this errs towards a shorter, cheaper estimate).
            let measured = base_rows
                .iter()
                .filter(|r| r.concurrency <= value)
                .max_by_key(|r| r.concurrency)
                .or_else(|| base_rows.iter().min_by_key(|r| r.concurrency))
                .filter(|r| r.rps > 0.0);
            let prompt = prompt_tokens(s, value);
            let cost = per_request(s, model, measured.copied(), prompt);
            let warmup = u64::from(s.load.warmup_requests);
            let offered = replay_rate(s, value).unwrap_or(f64::from(level));
            let est = if rate_mode {
                rate_step(s, offered, &cost, measured.copied(), value, warmup)
            } else {
                closed_step(s, level, &cost, measured.copied(), value, warmup)
            };
            out.push(StepEstimate {
                model: model.clone(),
                value,
                unit,
                offered_rps: rate_mode.then_some(offered),
                requests: est.requests,
                warmup,
                input_tokens: est.requests.map(|n| n as f64 * cost.input),
                output_tokens: est.requests.map(|n| n as f64 * cost.output),
                duration_s: est.duration_s,
                tpm_total: est.rate.map(|r| r * 60.0 * (cost.input + cost.output)),
                rpm: est.rate.map(|r| r * 60.0),
                in_flight: est.in_flight,
                input_per_request: cost.input,
                output_per_request: cost.output,
                cached_per_request: cost.cached,
                source: cost.source,
            });
        }
    }
    out
}

fn per_request(
    s: &Scenario,
    model: &str,
    measured: Option<&StepSummary>,
    prompt: f64,
) -> PerRequest {
    match (measured, &s.target.endpoint) {
        (Some(r), _) => {
            let n = r.succeeded as f64;
            PerRequest {
                source: Source::Baseline,
                input: r.input_tokens as f64 / n,
                cached: r.cached_tokens as f64 / n,
                output: r.output_tokens as f64 / n,
                e2e_s: r.e2e_mean_ms.map(|ms| ms / 1000.0),
            }
        }
        (None, Endpoint::Sim(p)) => {
            let t = p.timing_for(model);
            // The simulator reasons before it answers: its reasoning tokens are decoded (and
            // billed) as output tokens, streamed or not.
            let out = f64::from(t.output_tokens).min(max_output(s)).max(1.0)
                + f64::from(p.reasoning_tokens);
            let e2e = t.ttft.as_secs_f64()
                + p.prefill_per_token.as_secs_f64() * prompt
                + t.tpot.as_secs_f64() * (out - 1.0);
            PerRequest {
                source: Source::Simulator,
                input: prompt,
                cached: 0.0,
                output: out,
                e2e_s: Some(e2e),
            }
        }
        (None, _) => PerRequest {
            source: Source::Guess,
            input: prompt,
            cached: 0.0,
            output: max_output(s),
            e2e_s: None,
        },
    }
}

/// A step's requests, wall time, request rate and requests in flight.
struct StepLoad {
    requests: Option<u64>,
    duration_s: Option<f64>,
    rate: Option<f64>,
    in_flight: Option<f64>,
}

/// Closed loop: `streams` workers back to back, so the rate is streams / E2E (or the measured
/// throughput), and the duration follows from the budget.
fn closed_step(
    s: &Scenario,
    streams: u32,
    cost: &PerRequest,
    measured: Option<&StepSummary>,
    value: u32,
    warmup: u64,
) -> StepLoad {
    let prompt_ladder = matches!(s.load.ladder_over, LadderOver::PromptTokens { .. });
    let rate = match (measured, &s.target.endpoint) {
        // A prompt-size ladder runs every step at the same streams: the measured throughput.
        (Some(r), _) if r.concurrency == value || prompt_ladder => Some(r.rps),
        // Measured throughput per stream, scaled to this step's streams.
        (Some(r), _) => Some(r.rps / f64::from(r.concurrency.max(1)) * f64::from(streams)),
        (None, Endpoint::Sim(p)) => {
            let served = p.concurrency_cap.map_or(streams, |cap| cap.min(streams));
            cost.e2e_s
                .filter(|e| *e > 0.0)
                .map(|e| f64::from(served) / e)
        }
        _ => None,
    };
    // A request budget: the scenario's one planned-requests rule; a duration: what the rate
    // completes in it.
    let (requests, duration_s) = match (s.load.planned_requests(value), s.load.budget) {
        (Some(n), _) => (Some(n), rate.map(|r| n as f64 / r)),
        (None, Budget::Duration(d)) => {
            let secs = d.as_secs_f64();
            (rate.map(|r| (r * secs).round() as u64), Some(secs))
        }
        (None, _) => (None, None),
    };
    // The warmup requests run first, at the same rate; then the ramp-up spreads starts.
    let warmup_s = rate.map_or(0.0, |r| warmup as f64 / r);
    StepLoad {
        requests,
        duration_s: duration_s.map(|d| d + warmup_s + s.load.ramp_up.as_secs_f64()),
        rate,
        in_flight: Some(f64::from(streams)),
    }
}

/// Open loop: arrivals at `offered` requests/s whatever the server does, so the step lasts
/// requests / rate plus the tail (the last requests' latency), longer when the server serves
/// fewer than arrive (a simulator's cap, or what the baseline measured at this rate). The
/// warmup runs on one worker, one request after another.
fn rate_step(
    s: &Scenario,
    offered: f64,
    cost: &PerRequest,
    measured: Option<&StepSummary>,
    value: u32,
    warmup: u64,
) -> StepLoad {
    let cap = s.load.mode.max_concurrency();
    // The most the server completes per second, when something says so.
    let capacity = match (measured, &s.target.endpoint) {
        (Some(r), _) if r.concurrency == value && r.offered_rps.is_some() => {
            (r.rps < 0.9 * offered).then_some(r.rps)
        }
        (None, Endpoint::Sim(p)) => p
            .concurrency_cap
            .zip(cost.e2e_s.filter(|e| *e > 0.0))
            .map(|(c, e)| f64::from(c) / e),
        _ => None,
    };
    let served = capacity.map_or(offered, |c| c.min(offered));
    let tail = cost.e2e_s.unwrap_or(0.0);
    // A request budget (`requests_per_worker` is refused in rate mode): the one planned-requests
    // rule; a duration: the arrivals it holds.
    let (requests, sending_s) = match (s.load.planned_requests(value), s.load.budget) {
        (Some(n), _) => (n, n as f64 / offered),
        (None, Budget::Duration(d)) => {
            ((offered * d.as_secs_f64()).round() as u64, d.as_secs_f64())
        }
        (None, _) => (0, 0.0),
    };
    // A server slower than the arrivals drains a backlog after the last arrival: what piled
    // up while sending, at most `max_concurrency` (arrivals beyond it are dropped).
    let backlog = (offered - served) * sending_s;
    let backlog = cap.map_or(backlog, |c| backlog.min(f64::from(c)));
    let draining_s = backlog / served;
    let warmup_s = warmup as f64 * tail;
    // What the arrivals ask for (Little's law), at most the cap.
    let in_flight = cost.e2e_s.map(|e| {
        let little = offered * e;
        cap.map_or(little, |c| little.min(f64::from(c)))
    });
    StepLoad {
        requests: Some(requests),
        duration_s: Some(sending_s + draining_s + tail + warmup_s),
        rate: Some(offered),
        in_flight,
    }
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

/// Warnings before traffic: more requests in flight than the declared concurrency (the
/// ladder's streams; in rate mode the offered rate × mean E2E, Little's law), or a step's planned
/// tokens or requests per minute above the declared TPM or RPM.
pub fn limit_warnings(limits: &Limits, steps: &[StepEstimate]) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(limit) = limits.concurrency {
        let over = steps
            .iter()
            .find(|e| e.in_flight.is_some_and(|f| f > f64::from(limit)));
        match over {
            Some(e) if e.offered_rps.is_none() => {
                let streams = steps.iter().filter_map(|e| e.in_flight).fold(0.0, f64::max);
                let what = if e.unit == LadderUnit::PromptTokens {
                    "load.concurrency is"
                } else {
                    "load.ladder goes to"
                };
                out.push(format!(
                    "{what} {streams} streams, above limits.concurrency {limit}: expect 429s or queueing from there on"
                ))
            }
            Some(e) => out.push(format!(
                "{} at {}: ≈ {:.0} requests in flight (offered rate × mean E2E, from the {}), above limits.concurrency {limit}: expect 429s or queueing from there on",
                e.model,
                step_words(e),
                e.in_flight.unwrap_or(0.0),
                source_words(e.source)
            )),
            None => {}
        }
    }
    let first_over = |f: &dyn Fn(&StepEstimate) -> Option<f64>, limit: f64| {
        steps
            .iter()
            .find(|e| f(e).is_some_and(|v| v > limit))
            .map(|e| (e, f(e).unwrap_or(0.0)))
    };
    // Each token limit counted as its provider counts a request (`plan::Charges`).
    let counted = |e: &StepEstimate| {
        let c = super::Charges::of(
            e.input_per_request,
            e.cached_per_request,
            e.output_per_request,
            limits,
        );
        e.rpm.map(|rpm| (rpm * c.tpm, rpm * c.itpm, rpm * c.otpm))
    };
    let tpm_words = match limits.tpm_counts {
        crate::scenario::TpmCounts::Used => "input + output",
        crate::scenario::TpmCounts::Reserve => "prompt + max_tokens",
        crate::scenario::TpmCounts::Larger => "the larger of prompt and max_tokens",
    };
    let token_limits = [
        (limits.tpm, "tpm", tpm_words, "a token-limit wall"),
        (
            limits.itpm,
            "itpm",
            if limits.itpm_cached {
                "input"
            } else {
                "uncached input"
            },
            "an input-token wall",
        ),
        (limits.otpm, "otpm", "output", "an output-token wall"),
    ];
    for (i, (limit, name, what, wall)) in token_limits.into_iter().enumerate() {
        let Some(limit) = limit else { continue };
        let pick = |e: &StepEstimate| counted(e).map(|c| [c.0, c.1, c.2][i]);
        if let Some((e, v)) = first_over(&pick, limit as f64) {
            out.push(format!(
                "{} at {}: planned ≈ {:.0} tokens/min ({what}, from the {}) exceeds limits.{name} {limit}: expect {wall}",
                e.model,
                step_words(e),
                v,
                source_words(e.source)
            ));
        }
    }
    if let Some(limit) = limits.rpm {
        if let Some((e, v)) = first_over(&|e| e.rpm, limit as f64) {
            out.push(format!(
                "{} at {}: planned ≈ {:.0} requests/min (from the {}) exceeds limits.rpm {limit}: expect a request-limit wall",
                e.model,
                step_words(e),
                v,
                source_words(e.source)
            ));
        }
    }
    out
}

/// A step in a sentence: `8 streams`, `40 req/s`, `2000-token prompts`.
pub fn step_words(e: &StepEstimate) -> String {
    e.unit.describe(e.value)
}

pub fn source_words(s: Source) -> &'static str {
    match s {
        Source::Baseline => "saved baseline",
        Source::Measured => "steps measured so far",
        Source::Simulator => "simulator's parameters",
        Source::Guess => "prompt length and max_tokens",
    }
}
