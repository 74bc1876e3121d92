//! Run-to-run drift for pooled baselines (DESIGN §5). A check's bootstrap CI covers sampling
//! inside one run; a real server also shifts from run to run (a few percent of the whole
//! distribution), which no within-run CI sees. A pooled baseline keeps the per-step summaries of
//! the last K runs, and this module turns them into a wider CI.
//!
//! The method is the random-effects one of meta-analysis (DerSimonian & Laird): on the log scale,
//! the spread of a quantile over K runs, s², is the between-run variance τ² plus each run's own
//! sampling variance v. The check's CI already estimates v: its half-width h (log scale) is about
//! z·√(2v) (two runs, one on each side), so τ² = max(0, s² − (h/z)²/2). A new run and the
//! baseline run each drift by τ, so their difference drifts by √2·τ, and each half of the CI is
//! widened in quadrature: h' = √(h² + (z·√2·τ)²). Needs ≥ 3 runs (2 degrees of freedom for s);
//! with fewer, nothing is widened and the report says the CI covers within-run sampling only.
//! With 3–5 runs s is itself a rough estimate; the widened CI is an approximation, not exact.

/// Fewest runs in a pooled baseline before its spread widens anything.
pub const MIN_POOLED_RUNS: usize = 3;

/// The sample standard deviation of ln(value) over the runs (the relative run-to-run spread);
/// `None` with fewer than [`MIN_POOLED_RUNS`] positive, finite values.
pub fn log_spread(values: &[f64]) -> Option<f64> {
    let logs: Vec<f64> = values
        .iter()
        .filter(|x| x.is_finite() && **x > 0.0)
        .map(|x| x.ln())
        .collect();
    if logs.len() < MIN_POOLED_RUNS {
        return None;
    }
    let k = logs.len() as f64;
    let mean = logs.iter().sum::<f64>() / k;
    let var = logs.iter().map(|l| (l - mean).powi(2)).sum::<f64>() / (k - 1.0);
    Some(var.sqrt())
}

/// A CI widened for drift: the new bounds and the between-run spread τ that was added.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Widened {
    pub lo: f64,
    pub hi: f64,
    /// Between-run SD of ln(value), after removing the within-run part (≥ 0).
    pub tau: f64,
}

/// Widens the CI `(lo, hi)` of the ratio `r` (new / base − 1) for a run-to-run spread `spread`
/// (from [`log_spread`]); `z` is the normal quantile of the CI's level (2.576 for 99%). Bounds
/// that are not finite or not above −100% are kept as they are.
pub fn widen(r: f64, (lo, hi): (f64, f64), spread: f64, z: f64) -> Widened {
    let keep = Widened { lo, hi, tau: 0.0 };
    if !(r > -1.0 && lo > -1.0 && hi.is_finite() && spread.is_finite() && z > 0.0) {
        return keep;
    }
    let c = (1.0 + r).ln();
    let (a, b) = (
        (c - (1.0 + lo).ln()).max(0.0),
        ((1.0 + hi).ln() - c).max(0.0),
    );
    let within = ((a + b) / 2.0 / z).powi(2) / 2.0;
    let tau = (spread * spread - within).max(0.0).sqrt();
    if tau == 0.0 {
        return keep;
    }
    let d = z * std::f64::consts::SQRT_2 * tau;
    Widened {
        lo: (c - a.hypot(d)).exp() - 1.0,
        hi: (c + b.hypot(d)).exp() - 1.0,
        tau,
    }
}

/// The normal quantile for a two-sided CI at `level` (0.99 → 2.576), for the levels ladder uses.
pub fn z_of(level: f64) -> f64 {
    if (level - 0.95).abs() < 1e-9 {
        1.959_963_985
    } else {
        2.575_829_304
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spread_needs_three_runs() {
        assert_eq!(log_spread(&[100.0, 110.0]), None);
        assert_eq!(log_spread(&[100.0, 0.0, f64::NAN, 110.0]), None);
        let s = log_spread(&[100.0, 100.0, 100.0]).unwrap();
        assert_eq!(s, 0.0);
        // ln 0.95, 0, ln 1.05: SD ≈ 0.05.
        let s = log_spread(&[95.0, 100.0, 105.0]).unwrap();
        assert!((s - 0.05).abs() < 0.001, "{s}");
    }

    #[test]
    fn spread_within_sampling_noise_adds_nothing() {
        // CI ±10% (log half-width 0.1) at z 2.576: within-run SD per run ≈ 0.1/2.576/√2 = 0.027.
        // A spread of 0.02 is explained by sampling alone: no widening.
        let w = widen(0.0, ((-0.1f64).exp_m1(), 0.1f64.exp_m1()), 0.02, 2.576);
        assert_eq!(w.tau, 0.0);
        assert_eq!(w.hi, 0.1f64.exp_m1());
    }

    #[test]
    fn drift_widens_both_sides_in_quadrature() {
        let (lo, hi) = ((-0.05f64).exp_m1(), 0.05f64.exp_m1());
        let w = widen(0.0, (lo, hi), 0.04, 2.576);
        // within = (0.05/2.576)²/2 = 1.88e-4; τ² = 0.0016 − 0.000188 → τ ≈ 0.0376.
        assert!((w.tau - 0.0376).abs() < 0.001, "{}", w.tau);
        let d = 2.576 * 2f64.sqrt() * w.tau;
        let h = 0.05f64.hypot(d);
        assert!((w.hi - h.exp_m1()).abs() < 1e-9);
        assert!((w.lo - (-h).exp_m1()).abs() < 1e-9);
        assert!(w.lo < lo && w.hi > hi);
        // Centred on the point: r = +20% stays the centre on the log scale.
        let w = widen(0.2, (0.1, 0.3), 0.04, 2.576);
        assert!(w.lo < 0.1 && w.hi > 0.3);
    }

    #[test]
    fn unusable_bounds_are_kept() {
        let w = widen(0.1, (-1.0, 0.5), 0.1, 2.576);
        assert_eq!((w.lo, w.hi, w.tau), (-1.0, 0.5, 0.0));
        let w = widen(0.1, (0.0, f64::INFINITY), 0.1, 2.576);
        assert_eq!(w.hi, f64::INFINITY);
    }
}
