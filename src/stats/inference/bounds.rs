//! The inference that needs no resampling: the t interval of a throughput ratio from block
//! rates, distribution-free (order-statistic) bounds of a quantile, and Fisher's exact test for
//! a rise in an error rate.

use super::effective::effective_size_of_values;
use crate::stats::drift;

/// One side of a throughput CI: the relative variance of its steady-window rate and its
/// degrees of freedom, from the rates of equal time blocks (batch means; `stats::steady`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct RateSpread {
    /// Var(rate) / rate²: the block rates' sample variance over their effective number.
    pub rel_var: f64,
    /// Effective number of blocks − 1.
    pub df: f64,
}

/// The spread of a rate measured as the mean of `block_rates` (equal blocks in time order):
/// their sample variance divided by their effective number ([`effective_size_of_values`], so
/// blocks that share long requests count for less). `None` with fewer than 2 blocks or no rate.
pub(crate) fn rate_spread(block_rates: &[f64]) -> Option<RateSpread> {
    let k = block_rates.len();
    if k < 2 || block_rates.iter().any(|r| !r.is_finite()) {
        return None;
    }
    let mean = block_rates.iter().sum::<f64>() / k as f64;
    if mean <= 0.0 {
        return None;
    }
    let var = block_rates.iter().map(|r| (r - mean).powi(2)).sum::<f64>() / (k - 1) as f64;
    let m = effective_size_of_values(block_rates).clamp(2.0, k as f64);
    Some(RateSpread {
        rel_var: var / m / (mean * mean),
        df: m - 1.0,
    })
}

/// The spread of a product (or quotient) of two independent estimates: their relative
/// variances add, with Welch–Satterthwaite degrees of freedom.
pub(crate) fn summed_spread(a: RateSpread, b: RateSpread) -> RateSpread {
    let v = a.rel_var + b.rel_var;
    let term = |s: RateSpread| {
        if s.rel_var > 0.0 {
            s.rel_var.powi(2) / s.df.max(1.0)
        } else {
            0.0
        }
    };
    let denom = term(a) + term(b);
    RateSpread {
        rel_var: v,
        df: if denom > 0.0 {
            v * v / denom
        } else {
            a.df.min(b.df)
        },
    }
}

/// CI at `confidence` of the sampling factor of a ratio of two rates: a t interval on the log
/// ratio with Welch–Satterthwaite degrees of freedom. Returns (lo, hi) that multiply the
/// observed ratio: CI = ((1 + r)(1 + lo) − 1, (1 + r)(1 + hi) − 1).
pub(crate) fn rate_factor_ci(base: RateSpread, new: RateSpread, confidence: f64) -> (f64, f64) {
    let v = base.rel_var + new.rel_var;
    if v <= 0.0 {
        return (0.0, 0.0);
    }
    let df = v * v / (base.rel_var.powi(2) / base.df + new.rel_var.powi(2) / new.df);
    let half = t_two_sided(confidence, df) * v.sqrt();
    ((-half).exp() - 1.0, half.exp() - 1.0)
}

/// Two-sided `confidence` quantile of Student's t with `df` degrees of freedom (Cornish–Fisher
/// expansion around the normal quantile; within 1% for df ≥ 3, 4% at the floor of 2).
pub(crate) fn t_two_sided(confidence: f64, df: f64) -> f64 {
    let z = drift::z_of(confidence);
    if !df.is_finite() || df > 1e6 {
        return z;
    }
    let v = df.max(2.0);
    let (z3, z5, z7, z9) = (z.powi(3), z.powi(5), z.powi(7), z.powi(9));
    z + (z3 + z) / (4.0 * v)
        + (5.0 * z5 + 16.0 * z3 + 3.0 * z) / (96.0 * v * v)
        + (3.0 * z7 + 19.0 * z5 + 17.0 * z3 - 15.0 * z) / (384.0 * v.powi(3))
        + (79.0 * z9 + 776.0 * z7 + 1482.0 * z5 - 1920.0 * z3 - 945.0 * z) / (92_160.0 * v.powi(4))
}

/// Distribution-free lower `confidence` bound of the `p`-quantile from sorted data: the order
/// statistic x(l) with the largest l such that P(Binomial(n, p) ≥ l) ≥ confidence, because
/// P(x(l) ≤ Q_p) = P(#{X_i ≤ Q_p} ≥ l). `None` when even x(1) is not a bound at that confidence.
pub(crate) fn lower_bound_order_stat(sorted: &[f64], p: f64, confidence: f64) -> Option<f64> {
    let n = sorted.len();
    if n == 0 || !(0.0 < p && p < 1.0) {
        return None;
    }
    // Walk k = n, n−1, …, 1 with log pmf(k − 1) = log pmf(k) + ln k − ln(n − k + 1) + ln((1−p)/p).
    let log_odds = ((1.0 - p) / p).ln();
    let mut log_pmf = n as f64 * p.ln();
    let mut tail = 0.0;
    for k in (1..=n).rev() {
        tail += log_pmf.exp();
        if tail >= confidence {
            return Some(sorted[k - 1]);
        }
        log_pmf += (k as f64).ln() - ((n - k + 1) as f64).ln() + log_odds;
    }
    None
}

/// Distribution-free upper `confidence` bound of the `p`-quantile: the mirror of
/// [`lower_bound_order_stat`] (the lower bound of the (1 − p)-quantile of the negated data).
pub(crate) fn upper_bound_order_stat(sorted: &[f64], p: f64, confidence: f64) -> Option<f64> {
    let negated: Vec<f64> = sorted.iter().rev().map(|v| -v).collect();
    lower_bound_order_stat(&negated, 1.0 - p, confidence).map(|v| -v)
}

/// One-sided p-value of Fisher's exact test that the failure share rose from `x1`/`n1` to
/// `x2`/`n2`: P(X ≥ x2) for X hypergeometric given both totals. 1.0 when a side is empty.
pub(crate) fn fisher_p_rise(x1: u64, n1: u64, x2: u64, n2: u64) -> f64 {
    if n1 == 0 || n2 == 0 || x1 > n1 || x2 > n2 {
        return 1.0;
    }
    let failures = x1 + x2;
    let total = n1 + n2;
    let lf = LogFactorials::up_to(total);
    // P(X = k) = C(n2, k) C(n1, failures − k) / C(total, failures)
    let log_pmf =
        |k: u64| lf.choose(n2, k) + lf.choose(n1, failures - k) - lf.choose(total, failures);
    let hi = failures.min(n2);
    let lo_k = failures.saturating_sub(n1);
    let p: f64 = (x2.max(lo_k)..=hi).map(|k| log_pmf(k).exp()).sum();
    p.min(1.0)
}

/// ln(k!) for k = 0..=n, by summation (exact enough for any request count ladder sees).
struct LogFactorials(Vec<f64>);

impl LogFactorials {
    fn up_to(n: u64) -> Self {
        let mut v = Vec::with_capacity(n as usize + 1);
        let mut acc = 0.0;
        v.push(0.0);
        for k in 1..=n {
            acc += (k as f64).ln();
            v.push(acc);
        }
        LogFactorials(v)
    }
    fn choose(&self, n: u64, k: u64) -> f64 {
        self.0[n as usize] - self.0[k as usize] - self.0[(n - k) as usize]
    }
}
