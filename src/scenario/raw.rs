//! The scenario file's shape as serde sees it: every field optional (so that a missing one gets
//! a message that says how to add it), unknown fields rejected; its scalars (durations, whole
//! numbers, percentages) are `scalars`, parsed inside the deserializer so errors point at their
//! line.

use super::scalars::{Concurrency, Count, Dur, Fraction, Num, Pos};
use crate::sim::SimParams;
use serde::{Deserialize, Deserializer};
use serde_yaml::Value as Yaml;
use std::collections::BTreeMap;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawScenario {
    pub(super) name: Option<String>,
    pub(super) description: Option<String>,
    pub(super) target: Option<RawTarget>,
    pub(super) request: Option<RawRequest>,
    pub(super) load: Option<RawLoad>,
    pub(super) retry: Option<RawRetry>,
    pub(super) gates: Option<RawGates>,
    pub(super) slo: Option<RawSlo>,
    pub(super) limits: Option<RawLimits>,
    pub(super) extra: Option<BTreeMap<String, String>>,
    pub(super) compare: Option<RawCompare>,
    pub(super) baselines: Option<RawBaselines>,
    pub(super) telemetry: Option<RawTelemetry>,
    pub(super) pricing: Option<RawPricing>,
}

/// `pricing: {currency: USD, models: {…}}`, or the path of a shared pricing file of the same
/// shape (relative to the scenario).
pub(super) enum RawPricing {
    File(String),
    Spec(RawPricingSpec),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawPricingSpec {
    pub(super) currency: Option<String>,
    pub(super) models: Option<BTreeMap<String, RawPrice>>,
}

/// One model's prices, per 1M tokens.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawPrice {
    pub(super) input: Option<Num>,
    pub(super) cached_input: Option<Num>,
    pub(super) cache_write_input: Option<Num>,
    pub(super) output: Option<Num>,
}

impl<'de> Deserialize<'de> for RawPricing {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = RawPricing;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str(
                    "a pricing file (pricing: pricing/openai.yaml) or {currency: USD, models: {MODEL: {input: 2.5, output: 10}}}",
                )
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<RawPricing, E> {
                Ok(RawPricing::File(v.to_string()))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, m: A) -> Result<RawPricing, A::Error> {
                let de = serde::de::value::MapAccessDeserializer::new(m);
                RawPricingSpec::deserialize(de).map(RawPricing::Spec)
            }
        }
        d.deserialize_any(V)
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawTelemetry {
    pub(super) otlp: Option<RawOtlp>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawOtlp {
    pub(super) endpoint: Option<String>,
    pub(super) headers: Option<BTreeMap<String, String>>,
    pub(super) every: Option<Dur>,
    pub(super) traces: Option<bool>,
    pub(super) protocol: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawBaselines {
    pub(super) keep: Option<Pos<u32>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawCompare {
    pub(super) baseline: Option<String>,
    pub(super) interleave: Option<bool>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawTarget {
    pub(super) api: Option<String>,
    pub(super) base_url: Option<String>,
    /// Outer `Some` when the key is present, so that a bare `sim:` selects the simulator.
    #[serde(default, deserialize_with = "present")]
    pub(super) sim: Option<Option<SimParams>>,
    pub(super) api_key: Option<String>,
    pub(super) models: Option<Vec<String>>,
    pub(super) model: Option<String>,
    pub(super) headers: Option<BTreeMap<String, String>>,
    pub(super) timeouts: Option<RawTimeouts>,
    pub(super) request_id_header: Option<String>,
    pub(super) tls: Option<RawTls>,
    pub(super) auth: Option<String>,
    pub(super) api_version: Option<String>,
    pub(super) metrics: Option<RawMetrics>,
}

/// `metrics: auto` or `metrics: {url: ..., every: 500ms}`.
#[derive(Deserialize)]
#[serde(untagged)]
pub(super) enum RawMetrics {
    Word(String),
    Spec(RawMetricsSpec),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawMetricsSpec {
    pub(super) url: Option<String>,
    pub(super) every: Option<Dur>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawTls {
    pub(super) ca_file: Option<String>,
    pub(super) client_cert: Option<String>,
    pub(super) client_key: Option<String>,
    pub(super) insecure: Option<bool>,
}

/// A field that is present (outer `Some`) even when its value is `null` (inner `None`).
fn present<'de, D: Deserializer<'de>, T: Deserialize<'de>>(
    d: D,
) -> Result<Option<Option<T>>, D::Error> {
    Option::<T>::deserialize(d).map(Some)
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(super) struct RawTimeouts {
    pub(super) connect: Option<Dur>,
    pub(super) first_token: Option<Dur>,
    pub(super) idle: Option<Dur>,
    pub(super) total: Option<Dur>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawRequest {
    pub(super) prompt_file: Option<String>,
    pub(super) prompts: Option<String>,
    pub(super) prompt_order: Option<String>,
    #[serde(default, deserialize_with = "prompt_of_any")]
    pub(super) prompt: Option<RawPrompt>,
    pub(super) cache_bust: Option<bool>,
    pub(super) stream: Option<bool>,
    /// Inputs per request (`api: openai-embeddings` only).
    pub(super) batch: Option<Pos<u32>>,
    pub(super) session: Option<RawSession>,
    pub(super) short_below: Option<Fraction>,
    pub(super) system_file: Option<String>,
    /// Outer `Some` when the key is present, so that `max_tokens: null` means "send no limit".
    #[serde(default, deserialize_with = "present")]
    pub(super) max_tokens: Option<Option<Pos<u32>>>,
    pub(super) max_tokens_field: Option<String>,
    pub(super) temperature: Option<Num>,
    pub(super) extra_body: Option<Yaml>,
    /// A JSON file of function tools (`scenario::tools`), and which the model may call.
    pub(super) tools: Option<String>,
    pub(super) tool_choice: Option<Yaml>,
    /// `auto` or `off`.
    pub(super) cache: Option<String>,
    pub(super) prompt_cache_key: Option<String>,
}

/// `prompt: "text"` (the text itself, never a file name) or `prompt: {text: …}` /
/// `prompt: {synthetic_tokens: N}`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawPrompt {
    pub(super) synthetic_tokens: Option<Pos<u32>>,
    /// One prompt written inline (`ladder run --prompt TEXT`).
    pub(super) text: Option<String>,
}

/// The forms `request.prompt` takes, for messages about any other shape.
pub(super) const PROMPT_FORMS: &str = "prompt: \"Hello\" (the text itself), \
     prompt: {text: \"Hello\"} or prompt: {synthetic_tokens: 2000}; a file is prompt_file: prompts/p.txt";

/// `request.prompt`: a plain string is the `text` form; a mapping is read field by field;
/// anything else (a number, a list, a boolean) is refused naming the accepted forms.
pub(super) fn prompt_of_any<'de, D: Deserializer<'de>>(
    d: D,
) -> Result<Option<RawPrompt>, D::Error> {
    struct V;
    impl<'de> serde::de::Visitor<'de> for V {
        type Value = Option<RawPrompt>;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str(PROMPT_FORMS)
        }
        fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Self::Value, E> {
            Ok(Some(RawPrompt {
                synthetic_tokens: None,
                text: Some(v.to_string()),
            }))
        }
        fn visit_unit<E: serde::de::Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_none<E: serde::de::Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_some<D2: Deserializer<'de>>(self, d: D2) -> Result<Self::Value, D2::Error> {
            d.deserialize_any(self)
        }
        fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Self::Value, E> {
            Err(E::custom(format_args!(
                "a number is not a prompt; for a synthetic prompt of {v} tokens write \
                 prompt: {{synthetic_tokens: {v}}}; the forms are: {PROMPT_FORMS}"
            )))
        }
        fn visit_i64<E: serde::de::Error>(self, _: i64) -> Result<Self::Value, E> {
            Err(not_a_prompt("a number"))
        }
        fn visit_f64<E: serde::de::Error>(self, _: f64) -> Result<Self::Value, E> {
            Err(not_a_prompt("a number"))
        }
        fn visit_bool<E: serde::de::Error>(self, _: bool) -> Result<Self::Value, E> {
            Err(not_a_prompt("true or false"))
        }
        fn visit_seq<A: serde::de::SeqAccess<'de>>(self, _: A) -> Result<Self::Value, A::Error> {
            Err(not_a_prompt(
                "a list (chat messages go in a prompt set: prompts: prompts/set.jsonl)",
            ))
        }
        fn visit_map<A: serde::de::MapAccess<'de>>(self, m: A) -> Result<Self::Value, A::Error> {
            let de = serde::de::value::MapAccessDeserializer::new(m);
            RawPrompt::deserialize(de).map(Some)
        }
    }
    d.deserialize_any(V)
}

fn not_a_prompt<E: serde::de::Error>(what: &str) -> E {
    E::custom(format_args!("{what} is not a prompt; write {PROMPT_FORMS}"))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawSession {
    pub(super) turns: Option<Pos<u32>>,
    pub(super) chain: Option<String>,
}

/// `load.agent: {turns, tool_result_tokens, tool_latency, think_time}`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawAgent {
    pub(super) turns: Option<RawSpread<Pos<u32>>>,
    pub(super) tool_result_tokens: Option<RawSpread<Pos<u32>>>,
    pub(super) tool_latency: Option<RawSpread<Dur>>,
    pub(super) think_time: Option<RawSpread<Dur>>,
}

/// `load.agent`'s lengths and waits: a value, or `{min: …, max: …}`.
pub(super) struct RawSpread<T> {
    pub(super) min: T,
    pub(super) max: T,
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for RawSpread<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        let v = Yaml::deserialize(d)?;
        let one = |v: Yaml| T::deserialize(v).map_err(D::Error::custom);
        match v {
            Yaml::Mapping(m) => {
                if let Some(k) = m
                    .keys()
                    .find(|k| !matches!(k.as_str(), Some("min" | "max")))
                {
                    return Err(D::Error::unknown_field(
                        k.as_str().unwrap_or("?"),
                        &["min", "max"],
                    ));
                }
                let get = |k: &str| {
                    m.get(k).cloned().ok_or_else(|| {
                        D::Error::custom(format!("`{k}` is missing; write {{min: …, max: …}}"))
                    })
                };
                Ok(RawSpread {
                    min: one(get("min")?)?,
                    max: one(get("max")?)?,
                })
            }
            v => {
                let (min, max) = (one(v.clone())?, one(v)?);
                Ok(RawSpread { min, max })
            }
        }
    }
}

/// `arrivals: poisson` or `arrivals: {gamma: {burstiness: 0.5}}`.
pub(super) enum RawArrivals {
    Name(String),
    Map(RawArrivalsMap),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawArrivalsMap {
    pub(super) gamma: Option<RawGamma>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawGamma {
    pub(super) burstiness: Option<f64>,
}

impl<'de> Deserialize<'de> for RawArrivals {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = RawArrivals;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("`poisson` or {gamma: {burstiness: 0.5}}")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<RawArrivals, E> {
                Ok(RawArrivals::Name(v.to_string()))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                m: A,
            ) -> Result<RawArrivals, A::Error> {
                let de = serde::de::value::MapAccessDeserializer::new(m);
                RawArrivalsMap::deserialize(de).map(RawArrivals::Map)
            }
        }
        d.deserialize_any(V)
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawLoad {
    pub(super) mode: Option<String>,
    pub(super) ladder: Option<Vec<Concurrency>>,
    pub(super) ladder_over: Option<String>,
    pub(super) concurrency: Option<Pos<u32>>,
    pub(super) rate: Option<Pos<u32>>,
    pub(super) arrivals: Option<RawArrivals>,
    pub(super) max_concurrency: Option<Pos<u32>>,
    pub(super) seed: Option<u64>,
    pub(super) requests_per_step: Option<Pos<u64>>,
    pub(super) requests_per_worker: Option<Pos<u64>>,
    pub(super) duration: Option<Dur>,
    pub(super) warmup_requests: Option<Count<u32>>,
    pub(super) ramp_up: Option<Dur>,
    pub(super) pause_between_steps: Option<Dur>,
    pub(super) refine: Option<Count<u32>>,
    /// `mode: replay`: a path, or the `{file, sha256, requests}` a recorded scenario keeps.
    pub(super) trace: Option<serde_yaml::Value>,
    /// `mode: replay`: the ladder of speeds (another name for `ladder`).
    pub(super) speed: Option<Vec<Concurrency>>,
    pub(super) search: Option<RawSearch>,
    pub(super) agent: Option<RawAgent>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawSearch {
    pub(super) slo: Option<RawSearchSlo>,
    pub(super) max: Option<Pos<u32>>,
    pub(super) steps: Option<Pos<u32>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawSearchSlo {
    pub(super) ttft_p90: Option<Dur>,
    pub(super) ttfc_p90: Option<Dur>,
    pub(super) tpot_p90: Option<Dur>,
    pub(super) e2e_p90: Option<Dur>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawRetry {
    pub(super) max_attempts: Option<Pos<u32>>,
    pub(super) initial_backoff: Option<Dur>,
    pub(super) max_backoff: Option<Dur>,
    pub(super) max_retry_after: Option<Dur>,
    pub(super) retry_on: Option<Vec<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawGates {
    pub(super) ttft: Option<RawMetricGate>,
    pub(super) ttfc: Option<RawMetricGate>,
    pub(super) tpot: Option<RawMetricGate>,
    pub(super) itl: Option<RawMetricGate>,
    pub(super) e2e: Option<RawMetricGate>,
    pub(super) error_rate: Option<Fraction>,
    pub(super) throughput: Option<Fraction>,
    pub(super) cost: Option<RawCostGate>,
    pub(super) cache_hit: Option<Fraction>,
    pub(super) capacity: Option<Fraction>,
}

/// `gates.cost: {mean: 10%}`: the rise of the mean cost per successful request that fails.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawCostGate {
    pub(super) mean: Option<Fraction>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawMetricGate {
    pub(super) p90: Option<Fraction>,
    pub(super) p99: Option<Fraction>,
    pub(super) floor: Option<Dur>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawSlo {
    pub(super) ttft: Option<Dur>,
    pub(super) ttfc: Option<Dur>,
    pub(super) tpot: Option<Dur>,
    pub(super) e2e: Option<Dur>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawLimits {
    pub(super) concurrency: Option<Pos<u32>>,
    pub(super) rpm: Option<Pos<u64>>,
    pub(super) tpm: Option<Pos<u64>>,
    pub(super) tpm_counts: Option<super::TpmCounts>,
    pub(super) itpm: Option<Pos<u64>>,
    pub(super) itpm_cached: Option<RawCached>,
    pub(super) otpm: Option<Pos<u64>>,
}

/// `limits.itpm_cached`: whether cache reads count toward `itpm`.
#[derive(Deserialize, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub(super) enum RawCached {
    Free,
    Counted,
}
