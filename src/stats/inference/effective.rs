//! The effective number of independent requests behind a statistic (module docs of
//! `inference`, "Correlated requests"): a series' long-run variance with a flat-top lag window of
//! data-chosen bandwidth (Politis & White 2004), for a quantile, a mean, pooled gaps, and a
//! series whose start is still warming up.

use crate::model::itl::{bin_value_ms, ItlHistogram};
use crate::stats::itl::PooledGaps;
use crate::stats::quantile_sorted;

/// Effective number of independent requests behind the pooled `q`-quantile of the gaps of
/// `requests` (start order, each with gaps). A pooled quantile is driven by each request's
/// score: its gaps above the pooled quantile minus (1 − q) × its gaps (the per-request
/// estimating equation); this is [`effective_size_of_values`] of that series.
pub(crate) fn effective_size_of_gaps(requests: &[ItlHistogram], q: f64) -> f64 {
    let Some(cut) = PooledGaps::of(requests).quantile(q) else {
        return 0.0;
    };
    let scores: Vec<f64> = requests
        .iter()
        .map(|h| {
            let above: u64 = h
                .bins()
                .iter()
                .filter(|&&(b, _)| bin_value_ms(b) > cut)
                .map(|&(_, c)| u64::from(c))
                .sum();
            above as f64 - (1.0 - q) * h.count() as f64
        })
        .collect();
    effective_size_of_values(&scores)
}

/// Effective number of independent requests in `series` (values in start order): n divided by
/// the variance inflation 1 + 2 Σ λ(k/M) ρ(k) of its ranks, with the flat-top window λ and the
/// bandwidth M = 2·m̂ of Politis & White (m̂: the first lag after which K_n = max(5, √log10 n)
/// autocorrelations in a row stay below 2·√(log10 n / n)). Never more than n, never below n/10
/// (nor 2). Series shorter than 8 are taken as independent.
pub(crate) fn effective_size(series: &[f64]) -> f64 {
    effective_size_of(&centered_ranks(series))
}

/// [`effective_size`] of the values themselves rather than their ranks: the right one for a
/// mean (throughput), where the size of each value matters.
pub(crate) fn effective_size_of_values(series: &[f64]) -> f64 {
    let n = series.len();
    if n == 0 {
        return 0.0;
    }
    let mean = series.iter().sum::<f64>() / n as f64;
    effective_size_of(&series.iter().map(|v| v - mean).collect::<Vec<_>>())
}

/// The flat-top long-run variance rule on an already centred series.
fn effective_size_of(x: &[f64]) -> f64 {
    let n = x.len();
    if n < 8 {
        return n as f64;
    }
    let c0: f64 = x.iter().map(|v| v * v).sum::<f64>() / n as f64;
    if c0 <= 0.0 {
        return n as f64;
    }
    let rho = |k: usize| -> f64 {
        x.iter().zip(&x[k..]).map(|(a, b)| a * b).sum::<f64>() / n as f64 / c0
    };
    let nf = n as f64;
    let k_n = 5usize.max(nf.log10().sqrt().ceil() as usize);
    let threshold = 2.0 * (nf.log10() / nf).sqrt();
    let max_lag = (n / 2).saturating_sub(k_n).max(1);
    let rhos: Vec<f64> = (0..=max_lag + k_n)
        .map(|k| if k < n { rho(k) } else { 0.0 })
        .collect();
    let m_hat = (0..=max_lag)
        .find(|&m| (1..=k_n).all(|i| rhos[m + i].abs() < threshold))
        .unwrap_or(max_lag);
    let big_m = (2 * m_hat).min(n - 1);
    let mut inflation = 1.0;
    for (k, r) in rhos.iter().enumerate().take(big_m + 1).skip(1) {
        let t = k as f64 / big_m as f64;
        let weight = if t <= 0.5 { 1.0 } else { 2.0 * (1.0 - t) };
        inflation += 2.0 * weight * r;
    }
    // Floored at n/10: a larger inflation comes from a level shift inside the step (the first
    // requests run while the queue fills up), which both sides share, not from sampling.
    (nf / inflation.max(1.0)).clamp((nf / 10.0).max(2.0), nf)
}

/// The requests at the start of a closed-loop step that every run of it shares: at N streams
/// the first N start together before any queue has formed, so behind a cap their latencies
/// step up from the unqueued level to the queued one. That level shift is the step's design,
/// the same on both sides, not sampling noise; read as correlation it would shrink the
/// effective size of an unchanged queued step to its floor (and a bimodal P50 resampled from a
/// dozen requests swings by half). So `of` (one of the effective sizes above) is measured on
/// the requests past the first `start` (at most half the step); when they are nearly
/// independent there (at least [`INDEPENDENT_SHARE`] of their number), that ratio is applied to
/// the whole step, otherwise the whole step's estimate stands. `start` is 0 for open-loop steps, whose arrivals do not start
/// together.
pub(crate) fn effective_size_past_start(
    series: &[f64],
    start: usize,
    of: impl Fn(&[f64]) -> f64,
) -> f64 {
    let n = series.len();
    let tail = &series[start.min(n / 2)..];
    if tail.len() == n || tail.len() < 8 {
        return of(series);
    }
    // Only when the start explains the correlation: past it the requests are (nearly)
    // independent. A queue whose waits stay correlated past the start keeps the whole step's
    // cautious estimate (the calibration measured more false alarms otherwise).
    let past = of(tail);
    if past < INDEPENDENT_SHARE * tail.len() as f64 {
        return of(series);
    }
    (past * n as f64 / tail.len() as f64).min(n as f64)
}

/// The share of its requests a series' effective size must keep to count as independent.
const INDEPENDENT_SHARE: f64 = 0.8;

/// Effective number of independent requests for the `q`-quantile of `series` (start order):
/// the variance of a sample quantile is driven by the indicator 1{x > Q_q}, so this is
/// [`effective_size`] of that indicator series (n when no value lies above the quantile).
pub(crate) fn effective_size_at(series: &[f64], q: f64) -> f64 {
    let mut sorted = series.to_vec();
    sorted.sort_by(f64::total_cmp);
    let Some(cut) = quantile_sorted(&sorted, q) else {
        return 0.0;
    };
    let above: Vec<f64> = series
        .iter()
        .map(|&x| f64::from(u8::from(x > cut)))
        .collect();
    effective_size(&above)
}

/// Mid-ranks (ties share their average rank), centred on their mean.
fn centered_ranks(series: &[f64]) -> Vec<f64> {
    let n = series.len();
    let mut idx: Vec<usize> = (0..n).collect();
    idx.sort_by(|&a, &b| series[a].total_cmp(&series[b]));
    let mut ranks = vec![0.0; n];
    let mut i = 0;
    while i < n {
        let mut j = i;
        while j + 1 < n && series[idx[j + 1]] == series[idx[i]] {
            j += 1;
        }
        let mid = (i + j) as f64 / 2.0;
        for &k in &idx[i..=j] {
            ranks[k] = mid;
        }
        i = j + 1;
    }
    let mean = (n - 1) as f64 / 2.0;
    ranks.iter().map(|r| r - mean).collect()
}
