//! Pure statistics: type-7 percentiles, per model × step summaries (the `summary.csv` row),
//! TPM/RPS/goodput, and the bootstrap used by `compare`. No clock, no files.

use serde::{Deserialize, Serialize};

/// Current `summary.csv` schema version. Readers accept this and older versions.
pub const SCHEMA_VERSION: u32 = 1;

/// One row of `summary.csv` (DESIGN §6), columns in this order. Missing values are empty cells.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct StepSummary {
    pub schema_version: u32,
    pub scenario: String,
    pub fingerprint: String,
    pub model: String,
    pub step: u32,
    pub concurrency: u32,
    pub attempted: u64,
    pub succeeded: u64,
    pub failed: u64,
    pub err_429: u64,
    pub err_5xx: u64,
    pub err_timeout: u64,
    pub err_other: u64,
    pub ttft_p50_ms: Option<f64>,
    pub ttft_p90_ms: Option<f64>,
    pub ttft_p99_ms: Option<f64>,
    pub ttft_mean_ms: Option<f64>,
    pub tpot_p50_ms: Option<f64>,
    pub tpot_p90_ms: Option<f64>,
    pub tpot_p99_ms: Option<f64>,
    pub itl_p50_ms: Option<f64>,
    pub itl_p90_ms: Option<f64>,
    pub itl_p99_ms: Option<f64>,
    pub e2e_p50_ms: Option<f64>,
    pub e2e_p90_ms: Option<f64>,
    pub e2e_p99_ms: Option<f64>,
    pub e2e_mean_ms: Option<f64>,
    pub output_tokens: u64,
    pub input_tokens: u64,
    pub tpm: f64,
    pub tpm_total: f64,
    pub rps: f64,
    /// Share of attempted requests that succeeded and met every SLO bound (1.0 without an SLO
    /// means "all successes").
    pub goodput: Option<f64>,
    pub duration_s: f64,
    /// Σ E2E / duration (Little's law): how many requests were really in flight on average.
    #[serde(default)]
    pub achieved_concurrency: Option<f64>,
    #[serde(default)]
    pub client_cpu_pct: Option<f64>,
    #[serde(default)]
    pub loop_lag_p99_ms: Option<f64>,
}
