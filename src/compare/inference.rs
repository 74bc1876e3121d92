//! Statistical inference used by `compare` (DESIGN §5): the bootstrap CI of a quantile ratio, the
//! distribution-free lower bound of a quantile, and the one-sided two-proportion z-test. Kept
//! private to `compare` so that the verdict rules do not depend on code being written elsewhere;
//! everything here is pure and seeded (no clock, no global RNG).
//!
//! The bootstrap does not materialise resamples. The type-7 quantile of a resample of size n
//! drawn from sorted data x(1..n) depends only on two order statistics of the resampled indices,
//! and the j-th order statistic of n uniform indices is `ceil(n · U(j))` with
//! `U(j) ~ Beta(j, n − j + 1)`; the next one is `U(j) + (1 − U(j)) · Beta(1, n − j)`. Drawing
//! those two numbers gives exactly the same distribution as resampling and sorting, in O(1)
//! instead of O(n) per resample (the tests check it against naive resampling).

use rand::Rng;

use crate::stats::quantile_sorted;

/// Percentile-bootstrap CI at `confidence` of r = Q_new(q) / Q_base(q) − 1, from `resamples`
/// resamples of each side. Inputs must be sorted ascending and finite. `None` when a side is
/// empty, `resamples` is 0, or every resampled ratio was undefined (0 / 0).
pub(crate) fn bootstrap_ratio_ci<R: Rng>(
    base_sorted: &[f64],
    new_sorted: &[f64],
    q: f64,
    resamples: usize,
    confidence: f64,
    rng: &mut R,
) -> Option<(f64, f64)> {
    if base_sorted.is_empty() || new_sorted.is_empty() || resamples == 0 {
        return None;
    }
    let mut ratios = Vec::with_capacity(resamples);
    for _ in 0..resamples {
        let b = resampled_quantile(base_sorted, q, rng);
        let n = resampled_quantile(new_sorted, q, rng);
        let r = n / b - 1.0;
        if !r.is_nan() {
            ratios.push(r);
        }
    }
    ratios.sort_by(f64::total_cmp);
    let alpha = (1.0 - confidence) / 2.0;
    Some((
        quantile_sorted(&ratios, alpha)?,
        quantile_sorted(&ratios, 1.0 - alpha)?,
    ))
}

/// The type-7 `q`-quantile of one bootstrap resample (same size as the data) of `sorted`,
/// drawn via the order-statistic identity described in the module docs.
pub(crate) fn resampled_quantile<R: Rng>(sorted: &[f64], q: f64, rng: &mut R) -> f64 {
    let n = sorted.len();
    let h = (n - 1) as f64 * q.clamp(0.0, 1.0);
    let lo = h.floor() as usize; // 0-based, so the order statistic is j = lo + 1
    let frac = h - lo as f64;
    let j = lo + 1;
    let u_lo = beta(j as f64, (n - j + 1) as f64, rng);
    let x_lo = at_uniform(sorted, u_lo);
    if frac == 0.0 || j >= n {
        return x_lo;
    }
    // The smallest of the n − j uniforms above u_lo.
    let v: f64 = 1.0 - rng.gen::<f64>(); // (0, 1]
    let u_hi = u_lo + (1.0 - u_lo) * (1.0 - v.powf(1.0 / (n - j) as f64));
    let x_hi = at_uniform(sorted, u_hi);
    x_lo + frac * (x_hi - x_lo)
}

/// The data point picked by a uniform index draw `u` in (0, 1): index ceil(n·u), 1-based.
fn at_uniform(sorted: &[f64], u: f64) -> f64 {
    let n = sorted.len();
    let idx = ((n as f64 * u).ceil() as usize).clamp(1, n);
    sorted[idx - 1]
}

/// Beta(a, b) for a, b ≥ 1 as a ratio of gammas.
fn beta<R: Rng>(a: f64, b: f64, rng: &mut R) -> f64 {
    let x = gamma(a, rng);
    let y = gamma(b, rng);
    x / (x + y)
}

/// Gamma(shape, 1) for shape ≥ 1 (Marsaglia & Tsang 2000).
fn gamma<R: Rng>(shape: f64, rng: &mut R) -> f64 {
    let d = shape - 1.0 / 3.0;
    let c = 1.0 / (9.0 * d).sqrt();
    loop {
        let x = std_normal(rng);
        let v = 1.0 + c * x;
        if v <= 0.0 {
            continue;
        }
        let v = v * v * v;
        let u: f64 = 1.0 - rng.gen::<f64>();
        let x2 = x * x;
        if u < 1.0 - 0.0331 * x2 * x2 || u.ln() < 0.5 * x2 + d * (1.0 - v + v.ln()) {
            return d * v;
        }
    }
}

/// One standard normal draw (Box–Muller).
pub(crate) fn std_normal<R: Rng>(rng: &mut R) -> f64 {
    let u1: f64 = 1.0 - rng.gen::<f64>(); // (0, 1], so ln is finite
    let u2: f64 = rng.gen();
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
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

/// One-sided p-value of "the failure share rose from `x1`/`n1` to `x2`/`n2`" (pooled
/// two-proportion z-test). 1.0 when the pooled variance is 0 or a side is empty.
pub(crate) fn two_proportion_p_rise(x1: u64, n1: u64, x2: u64, n2: u64) -> f64 {
    if n1 == 0 || n2 == 0 {
        return 1.0;
    }
    let (x1, n1, x2, n2) = (x1 as f64, n1 as f64, x2 as f64, n2 as f64);
    let pooled = (x1 + x2) / (n1 + n2);
    let se = (pooled * (1.0 - pooled) * (1.0 / n1 + 1.0 / n2)).sqrt();
    if se.is_nan() || se <= 0.0 {
        return 1.0;
    }
    let z = (x2 / n2 - x1 / n1) / se;
    1.0 - normal_cdf(z)
}

/// Standard normal CDF via erfc (Numerical Recipes' Chebyshev fit, relative error < 1.2e-7).
pub(crate) fn normal_cdf(x: f64) -> f64 {
    0.5 * erfc(-x / std::f64::consts::SQRT_2)
}

fn erfc(x: f64) -> f64 {
    let z = x.abs();
    let t = 1.0 / (1.0 + 0.5 * z);
    let poly = -z * z - 1.265_512_23
        + t * (1.000_023_68
            + t * (0.374_091_96
                + t * (0.096_784_18
                    + t * (-0.186_288_06
                        + t * (0.278_868_07
                            + t * (-1.135_203_98
                                + t * (1.488_515_87 + t * (-0.822_152_23 + t * 0.170_872_77))))))));
    let r = t * poly.exp();
    if x >= 0.0 {
        r
    } else {
        2.0 - r
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::rngs::StdRng;
    use rand::SeedableRng;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol
    }

    #[test]
    fn normal_cdf_matches_tables() {
        assert!(close(normal_cdf(0.0), 0.5, 1e-7));
        assert!(close(normal_cdf(1.959_964), 0.975, 1e-6));
        assert!(close(normal_cdf(2.326_348), 0.99, 1e-6));
        assert!(close(normal_cdf(-3.0), 0.001_349_898, 1e-7));
        assert!(close(normal_cdf(8.0), 1.0, 1e-9));
    }

    #[test]
    fn two_proportion_test_values() {
        // 10/1000 → 30/1000: z = 0.02 / sqrt(0.02·0.98·0.002) = 3.194, p ≈ 0.0007.
        let p = two_proportion_p_rise(10, 1000, 30, 1000);
        assert!(close(p, 1.0 - normal_cdf(3.194_383), 1e-6), "{p}");
        assert!(p < 0.001);
        // A fall is not a rise.
        assert!(two_proportion_p_rise(30, 1000, 10, 1000) > 0.99);
        // Degenerate inputs.
        assert_eq!(two_proportion_p_rise(0, 100, 0, 100), 1.0);
        assert_eq!(two_proportion_p_rise(0, 0, 5, 100), 1.0);
        assert_eq!(two_proportion_p_rise(100, 100, 100, 100), 1.0);
    }

    #[test]
    fn lower_bound_uses_binomial_order_statistics() {
        let data: Vec<f64> = (1..=100).map(f64::from).collect();
        // P(Bin(100, 0.9) ≥ l) ≥ 0.95 holds up to l = 85 (tail(85) ≈ 0.960, tail(86) ≈ 0.924).
        assert_eq!(lower_bound_order_stat(&data, 0.9, 0.95), Some(85.0));
        // P99 of 10 points: P(Bin(10, .99) ≥ 9) ≈ 0.996, P(≥ 10) ≈ 0.904.
        let ten: Vec<f64> = (1..=10).map(f64::from).collect();
        assert_eq!(lower_bound_order_stat(&ten, 0.99, 0.95), Some(9.0));
        // Median of 3: P(Bin(3, .5) ≥ 1) = 0.875 < 0.95, so no bound.
        assert_eq!(lower_bound_order_stat(&[1.0, 2.0, 3.0], 0.5, 0.95), None);
        assert_eq!(lower_bound_order_stat(&[], 0.9, 0.95), None);
        // Large n does not underflow into nonsense: the bound sits below the sample P90.
        let big: Vec<f64> = (1..=100_000).map(f64::from).collect();
        let lb = lower_bound_order_stat(&big, 0.9, 0.95).unwrap();
        assert!((89_800.0..90_000.0).contains(&lb), "{lb}");
    }

    /// Exact reference: P(j-th resampled order statistic ≤ x(i)) = P(Bin(n, i/n) ≥ j).
    fn binom_tail(n: usize, p: f64, j: usize) -> f64 {
        let mut pmf = vec![0.0; n + 1];
        let mut c = 1.0f64;
        for (k, slot) in pmf.iter_mut().enumerate() {
            *slot = c * p.powi(k as i32) * (1.0 - p).powi((n - k) as i32);
            c = c * (n - k) as f64 / (k + 1) as f64;
        }
        pmf[j..].iter().sum()
    }

    #[test]
    fn order_statistic_sampler_matches_exact_bootstrap_distribution() {
        let n = 50;
        let data: Vec<f64> = (1..=n).map(|i| i as f64).collect();
        // q chosen so h = 49·q is an integer: j = 45, no interpolation.
        let q = 44.0 / 49.0;
        let mut rng = StdRng::seed_from_u64(7);
        let draws = 20_000;
        let mut counts = vec![0usize; n + 1];
        for _ in 0..draws {
            counts[resampled_quantile(&data, q, &mut rng) as usize] += 1;
        }
        let mut cum = 0usize;
        for (i, count) in counts.iter().enumerate().skip(1) {
            cum += count;
            let empirical = cum as f64 / draws as f64;
            let exact = binom_tail(n, i as f64 / n as f64, 45);
            assert!(
                close(empirical, exact, 0.015),
                "i={i}: {empirical} vs {exact}"
            );
        }
    }

    /// Naive bootstrap: resample with replacement, select, interpolate (type 7).
    fn naive(sorted: &[f64], q: f64, rng: &mut StdRng) -> f64 {
        let n = sorted.len();
        let mut v: Vec<f64> = (0..n).map(|_| sorted[rng.gen_range(0..n)]).collect();
        let h = (n - 1) as f64 * q;
        let lo = h.floor() as usize;
        let (_, x_lo, rest) = v.select_nth_unstable_by(lo, f64::total_cmp);
        let x_lo = *x_lo;
        let x_hi = rest.iter().copied().fold(f64::INFINITY, f64::min);
        if lo + 1 >= n {
            x_lo
        } else {
            x_lo + (h - lo as f64) * (x_hi - x_lo)
        }
    }

    #[test]
    fn interpolated_sampler_matches_naive_resampling() {
        // Skewed data with ties, q with interpolation (h = 0.9 · 72 = 64.8).
        let mut data: Vec<f64> = (0..73)
            .map(|i| ((i * 37) % 73) as f64)
            .map(|x| (x / 20.0).exp().round())
            .collect();
        data.sort_by(f64::total_cmp);
        let mut rng = StdRng::seed_from_u64(11);
        let draws = 6_000;
        let mut fast: Vec<f64> = (0..draws)
            .map(|_| resampled_quantile(&data, 0.9, &mut rng))
            .collect();
        let mut slow: Vec<f64> = (0..draws).map(|_| naive(&data, 0.9, &mut rng)).collect();
        fast.sort_by(f64::total_cmp);
        slow.sort_by(f64::total_cmp);
        for q in [0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99] {
            let a = quantile_sorted(&fast, q).unwrap();
            let b = quantile_sorted(&slow, q).unwrap();
            assert!(
                close(a, b, 0.06 * b.abs().max(1.0)),
                "q={q}: fast {a} vs naive {b}"
            );
        }
        let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
        assert!(close(mean(&fast), mean(&slow), 0.02 * mean(&slow)));
    }

    #[test]
    fn bootstrap_ci_covers_the_true_ratio_and_edge_cases() {
        let base: Vec<f64> = (1..=400).map(f64::from).collect();
        let new: Vec<f64> = base.iter().map(|x| x * 1.5).collect();
        let mut rng = StdRng::seed_from_u64(3);
        let (lo, hi) = bootstrap_ratio_ci(&base, &new, 0.9, 2000, 0.99, &mut rng).unwrap();
        assert!(lo < 0.5 && 0.5 < hi && lo > 0.3 && hi < 0.7, "({lo}, {hi})");
        assert_eq!(bootstrap_ratio_ci(&[], &new, 0.9, 10, 0.99, &mut rng), None);
        assert_eq!(
            bootstrap_ratio_ci(&base, &new, 0.9, 0, 0.99, &mut rng),
            None
        );
        // Single points: the ratio is exact.
        let ci = bootstrap_ratio_ci(&[2.0], &[3.0], 0.9, 50, 0.99, &mut rng).unwrap();
        assert!(close(ci.0, 0.5, 1e-12) && close(ci.1, 0.5, 1e-12));
        // Same seed, same answer.
        let a = bootstrap_ratio_ci(&base, &new, 0.99, 500, 0.99, &mut StdRng::seed_from_u64(5));
        let b = bootstrap_ratio_ci(&base, &new, 0.99, 500, 0.99, &mut StdRng::seed_from_u64(5));
        assert_eq!(a, b);
    }
}
