//! What makes one simulated request differ from the next, and one run from the next: a
//! lognormal TTFT spread, output lengths drawn between a minimum and a maximum, a run-level
//! drift factor and a drift that wanders with the server's time (`sim::walk`). Real servers
//! have all of them, and a gate that is never shown them cannot be calibrated
//! (`make calibrate`). Pure and seeded: the same seed gives the same draws.

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use super::params::SimParams;
use super::walk::{DriftWalk, WalkPath};
use std::time::Duration;

/// Mixed into a stream's seed so these draws do not reuse the jitter generator's stream.
const SALT: u64 = 0x9e37_79b9_7f4a_7c15;

/// One request's draws.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Variation {
    /// Multiplies the base TTFT (1 without `ttft_sigma`).
    pub ttft_factor: f64,
    /// Tokens to generate before max_tokens applies.
    pub output_tokens: u32,
}

/// Draws one request's variation from its stream seed; `max_tokens` is the model's
/// `output_tokens` (after overrides).
pub fn draw(p: &SimParams, max_tokens: u32, seed: u64) -> Variation {
    let mut rng = SmallRng::seed_from_u64(seed ^ SALT);
    let z = std_normal(&mut rng);
    let ttft_factor = if p.ttft_sigma > 0.0 {
        (p.ttft_sigma * z).exp()
    } else {
        1.0
    };
    let output_tokens = match p.output_tokens_min {
        Some(min) if min < max_tokens => rng.gen_range(min..=max_tokens),
        _ => max_tokens,
    };
    Variation {
        ttft_factor,
        output_tokens,
    }
}

/// The run-level drift factor e^(drift·Z), Z drawn once from the server's seed (1 without drift).
fn drift_factor(p: &SimParams) -> f64 {
    if p.drift <= 0.0 {
        return 1.0;
    }
    let mut rng = SmallRng::seed_from_u64(p.seed ^ SALT.rotate_left(17));
    (p.drift * std_normal(&mut rng)).exp()
}

/// How far ahead a server's drift walk is drawn; past it the walk is read backwards (a
/// simulator up longer than this sees the day's drift again in reverse).
const WALK_HORIZON: Duration = Duration::from_secs(24 * 3600);

/// What scales every TTFT and TPOT of a server at a moment of its life: the run-level factor
/// (`drift`) times the walk's (`drift_walk`), both from the server's seed.
#[derive(Debug, Clone, PartialEq)]
pub struct Drift {
    run: f64,
    walk: Option<WalkPath>,
}

impl Drift {
    pub fn of(p: &SimParams) -> Drift {
        let walk = (p.drift_walk > 0.0).then(|| {
            DriftWalk::reaching(p.drift_walk, p.drift_walk_period, p.seed).path(WALK_HORIZON)
        });
        Drift {
            run: drift_factor(p),
            walk,
        }
    }

    /// The factor for a request arriving `since_start` after the server started.
    pub fn at(&self, since_start: Duration) -> f64 {
        self.run * self.walk.as_ref().map_or(1.0, |w| w.factor(since_start))
    }
}

/// One standard normal draw (`rand_distr`).
fn std_normal(rng: &mut SmallRng) -> f64 {
    rand_distr::Distribution::sample(&rand_distr::StandardNormal, rng)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_change_nothing() {
        let p = SimParams::default();
        assert_eq!(
            draw(&p, 64, 7),
            Variation {
                ttft_factor: 1.0,
                output_tokens: 64
            }
        );
        assert_eq!(drift_factor(&p), 1.0);
        assert_eq!(Drift::of(&p).at(Duration::from_secs(90)), 1.0);
    }

    #[test]
    fn the_walk_moves_every_request_of_a_moment_alike_within_its_bound() {
        let p = SimParams {
            drift_walk: 0.3,
            drift: 0.04,
            ..SimParams::default()
        };
        let d = Drift::of(&p);
        let run = drift_factor(&p);
        let at = |s: u64| d.at(Duration::from_secs(s)) / run;
        let factors: Vec<f64> = (0..1800).map(|s| at(s * 2)).collect();
        assert!(factors.iter().all(|f| (1.0 / 1.3..=1.3).contains(f)));
        // It wanders over the hour (±30% over minutes), not from one request to the next.
        let (lo, hi) = factors
            .iter()
            .fold((f64::MAX, 0.0f64), |(l, h), f| (l.min(*f), h.max(*f)));
        assert!(hi / lo > 1.2, "{lo} {hi}");
        assert!((at(600) / at(601) - 1.0).abs() < 0.05);
        // Same seed, same walk; another seed, another walk; a shorter period, a faster one.
        assert_eq!(Drift::of(&p), d);
        assert_ne!(
            Drift::of(&SimParams {
                seed: 43,
                ..p.clone()
            }),
            d
        );
        let fast = Drift::of(&SimParams {
            drift_walk_period: Duration::from_secs(30),
            ..p.clone()
        });
        let step = |d: &Drift, s: u64| {
            (d.at(Duration::from_secs(s + 10)) / d.at(Duration::from_secs(s)))
                .ln()
                .abs()
        };
        let mean = |d: &Drift| (0..300).map(|s| step(d, s * 10)).sum::<f64>() / 300.0;
        assert!(mean(&fast) > 2.0 * mean(&d), "{} {}", mean(&fast), mean(&d));
    }

    #[test]
    fn spread_lengths_and_drift_follow_the_parameters() {
        let p = SimParams {
            ttft_sigma: 0.5,
            output_tokens_min: Some(10),
            drift: 0.04,
            ..SimParams::default()
        };
        let draws: Vec<Variation> = (0..4000).map(|s| draw(&p, 100, s)).collect();
        assert!(draws.iter().all(|d| (10..=100).contains(&d.output_tokens)));
        let mean_len = draws
            .iter()
            .map(|d| f64::from(d.output_tokens))
            .sum::<f64>()
            / 4000.0;
        assert!((mean_len - 55.0).abs() < 2.0, "{mean_len}");
        // log TTFT factor: mean 0, sd 0.5.
        let logs: Vec<f64> = draws.iter().map(|d| d.ttft_factor.ln()).collect();
        let mean = logs.iter().sum::<f64>() / 4000.0;
        let sd = (logs.iter().map(|l| (l - mean).powi(2)).sum::<f64>() / 3999.0).sqrt();
        assert!(mean.abs() < 0.03 && (sd - 0.5).abs() < 0.03, "{mean} {sd}");
        // Same seed, same draw; the drift is one factor per seed, a few percent.
        assert_eq!(draw(&p, 100, 3), draw(&p, 100, 3));
        let f = drift_factor(&p);
        assert!(f != 1.0 && (0.8..1.25).contains(&f), "{f}");
        let other = SimParams { seed: 43, ..p };
        assert_ne!(drift_factor(&other), f);
    }
}
