//! Run-to-run drift for pooled baselines (DESIGN §5). A check's bootstrap CI covers sampling
//! inside one run; a real server also shifts from run to run (a few percent of the whole
//! distribution), which no within-run CI sees. A pooled baseline keeps the per-step summaries of
//! the last K runs, and this module turns them into a wider CI.
//!
//! The method is the random-effects one of meta-analysis (DerSimonian & Laird): on the log scale,
//! the spread of a quantile over K runs, s², is the between-run variance τ² plus each run's own
//! sampling variance v. The check's CI already estimates v: its half-width h (log scale) is about
//! z·√(2v) (two runs, one on each side), so τ² = s² − (h/z)²/2 (at least 0). Drift moves a whole
//! run, so τ is pooled over the ladder's steps (per metric and percentile): 3 runs × 4 steps give
//! 8 degrees of freedom instead of 2. A new run and the baseline run each drift by τ, so their
//! difference drifts by √2·τ, and each half of the CI is widened in quadrature:
//! h' = √(h² + (z·√2·τ)²). Needs ≥ 3 runs; with fewer, nothing is widened and the report says
//! the CI covers within-run sampling only. τ from a few runs is itself an estimate: the widened
//! CI is an approximation, not exact.

/// Fewest runs in a pooled baseline before its spread widens anything.
pub const MIN_POOLED_RUNS: usize = 3;

/// One step's evidence about drift: the pooled runs' values of a metric at that step, and the
/// within-run variance of one run's ln(value) there (from the check's own CI, [`within_variance`]).
#[derive(Debug, Clone, PartialEq)]
pub struct StepSpread {
    pub values: Vec<f64>,
    pub within: f64,
}

/// The between-run SD τ of ln(value), pooled over the steps of a ladder (drift moves a whole run,
/// so every step measures it): the method-of-moments estimate
/// τ² = max(0, Σ_s (K_s − 1)(s²_s − v_s) / Σ_s (K_s − 1)), with s²_s the variance of ln(value)
/// over the K_s runs at step s and v_s its within-run part. Pooling 4 steps of 3 runs gives 8
/// degrees of freedom instead of 2. Returns τ and the most runs at a step; `None` unless some
/// step has [`MIN_POOLED_RUNS`] positive, finite values.
pub fn between_run_sd(steps: &[StepSpread]) -> Option<(f64, usize)> {
    let (mut num, mut den, mut runs) = (0.0, 0.0, 0);
    for st in steps {
        let logs: Vec<f64> = st
            .values
            .iter()
            .filter(|x| x.is_finite() && **x > 0.0)
            .map(|x| x.ln())
            .collect();
        if logs.len() < 2 || !st.within.is_finite() {
            continue;
        }
        let k = logs.len() as f64;
        let mean = logs.iter().sum::<f64>() / k;
        let ss = logs.iter().map(|l| (l - mean).powi(2)).sum::<f64>();
        num += ss - (k - 1.0) * st.within;
        den += k - 1.0;
        runs = runs.max(logs.len());
    }
    (runs >= MIN_POOLED_RUNS && den > 0.0).then(|| ((num / den).max(0.0).sqrt(), runs))
}

/// The within-run variance of one run's ln(value) implied by a check's CI `(lo, hi)` of the ratio
/// `r` at normal quantile `z`: its half-width h on the log scale is about z·√(2v) (two runs, one
/// on each side), so v = (h / z)² / 2. `None` when the bounds are unusable.
pub fn within_variance(r: f64, (lo, hi): (f64, f64), z: f64) -> Option<f64> {
    if !(r > -1.0 && lo > -1.0 && hi.is_finite() && z > 0.0) {
        return None;
    }
    let c = (1.0 + r).ln();
    let (a, b) = (
        (c - (1.0 + lo).ln()).max(0.0),
        ((1.0 + hi).ln() - c).max(0.0),
    );
    Some(((a + b) / 2.0 / z).powi(2) / 2.0)
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

    fn step(values: &[f64], within: f64) -> StepSpread {
        StepSpread {
            values: values.to_vec(),
            within,
        }
    }

    #[test]
    fn needs_three_runs_somewhere() {
        assert_eq!(between_run_sd(&[step(&[100.0, 110.0], 0.0)]), None);
        assert_eq!(
            between_run_sd(&[step(&[100.0, 0.0, f64::NAN, 110.0], 0.0)]),
            None
        );
        assert_eq!(
            between_run_sd(&[step(&[100.0, 100.0, 100.0], 0.0)]),
            Some((0.0, 3))
        );
        // ln 0.95, 0, ln 1.05: SD ≈ 0.05, nothing within.
        let (t, k) = between_run_sd(&[step(&[95.0, 100.0, 105.0], 0.0)]).unwrap();
        assert!((t - 0.05).abs() < 0.001 && k == 3, "{t}");
    }

    #[test]
    fn pools_the_steps_and_removes_sampling_noise() {
        // Two steps, each spread SD 0.05 (variance 0.0025), within-run variance 0.0016 at
        // both: τ² = 0.0009 → τ = 0.03.
        let a = [95.0, 100.0, 105.0];
        let b = [190.0, 200.0, 210.0];
        let (t, _) = between_run_sd(&[step(&a, 0.0016), step(&b, 0.0016)]).unwrap();
        assert!((t - 0.03).abs() < 0.002, "{t}");
        // Spread no larger than sampling noise: no drift.
        let (t, _) = between_run_sd(&[step(&a, 0.01), step(&b, 0.01)]).unwrap();
        assert_eq!(t, 0.0);
    }

    #[test]
    fn within_variance_reads_the_ci() {
        let h: f64 = 0.1;
        let v = within_variance(0.0, ((-h).exp_m1(), h.exp_m1()), 2.576).unwrap();
        assert!((v - (h / 2.576).powi(2) / 2.0).abs() < 1e-12);
        assert_eq!(within_variance(0.1, (-1.0, 0.5), 2.576), None);
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
