//! Run-to-run drift for pooled baselines (docs/gate.md). A check's bootstrap CI covers sampling
//! inside one run; a real server also shifts from run to run (a few percent of the whole
//! distribution), which no within-run CI sees. A pooled baseline keeps the per-step summaries of
//! the last K runs, and this module turns them into a wider CI.
//!
//! On the log scale, τ is the SD of a metric's per-run value (e.g. TTFT P90 at a step) over the K
//! runs, pooled over the ladder's steps per metric and percentile (drift moves a whole run, so
//! every step measures it: 3 runs × 4 steps give 8 degrees of freedom instead of 2). A new run and
//! the baseline run each drift by τ, so their difference drifts by √2·τ, and each half of the CI
//! is widened in quadrature: h' = √(h² + (z·√2·τ)²). Needs ≥ 3 runs; with fewer, nothing is
//! widened and the report says the CI covers within-run sampling only.
//!
//! τ also holds each run's own sampling noise, which the CI already covers, so the widening is
//! conservative. Subtracting the within-run variance the check's CI implies (the
//! DerSimonian–Laird random-effects estimate, τ² = s² − v) was tried and measured: the CIs are
//! conservative, so v came out too large, τ was 0 in most checks and an A/A pair with 4% drift
//! failed as often as against a single run (13/100 vs 14/100, `make calibrate`).

/// Fewest runs in a pooled baseline before its spread widens anything.
pub const MIN_POOLED_RUNS: usize = 3;

/// The run-to-run SD of ln(value), pooled over the steps of a ladder (drift moves a whole run,
/// so every step measures it): τ² = Σ_s Σ_r (ln x_rs − mean_s)² / Σ_s (K_s − 1), over the K_s
/// runs with a value at step s. Pooling 4 steps of 3 runs gives 8 degrees of freedom instead of 2.
/// It includes each run's own sampling noise, which the check's CI already covers: deliberately
/// conservative (see the module text). Returns τ and the most runs at a step; `None` unless some
/// step has [`MIN_POOLED_RUNS`] positive, finite values.
pub fn between_run_sd(steps: &[Vec<f64>]) -> Option<(f64, usize)> {
    let (mut ss, mut den, mut runs) = (0.0, 0.0, 0);
    for values in steps {
        let logs: Vec<f64> = values
            .iter()
            .filter(|x| x.is_finite() && **x > 0.0)
            .map(|x| x.ln())
            .collect();
        if logs.len() < 2 {
            continue;
        }
        let k = logs.len() as f64;
        let mean = logs.iter().sum::<f64>() / k;
        ss += logs.iter().map(|l| (l - mean).powi(2)).sum::<f64>();
        den += k - 1.0;
        runs = runs.max(logs.len());
    }
    (runs >= MIN_POOLED_RUNS && den > 0.0).then(|| ((ss / den).sqrt(), runs))
}

/// Widens the CI `(lo, hi)` of the ratio `r` (new / base − 1) for a between-run SD `tau`: the
/// baseline run and the new run each drift by τ, so each half of the CI (log scale) becomes
/// √(h² + (z·√2·τ)²). Bounds that are not finite or not above −100% are kept as they are.
pub fn widen(r: f64, (lo, hi): (f64, f64), tau: f64, z: f64) -> (f64, f64) {
    if !(r > -1.0 && lo > -1.0 && hi.is_finite() && tau.is_finite() && tau > 0.0) {
        return (lo, hi);
    }
    let c = (1.0 + r).ln();
    let (a, b) = (
        (c - (1.0 + lo).ln()).max(0.0),
        ((1.0 + hi).ln() - c).max(0.0),
    );
    let d = z * std::f64::consts::SQRT_2 * tau;
    ((c - a.hypot(d)).exp() - 1.0, (c + b.hypot(d)).exp() - 1.0)
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

    fn steps(v: &[&[f64]]) -> Vec<Vec<f64>> {
        v.iter().map(|s| s.to_vec()).collect()
    }

    #[test]
    fn needs_three_runs_somewhere() {
        assert_eq!(between_run_sd(&steps(&[&[100.0, 110.0]])), None);
        assert_eq!(
            between_run_sd(&steps(&[&[100.0, 0.0, f64::NAN, 110.0]])),
            None
        );
        assert_eq!(
            between_run_sd(&steps(&[&[100.0, 100.0, 100.0]])),
            Some((0.0, 3))
        );
        // ln 0.95, 0, ln 1.05: SD ≈ 0.05.
        let (t, k) = between_run_sd(&steps(&[&[95.0, 100.0, 105.0]])).unwrap();
        assert!((t - 0.05).abs() < 0.001 && k == 3, "{t}");
    }

    #[test]
    fn pools_the_steps() {
        // One step spreads ±5%, the other not at all: the pooled SD is √(0.0025 / 2) ≈ 0.035.
        let (t, k) =
            between_run_sd(&steps(&[&[95.0, 100.0, 105.0], &[200.0, 200.0, 200.0]])).unwrap();
        assert!((t - 0.0354).abs() < 0.001 && k == 3, "{t}");
        // A step seen by 2 runs adds its degree of freedom; 3 runs somewhere are needed.
        let (t, _) = between_run_sd(&steps(&[&[95.0, 100.0, 105.0], &[200.0, 200.0]])).unwrap();
        assert!((t - 0.0408).abs() < 0.001, "{t}");
    }

    #[test]
    fn drift_widens_both_sides_in_quadrature() {
        let (lo, hi) = ((-0.05f64).exp_m1(), 0.05f64.exp_m1());
        let (wl, wh) = widen(0.0, (lo, hi), 0.03, 2.576);
        let h = 0.05f64.hypot(2.576 * 2f64.sqrt() * 0.03);
        assert!((wh - h.exp_m1()).abs() < 1e-9);
        assert!((wl - (-h).exp_m1()).abs() < 1e-9);
        // Centred on the point on the log scale.
        let (wl, wh) = widen(0.2, (0.1, 0.3), 0.04, 2.576);
        assert!(wl < 0.1 && wh > 0.3);
        // No drift, or unusable bounds: unchanged, exactly.
        assert_eq!(widen(0.0, (lo, hi), 0.0, 2.576), (lo, hi));
        assert_eq!(widen(0.1, (-1.0, 0.5), 0.1, 2.576), (-1.0, 0.5));
        assert_eq!(
            widen(0.1, (0.0, f64::INFINITY), 0.1, 2.576).1,
            f64::INFINITY
        );
    }
}
