//! Open-loop arrival schedules (rate mode): when each request of a step is *meant* to be sent,
//! whether or not the server keeps up. Pure and seeded, so a rerun sends the same schedule and
//! the tests check the process itself (mean and coefficient of variation of the gaps).
//!
//! Poisson arrivals have exponential gaps (CV 1). Gamma arrivals with `burstiness` b have gamma
//! gaps of shape b and scale 1 / (rate × b): the same mean gap 1 / rate, CV 1 / √b, so b < 1 is
//! burstier than Poisson, b > 1 more regular, and b = 1 is Poisson (vLLM's `--burstiness`).

use rand::rngs::StdRng;
use rand::SeedableRng;
use rand_distr::{Distribution, Exp, Gamma};

/// The inter-arrival process of a rate-mode step.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ArrivalProcess {
    Poisson,
    /// Gamma gaps with shape `burstiness` (> 0).
    Gamma {
        burstiness: f64,
    },
}

impl ArrivalProcess {
    /// The coefficient of variation (std / mean) of the gaps this process draws.
    pub fn cv(self) -> f64 {
        match self {
            ArrivalProcess::Poisson => 1.0,
            ArrivalProcess::Gamma { burstiness } => 1.0 / burstiness.sqrt(),
        }
    }
}

enum Gap {
    Exp(Exp<f64>),
    Gamma(Gamma<f64>),
}

/// An endless, seeded sequence of intended send times (seconds after the step's start).
pub struct Schedule {
    rng: StdRng,
    gap: Gap,
    at_s: f64,
}

impl Schedule {
    /// `rate` in requests per second (> 0, finite); `seed` fixes the whole sequence.
    /// Returns `None` for a rate or burstiness that cannot draw gaps.
    pub fn new(rate: f64, process: ArrivalProcess, seed: u64) -> Option<Schedule> {
        if !(rate.is_finite() && rate > 0.0) {
            return None;
        }
        let gap = match process {
            ArrivalProcess::Poisson => Gap::Exp(Exp::new(rate).ok()?),
            ArrivalProcess::Gamma { burstiness: b } if b.is_finite() && b > 0.0 => {
                Gap::Gamma(Gamma::new(b, 1.0 / (rate * b)).ok()?)
            }
            ArrivalProcess::Gamma { .. } => return None,
        };
        Some(Schedule {
            rng: StdRng::seed_from_u64(seed),
            gap,
            at_s: 0.0,
        })
    }
}

impl Iterator for Schedule {
    type Item = f64;
    /// The next intended send time. The first request goes out after one gap, not at 0, so the
    /// first gap is drawn from the process like every other.
    fn next(&mut self) -> Option<f64> {
        let gap = match &self.gap {
            Gap::Exp(d) => d.sample(&mut self.rng),
            Gap::Gamma(d) => d.sample(&mut self.rng),
        };
        self.at_s += gap;
        Some(self.at_s)
    }
}

/// A rate in requests/s as a person writes it: `5`, `2.5`, `0.333` (a shard's share of a rate
/// step need not be whole).
pub fn rate_text(rps: f64) -> String {
    let r = format!("{rps:.3}");
    r.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// The seed of one step's schedule: the scenario's seed mixed with the step index (SplitMix64),
/// so steps differ from each other but every run of the scenario sends the same times.
pub fn step_seed(seed: u64, step: u32) -> u64 {
    let mut z = seed ^ u64::from(step).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Mean and coefficient of variation of the gaps between consecutive times (seconds, sorted or
/// not). `None` with fewer than 3 times or a zero mean.
pub fn gap_stats(times: &[f64]) -> Option<(f64, f64)> {
    let mut t: Vec<f64> = times.iter().copied().filter(|v| v.is_finite()).collect();
    t.sort_by(f64::total_cmp);
    if t.len() < 3 {
        return None;
    }
    let gaps: Vec<f64> = t.windows(2).map(|w| w[1] - w[0]).collect();
    let n = gaps.len() as f64;
    let mean = gaps.iter().sum::<f64>() / n;
    if mean <= 0.0 {
        return None;
    }
    let var = gaps.iter().map(|g| (g - mean).powi(2)).sum::<f64>() / (n - 1.0);
    Some((mean, var.sqrt() / mean))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn draw(rate: f64, p: ArrivalProcess, seed: u64, n: usize) -> Vec<f64> {
        let mut times = vec![0.0];
        times.extend(Schedule::new(rate, p, seed).expect("valid").take(n));
        times
    }

    #[test]
    fn poisson_gaps_have_the_rate_and_cv_one() {
        let (mean, cv) = gap_stats(&draw(2000.0, ArrivalProcess::Poisson, 7, 200_000)).unwrap();
        assert!((mean * 2000.0 - 1.0).abs() < 0.01, "mean gap {mean}");
        assert!((cv - 1.0).abs() < 0.02, "cv {cv}");
    }

    #[test]
    fn gamma_gaps_keep_the_mean_and_have_cv_one_over_sqrt_b() {
        for b in [0.25, 0.5, 2.0, 4.0] {
            let p = ArrivalProcess::Gamma { burstiness: b };
            let (mean, cv) = gap_stats(&draw(10.0, p, 11, 200_000)).unwrap();
            assert!((mean * 10.0 - 1.0).abs() < 0.01, "b={b}: mean gap {mean}");
            assert!(
                (cv / p.cv() - 1.0).abs() < 0.03,
                "b={b}: cv {cv} vs {}",
                p.cv()
            );
        }
    }

    #[test]
    fn a_seed_fixes_the_schedule_and_steps_differ() {
        let p = ArrivalProcess::Poisson;
        assert_eq!(draw(5.0, p, 3, 50), draw(5.0, p, 3, 50));
        assert_ne!(draw(5.0, p, 3, 50), draw(5.0, p, 4, 50));
        assert_ne!(step_seed(1, 1), step_seed(1, 2));
        assert_eq!(step_seed(9, 3), step_seed(9, 3));
        let t = draw(5.0, p, 3, 50);
        assert!(t.windows(2).all(|w| w[1] >= w[0]), "times increase");
    }

    #[test]
    fn invalid_rates_and_burstiness_draw_nothing() {
        assert!(Schedule::new(0.0, ArrivalProcess::Poisson, 1).is_none());
        assert!(Schedule::new(f64::NAN, ArrivalProcess::Poisson, 1).is_none());
        let bad = ArrivalProcess::Gamma { burstiness: 0.0 };
        assert!(Schedule::new(1.0, bad, 1).is_none());
        assert_eq!(gap_stats(&[1.0, 2.0]), None);
    }

    #[test]
    fn rates_read_like_prose() {
        assert_eq!(rate_text(5.0), "5");
        assert_eq!(rate_text(2.5), "2.5");
        assert_eq!(rate_text(1.0 / 3.0), "0.333");
        assert_eq!(rate_text(2000.0), "2000");
    }

    #[test]
    fn gap_stats_of_a_regular_grid() {
        let t: Vec<f64> = (0..101).map(|i| f64::from(i) * 0.5).collect();
        let (mean, cv) = gap_stats(&t).unwrap();
        assert!((mean - 0.5).abs() < 1e-12 && cv.abs() < 1e-9);
    }
}
