//! Pure statistics: type-7 percentiles, per model × step summaries (the `summary.csv` row),
//! TPM/RPS/goodput. No clock, no files. The inference behind verdicts (bootstrap, effective
//! sample size, distribution-free bounds, exact tests) has one implementation, in `inference`.

pub mod calibration;
pub mod drift;
pub(crate) mod inference;
pub mod itl;
pub mod profile;
mod rebuild;
mod server;
mod steady;
mod step;
mod turns;
mod waits;

use crate::model::LadderUnit;
pub use itl::PooledGaps;
pub use profile::{Counted, Profile, Timing};
pub use rebuild::{summarize_run, RunContext};
pub use server::apply_server_metrics;
pub use steady::{steady_window, Decode, Progress, SteadyWindow, Timed, MIN_BLOCKS};
pub use step::{steady_concurrency, summarize_step, StepContext};

use serde::{Deserialize, Serialize};

/// Current `summary.csv` schema version. Readers accept this and older versions. Schema 3
/// renamed `tpm`, `tpm_total` and `tpm_steady` to `output_tpm`, `total_tpm` and
/// `output_tpm_steady` (what each counts); older files read through the old names.
pub const SCHEMA_VERSION: u32 = 3;

/// One row of `summary.csv` (docs/files.md), columns in this order. Missing values are empty cells.
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
    /// Output tokens per minute over the step (`output_tpm`; `tpm` before schema 3).
    #[serde(rename = "output_tpm", alias = "tpm")]
    pub tpm: f64,
    /// Input + output tokens per minute over the step, as most account limits count them
    /// (`total_tpm`; `tpm_total` before schema 3).
    #[serde(rename = "total_tpm", alias = "tpm_total")]
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
    /// Schema 2: length of the steady window (after the ramp-up, before the first worker
    /// finishes its last request), in seconds; `None` when the step has none.
    #[serde(default)]
    pub steady_s: Option<f64>,
    /// Schema 2: requests in flight on average during the steady window.
    #[serde(default)]
    pub concurrency_steady: Option<f64>,
    /// Schema 2: successful requests per second delivered in the steady window (each request
    /// counted by the share of its decode span inside it; `stats::steady`): the rate the
    /// throughput checks judge and the table shows.
    #[serde(default)]
    pub rps_steady: Option<f64>,
    /// Schema 2: output tokens per minute delivered in the steady window (same rule);
    /// `output_tpm_steady` (`tpm_steady` before schema 3).
    #[serde(default, rename = "output_tpm_steady", alias = "tpm_steady")]
    pub tpm_steady: Option<f64>,
    /// Schema 2: share of successful requests whose token count is server-reported usage
    /// (the rest counted chunks); `None` without successes.
    #[serde(default)]
    pub tokens_usage_share: Option<f64>,
    /// Schema 2: distribution-free 95% lower and upper bounds of TTFT P90 (the upper one is the
    /// maximum below 29 samples), for a knee found with confidence.
    #[serde(default)]
    pub ttft_p90_lo_ms: Option<f64>,
    #[serde(default)]
    pub ttft_p90_hi_ms: Option<f64>,
    /// What `concurrency` counts: streams, offered requests/s, or prompt tokens.
    #[serde(default)]
    pub ladder_unit: LadderUnit,
    /// Successes far shorter than their `max_tokens` without `finish_reason: length`
    /// (possible truncation; `request.short_below`).
    #[serde(default)]
    pub short: u64,
    /// Prompt tokens served from the provider's cache (successful requests).
    #[serde(default)]
    pub cached_tokens: u64,
    /// Rate mode: offered requests per second.
    #[serde(default)]
    pub offered_rps: Option<f64>,
    /// Rate mode: arrivals dropped because `max_concurrency` requests were in flight.
    #[serde(default)]
    pub dropped: u64,
    /// Rate mode: send lag (actual − scheduled send time) P50 and P99, all attempted requests.
    #[serde(default)]
    pub send_lag_p50_ms: Option<f64>,
    #[serde(default)]
    pub send_lag_p99_ms: Option<f64>,
    /// Rate mode: TTFT and E2E measured from the scheduled send time (coordinated omission).
    #[serde(default)]
    pub ttft_sched_p90_ms: Option<f64>,
    #[serde(default)]
    pub ttft_sched_p99_ms: Option<f64>,
    #[serde(default)]
    pub e2e_sched_p90_ms: Option<f64>,
    #[serde(default)]
    pub e2e_sched_p99_ms: Option<f64>,
    /// Failed requests per error class, `http_401:200 disconnect:3` (class order of
    /// `ErrorClass::ALL`); empty without failures or in files written before it was kept.
    #[serde(default)]
    pub error_classes: String,
    /// Request start -> response headers, successful requests (network + admission).
    #[serde(default)]
    pub headers_p50_ms: Option<f64>,
    #[serde(default)]
    pub headers_p90_ms: Option<f64>,
    /// Share of attempted requests that opened a new connection (`connect_ms` set).
    #[serde(default)]
    pub new_conn_share: Option<f64>,
    /// The server's own queue time (where it reports one), successful requests.
    #[serde(default)]
    pub server_queue_p90_ms: Option<f64>,
    /// The server's time before it answered, queue and prefill together, not split
    /// (`openai-processing-ms`, a LiteLLM gateway's), successful requests.
    #[serde(default)]
    pub server_processing_p90_ms: Option<f64>,
    /// The server's `/metrics` during the step (`server_metrics.csv`): requests waiting (mean,
    /// max), running (max) and KV-cache use (max, 0-1).
    #[serde(default)]
    pub server_waiting_mean: Option<f64>,
    #[serde(default)]
    pub server_waiting_max: Option<f64>,
    #[serde(default)]
    pub server_running_max: Option<f64>,
    #[serde(default)]
    pub server_kv_max: Option<f64>,
    /// TTFC (time to the first answer token, after any streamed reasoning) P50/P90/P99 of the
    /// successful requests that answered; equal to TTFT's for a model that does not reason.
    #[serde(default)]
    pub ttfc_p50_ms: Option<f64>,
    #[serde(default)]
    pub ttfc_p90_ms: Option<f64>,
    #[serde(default)]
    pub ttfc_p99_ms: Option<f64>,
    /// Successful requests that reasoned (`RequestRecord::reasoned`); 0 in files written
    /// before it was kept.
    #[serde(default)]
    pub reasoned: u64,
    /// Reasoning share: Σ reasoning tokens ÷ Σ output tokens of the successful requests (the
    /// server's reported counts); `None` when no success reported a reasoning count.
    #[serde(default)]
    pub reasoning_share: Option<f64>,
    /// Cost of 1,000 successful requests at the run's `pricing:` (the mean cost of a priced
    /// success × 1,000), in the pricing's currency; `None` without pricing or usage.
    #[serde(default)]
    pub cost_per_1k_ok: Option<f64>,
    /// Cost of 1M output tokens of the priced successes (input included: what the answers
    /// cost per token they produced).
    #[serde(default)]
    pub cost_per_1m_output: Option<f64>,
    /// Conversations (`stats::turns`): the cache hit share by turn (`1:0.120 2:0.853`), TTFT
    /// P50/P90 of first and of later turns, complete tasks, their end-to-end time (tool time
    /// included) and mean tokens (input and output).
    #[serde(default)]
    pub cache_hit_by_turn: String,
    #[serde(default)]
    pub ttft_first_p50_ms: Option<f64>,
    #[serde(default)]
    pub ttft_first_p90_ms: Option<f64>,
    #[serde(default)]
    pub ttft_later_p50_ms: Option<f64>,
    #[serde(default)]
    pub ttft_later_p90_ms: Option<f64>,
    #[serde(default)]
    pub tasks: u64,
    #[serde(default)]
    pub task_e2e_p50_ms: Option<f64>,
    #[serde(default)]
    pub task_e2e_p90_ms: Option<f64>,
    #[serde(default)]
    pub task_tokens_mean: Option<f64>,
    /// Mean end-to-end time of the complete tasks and their mean requests (turns): what
    /// `ladder plan --agents` sizes from (Little's law needs means).
    #[serde(default)]
    pub task_e2e_mean_ms: Option<f64>,
    #[serde(default)]
    pub task_turns_mean: Option<f64>,
    /// Agents: of the successful turns a next turn followed, the share after which ladder sent
    /// a synthetic tool call (the model made none) rather than the model's own
    /// (`RequestRecord::tool_call_sent`); `None` without such turns.
    #[serde(default)]
    pub synthetic_call_share: Option<f64>,
    /// Seconds the step's requests waited before retrying (429s, 5xx), in all; `None` when
    /// none waited. Latency figures leave it out.
    #[serde(default)]
    pub retry_wait_s: Option<f64>,
    /// That wait as a share of the requests' time (the waits plus each request's last attempt).
    #[serde(default)]
    pub retry_wait_share: Option<f64>,
    /// The smallest share left of any account limit the step's responses' rate-limit headers
    /// reported; `None` without such headers.
    #[serde(default)]
    pub ratelimit_headroom_min: Option<f64>,
}

impl StepSummary {
    /// A model's steps in ladder order: by the step's value (streams, rate, prompt size,
    /// speed), then by run order. The steps a search or `refine` adds after the planned ones
    /// take their place in the curve; their numbers keep the order they ran in. The table,
    /// `summary.csv`, the recorder and the findings all list steps this way.
    pub fn ladder_order(&self) -> (u32, u32) {
        (self.concurrency, self.step)
    }

    /// The step's throughput as judged and shown everywhere (the throughput checks, the run
    /// table, the report): the steady-window rate (`rps_steady`, or `tpm_steady` when `tpm`),
    /// or the whole-step rate for a step without a steady window (or an older summary).
    pub fn throughput(&self, tpm: bool) -> f64 {
        if tpm {
            self.tpm_steady.unwrap_or(self.tpm)
        } else {
            self.rps_steady.unwrap_or(self.rps)
        }
    }

    /// Output tokens per second of one stream while it streams, from the step's means: the
    /// tokens after each first one over the mean decode span (E2E − TTFT). The decode rate's
    /// point value for a side without per-request samples (with them, `steady::Progress`
    /// measures it over the steady window). `None` without successes or both means.
    pub fn decode_rate(&self) -> Option<f64> {
        let (e2e, ttft) = (self.e2e_mean_ms?, self.ttft_mean_ms?);
        let n = self.succeeded as f64;
        let span = e2e - ttft;
        (n > 0.0 && span > 0.0)
            .then(|| (self.output_tokens as f64 - n).max(0.0) / n / (span / 1000.0))
    }

    /// Mean output tokens of a successful request (`None` without successes).
    pub fn mean_output_tokens(&self) -> Option<f64> {
        (self.succeeded > 0).then(|| self.output_tokens as f64 / self.succeeded as f64)
    }

    /// The step as `meta.json` lists it (`StepRun`): the one way a finished step is made from
    /// its summary (a merged run, `ladder logs`, runs written before meta listed steps).
    pub fn step_run(&self) -> crate::model::StepRun {
        let mut run =
            crate::model::StepRun::new(&self.model, self.step, self.concurrency, self.ladder_unit);
        run.duration_s = self.duration_s;
        run.client_cpu_pct = self.client_cpu_pct;
        run.loop_lag_p99_ms = self.loop_lag_p99_ms;
        run.dropped = self.dropped;
        run.offered_rps = self.offered_rps;
        run
    }

    /// Copies what only the runner knows about a step (self-check, rate-mode figures).
    pub fn apply_step_run(&mut self, run: &crate::model::StepRun) {
        self.client_cpu_pct = run.client_cpu_pct;
        self.loop_lag_p99_ms = run.loop_lag_p99_ms;
        self.dropped = run.dropped;
        self.offered_rps = run.offered_rps;
        self.ladder_unit = run.ladder_unit;
    }

    /// Whether any successful request of the step reasoned: the reasoning columns are shown.
    pub fn any_reasoning(&self) -> bool {
        self.reasoned > 0
    }

    /// Input tokens per minute over the whole step (`tpm_total` less the output's `tpm`).
    pub fn input_tpm(&self) -> f64 {
        (self.tpm_total - self.tpm).max(0.0)
    }

    /// Short responses as a share of successes (`None` without successes).
    pub fn short_share(&self) -> Option<f64> {
        (self.succeeded > 0).then(|| self.short as f64 / self.succeeded as f64)
    }
}

/// The models of `rows`, each once, in order of first appearance: the order every command
/// lists models in.
pub fn models_of(rows: &[StepSummary]) -> Vec<&str> {
    let mut out: Vec<&str> = Vec::new();
    for r in rows {
        if !out.contains(&r.model.as_str()) {
            out.push(&r.model);
        }
    }
    out
}

/// Confidence of each bound of a step's TTFT P90 interval (the knee rule).
pub const KNEE_BOUND_LEVEL: f64 = 0.95;

/// 95% lower and upper bounds of the P90 of sorted values; the upper one falls back to the
/// maximum when there are too few values for a 95% bound (fewer than 29).
pub fn p90_bounds(sorted: &[f64]) -> Option<(f64, f64)> {
    let lo = inference::lower_bound_order_stat(sorted, 0.9, KNEE_BOUND_LEVEL)?;
    let hi = inference::upper_bound_order_stat(sorted, 0.9, KNEE_BOUND_LEVEL)
        .or_else(|| sorted.last().copied())?;
    Some((lo, hi))
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

// ---------------------------------------------------------------------------------------------
// Distributions and per-step summaries
// ---------------------------------------------------------------------------------------------

/// Sample count, type-7 percentiles, mean and range of one metric (docs/metrics.md).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Distribution {
    pub n: usize,
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
    pub mean: f64,
    pub min: f64,
    pub max: f64,
}

/// Describes `values` (NaNs dropped). `None` when nothing is left.
pub fn describe(values: &[f64]) -> Option<Distribution> {
    let mut sorted: Vec<f64> = values.iter().copied().filter(|v| !v.is_nan()).collect();
    sorted.sort_by(f64::total_cmp);
    let n = sorted.len();
    Some(Distribution {
        n,
        p50: quantile_sorted(&sorted, 0.5)?,
        p90: quantile_sorted(&sorted, 0.9)?,
        p99: quantile_sorted(&sorted, 0.99)?,
        mean: sorted.iter().sum::<f64>() / n as f64,
        min: sorted[0],
        max: sorted[n - 1],
    })
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

#[cfg(test)]
mod tests;
