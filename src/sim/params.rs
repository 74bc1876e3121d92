//! The simulator's knobs (docs/simulator.md): what the server models, with the defaults documented on each
//! field, plus `--sim-set key=value` overrides of the keys in `keys::PARAMS` (the one table of
//! keys, units, defaults and meanings that `ladder sim --list` prints). Pure data: no clock, no
//! I/O.

mod keys;
mod parse;

use super::limits::{CachedInput, LimitPreset, LimitScope, LimitWindow, TpmCounts};
pub use keys::Param;
use parse::{boolean, choice, dur, fraction, non_negative, num, opt, positive, unknown_key};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;
use std::time::Duration;

/// `prefix_cache_tokens` when not set: a million 16-token blocks, more than any test or demo
/// holds (the cache was cleared at that size before it had a capacity).
pub const DEFAULT_PREFIX_CACHE_TOKENS: u64 = 16_000_000;

/// The model name served when a request names none of the configured ones.
pub const DEFAULT_MODEL: &str = "sim-model";

/// Server-side parameters (docs/simulator.md). Not part of the workload fingerprint.
///
/// `Default` gives the documented defaults (not zeroes); YAML fields that are left out take them.
/// `Debug` never prints `require_api_key`.
#[derive(Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SimParams {
    /// Base time to first token once a slot is free (200ms); the median when `ttft_sigma` > 0.
    #[serde(with = "crate::util::duration::serde_human")]
    pub ttft: Duration,
    /// Lognormal spread of TTFT (0 = none): each request's TTFT is `ttft` × e^(σ·Z), seeded.
    pub ttft_sigma: f64,
    /// Extra TTFT per input token (0); input tokens ≈ prompt characters / 4.
    #[serde(with = "crate::util::duration::serde_human")]
    pub prefill_per_token: Duration,
    /// Time per output token after the first (20ms).
    #[serde(with = "crate::util::duration::serde_human")]
    pub tpot: Duration,
    /// Uniform jitter on each token interval, as a fraction of `tpot` (0.05), seeded.
    pub tpot_jitter: f64,
    /// Tokens generated per request (64); a request gets min(max_tokens, output_tokens).
    /// With `output_tokens_min`, the largest length drawn.
    pub output_tokens: u32,
    /// When set, each request's length is drawn uniformly from `output_tokens_min..=output_tokens`
    /// (seeded), then capped by max_tokens.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output_tokens_min: Option<u32>,
    /// Run-level drift (0 = none): every TTFT and TPOT of this server instance is scaled by
    /// e^(drift·Z), Z drawn once from `seed`, like a provider that is a few percent slower or
    /// faster from one run to the next.
    pub drift: f64,
    /// A slow random walk of speed (0 = none): every TTFT and TPOT scaled by a factor that
    /// wanders within ±`drift_walk` (0.3: between 1/1.3 and 1.3) as the server's time goes on,
    /// read when each request arrives (`sim::walk`).
    pub drift_walk: f64,
    /// The walk's pace (5m): its change over this time would spread by ±ln(1 + `drift_walk`)
    /// if the walls did not hold it back.
    #[serde(with = "crate::util::duration::serde_human")]
    pub drift_walk_period: Duration,
    /// Streams served at once; above it requests wait in a FIFO queue (none = unlimited).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub concurrency_cap: Option<u32>,
    /// Extra TPOT, as a fraction of `tpot`, per active stream above `saturation_from` (0 = off).
    pub saturation: f64,
    /// Active streams the backend serves without slowing down (1).
    pub saturation_from: u32,
    /// Requests per minute (token bucket); over it: 429 `requests`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rpm: Option<u32>,
    /// Tokens per minute, counted as `tpm_counts` says; over it: 429 `tokens`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tpm: Option<u64>,
    /// A provider's shape of account limits with example numbers (`limits::LimitPreset`); the
    /// limit keys set here win over it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub limits: Option<LimitPreset>,
    /// How `tpm` charges a request (prompt + max_tokens when neither this nor a preset says).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tpm_counts: Option<TpmCounts>,
    /// Input tokens per minute (Anthropic's ITPM); over it: 429 `input_tokens`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub itpm: Option<u64>,
    /// Whether cache reads count toward `itpm` (free when neither this nor a preset says).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub itpm_cached: Option<CachedInput>,
    /// Output tokens per minute (Anthropic's OTPM): max_tokens reserved, settled after.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub otpm: Option<u64>,
    /// Token buckets or fixed windows (buckets when neither this nor a preset says).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub limit_window: Option<LimitWindow>,
    /// The period a limit's amount may be spent over: a bucket holds that much of the
    /// per-minute limit, a fixed window resets that often (1m when unset).
    #[serde(
        with = "crate::util::duration::serde_human_opt",
        skip_serializing_if = "Option::is_none"
    )]
    pub limit_period: Option<Duration>,
    /// Acceleration limit: the requests admitted in the last 10 s may be at most this many
    /// times those of the 10 s before (or of `accel_floor`); over it: 429 with headroom left.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub accel: Option<f64>,
    /// Requests per second an acceleration limit always allows as the earlier rate (5).
    pub accel_floor: f64,
    /// Requests in flight per account (or key); past it: 429 at once.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub concurrency_limit: Option<u32>,
    /// Whether the limits count the account or each API key (the account when unset).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub limits_per: Option<LimitScope>,
    /// Seed for faults and jitter (42).
    pub seed: u64,
    /// Per-model overrides of `ttft`, `tpot`, `output_tokens`.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub models: BTreeMap<String, ModelOverride>,
    /// Fault injection rates.
    pub faults: FaultRates,
    /// When set, requests must carry this key (bearer, or `x-api-key` on /messages), else 401.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub require_api_key: Option<String>,
    /// Answer 404 `model_not_found` for models not in `models` (and not `sim-model`).
    pub known_models_only: bool,
    /// Keep a prefix cache: prompt tokens whose 16-token blocks (with everything before them)
    /// were seen before cost no prefill and are reported as cached in usage.
    pub prefix_cache: bool,
    /// Tokens the prefix cache holds (16,000,000): past it the least recently used blocks are
    /// evicted, so sessions whose histories outgrow it miss (`sim::prefix_cache`).
    pub prefix_cache_tokens: u64,
    /// Share of the requests that carry `tools` answered with a tool call instead of text (0),
    /// drawn per request from the seed.
    pub tool_call_share: f64,
    /// Reasoning tokens per answer (0): generated at `tpot` each before the first answer
    /// token and reported in usage (`completion_tokens` includes them; chat also says
    /// `completion_tokens_details.reasoning_tokens`). Hidden (like o-series / gpt-5 models: they
    /// add to TTFT) unless `stream_reasoning`.
    pub reasoning_tokens: u32,
    /// Stream the reasoning tokens as reasoning deltas before the answer, as open-weight reasoning
    /// models served by vLLM, SGLang or llama.cpp do (chat: `delta.reasoning_content`; Anthropic:
    /// a `thinking` block of `thinking_delta`s): TTFT is then the first reasoning token and TTFC
    /// the first answer token. Streaming requests only; legacy completions keep them hidden.
    pub stream_reasoning: bool,
    /// Base time of an embeddings answer once a slot is free (10ms), spread by `ttft_sigma` and
    /// `drift` as TTFT is.
    #[serde(with = "crate::util::duration::serde_human")]
    pub embed_time: Duration,
    /// Time per input token of an embeddings answer, every text of the request counted (50us):
    /// the prefill an embedding is.
    #[serde(with = "crate::util::duration::serde_human")]
    pub embed_per_token: Duration,
    /// Size of each embedding vector when the request sets no `dimensions` (384).
    pub embed_dimensions: u32,
}

/// Partial per-model override; unset fields fall back to the top-level values.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ModelOverride {
    #[serde(
        with = "crate::util::duration::serde_human_opt",
        skip_serializing_if = "Option::is_none"
    )]
    pub ttft: Option<Duration>,
    #[serde(
        with = "crate::util::duration::serde_human_opt",
        skip_serializing_if = "Option::is_none"
    )]
    pub tpot: Option<Duration>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output_tokens: Option<u32>,
}

/// Per-request probabilities in [0, 1] of each injected fault (all 0 by default).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct FaultRates {
    pub http_500: f64,
    pub http_502: f64,
    pub http_503: f64,
    /// Anthropic-style 529 `overloaded_error`.
    pub overloaded_529: f64,
    /// Drop the connection mid-stream.
    pub disconnect: f64,
    /// Send nothing for `stall_for` mid-stream, then continue.
    pub stall: f64,
    /// One invalid JSON data line mid-stream.
    pub malformed: f64,
    /// Error object (or Anthropic `event: error`) mid-stream, then end.
    pub inband_error: f64,
    /// End cleanly without `[DONE]` / `message_stop`.
    pub no_done: f64,
    /// 200 with a plain JSON body although a stream was asked for.
    pub json_body: f64,
    /// How long a stall lasts (5s).
    #[serde(with = "crate::util::duration::serde_human")]
    pub stall_for: Duration,
}

impl Default for FaultRates {
    fn default() -> Self {
        FaultRates {
            http_500: 0.0,
            http_502: 0.0,
            http_503: 0.0,
            overloaded_529: 0.0,
            disconnect: 0.0,
            stall: 0.0,
            malformed: 0.0,
            inband_error: 0.0,
            no_done: 0.0,
            json_body: 0.0,
            stall_for: Duration::from_secs(5),
        }
    }
}

impl Default for SimParams {
    fn default() -> Self {
        SimParams {
            ttft: Duration::from_millis(200),
            ttft_sigma: 0.0,
            prefill_per_token: Duration::ZERO,
            tpot: Duration::from_millis(20),
            tpot_jitter: 0.05,
            output_tokens: 64,
            output_tokens_min: None,
            drift: 0.0,
            drift_walk: 0.0,
            drift_walk_period: Duration::from_secs(300),
            concurrency_cap: None,
            saturation: 0.0,
            saturation_from: 1,
            rpm: None,
            tpm: None,
            limits: None,
            tpm_counts: None,
            itpm: None,
            itpm_cached: None,
            otpm: None,
            limit_window: None,
            limit_period: None,
            accel: None,
            accel_floor: 5.0,
            concurrency_limit: None,
            limits_per: None,
            seed: 42,
            models: BTreeMap::new(),
            faults: FaultRates::default(),
            require_api_key: None,
            known_models_only: false,
            prefix_cache: false,
            prefix_cache_tokens: DEFAULT_PREFIX_CACHE_TOKENS,
            tool_call_share: 0.0,
            reasoning_tokens: 0,
            stream_reasoning: false,
            embed_time: Duration::from_millis(10),
            embed_per_token: Duration::from_micros(50),
            embed_dimensions: 384,
        }
    }
}

impl fmt::Debug for SimParams {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SimParams")
            .field("ttft", &self.ttft)
            .field("ttft_sigma", &self.ttft_sigma)
            .field("prefill_per_token", &self.prefill_per_token)
            .field("tpot", &self.tpot)
            .field("tpot_jitter", &self.tpot_jitter)
            .field("output_tokens", &self.output_tokens)
            .field("output_tokens_min", &self.output_tokens_min)
            .field("drift", &self.drift)
            .field("drift_walk", &self.drift_walk)
            .field("drift_walk_period", &self.drift_walk_period)
            .field("concurrency_cap", &self.concurrency_cap)
            .field("saturation", &self.saturation)
            .field("saturation_from", &self.saturation_from)
            .field("rpm", &self.rpm)
            .field("tpm", &self.tpm)
            .field("limits", &self.limits)
            .field("tpm_counts", &self.tpm_counts)
            .field("itpm", &self.itpm)
            .field("itpm_cached", &self.itpm_cached)
            .field("otpm", &self.otpm)
            .field("limit_window", &self.limit_window)
            .field("limit_period", &self.limit_period)
            .field("accel", &self.accel)
            .field("accel_floor", &self.accel_floor)
            .field("concurrency_limit", &self.concurrency_limit)
            .field("limits_per", &self.limits_per)
            .field("seed", &self.seed)
            .field("models", &self.models)
            .field("faults", &self.faults)
            .field(
                "require_api_key",
                &self.require_api_key.as_ref().map(|_| "<redacted>"),
            )
            .field("known_models_only", &self.known_models_only)
            .field("prefix_cache", &self.prefix_cache)
            .field("prefix_cache_tokens", &self.prefix_cache_tokens)
            .field("tool_call_share", &self.tool_call_share)
            .field("reasoning_tokens", &self.reasoning_tokens)
            .field("stream_reasoning", &self.stream_reasoning)
            .field("embed_time", &self.embed_time)
            .field("embed_per_token", &self.embed_per_token)
            .field("embed_dimensions", &self.embed_dimensions)
            .finish()
    }
}

/// The timing of one model after applying its override.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ModelTiming {
    pub ttft: Duration,
    pub tpot: Duration,
    pub output_tokens: u32,
}

impl SimParams {
    /// Every parameter `set` accepts, with its unit, default and meaning (`ladder sim --list`).
    pub fn params() -> &'static [Param] {
        keys::PARAMS
    }

    /// Applies `KEY=VALUE` overrides in order (`ladder sim --set`, `run --sim-set`); an error
    /// names `flag`, the override as written and what is wrong with it.
    pub fn apply_overrides(&mut self, sets: &[String], flag: &str) -> Result<(), String> {
        for raw in sets {
            let (k, v) = match raw.split_once('=') {
                Some((k, v)) if !k.trim().is_empty() => (k.trim(), v.trim()),
                _ => {
                    return Err(format!(
                        "{flag} `{raw}`: expected KEY=VALUE, e.g. {flag} tpot=26ms"
                    ))
                }
            };
            self.set(k, v).map_err(|e| format!("{flag} {raw}: {e}"))?;
        }
        Ok(())
    }

    /// Applies one `--sim-set key=value` override. Errors name the key and, for an unknown key,
    /// list the valid ones. Values of `require_api_key` never appear in errors.
    pub fn set(&mut self, key: &str, value: &str) -> Result<(), String> {
        let key = key.trim();
        let v = value.trim();
        let Some(param) = keys::find(key) else {
            return Err(unknown_key(key));
        };
        match key {
            "ttft" => self.ttft = dur(key, v)?,
            "ttft_sigma" => self.ttft_sigma = non_negative(key, v)?,
            "output_tokens_min" => self.output_tokens_min = opt(v, |v| num(key, v))?,
            "drift" => self.drift = non_negative(key, v)?,
            "drift_walk" => self.drift_walk = non_negative(key, v)?,
            "drift_walk_period" => self.drift_walk_period = dur(key, v)?,
            "prefill_per_token" => self.prefill_per_token = dur(key, v)?,
            "tpot" => self.tpot = dur(key, v)?,
            "tpot_jitter" => self.tpot_jitter = fraction(key, v)?,
            "output_tokens" => self.output_tokens = num(key, v)?,
            "concurrency_cap" => self.concurrency_cap = opt(v, |v| positive(key, v))?,
            "saturation" => self.saturation = non_negative(key, v)?,
            "saturation_from" => self.saturation_from = num(key, v)?,
            "rpm" => self.rpm = opt(v, |v| positive(key, v))?,
            "tpm" => self.tpm = opt(v, |v| positive(key, v))?,
            "limits" => self.limits = opt(v, |v| choice(key, v))?,
            "tpm_counts" => self.tpm_counts = opt(v, |v| choice(key, v))?,
            "itpm" => self.itpm = opt(v, |v| positive(key, v))?,
            "itpm_cached" => self.itpm_cached = opt(v, |v| choice(key, v))?,
            "otpm" => self.otpm = opt(v, |v| positive(key, v))?,
            "limit_window" => self.limit_window = opt(v, |v| choice(key, v))?,
            "limit_period" => self.limit_period = opt(v, |v| dur(key, v))?,
            "accel" => self.accel = opt(v, |v| non_negative(key, v))?,
            "accel_floor" => self.accel_floor = non_negative(key, v)?,
            "concurrency_limit" => self.concurrency_limit = opt(v, |v| positive(key, v))?,
            "limits_per" => self.limits_per = opt(v, |v| choice(key, v))?,
            "seed" => self.seed = num(key, v)?,
            "require_api_key" => self.require_api_key = opt(v, |v| Ok(v.to_string()))?,
            "known_models_only" => self.known_models_only = boolean(key, v)?,
            "reasoning_tokens" => self.reasoning_tokens = num(key, v)?,
            "stream_reasoning" => self.stream_reasoning = boolean(key, v)?,
            "prefix_cache" => self.prefix_cache = boolean(key, v)?,
            "prefix_cache_tokens" => self.prefix_cache_tokens = num(key, v)?,
            "embed_time" => self.embed_time = dur(key, v)?,
            "embed_per_token" => self.embed_per_token = dur(key, v)?,
            "embed_dimensions" => self.embed_dimensions = num(key, v)?,
            "tool_call_share" => self.tool_call_share = fraction(key, v)?,
            "faults.stall_for" => self.faults.stall_for = dur(key, v)?,
            _ => {
                if let Some(kind) = key.strip_prefix("faults.") {
                    if let Some(slot) = self.faults.rate_mut(kind) {
                        *slot = fraction(key, v)?;
                        return Ok(());
                    }
                } else if let Some(rest) = key.strip_prefix("models.") {
                    if let Some((name, field)) = rest.rsplit_once('.') {
                        if !name.is_empty() {
                            return self.set_model(key, name, field, v);
                        }
                    }
                }
                // A row of the table this match does not parse: a test keeps this unreachable.
                return Err(format!(
                    "sim parameter `{}` cannot be set from the command line; set it in target.sim",
                    param.key
                ));
            }
        }
        Ok(())
    }

    fn set_model(&mut self, key: &str, name: &str, field: &str, v: &str) -> Result<(), String> {
        let apply = |o: &mut ModelOverride| -> Result<(), String> {
            match field {
                "ttft" => o.ttft = Some(dur(key, v)?),
                "tpot" => o.tpot = Some(dur(key, v)?),
                "output_tokens" => o.output_tokens = Some(num(key, v)?),
                _ => return Err(unknown_key(key)),
            }
            Ok(())
        };
        let mut o = self.models.get(name).cloned().unwrap_or_default();
        apply(&mut o)?;
        self.models.insert(name.to_string(), o);
        Ok(())
    }

    /// Checks ranges serde cannot: rates and jitter in [0,1], non-zero caps and limits.
    pub fn validate(&self) -> Result<(), String> {
        let in_unit = |name: &str, x: f64| {
            if (0.0..=1.0).contains(&x) {
                Ok(())
            } else {
                Err(format!(
                    "sim parameter `{name}` is {x}; it must be within [0, 1]"
                ))
            }
        };
        in_unit("tpot_jitter", self.tpot_jitter)?;
        in_unit("tool_call_share", self.tool_call_share)?;
        for (kind, rate) in self.faults.rates() {
            in_unit(&format!("faults.{kind}"), rate)?;
        }
        let spreads = [
            ("ttft_sigma", self.ttft_sigma),
            ("drift", self.drift),
            ("drift_walk", self.drift_walk),
        ];
        for (name, x) in spreads {
            if !(x.is_finite() && (0.0..=3.0).contains(&x)) {
                return Err(format!(
                    "sim parameter `{name}` is {x}; it must be within [0, 3]"
                ));
            }
        }
        if self.drift_walk_period < Duration::from_secs(1) {
            return Err(format!(
                "sim parameter `drift_walk_period` is {}; use 1s or more",
                crate::util::duration::format(self.drift_walk_period)
            ));
        }
        if let Some(min) = self.output_tokens_min {
            if min > self.output_tokens {
                return Err(format!(
                    "sim parameter `output_tokens_min` is {min}, above output_tokens {}; use a smaller minimum",
                    self.output_tokens
                ));
            }
        }
        if !(self.saturation.is_finite() && self.saturation >= 0.0) {
            return Err(format!(
                "sim parameter `saturation` is {}; it must be 0 or more",
                self.saturation
            ));
        }
        let nonzero = [
            ("concurrency_cap", self.concurrency_cap.map(u64::from)),
            ("rpm", self.rpm.map(u64::from)),
            ("tpm", self.tpm),
            ("itpm", self.itpm),
            ("otpm", self.otpm),
            ("concurrency_limit", self.concurrency_limit.map(u64::from)),
            ("embed_dimensions", Some(u64::from(self.embed_dimensions))),
        ];
        for (name, value) in nonzero {
            if value == Some(0) {
                return Err(format!(
                    "sim parameter `{name}` is 0; use 1 or more, or leave it out"
                ));
            }
        }
        Ok(())
    }

    /// TTFT, TPOT and output tokens for `model`, after its override (if any).
    pub fn timing_for(&self, model: &str) -> ModelTiming {
        let o = self.models.get(model);
        ModelTiming {
            ttft: o.and_then(|o| o.ttft).unwrap_or(self.ttft),
            tpot: o.and_then(|o| o.tpot).unwrap_or(self.tpot),
            output_tokens: o
                .and_then(|o| o.output_tokens)
                .unwrap_or(self.output_tokens),
        }
    }

    /// Model names served: the configured ones plus `sim-model`, sorted.
    pub fn model_names(&self) -> Vec<String> {
        let mut names: Vec<String> = self.models.keys().cloned().collect();
        if !self.models.contains_key(DEFAULT_MODEL) {
            names.push(DEFAULT_MODEL.to_string());
        }
        names.sort();
        names
    }

    /// Whether `model` is one of [`SimParams::model_names`].
    pub fn knows_model(&self, model: &str) -> bool {
        model == DEFAULT_MODEL || self.models.contains_key(model)
    }

    /// A copy safe to write or print: `require_api_key` replaced by `<redacted>`.
    pub fn redacted(&self) -> SimParams {
        let mut copy = self.clone();
        if copy.require_api_key.is_some() {
            copy.require_api_key = Some("<redacted>".into());
        }
        copy
    }
}

impl FaultRates {
    /// The rates by kind name, in the fixed order faults are drawn.
    pub fn rates(&self) -> [(&'static str, f64); 10] {
        [
            ("http_500", self.http_500),
            ("http_502", self.http_502),
            ("http_503", self.http_503),
            ("overloaded_529", self.overloaded_529),
            ("disconnect", self.disconnect),
            ("stall", self.stall),
            ("malformed", self.malformed),
            ("inband_error", self.inband_error),
            ("no_done", self.no_done),
            ("json_body", self.json_body),
        ]
    }

    fn rate_mut(&mut self, kind: &str) -> Option<&mut f64> {
        Some(match kind {
            "http_500" => &mut self.http_500,
            "http_502" => &mut self.http_502,
            "http_503" => &mut self.http_503,
            "overloaded_529" => &mut self.overloaded_529,
            "disconnect" => &mut self.disconnect,
            "stall" => &mut self.stall,
            "malformed" => &mut self.malformed,
            "inband_error" => &mut self.inband_error,
            "no_done" => &mut self.no_done,
            "json_body" => &mut self.json_body,
            _ => return None,
        })
    }
}

#[cfg(test)]
mod tests;
