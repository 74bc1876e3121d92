//! Where TTFT starts rising: the one rule behind the knee (and so behind `refine`'s knee
//! interval and the knee a search run reports). A step rises above the best earlier step (its
//! lowest TTFT P90, the reference) by any of three signals, each judged with confidence:
//!
//! - **P90**: TTFT P90 ≥ max(1.5 × the reference's, + 100 ms), its 95% lower bound above that
//!   and above every earlier step's upper bound (the rule the knee always had);
//! - **tail**: the share of requests slower than that same threshold rose by at least 5 points
//!   above the lowest such share of the earlier steps (Fisher's exact test, one-sided
//!   p < 0.01). A cap just crossed makes a few requests wait a
//!   whole service time: P99 and goodput move while P90 grows less than 1.5×;
//! - **server queue**: the share of requests the server itself says waited in its queue (at
//!   least a quarter of the reference's TTFT P90, and 25 ms) rose by the same rule, or its
//!   `/metrics` show requests waiting (≥ 1 on average) where the reference had none.
//!
//! The first step from which on every step rises is the knee. On a flat ladder the tail and the
//! queue shares stay where they were, so the exact test keeps false knees rare (the unit tests
//! measure the rate on pretend ladders with a heavy-tailed TTFT).

use crate::stats::inference::fisher_p_rise;
use crate::stats::StepSummary;
use serde::{Deserialize, Serialize};

/// P90 threshold: ≥ max(1.5 × best, best + 100 ms).
pub(super) const KNEE_RATIO: f64 = 1.5;
pub(super) const KNEE_ABS_MS: f64 = 100.0;
/// The TTFT P90 a step (or a minute of a log) must reach to have risen past `best`, the best
/// P90 below the knee: max(1.5 × best, best + 100 ms).
pub fn knee_threshold_ms(best: f64) -> f64 {
    (KNEE_RATIO * best).max(best + KNEE_ABS_MS)
}

/// A share (slow requests, or requests that waited) must rise by this much...
const MIN_SHARE_RISE: f64 = 0.05;
/// ...with a one-sided exact test below this p-value.
const SHARE_ALPHA: f64 = 0.01;
/// A reported wait counts from this share of the reference's TTFT P90, and this many ms.
const WAIT_SHARE: f64 = 0.25;
const WAIT_MIN_MS: f64 = 25.0;
/// Requests waiting on average (`/metrics`) that make a queue.
const WAITING_MIN: f64 = 1.0;

/// One step's per-request values, sorted: successful requests' TTFT and the queue times the
/// server reported (empty without records, or when the server reports none).
#[derive(Debug, Clone, Default, PartialEq)]
pub(super) struct StepSamples {
    pub ttft: Vec<f64>,
    pub queue: Vec<f64>,
}

impl StepSamples {
    pub(super) fn new(mut ttft: Vec<f64>, mut queue: Vec<f64>) -> StepSamples {
        ttft.retain(|v| v.is_finite());
        queue.retain(|v| v.is_finite());
        ttft.sort_by(f64::total_cmp);
        queue.sort_by(f64::total_cmp);
        StepSamples { ttft, queue }
    }
}

/// Which signal made a step rise.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RiseSignal {
    P90,
    Tail,
    ServerQueue,
}

/// A share of requests beyond a bound, at the reference step and at the knee.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ShareShift {
    /// TTFT (tail) or reported queue time (server queue) beyond which a request counts.
    pub beyond_ms: f64,
    pub reference: f64,
    pub at_knee: f64,
}

/// The rise at the knee step: its signals and the shares that moved.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Rise {
    pub signals: Vec<RiseSignal>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slow: Option<ShareShift>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub waited: Option<ShareShift>,
}

/// The first step `k` from which on every step rises, with its reference (the best earlier
/// step) and the knee step's rise. `p90` aligned with `rows`; `bounds` each step's 95% bounds of
/// TTFT P90 when every step has them; `samples` aligned with `rows` (may be empty). `accept`
/// may veto a candidate (a prompt-size ladder's bend test).
pub(super) fn first_rise(
    rows: &[&StepSummary],
    p90: &[f64],
    bounds: Option<&[(f64, f64)]>,
    samples: &[StepSamples],
    accept: &dyn Fn(usize) -> bool,
) -> Option<(usize, usize, Rise)> {
    let with_tail = rows
        .first()
        .is_some_and(|s| s.ladder_unit != crate::model::LadderUnit::PromptTokens);
    for k in 1..p90.len() {
        let (r, best) =
            p90[..k]
                .iter()
                .copied()
                .enumerate()
                .fold(
                    (0, f64::INFINITY),
                    |acc, (i, v)| {
                        if v < acc.1 {
                            (i, v)
                        } else {
                            acc
                        }
                    },
                );
        let threshold = knee_threshold_ms(best);
        let ceiling = bounds.map(|b| b[..k].iter().map(|x| x.1).fold(f64::NEG_INFINITY, f64::max));
        let rise_at = |j: usize| {
            let mut rise = Rise::default();
            let p90_rises = match (bounds, ceiling) {
                (Some(b), Some(c)) => b[j].0 >= threshold && b[j].0 > c,
                _ => p90[j] >= threshold,
            };
            if p90_rises {
                rise.signals.push(RiseSignal::P90);
            }
            if with_tail {
                let at = |i: usize| samples.get(i).map(|s| s.ttft.as_slice()).unwrap_or(&[]);
                rise.slow = share_shift(&(0..k).map(at).collect::<Vec<_>>(), at(j), threshold);
                if rise.slow.is_some() {
                    rise.signals.push(RiseSignal::Tail);
                }
                let wait = (WAIT_SHARE * best).max(WAIT_MIN_MS);
                let q = |i: usize| samples.get(i).map(|s| s.queue.as_slice()).unwrap_or(&[]);
                rise.waited = share_shift(&(0..k).map(q).collect::<Vec<_>>(), q(j), wait);
                let waiting = |s: &StepSummary| s.server_waiting_mean.unwrap_or(0.0);
                if rise.waited.is_some()
                    || (waiting(rows[j]) >= WAITING_MIN && waiting(rows[r]) < WAITING_MIN)
                {
                    rise.signals.push(RiseSignal::ServerQueue);
                }
            }
            rise
        };
        let rises: Vec<Rise> = (k..p90.len()).map(rise_at).collect();
        if rises.iter().all(|x| !x.signals.is_empty()) && accept(k) {
            return Some((k, r, rises.into_iter().next().unwrap_or_default()));
        }
    }
    None
}

/// The share of `step` (sorted) beyond `beyond` against the lowest such share among the
/// `earlier` steps that have values (a step whose P90 was lowest may already have had its tail
/// move: the cap crossed by one stream), when it rose by [`MIN_SHARE_RISE`] with confidence;
/// `None` otherwise or without values.
fn share_shift(earlier: &[&[f64]], step: &[f64], beyond: f64) -> Option<ShareShift> {
    let count = |v: &[f64]| (v.len() - v.partition_point(|x| *x <= beyond)) as u64;
    let (xk, nk) = (count(step), step.len() as u64);
    let (xr, nr) = earlier
        .iter()
        .filter(|v| !v.is_empty())
        .map(|v| (count(v), v.len() as u64))
        .min_by(|a, b| (a.0 as f64 / a.1 as f64).total_cmp(&(b.0 as f64 / b.1 as f64)))?;
    if nk == 0 {
        return None;
    }
    let shift = ShareShift {
        beyond_ms: beyond,
        reference: xr as f64 / nr as f64,
        at_knee: xk as f64 / nk as f64,
    };
    (shift.at_knee - shift.reference >= MIN_SHARE_RISE
        && fisher_p_rise(xr, nr, xk, nk) < SHARE_ALPHA)
        .then_some(shift)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::p90_bounds;
    use rand::rngs::SmallRng;
    use rand::{Rng, SeedableRng};
    use rand_distr::{Distribution, LogNormal};

    /// A step's rows, P90s, bounds and samples from per-request TTFTs and reported queues.
    fn ladder(steps: &[(u32, Vec<f64>, Vec<f64>)]) -> (Vec<StepSummary>, Vec<StepSamples>) {
        let samples: Vec<StepSamples> = steps
            .iter()
            .map(|(_, t, q)| StepSamples::new(t.clone(), q.clone()))
            .collect();
        let rows = steps
            .iter()
            .zip(&samples)
            .map(|((c, _, _), s)| StepSummary {
                concurrency: *c,
                ttft_p90_ms: crate::stats::quantile_sorted(&s.ttft, 0.9),
                ..StepSummary::default()
            })
            .collect();
        (rows, samples)
    }

    fn rise(rows: &[StepSummary], samples: &[StepSamples]) -> Option<(usize, usize, Rise)> {
        let refs: Vec<&StepSummary> = rows.iter().collect();
        let p90: Vec<f64> = rows.iter().map(|r| r.ttft_p90_ms.unwrap()).collect();
        let bounds: Vec<(f64, f64)> = samples
            .iter()
            .map(|s| p90_bounds(&s.ttft).unwrap())
            .collect();
        first_rise(&refs, &p90, Some(&bounds), samples, &|_| true)
    }

    /// `n` TTFTs of a server with a heavy tail: lognormal around `median` ms (σ 0.25), and one
    /// request in 50 three times slower (a GC pause, a retry inside the provider).
    fn noisy(rng: &mut SmallRng, n: usize, median: f64) -> Vec<f64> {
        let d = LogNormal::new(median.ln(), 0.25).unwrap();
        (0..n)
            .map(|_| {
                let t = d.sample(rng);
                if rng.gen_bool(0.02) {
                    3.0 * t
                } else {
                    t
                }
            })
            .collect()
    }

    #[test]
    fn a_cap_just_crossed_is_a_knee_though_p90_barely_moves() {
        // Cap 12, ladder 4/8/13: one stream in 13 waits a whole service time (200 ms).
        let mut rng = SmallRng::seed_from_u64(3);
        let flat = |rng: &mut SmallRng| noisy(rng, 130, 100.0);
        let mut crossed = flat(&mut rng);
        let mut queue = vec![0.0; 130];
        for i in (0..130).step_by(13) {
            crossed[i] += 200.0;
            queue[i] = 200.0;
        }
        let (rows, samples) = ladder(&[
            (4, flat(&mut rng), vec![0.0; 130]),
            (8, flat(&mut rng), vec![0.0; 130]),
            (13, crossed, queue),
        ]);
        let p90: Vec<f64> = rows.iter().map(|r| r.ttft_p90_ms.unwrap()).collect();
        assert!(p90[2] < KNEE_RATIO * p90[..2].iter().copied().fold(f64::INFINITY, f64::min));
        let (k, _, r) = rise(&rows, &samples).expect("a knee at 13");
        assert_eq!(k, 2);
        assert!(!r.signals.contains(&RiseSignal::P90), "{r:?}");
        assert!(r.signals.contains(&RiseSignal::Tail), "{r:?}");
        assert!(r.signals.contains(&RiseSignal::ServerQueue), "{r:?}");
        let w = r.waited.unwrap();
        assert!(
            w.reference == 0.0 && (w.at_knee - 10.0 / 130.0).abs() < 1e-9,
            "{w:?}"
        );
        // Without the server's queue the tail alone still sees it.
        let bare: Vec<StepSamples> = samples
            .iter()
            .map(|s| StepSamples::new(s.ttft.clone(), vec![]))
            .collect();
        let (k, _, r) = rise(&rows, &bare).unwrap();
        assert_eq!((k, r.signals.as_slice()), (2, &[RiseSignal::Tail][..]));
    }

    #[test]
    fn a_server_queue_alone_is_a_knee_and_it_must_persist() {
        let mut rng = SmallRng::seed_from_u64(5);
        let t = |rng: &mut SmallRng| noisy(rng, 100, 100.0);
        // A fifth of the requests waited 50 ms (≥ a quarter of the reference's P90, ~140 ms):
        // TTFT's tail does not clear +100 ms.
        let waited: Vec<f64> = (0..100)
            .map(|i| if i % 5 == 0 { 50.0 } else { 0.0 })
            .collect();
        let (rows, samples) = ladder(&[
            (1, t(&mut rng), vec![0.0; 100]),
            (2, t(&mut rng), waited.clone()),
            (4, t(&mut rng), waited.clone()),
        ]);
        let (k, _, r) = rise(&rows, &samples).unwrap();
        assert_eq!(
            (k, r.signals.as_slice()),
            (1, &[RiseSignal::ServerQueue][..])
        );
        // A queue at one step only is no knee.
        let (rows, samples) = ladder(&[
            (1, t(&mut rng), vec![0.0; 100]),
            (2, t(&mut rng), waited),
            (4, t(&mut rng), vec![0.0; 100]),
        ]);
        assert_eq!(rise(&rows, &samples), None);
    }

    /// The false-knee rate on pretend A/A ladders: five steps drawn from one heavy-tailed
    /// server, 64 or 200 requests each, no queue. Measured: 6 knees in 4,000 ladders, 0.15% (the
    /// figure docs/metrics.md quotes); the bound (1%) leaves room for another seed.
    #[test]
    fn flat_heavy_tailed_ladders_rarely_have_a_knee() {
        let mut rng = SmallRng::seed_from_u64(11);
        let (trials, mut knees, mut by_p90) = (2_000, 0, 0);
        for n in [64, 200] {
            for _ in 0..trials {
                let steps: Vec<(u32, Vec<f64>, Vec<f64>)> = [1, 2, 4, 8, 16]
                    .iter()
                    .map(|&c| (c, noisy(&mut rng, n, 300.0), vec![0.0; n]))
                    .collect();
                let (rows, samples) = ladder(&steps);
                if let Some((_, _, r)) = rise(&rows, &samples) {
                    knees += 1;
                    by_p90 += usize::from(r.signals.contains(&RiseSignal::P90));
                }
            }
        }
        eprintln!(
            "false knees: {knees} of {} flat ladders ({by_p90} with P90 among the signals)",
            2 * trials
        );
        assert!(knees * 100 <= 2 * trials, "{knees} false knees");
    }
}
