//! A hosted API's speed wanders with its provider's load: slower for a few minutes, faster
//! again, by tens of percent, within one run and between runs. A gate that is only ever shown a
//! fixed factor per run (`drift`) has not been shown that. This is the wander, as one pure,
//! seeded function of a server's time, so every request in flight at a moment shares it (A and B
//! variants interleaved in one run against one drifting server see the same drift).
//!
//! The walk: ln(factor) is a Brownian motion reflected at ±`bound`, its change over m minutes
//! spreading by `sd_per_sqrt_min` × √m before it meets a wall. It starts at a point drawn from
//! its stationary distribution (uniform over ±`bound`), so two independently seeded walks are
//! one walk read at two times far apart (a baseline recorded days ago: the walk forgets its start
//! in about 0.4 × the time it takes to cross from the middle to a wall). Knots every
//! [`KNOT`] are drawn once ([`DriftWalk::path`]) and read with linear interpolation, so the factor
//! is continuous in time and costs two loads to read; past the path's horizon it is read
//! backwards (mirrored in time), which keeps it continuous and in range.

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use std::time::Duration;

/// Time between the walk's knots.
pub const KNOT: Duration = Duration::from_secs(2);

/// The walk's definition: how fast it wanders, how far it may go, and its seed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DriftWalk {
    /// SD of ln(factor)'s change over one minute (away from the walls); over m minutes, × √m.
    pub sd_per_sqrt_min: f64,
    /// ln(factor) stays within ±bound: ln 1.3 keeps the factor between 1/1.3 and 1.3.
    pub bound: f64,
    pub seed: u64,
}

impl DriftWalk {
    /// The walk that wanders ±`amplitude` (0.3: up to 30% slower, or faster by as much in log
    /// terms, 1/1.3) and crosses from the middle to a wall in about `period`, typically:
    /// bound = ln(1 + amplitude), sd_per_sqrt_min = bound / √(period in minutes).
    pub fn reaching(amplitude: f64, period: Duration, seed: u64) -> DriftWalk {
        let bound = amplitude.max(0.0).ln_1p();
        let minutes = (period.as_secs_f64() / 60.0).max(1e-9);
        DriftWalk {
            sd_per_sqrt_min: bound / minutes.sqrt(),
            bound,
            seed,
        }
    }

    /// The walk's knots over `horizon` (at least one knot interval), drawn from its seed.
    pub fn path(&self, horizon: Duration) -> WalkPath {
        let b = self.bound.max(0.0);
        let n = (horizon.as_secs_f64() / KNOT.as_secs_f64()).ceil().max(1.0) as usize + 1;
        let mut rng = SmallRng::seed_from_u64(self.seed ^ SALT);
        let step_sd = self.sd_per_sqrt_min.max(0.0) * (KNOT.as_secs_f64() / 60.0).sqrt();
        let mut x = if b > 0.0 { rng.gen_range(-b..=b) } else { 0.0 };
        let mut knots = Vec::with_capacity(n);
        for _ in 0..n {
            knots.push(x);
            let z: f64 = rand_distr::Distribution::sample(&rand_distr::StandardNormal, &mut rng);
            x = reflect(x + step_sd * z, b);
        }
        WalkPath { knots }
    }
}

/// Mixed into the seed so the walk's draws are not the jitter's or the variation's.
const SALT: u64 = 0x5851_f42d_4c95_7f2d;

/// `x` folded back into [−b, b] at both walls (a reflected walk); 0 when b is 0.
fn reflect(x: f64, b: f64) -> f64 {
    if b <= 0.0 {
        return 0.0;
    }
    let y = (x + b).rem_euclid(4.0 * b);
    if y <= 2.0 * b {
        y - b
    } else {
        3.0 * b - y
    }
}

/// A drawn walk: ln(factor) at every [`KNOT`] from its origin.
#[derive(Debug, Clone, PartialEq)]
pub struct WalkPath {
    knots: Vec<f64>,
}

impl WalkPath {
    /// ln(factor) `t` after the walk's origin: linear between knots, mirrored past the horizon.
    pub fn log_factor(&self, t: Duration) -> f64 {
        let last = self.knots.len() - 1;
        if last == 0 {
            return self.knots[0];
        }
        let at = (t.as_secs_f64() / KNOT.as_secs_f64()).rem_euclid(2.0 * last as f64);
        let at = if at > last as f64 {
            2.0 * last as f64 - at
        } else {
            at
        };
        let i = (at.floor() as usize).min(last - 1);
        let frac = at - i as f64;
        self.knots[i] + frac * (self.knots[i + 1] - self.knots[i])
    }

    /// The factor every time is multiplied by `t` after the walk's origin.
    pub fn factor(&self, t: Duration) -> f64 {
        self.log_factor(t).exp()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIN: Duration = Duration::from_secs(60);

    fn secs(s: f64) -> Duration {
        Duration::from_secs_f64(s)
    }

    fn sd(xs: &[f64]) -> f64 {
        let m = xs.iter().sum::<f64>() / xs.len() as f64;
        (xs.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (xs.len() - 1) as f64).sqrt()
    }

    #[test]
    fn reaching_sets_the_bound_and_the_pace() {
        let w = DriftWalk::reaching(0.3, 4 * MIN, 1);
        assert!((w.bound - 1.3f64.ln()).abs() < 1e-12);
        assert!((w.sd_per_sqrt_min - 1.3f64.ln() / 2.0).abs() < 1e-12);
        assert_eq!(DriftWalk::reaching(0.0, MIN, 1).path(MIN).factor(MIN), 1.0);
    }

    #[test]
    fn stays_within_its_bound_past_the_horizon_too() {
        for seed in 0..50 {
            let w = DriftWalk::reaching(0.3, MIN, seed);
            let path = w.path(10 * MIN);
            for s in 0..1800 {
                let f = path.factor(secs(f64::from(s) * 0.7));
                assert!(
                    (1.0 / 1.3 - 1e-12..=1.3 + 1e-12).contains(&f),
                    "{seed} {s} {f}"
                );
            }
        }
        assert!((reflect(0.3, 0.25) - 0.2).abs() < 1e-12);
        assert!((reflect(-0.3, 0.25) + 0.2).abs() < 1e-12);
        assert!((reflect(1.1, 0.25) - 0.1).abs() < 1e-12);
    }

    #[test]
    fn is_continuous_and_deterministic() {
        let w = DriftWalk::reaching(0.3, 5 * MIN, 7);
        let path = w.path(20 * MIN);
        // Within a knot interval a millisecond moves it by a thousandth of a step at most;
        // at the horizon the mirror joins the path to itself.
        let step = w.sd_per_sqrt_min * (KNOT.as_secs_f64() / 60.0).sqrt();
        for s in [
            0.0, 1.0, 1.999, 2.0, 333.3, 1199.999, 1200.0, 1200.001, 2400.0,
        ] {
            let d = (path.log_factor(secs(s + 0.001)) - path.log_factor(secs(s))).abs();
            assert!(d <= 6.0 * step * 0.001 / 2.0 + 1e-12, "{s}: {d}");
        }
        assert_eq!(path, w.path(20 * MIN));
        assert_ne!(path, DriftWalk { seed: 8, ..w }.path(20 * MIN));
        assert_eq!(path.factor(secs(0.0)), path.factor(secs(2400.0)));
    }

    #[test]
    fn spreads_as_the_square_root_of_time_and_forgets_its_start() {
        // Far from the walls: the change over 4 minutes spreads by sd × 2.
        let free = |seed| DriftWalk {
            sd_per_sqrt_min: 0.05,
            bound: 10.0,
            seed,
        };
        let changes: Vec<f64> = (0..2000)
            .map(|s| {
                let p = free(s).path(5 * MIN);
                p.log_factor(5 * MIN) - p.log_factor(MIN)
            })
            .collect();
        let spread = sd(&changes);
        assert!((spread - 0.1).abs() < 0.008, "{spread}");
        // ±30% over 5 minutes: starts spread uniformly over ±ln 1.3 (SD bound / √3), a run of a
        // minute moves by about a tenth, and 20 minutes later the walk is anywhere again.
        let walks: Vec<WalkPath> = (0..2000)
            .map(|s| DriftWalk::reaching(0.3, 5 * MIN, s).path(30 * MIN))
            .collect();
        let b = 1.3f64.ln();
        let starts: Vec<f64> = walks.iter().map(|p| p.log_factor(secs(0.0))).collect();
        assert!(
            (sd(&starts) - b / 3f64.sqrt()).abs() < 0.01,
            "{}",
            sd(&starts)
        );
        let minute: Vec<f64> = walks
            .iter()
            .map(|p| p.log_factor(MIN) - p.log_factor(secs(0.0)))
            .collect();
        // (the walls hold it back: 0.117 unhindered, about 0.10 from a uniform start).
        let moved = sd(&minute);
        assert!((0.085..b / 5f64.sqrt()).contains(&moved), "{moved}");
        let later: Vec<f64> = walks.iter().map(|p| p.log_factor(20 * MIN)).collect();
        let r = starts.iter().zip(&later).map(|(a, c)| a * c).sum::<f64>()
            / (starts.len() as f64 * sd(&starts) * sd(&later));
        assert!(r.abs() < 0.1, "{r}");
    }
}
