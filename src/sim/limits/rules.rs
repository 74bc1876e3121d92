//! Which account limits the simulator enforces and how each counts, resolved once from its
//! parameters: the limits set one by one, filled in from a named preset (`limits: anthropic`).
//! The presets are examples of each provider's shape with example numbers, not anyone's real
//! tier; each says where its rule was read (2026-12-07).

use super::meter::Refill;
use crate::sim::SimParams;
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// How a tokens-per-minute limit (`tpm`) charges a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TpmCounts {
    /// Prompt + `max_tokens` at admission (Azure OpenAI, Cerebras, LiteLLM's reservation).
    Reserve,
    /// The larger of the prompt and `max_tokens` at admission (OpenAI's rate-limit guide).
    Larger,
    /// Prompt + the tokens actually generated, charged after the answer; admitted while
    /// anything is left, so concurrent requests overshoot (Envoy AI Gateway).
    After,
}

/// Whether prompt tokens read from the cache count toward an input-tokens limit (`itpm`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CachedInput {
    /// Cache reads are free against the limit (Anthropic, for most models; Groq).
    Free,
    /// Every prompt token counts.
    Counted,
}

/// How a limit's amount comes back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LimitWindow {
    /// A token bucket refilled continuously (OpenAI, Anthropic).
    Bucket,
    /// A fixed window reset at the end of each `limit_period` (Azure's 1 s / 10 s windows).
    Fixed,
}

/// Whom the limits count: the whole account, or each API key on its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LimitScope {
    Account,
    Key,
}

/// A provider's shape of limits, with example numbers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LimitPreset {
    /// OpenAI (platform.openai.com/docs/guides/rate-limits): RPM and TPM per model, a request
    /// charged the larger of its prompt and `max_tokens`, cached input not discounted.
    /// Example: 500 RPM, 30,000 TPM.
    Openai,
    /// Azure OpenAI (learn.microsoft.com, "Azure OpenAI quotas and limits"): TPM charged prompt +
    /// `max_tokens`, 6 RPM per 1,000 TPM, enforced over short windows. Example: 30,000 TPM,
    /// 180 RPM, 10 s fixed windows.
    Azure,
    /// Anthropic (docs.claude.com/en/api/rate-limits): RPM, input and output tokens per minute
    /// as continuously refilled buckets, cache reads free against ITPM, `max_tokens` estimated
    /// against OTPM and settled after, a sharp ramp refused ("acceleration limits").
    /// Example: 50 RPM, 30,000 ITPM, 8,000 OTPM, a ramp of more than 3× refused.
    Anthropic,
    /// A hosted aggregator or gateway: a concurrency limit per key answered with 429 at once,
    /// tokens charged after the answer. Example: 8 in flight per key, 200,000 TPM.
    Aggregator,
}

/// The limits in force, every choice made.
#[derive(Debug, Clone, PartialEq)]
pub struct Rules {
    pub rpm: Option<u64>,
    pub tpm: Option<u64>,
    pub tpm_counts: TpmCounts,
    pub itpm: Option<u64>,
    pub cached_input: CachedInput,
    pub otpm: Option<u64>,
    pub refill: Refill,
    pub period: Duration,
    pub accel: Option<f64>,
    pub accel_floor: f64,
    pub concurrency: Option<u64>,
    pub per_key: bool,
}

/// The window an acceleration limit compares: the last 10 s against the 10 s before.
pub const ACCEL_WINDOW: Duration = Duration::from_secs(10);

impl Rules {
    /// The limits `p` sets, each one it leaves unset taken from its preset (if any).
    pub fn of(p: &SimParams) -> Rules {
        let base = p.limits.map(preset).unwrap_or_default();
        Rules {
            rpm: p.rpm.map(u64::from).or(base.rpm),
            tpm: p.tpm.or(base.tpm),
            tpm_counts: p
                .tpm_counts
                .or(base.tpm_counts)
                .unwrap_or(TpmCounts::Reserve),
            itpm: p.itpm.or(base.itpm),
            cached_input: p
                .itpm_cached
                .or(base.itpm_cached)
                .unwrap_or(CachedInput::Free),
            otpm: p.otpm.or(base.otpm),
            refill: match p.limit_window.or(base.limit_window) {
                Some(LimitWindow::Fixed) => Refill::Window,
                _ => Refill::Bucket,
            },
            period: p
                .limit_period
                .or(base.limit_period)
                .unwrap_or(Duration::from_secs(60)),
            accel: p.accel.or(base.accel),
            accel_floor: p.accel_floor,
            concurrency: p.concurrency_limit.map(u64::from).or(base.concurrency),
            per_key: p.limits_per.or(base.limits_per) == Some(LimitScope::Key),
        }
    }

    /// Whether any limit is in force.
    pub fn any(&self) -> bool {
        self.rpm.is_some()
            || self.tpm.is_some()
            || self.itpm.is_some()
            || self.otpm.is_some()
            || self.accel.is_some()
            || self.concurrency.is_some()
    }
}

/// A preset's choices; `None` leaves the simulator's default.
#[derive(Debug, Clone, Copy, Default)]
struct Shape {
    rpm: Option<u64>,
    tpm: Option<u64>,
    tpm_counts: Option<TpmCounts>,
    itpm: Option<u64>,
    itpm_cached: Option<CachedInput>,
    otpm: Option<u64>,
    limit_window: Option<LimitWindow>,
    limit_period: Option<Duration>,
    accel: Option<f64>,
    concurrency: Option<u64>,
    limits_per: Option<LimitScope>,
}

fn preset(p: LimitPreset) -> Shape {
    match p {
        LimitPreset::Openai => Shape {
            rpm: Some(500),
            tpm: Some(30_000),
            tpm_counts: Some(TpmCounts::Larger),
            ..Shape::default()
        },
        LimitPreset::Azure => Shape {
            rpm: Some(180),
            tpm: Some(30_000),
            tpm_counts: Some(TpmCounts::Reserve),
            limit_window: Some(LimitWindow::Fixed),
            limit_period: Some(Duration::from_secs(10)),
            ..Shape::default()
        },
        LimitPreset::Anthropic => Shape {
            rpm: Some(50),
            itpm: Some(30_000),
            itpm_cached: Some(CachedInput::Free),
            otpm: Some(8_000),
            accel: Some(3.0),
            ..Shape::default()
        },
        LimitPreset::Aggregator => Shape {
            tpm: Some(200_000),
            tpm_counts: Some(TpmCounts::After),
            concurrency: Some(8),
            limits_per: Some(LimitScope::Key),
            ..Shape::default()
        },
    }
}
