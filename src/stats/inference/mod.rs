//! Statistical inference behind ladder's verdicts (docs/gate.md). This is the one implementation:
//! the bootstrap CI of a quantile ratio, the effective sample size of a series whose
//! consecutive requests are correlated, distribution-free bounds of a quantile, and Fisher's
//! exact test for error rates. Everything is pure and seeded (no clock, no global RNG). This
//! file holds the bootstraps; `effective` the effective sample size, `bounds` what needs no
//! resampling (order-statistic bounds, the t interval of a rate, Fisher's test).
//!
//! **Generator.** ChaCha8 (`rand_chacha`), and uniforms are built from its raw `u64` stream here
//! rather than by `rand`'s distributions, so a seed gives the same CI across library versions.
//!
//! **Order statistics instead of materialised resamples.** The type-7 quantile of a resample of
//! size m drawn from sorted data x(1..n) depends on two order statistics of the resampled
//! indices; the j-th order statistic of m uniform indices is `ceil(n · U(j))` with
//! `U(j) ~ Beta(j, m − j + 1)`, and the next one is `U(j) + (1 − U(j)) · Beta(1, m − j)`.
//! Drawing those two numbers gives exactly the distribution of resampling and sorting, in O(1)
//! per resample, so 10,000 resamples cost milliseconds (tests check it against naive
//! resampling).
//!
//! **Correlated requests.** Behind a concurrency cap, consecutive requests wait behind the same
//! long answers, so their latencies are correlated and n requests carry less information than n
//! independent draws. [`effective_size`] measures that: it estimates the long-run variance of a
//! series in start order with a flat-top lag window whose bandwidth is chosen from the data
//! (Politis & White 2004, the rule behind automatic block lengths), and returns
//! n_eff = n / (1 + 2 Σ λ(k/M) ρ(k)). For a quantile the series is the indicator 1{x > Q_q}
//! (what drives a sample quantile's variance), for a mean the values. The bootstrap then
//! resamples n_eff requests per side (an m-out-of-n bootstrap), which reproduces the wider spread
//! a block bootstrap over consecutive requests gives, at the O(1) cost above; a test compares the
//! two on a correlated series. The CI covers sampling within one run, not drift between runs
//! (a pooled baseline widens it for that: `drift`).

use rand::RngCore;
use rand_chacha::ChaCha8Rng;

#[cfg(test)]
use super::itl::PooledGaps;
use super::quantile_sorted;
use crate::model::itl::{bin_value_ms, ItlHistogram};
use rand_distr::Distribution;

mod bounds;
mod effective;
#[cfg(test)]
mod tests;

#[cfg(test)]
use bounds::t_two_sided;
pub(crate) use bounds::{
    fisher_p_rise, lower_bound_order_stat, rate_factor_ci, rate_spread, summed_spread,
    upper_bound_order_stat, RateSpread,
};
pub(crate) use effective::{
    effective_size, effective_size_at, effective_size_of_gaps, effective_size_of_values,
    effective_size_past_start,
};

/// The bootstrap's generator: seeded, stream stable across `rand` versions.
pub(crate) type Generator = ChaCha8Rng;

pub(crate) fn generator(seed: u64) -> Generator {
    <ChaCha8Rng as rand::SeedableRng>::seed_from_u64(seed)
}

/// Uniform in (0, 1] from the top 53 bits of the raw stream.
pub(crate) fn unit<R: RngCore>(rng: &mut R) -> f64 {
    ((rng.next_u64() >> 11) + 1) as f64 * (1.0 / (1u64 << 53) as f64)
}

/// One side of a bootstrap: its values sorted ascending (finite), and how many requests a
/// resample draws (`m`, ≤ n; n for independent requests, n_eff for correlated ones).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Resampled<'a> {
    pub sorted: &'a [f64],
    pub m: usize,
}

/// Percentile-bootstrap CI at `confidence` of r = Q_new(q) / Q_base(q) − 1 from `resamples`
/// resamples of each side. `None` when a side is empty, `resamples` is 0, or every resampled
/// ratio was undefined (0 / 0). A resampled base quantile of 0 under a positive new one counts
/// as +∞ (the bound is then +∞, never NaN).
pub(crate) fn bootstrap_ratio_ci<R: RngCore>(
    base: Resampled<'_>,
    new: Resampled<'_>,
    q: f64,
    resamples: usize,
    confidence: f64,
    rng: &mut R,
) -> Option<(f64, f64)> {
    if base.sorted.is_empty() || new.sorted.is_empty() {
        return None;
    }
    ratio_ci(resamples, confidence, rng, |rng| {
        let b = resampled_quantile(base.sorted, q, base.m, rng);
        let n = resampled_quantile(new.sorted, q, new.m, rng);
        (b, n)
    })
}

/// The percentile CI at `confidence` of r = new / base − 1 over `resamples` draws of
/// (base, new) resampled statistics: the one place that turns resampled pairs into a ratio CI
/// (a base of 0 under a positive new value counts as +∞; 0 / 0 is left out).
pub(crate) fn ratio_ci<R: RngCore>(
    resamples: usize,
    confidence: f64,
    rng: &mut R,
    mut draw: impl FnMut(&mut R) -> (f64, f64),
) -> Option<(f64, f64)> {
    if resamples == 0 {
        return None;
    }
    let mut ratios = Vec::with_capacity(resamples);
    for _ in 0..resamples {
        let (b, n) = draw(rng);
        let r = if b == 0.0 {
            match n.partial_cmp(&0.0) {
                Some(std::cmp::Ordering::Greater) => f64::INFINITY,
                Some(std::cmp::Ordering::Less) => f64::NEG_INFINITY,
                _ => continue,
            }
        } else {
            n / b - 1.0
        };
        if !r.is_nan() {
            ratios.push(r);
        }
    }
    ratios.sort_by(f64::total_cmp);
    let alpha = (1.0 - confidence) / 2.0;
    Some((
        quantile_with_infinities(&ratios, alpha)?,
        quantile_with_infinities(&ratios, 1.0 - alpha)?,
    ))
}

/// Percentile-bootstrap CI at `confidence` of r = mean_new / mean_base − 1 (a cost per
/// request): each resample draws `m` values with replacement per side (the effective number of
/// independent requests, as for a quantile). Above [`EXACT_MEAN_DRAWS`] draws the resampled
/// mean is drawn from its normal limit (same mean, variance s² / m), so a step of 100,000
/// requests costs what one of 1,000 does. `None` when a side is empty or `resamples` is 0.
pub(crate) fn bootstrap_mean_ratio_ci<R: RngCore>(
    base: Resampled<'_>,
    new: Resampled<'_>,
    resamples: usize,
    confidence: f64,
    rng: &mut R,
) -> Option<(f64, f64)> {
    if base.sorted.is_empty() || new.sorted.is_empty() {
        return None;
    }
    let (b, n) = (MeanDraw::of(base), MeanDraw::of(new));
    ratio_ci(resamples, confidence, rng, |rng| (b.draw(rng), n.draw(rng)))
}

/// Above this many draws per resample, a resampled mean is drawn from its normal limit.
const EXACT_MEAN_DRAWS: usize = 2_000;

/// One side of a mean's bootstrap: its values, the draws per resample, their mean and SD.
struct MeanDraw<'a> {
    values: &'a [f64],
    m: usize,
    mean: f64,
    sd: f64,
}

impl<'a> MeanDraw<'a> {
    fn of(r: Resampled<'a>) -> Self {
        let n = r.sorted.len() as f64;
        let mean = r.sorted.iter().sum::<f64>() / n;
        let var = r.sorted.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / n;
        MeanDraw {
            values: r.sorted,
            m: r.m.clamp(1, r.sorted.len()),
            mean,
            sd: var.sqrt(),
        }
    }

    fn draw<R: RngCore>(&self, rng: &mut R) -> f64 {
        if self.m > EXACT_MEAN_DRAWS {
            return self.mean + self.sd / (self.m as f64).sqrt() * std_normal(rng);
        }
        let sum: f64 = (0..self.m)
            .map(|_| at_uniform(self.values, unit(rng)))
            .sum();
        sum / self.m as f64
    }
}

/// One side of a whole-request bootstrap of pooled inter-token gaps (docs/gate.md: each request's
/// gaps travel together): the histograms of the requests that have gaps, and how many requests
/// a resample draws (`m`, ≤ n; the effective number of independent requests).
#[derive(Debug, Clone, Copy)]
pub(crate) struct GapRequests<'a> {
    pub requests: &'a [ItlHistogram],
    pub m: usize,
}

/// Percentile-bootstrap CI at `confidence` of r = Q_new(q) / Q_base(q) − 1 where Q is the
/// type-7 quantile of the pooled gaps (`stats::itl`): each resample draws `m` whole requests
/// with replacement per side and pools their gaps. `None` when a side has no request with gaps.
pub(crate) fn bootstrap_gaps_ratio_ci<R: RngCore>(
    base: GapRequests<'_>,
    new: GapRequests<'_>,
    q: f64,
    resamples: usize,
    confidence: f64,
    rng: &mut R,
) -> Option<(f64, f64)> {
    let mut b = GapResampler::new(base)?;
    let mut n = GapResampler::new(new)?;
    ratio_ci(resamples, confidence, rng, |rng| {
        (b.draw(q, rng), n.draw(q, rng))
    })
}

/// Draws whole-request resamples of one side and finds their pooled quantile without pooling:
/// each request's gaps are kept as cumulative counts over the side's bin range (`cum[i][j]` =
/// gaps of request i in the first j + 1 bins), so the count of a resample's gaps up to a bin is
/// a sum over the drawn requests, and the bins of the two ranks the type-7 quantile needs are
/// searched from the whole side's quantile bin (`hint`), near which a resample's falls: a few
/// passes over the m drawn requests per resample instead of adding every drawn request's bins
/// into a dense array and scanning it (O(m × bins per request)). Same draws, same result as
/// `stats::itl::quantile_of_counts` on the pooled counts.
struct GapResampler<'a> {
    side: GapRequests<'a>,
    first: u16,
    width: usize,
    /// Row-major, `width` entries per request.
    cum: Vec<u32>,
    /// The requests of the current resample (with repeats).
    picks: Vec<usize>,
    /// Gaps of the whole side in the first `j + 1` bins: where the searches of a quantile start
    /// (`hint`).
    all: Vec<u64>,
    /// The last quantile asked for and the bin of the whole side's gap at its rank.
    hint: Option<(f64, usize)>,
}

impl<'a> GapResampler<'a> {
    fn new(side: GapRequests<'a>) -> Option<Self> {
        let bins = || {
            side.requests
                .iter()
                .flat_map(|h| h.bins().iter().map(|&(b, _)| b))
        };
        let (first, last) = (bins().min()?, bins().max()?);
        let width = usize::from(last - first) + 1;
        let mut cum = vec![0u32; width * side.requests.len()];
        for (row, h) in cum.chunks_exact_mut(width).zip(side.requests) {
            for &(b, c) in h.bins() {
                row[usize::from(b - first)] += c;
            }
            let mut run = 0u32;
            for x in row.iter_mut() {
                run += *x;
                *x = run;
            }
        }
        let mut all = vec![0u64; width];
        for row in cum.chunks_exact(width) {
            for (a, &c) in all.iter_mut().zip(row) {
                *a += u64::from(c);
            }
        }
        Some(GapResampler {
            side,
            first,
            width,
            cum,
            picks: Vec::with_capacity(side.m.clamp(1, side.requests.len())),
            all,
            hint: None,
        })
    }

    /// The bin of the whole side's gap at the `q` quantile's lower rank: a resample's quantile
    /// is almost always in it or next to it.
    fn hint(&mut self, q: f64) -> usize {
        match self.hint {
            Some((at, bin)) if at == q => bin,
            _ => {
                let total = self.all[self.width - 1];
                let rank = (total.saturating_sub(1) as f64 * q.clamp(0.0, 1.0)).floor() as u64;
                let bin = self.all.partition_point(|&n| n <= rank).min(self.width - 1);
                self.hint = Some((q, bin));
                bin
            }
        }
    }

    /// Gaps of the current resample in the first `j + 1` bins.
    fn up_to(&self, j: usize) -> u64 {
        self.picks
            .iter()
            .map(|&i| u64::from(self.cum[i * self.width + j]))
            .sum()
    }

    /// The bin (index into the range) holding the gap at 0-based `rank` of the resample: the
    /// first bin whose count up to it exceeds `rank`. Each count is a pass over the drawn
    /// requests, so the search starts at `from` (a bin near the answer), steps to a neighbour or
    /// two, and only then bisects what is left: about two passes per search instead of the
    /// seven of a bisection over a hundred bins.
    fn bin_of_rank(&self, rank: u64, from: usize) -> usize {
        const STEPS: usize = 2;
        let last = self.width - 1;
        let mut j = from.min(last);
        let (mut lo, mut hi);
        if self.up_to(j) > rank {
            // The answer is j or below.
            let mut steps = 0;
            while j > 0 && steps < STEPS {
                if self.up_to(j - 1) <= rank {
                    return j;
                }
                j -= 1;
                steps += 1;
            }
            if j == 0 {
                return 0;
            }
            (lo, hi) = (0, j);
        } else {
            // The answer is above j.
            let mut steps = 0;
            while j < last && steps < STEPS {
                j += 1;
                if self.up_to(j) > rank {
                    return j;
                }
                steps += 1;
            }
            if j == last {
                return last;
            }
            (lo, hi) = (j + 1, last);
        }
        while lo < hi {
            let mid = (lo + hi) / 2;
            if self.up_to(mid) > rank {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        lo
    }

    fn draw<R: RngCore>(&mut self, q: f64, rng: &mut R) -> f64 {
        let reqs = self.side.requests;
        self.picks.clear();
        for _ in 0..self.side.m.clamp(1, reqs.len()) {
            let i = ((unit(rng) * reqs.len() as f64).ceil() as usize).clamp(1, reqs.len()) - 1;
            self.picks.push(i);
        }
        let total = self.up_to(self.width - 1);
        if total == 0 {
            return f64::NAN;
        }
        let h = (total - 1) as f64 * q.clamp(0.0, 1.0);
        let lo = h.floor() as u64;
        let frac = h - lo as f64;
        let from = self.hint(q);
        let value = |j: usize| bin_value_ms(self.first + j as u16);
        let bin_lo = self.bin_of_rank(lo, from);
        let x_lo = value(bin_lo);
        let x_hi = value(self.bin_of_rank((lo + 1).min(total - 1), bin_lo));
        x_lo + frac * (x_hi - x_lo)
    }
}

/// Type-7 quantile that returns an infinite endpoint instead of interpolating into NaN.
fn quantile_with_infinities(sorted: &[f64], q: f64) -> Option<f64> {
    let v = quantile_sorted(sorted, q)?;
    if !v.is_nan() {
        return Some(v);
    }
    let h = (sorted.len() - 1) as f64 * q;
    Some(sorted[h.ceil() as usize])
}

/// The type-7 `q`-quantile of one bootstrap resample of size `m` (clamped to 1..=n) of `sorted`,
/// drawn via the order-statistic identity described in the module docs.
pub(crate) fn resampled_quantile<R: RngCore>(sorted: &[f64], q: f64, m: usize, rng: &mut R) -> f64 {
    let n = sorted.len();
    let m = m.clamp(1, n);
    let h = (m - 1) as f64 * q.clamp(0.0, 1.0);
    let lo = h.floor() as usize; // 0-based, so the order statistic is j = lo + 1
    let frac = h - lo as f64;
    let j = lo + 1;
    let u_lo = beta(j as f64, (m - j + 1) as f64, rng);
    let x_lo = at_uniform(sorted, u_lo);
    if frac == 0.0 || j >= m {
        return x_lo;
    }
    // The smallest of the m − j uniforms above u_lo.
    let v = unit(rng);
    let u_hi = u_lo + (1.0 - u_lo) * (1.0 - v.powf(1.0 / (m - j) as f64));
    let x_hi = at_uniform(sorted, u_hi);
    x_lo + frac * (x_hi - x_lo)
}

/// The data point picked by a uniform index draw `u` in (0, 1): index ceil(n·u), 1-based.
fn at_uniform(sorted: &[f64], u: f64) -> f64 {
    let n = sorted.len();
    let idx = ((n as f64 * u).ceil() as usize).clamp(1, n);
    sorted[idx - 1]
}

/// Beta(a, b) for a, b ≥ 1 (`rand_distr`; no bootstrap stream has to stay bit-stable across
/// versions, only within one build: the seed fixes it).
fn beta<R: RngCore>(a: f64, b: f64, rng: &mut R) -> f64 {
    rand_distr::Beta::new(a, b).map_or(0.5, |d| d.sample(rng))
}

/// One standard normal draw (`rand_distr`): a resampled mean's normal limit, and the tests' and
/// calibration's synthetic data.
pub(crate) fn std_normal<R: RngCore>(rng: &mut R) -> f64 {
    rand_distr::StandardNormal.sample(rng)
}
