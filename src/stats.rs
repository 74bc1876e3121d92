//! Pure statistics: type-7 percentiles, per model × step summaries (the `summary.csv` row),
//! TPM/RPS/goodput, and the bootstrap used by `compare`. No clock, no files.

mod rebuild;

pub use rebuild::{summarize_run, RunContext};

use crate::record::{ErrorClass, RequestRecord};
use crate::scenario::Slo;
use rand::distributions::{Distribution as _, Uniform};
use rand::rngs::StdRng;
use rand::SeedableRng;
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

// ---------------------------------------------------------------------------------------------
// Distributions and per-step summaries
// ---------------------------------------------------------------------------------------------

/// Sample count, type-7 percentiles, mean and range of one metric (DESIGN §4).
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
}

/// Builds the `summary.csv` row of one model × step from its records (DESIGN §4, §6).
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
    let (mut ttft, mut tpot, mut itl, mut e2e) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut good = 0u64;
    let mut e2e_all_ms = 0.0;
    for r in records {
        if let Some(ms) = r.e2e_ms.filter(|v| v.is_finite()) {
            e2e_all_ms += ms;
        }
        match r.error_class {
            None => {
                s.succeeded += 1;
                ttft.extend(r.ttft_ms);
                tpot.extend(r.tpot_ms);
                e2e.extend(r.e2e_ms);
                itl.extend_from_slice(&r.itl_ms);
                s.output_tokens += r.output_tokens.unwrap_or(0);
                s.input_tokens += r.input_tokens.unwrap_or(0);
                if meets_slo(r, ctx.slo) {
                    good += 1;
                }
            }
            Some(ErrorClass::Http429) => s.err_429 += 1,
            Some(ErrorClass::Http5xx) => s.err_5xx += 1,
            Some(c) if c.is_timeout() => s.err_timeout += 1,
            Some(_) => s.err_other += 1,
        }
    }
    s.failed = s.attempted - s.succeeded;
    let (ttft, tpot, itl, e2e) = (
        describe(&ttft),
        describe(&tpot),
        describe(&itl),
        describe(&e2e),
    );
    s.ttft_p50_ms = ttft.map(|d| d.p50);
    s.ttft_p90_ms = ttft.map(|d| d.p90);
    s.ttft_p99_ms = ttft.map(|d| d.p99);
    s.ttft_mean_ms = ttft.map(|d| d.mean);
    s.tpot_p50_ms = tpot.map(|d| d.p50);
    s.tpot_p90_ms = tpot.map(|d| d.p90);
    s.tpot_p99_ms = tpot.map(|d| d.p99);
    s.itl_p50_ms = itl.map(|d| d.p50);
    s.itl_p90_ms = itl.map(|d| d.p90);
    s.itl_p99_ms = itl.map(|d| d.p99);
    s.e2e_p50_ms = e2e.map(|d| d.p50);
    s.e2e_p90_ms = e2e.map(|d| d.p90);
    s.e2e_p99_ms = e2e.map(|d| d.p99);
    s.e2e_mean_ms = e2e.map(|d| d.mean);
    let per_s = |x: f64| {
        if duration_s > 0.0 {
            x / duration_s
        } else {
            0.0
        }
    };
    s.tpm = per_s(s.output_tokens as f64) * 60.0;
    s.tpm_total = per_s((s.input_tokens + s.output_tokens) as f64) * 60.0;
    s.rps = per_s(s.succeeded as f64);
    s.goodput = (s.attempted > 0).then(|| good as f64 / s.attempted as f64);
    s.achieved_concurrency = (duration_s > 0.0).then(|| e2e_all_ms / (duration_s * 1000.0));
    s
}

/// Every SLO bound that is set must hold. An undefined TPOT (≤ 1 token) passes the TPOT bound;
/// a missing TTFT or E2E fails its bound.
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
        && within(r.tpot_ms, slo.tpot, true)
        && within(r.e2e_ms, slo.e2e, false)
}

// ---------------------------------------------------------------------------------------------
// Inference used by `compare`: bootstrap CI of a quantile ratio, two-proportion z-test,
// distribution-free lower bound of a quantile
// ---------------------------------------------------------------------------------------------

/// Percentile-bootstrap CI of r = Q_new / Q_base − 1 for the `q`-quantile (type 7).
///
/// Each side is resampled with replacement (`StdRng` seeded with `seed`, so the result is
/// reproducible); the CI is the type-7 `(1 − level)/2` and `(1 + level)/2` quantiles of the
/// resampled ratios. Returns `(point r, lo, hi)`. `None` for empty input (after dropping NaNs), a
/// zero base quantile, `resamples == 0`, `q` outside [0, 1] or `level` outside (0, 1).
/// Resamples whose base quantile is 0 are skipped.
pub fn bootstrap_ratio_ci(
    base: &[f64],
    new: &[f64],
    q: f64,
    resamples: usize,
    seed: u64,
    level: f64,
) -> Option<(f64, f64, f64)> {
    if resamples == 0 || !(0.0..=1.0).contains(&q) || !(level > 0.0 && level < 1.0) {
        return None;
    }
    let base: Vec<f64> = base.iter().copied().filter(|v| !v.is_nan()).collect();
    let new: Vec<f64> = new.iter().copied().filter(|v| !v.is_nan()).collect();
    let (q_base, q_new) = (quantile(&base, q)?, quantile(&new, q)?);
    if q_base == 0.0 {
        return None;
    }
    let point = q_new / q_base - 1.0;
    let mut rng = StdRng::seed_from_u64(seed);
    let (pick_base, pick_new) = (Uniform::from(0..base.len()), Uniform::from(0..new.len()));
    let (mut buf_base, mut buf_new) = (base.clone(), new.clone());
    let mut ratios = Vec::with_capacity(resamples);
    for _ in 0..resamples {
        for slot in buf_base.iter_mut() {
            *slot = base[pick_base.sample(&mut rng)];
        }
        for slot in buf_new.iter_mut() {
            *slot = new[pick_new.sample(&mut rng)];
        }
        let b = select_quantile(&mut buf_base, q);
        let r = select_quantile(&mut buf_new, q) / b - 1.0;
        if b != 0.0 && r.is_finite() {
            ratios.push(r);
        }
    }
    ratios.sort_unstable_by(f64::total_cmp);
    let lo = quantile_sorted(&ratios, (1.0 - level) / 2.0)?;
    let hi = quantile_sorted(&ratios, (1.0 + level) / 2.0)?;
    Some((point, lo, hi))
}

/// Type-7 quantile of a non-empty, NaN-free buffer in O(n), reordering the buffer.
fn select_quantile(buf: &mut [f64], q: f64) -> f64 {
    let h = (buf.len() - 1) as f64 * q;
    let lo = h.floor() as usize;
    let frac = h - lo as f64;
    let (_, lo_value, right) = buf.select_nth_unstable_by(lo, f64::total_cmp);
    let lo_value = *lo_value;
    if frac == 0.0 || right.is_empty() {
        return lo_value;
    }
    let hi_value = right.iter().copied().fold(f64::INFINITY, f64::min);
    lo_value + frac * (hi_value - lo_value)
}

/// One-sided p-value that the failure rate of `b` is higher than that of `a` (pooled
/// two-proportion z-test). `None` when a side has no trials or more failures than trials.
/// Identical all-zero or all-one rates have z = 0 (p = 0.5).
pub fn two_proportion_z(fail_a: u64, n_a: u64, fail_b: u64, n_b: u64) -> Option<f64> {
    if n_a == 0 || n_b == 0 || fail_a > n_a || fail_b > n_b {
        return None;
    }
    let (na, nb) = (n_a as f64, n_b as f64);
    let pooled = (fail_a + fail_b) as f64 / (na + nb);
    let se = (pooled * (1.0 - pooled) * (1.0 / na + 1.0 / nb)).sqrt();
    if se == 0.0 {
        return Some(0.5);
    }
    let z = (fail_b as f64 / nb - fail_a as f64 / na) / se;
    Some(1.0 - normal_cdf(z))
}

/// Standard normal CDF Φ(x), via `erfc` (relative error < 1e-11).
pub fn normal_cdf(x: f64) -> f64 {
    0.5 * erfc(-x / std::f64::consts::SQRT_2)
}

/// Complementary error function: a positive-term series for erf below 2.5, a continued
/// fraction above (relative error < 1e-11 everywhere).
fn erfc(x: f64) -> f64 {
    if x.is_nan() {
        return f64::NAN;
    }
    if x < 0.0 {
        return 2.0 - erfc(-x);
    }
    let x2 = x * x;
    let inv_sqrt_pi = 1.0 / std::f64::consts::PI.sqrt();
    if x < 2.5 {
        // erf(x) = 2/√π · e^(−x²) · Σ 2^n x^(2n+1) / (1·3·…·(2n+1))
        let (mut term, mut sum) = (x, x);
        for n in 1..200 {
            term *= 2.0 * x2 / (2 * n + 1) as f64;
            sum += term;
            if term <= 1e-17 * sum {
                break;
            }
        }
        1.0 - 2.0 * inv_sqrt_pi * (-x2).exp() * sum
    } else {
        // erfc(x) = e^(−x²)/√π · 1/(x + (1/2)/(x + 1/(x + (3/2)/(x + …))))
        let mut t = x;
        for n in (1..=60).rev() {
            t = x + (f64::from(n) * 0.5) / t;
        }
        (-x2).exp() * inv_sqrt_pi / t
    }
}

/// Distribution-free lower confidence bound of the `q`-quantile from **sorted** data: the
/// largest order statistic X_(k) with P(Binomial(n, q) ≥ k) ≥ `confidence`
/// (then P(X_(k) ≤ true quantile) ≥ `confidence`). `None` when even X_(1) is not low enough
/// for the confidence asked (too few samples), on empty input, or `q` outside [0, 1].
pub fn lower_bound_order_stat(sorted: &[f64], q: f64, confidence: f64) -> Option<f64> {
    let n = sorted.len();
    if n == 0 || !(0.0..=1.0).contains(&q) || confidence.is_nan() {
        return None;
    }
    if q == 1.0 {
        return (confidence <= 1.0).then_some(sorted[n - 1]);
    }
    // Binomial pmf in log space (n may be large), normalized by its own sum.
    let (ln_q, ln_1q) = (q.ln(), (1.0 - q).ln());
    let mut log_pmf = Vec::with_capacity(n + 1);
    let mut l = n as f64 * ln_1q;
    for j in 0..=n {
        log_pmf.push(l);
        l += ((n - j) as f64 / (j + 1) as f64).ln() + ln_q - ln_1q;
    }
    let max = log_pmf.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let total: f64 = log_pmf.iter().map(|l| (l - max).exp()).sum();
    let mut tail = 0.0;
    for k in (1..=n).rev() {
        tail += (log_pmf[k] - max).exp();
        if tail / total >= confidence {
            return Some(sorted[k - 1]);
        }
    }
    None
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
mod tests {
    use super::*;
    use std::time::Duration;

    fn close(actual: Option<f64>, expected: f64) {
        let a = actual.unwrap_or_else(|| panic!("expected {expected}, got None"));
        assert!(
            (a - expected).abs() <= 1e-9 * expected.abs().max(1.0),
            "{a} != {expected}"
        );
    }

    #[test]
    fn describe_drops_nan_and_matches_numpy() {
        let d = describe(&[4.0, f64::NAN, 1.0, 3.0, 2.0]).unwrap();
        assert_eq!(d.n, 4);
        close(Some(d.p50), 2.5);
        close(Some(d.p90), 3.7);
        close(Some(d.p99), 3.97);
        close(Some(d.mean), 2.5);
        assert_eq!((d.min, d.max), (1.0, 4.0));
        let one = describe(&[7.0]).unwrap();
        assert_eq!(
            (one.n, one.p50, one.p99, one.mean, one.min, one.max),
            (1, 7.0, 7.0, 7.0, 7.0, 7.0)
        );
        assert_eq!(describe(&[]), None);
        assert_eq!(describe(&[f64::NAN, f64::NAN]), None);
    }

    fn ok(
        ttft: f64,
        tpot: Option<f64>,
        e2e: f64,
        out: Option<u64>,
        inp: Option<u64>,
        itl: &[f64],
    ) -> RequestRecord {
        RequestRecord {
            ttft_ms: Some(ttft),
            tpot_ms: tpot,
            e2e_ms: Some(e2e),
            output_tokens: out,
            input_tokens: inp,
            itl_ms: itl.to_vec(),
            ..RequestRecord::default()
        }
    }

    fn err(class: ErrorClass, e2e: Option<f64>) -> RequestRecord {
        RequestRecord {
            error_class: Some(class),
            e2e_ms: e2e,
            ..RequestRecord::default()
        }
    }

    fn hand_built() -> Vec<RequestRecord> {
        vec![
            ok(
                100.0,
                Some(10.0),
                1000.0,
                Some(91),
                Some(50),
                &[10.0, 10.0, 12.0],
            ),
            ok(200.0, Some(20.0), 2000.0, Some(91), Some(50), &[20.0, 30.0]),
            ok(300.0, None, 300.0, Some(1), None, &[]),
            ok(400.0, Some(40.0), 4000.0, None, Some(50), &[40.0]),
            err(ErrorClass::Http429, None),
            err(ErrorClass::Quota, Some(50.0)),
            err(ErrorClass::Http5xx, Some(100.0)),
            err(ErrorClass::TimeoutTotal, Some(5000.0)),
            err(ErrorClass::TimeoutFirstToken, None),
            err(ErrorClass::Interrupted, Some(250.0)),
        ]
    }

    fn ctx<'a>(slo: &'a Slo, duration_s: f64) -> StepContext<'a> {
        StepContext {
            scenario: "chat",
            fingerprint: "abc123",
            model: "m1",
            step: 3,
            concurrency: 8,
            duration_s,
            slo,
        }
    }

    #[test]
    fn summarize_step_checks_every_column() {
        let slo = Slo {
            ttft: Some(Duration::from_millis(350)),
            tpot: Some(Duration::from_millis(30)),
            e2e: Some(Duration::from_secs(3)),
        };
        let s = summarize_step(&ctx(&slo, 10.0), &hand_built());
        assert_eq!(s.schema_version, SCHEMA_VERSION);
        assert_eq!(
            (
                s.scenario.as_str(),
                s.fingerprint.as_str(),
                s.model.as_str()
            ),
            ("chat", "abc123", "m1")
        );
        assert_eq!((s.step, s.concurrency), (3, 8));
        assert_eq!((s.attempted, s.succeeded, s.failed), (10, 4, 6));
        // Quota and Interrupted are "other"; both timeout kinds are timeouts.
        assert_eq!(
            (s.err_429, s.err_5xx, s.err_timeout, s.err_other),
            (1, 1, 2, 2)
        );
        close(s.ttft_p50_ms, 250.0);
        close(s.ttft_p90_ms, 370.0);
        close(s.ttft_p99_ms, 397.0);
        close(s.ttft_mean_ms, 250.0);
        close(s.tpot_p50_ms, 20.0);
        close(s.tpot_p90_ms, 36.0);
        close(s.tpot_p99_ms, 39.6);
        // ITL pooled: [10, 10, 12, 20, 30, 40]
        close(s.itl_p50_ms, 16.0);
        close(s.itl_p90_ms, 35.0);
        close(s.itl_p99_ms, 39.5);
        close(s.e2e_p50_ms, 1500.0);
        close(s.e2e_p90_ms, 3400.0);
        close(s.e2e_p99_ms, 3940.0);
        close(s.e2e_mean_ms, 1825.0);
        assert_eq!((s.output_tokens, s.input_tokens), (183, 150));
        close(Some(s.tpm), 1098.0);
        close(Some(s.tpm_total), 1998.0);
        close(Some(s.rps), 0.4);
        // Requests 1-3 meet every bound (3 has no TPOT: passes); 4 misses the TTFT bound.
        close(s.goodput, 0.3);
        close(Some(s.duration_s), 10.0);
        // Σ E2E over all records that have one: 12,700 ms over 10 s.
        close(s.achieved_concurrency, 1.27);
        assert_eq!((s.client_cpu_pct, s.loop_lag_p99_ms), (None, None));
    }

    #[test]
    fn goodput_without_slo_is_success_share_and_missing_ttft_fails_a_bound() {
        let s = summarize_step(&ctx(&Slo::default(), 10.0), &hand_built());
        close(s.goodput, 0.4);
        let slo = Slo {
            ttft: Some(Duration::from_secs(1)),
            ..Slo::default()
        };
        let mut no_ttft = ok(1.0, None, 5.0, Some(1), None, &[]);
        no_ttft.ttft_ms = None;
        let s = summarize_step(
            &ctx(&slo, 1.0),
            &[no_ttft, ok(5.0, None, 9.0, None, None, &[])],
        );
        close(s.goodput, 0.5);
    }

    #[test]
    fn summarize_edge_cases() {
        let slo = Slo::default();
        let empty = summarize_step(&ctx(&slo, 5.0), &[]);
        assert_eq!(
            (
                empty.attempted,
                empty.goodput,
                empty.ttft_p50_ms,
                empty.itl_p99_ms
            ),
            (0, None, None, None)
        );
        assert_eq!((empty.tpm, empty.rps), (0.0, 0.0));
        assert_eq!(empty.achieved_concurrency, Some(0.0));

        let errors = [
            err(ErrorClass::Http429, None),
            err(ErrorClass::Connect, Some(30.0)),
        ];
        let s = summarize_step(&ctx(&slo, 0.0), &errors);
        assert_eq!(
            (s.attempted, s.succeeded, s.failed, s.err_429, s.err_other),
            (2, 0, 2, 1, 1)
        );
        assert_eq!(
            (s.goodput, s.e2e_mean_ms, s.achieved_concurrency),
            (Some(0.0), None, None)
        );

        let s = summarize_step(&ctx(&slo, f64::NAN), &hand_built());
        assert_eq!(
            (s.tpm, s.tpm_total, s.rps, s.duration_s),
            (0.0, 0.0, 0.0, 0.0)
        );
        assert!(s.tpm.is_finite() && s.achieved_concurrency.is_none());
    }

    #[test]
    fn select_quantile_matches_sorting_quantile() {
        let data: Vec<f64> = (0..101).map(|i| ((i * 37) % 101) as f64 * 1.5).collect();
        for q in [0.0, 0.1, 0.5, 0.9, 0.95, 0.99, 1.0] {
            let mut buf = data.clone();
            close(
                Some(select_quantile(&mut buf, q)),
                quantile(&data, q).unwrap(),
            );
        }
        assert_eq!(select_quantile(&mut [3.0], 0.9), 3.0);
    }

    #[test]
    fn bootstrap_constant_samples_give_exact_ratio() {
        let base = vec![100.0; 50];
        let new = vec![130.0; 60];
        let (r, lo, hi) = bootstrap_ratio_ci(&base, &new, 0.9, 200, 7, 0.99).unwrap();
        close(Some(r), 0.3);
        close(Some(lo), 0.3);
        close(Some(hi), 0.3);
    }

    #[test]
    fn bootstrap_detects_a_shift_and_not_noise() {
        // Deterministic spread-out samples: 100..=299 in a scrambled order.
        let base: Vec<f64> = (0..200).map(|i| 100.0 + ((i * 73) % 200) as f64).collect();
        let same: Vec<f64> = (0..200).map(|i| 100.0 + ((i * 31) % 200) as f64).collect();
        let slower: Vec<f64> = base.iter().map(|v| v * 1.5).collect();
        let (r, lo, hi) = bootstrap_ratio_ci(&base, &same, 0.9, 2000, 42, 0.99).unwrap();
        assert!(r.abs() < 1e-12 && lo < 0.0 && hi > 0.0, "{r} {lo} {hi}");
        let (r, lo, hi) = bootstrap_ratio_ci(&base, &slower, 0.9, 2000, 42, 0.99).unwrap();
        close(Some(r), 0.5);
        assert!(lo > 0.3 && lo < 0.5 && hi > 0.5 && hi < 0.7, "{lo} {hi}");
        // Same seed, same answer; NaNs are ignored.
        let mut with_nan = slower.clone();
        with_nan.push(f64::NAN);
        assert_eq!(
            bootstrap_ratio_ci(&base, &with_nan, 0.9, 2000, 42, 0.99),
            Some((r, lo, hi))
        );
    }

    #[test]
    fn bootstrap_rejects_degenerate_input() {
        assert_eq!(bootstrap_ratio_ci(&[], &[1.0], 0.9, 100, 1, 0.99), None);
        assert_eq!(
            bootstrap_ratio_ci(&[1.0], &[f64::NAN], 0.9, 100, 1, 0.99),
            None
        );
        assert_eq!(
            bootstrap_ratio_ci(&[0.0, 0.0], &[1.0], 0.9, 100, 1, 0.99),
            None
        );
        assert_eq!(bootstrap_ratio_ci(&[1.0], &[1.0], 0.9, 0, 1, 0.99), None);
        assert_eq!(bootstrap_ratio_ci(&[1.0], &[1.0], 1.5, 10, 1, 0.99), None);
        assert_eq!(bootstrap_ratio_ci(&[1.0], &[1.0], 0.9, 10, 1, 1.0), None);
        // n = 1 per side: every resample is the same value.
        assert_eq!(
            bootstrap_ratio_ci(&[2.0], &[3.0], 0.5, 10, 1, 0.9),
            Some((0.5, 0.5, 0.5))
        );
    }

    #[test]
    fn erfc_and_normal_cdf_match_reference_values() {
        // Python math.erfc
        let table = [
            (0.0, 1.0),
            (0.1, 0.8875370839817152),
            (0.5, 0.4795001221869535),
            (1.0, 0.15729920705028513),
            (2.0, 0.004677734981047265),
            (2.5, 0.0004069520174449589),
            (3.0, 2.2090496998585438e-05),
            (5.0, 1.5374597944280351e-12),
            (6.0, 2.1519736712498916e-17),
            (-1.0, 1.842700792949715),
            (-3.0, 1.9999779095030015),
        ];
        for (x, want) in table {
            let got = erfc(x);
            assert!(
                ((got - want) / want).abs() < 1e-10,
                "erfc({x}) = {got}, want {want}"
            );
        }
        assert!((normal_cdf(1.96) - 0.9750021048517796).abs() < 1e-12);
        assert!((1.0 - normal_cdf(2.326347874) - 0.01).abs() < 1e-9);
        assert!(erfc(f64::NAN).is_nan());
        assert_eq!(erfc(f64::INFINITY), 0.0);
    }

    #[test]
    fn two_proportion_z_matches_scipy_style_reference() {
        let p = |a, na, b, nb| two_proportion_z(a, na, b, nb).unwrap();
        assert!((p(10, 1000, 25, 1000) - 0.005264659032641468).abs() < 1e-10);
        assert!((p(5, 100, 3, 100) - 0.7647567889706053).abs() < 1e-10);
        assert!((p(0, 500, 6, 500) - 0.007007641469965037).abs() < 1e-10);
        assert_eq!(p(0, 10, 0, 10), 0.5);
        assert_eq!(p(10, 10, 10, 10), 0.5);
        assert_eq!(two_proportion_z(0, 0, 1, 10), None);
        assert_eq!(two_proportion_z(11, 10, 1, 10), None);
    }

    #[test]
    fn lower_bound_order_stat_matches_binomial_tail() {
        let ranks = |n: usize| (1..=n).map(|i| i as f64).collect::<Vec<f64>>();
        // Largest k with P(Binomial(n, q) >= k) >= confidence, computed with math.comb.
        assert_eq!(lower_bound_order_stat(&ranks(20), 0.5, 0.95), Some(6.0));
        assert_eq!(lower_bound_order_stat(&ranks(100), 0.9, 0.95), Some(85.0));
        assert_eq!(lower_bound_order_stat(&ranks(40), 0.9, 0.99), Some(31.0));
        assert_eq!(lower_bound_order_stat(&ranks(400), 0.99, 0.95), Some(392.0));
        assert_eq!(lower_bound_order_stat(&ranks(10), 0.5, 0.999), Some(1.0));
        assert_eq!(lower_bound_order_stat(&ranks(1), 0.5, 0.4), Some(1.0));
        assert_eq!(lower_bound_order_stat(&ranks(1), 0.5, 0.6), None);
        assert_eq!(lower_bound_order_stat(&ranks(5), 0.0, 0.9), None);
        assert_eq!(lower_bound_order_stat(&ranks(5), 1.0, 0.9), Some(5.0));
        assert_eq!(lower_bound_order_stat(&[], 0.5, 0.9), None);
        assert_eq!(lower_bound_order_stat(&ranks(5), f64::NAN, 0.9), None);
        // Large n does not underflow (reference: lgamma-based tail in Python).
        assert_eq!(
            lower_bound_order_stat(&ranks(10_000), 0.9, 0.95),
            Some(8950.0)
        );
    }
}
