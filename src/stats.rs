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

/// Hyndman–Fan type 7 quantile (numpy's default) of **sorted** data, `q` in [0, 1].
/// Returns `None` for empty input.
pub fn quantile_sorted(sorted: &[f64], q: f64) -> Option<f64> {
    if sorted.is_empty() {
        return None;
    }
    let q = q.clamp(0.0, 1.0);
    let h = (sorted.len() - 1) as f64 * q;
    let lo = h.floor() as usize;
    let hi = h.ceil() as usize;
    Some(sorted[lo] + (h - lo as f64) * (sorted[hi] - sorted[lo]))
}

/// Type 7 quantile of unsorted data (sorts a copy; NaNs are dropped).
pub fn quantile(values: &[f64], q: f64) -> Option<f64> {
    let mut sorted: Vec<f64> = values.iter().copied().filter(|v| !v.is_nan()).collect();
    sorted.sort_by(f64::total_cmp);
    quantile_sorted(&sorted, q)
}

#[cfg(test)]
mod quantile_tests {
    use super::*;

    #[test]
    fn type7_matches_numpy() {
        // numpy.percentile([1, 2, 3, 4], [50, 90, 99]) = [2.5, 3.7, 3.97]
        let v = [4.0, 1.0, 3.0, 2.0];
        assert!((quantile(&v, 0.5).unwrap() - 2.5).abs() < 1e-12);
        assert!((quantile(&v, 0.9).unwrap() - 3.7).abs() < 1e-12);
        assert!((quantile(&v, 0.99).unwrap() - 3.97).abs() < 1e-12);
        // numpy.percentile(range(1, 11), 90) = 9.1
        let w: Vec<f64> = (1..=10).map(f64::from).collect();
        assert!((quantile(&w, 0.9).unwrap() - 9.1).abs() < 1e-12);
        assert_eq!(quantile(&[7.0], 0.99), Some(7.0));
        assert_eq!(quantile(&[], 0.5), None);
        assert_eq!(quantile(&w, 0.0), Some(1.0));
        assert_eq!(quantile(&w, 1.0), Some(10.0));
    }
}
