//! Statistical inference behind ladder's verdicts (docs/gate.md). This is the one implementation:
//! the bootstrap CI of a quantile ratio, the effective sample size of a series whose
//! consecutive requests are correlated, distribution-free bounds of a quantile, and Fisher's
//! exact test for error rates. Everything is pure and seeded (no clock, no global RNG).
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

use super::itl::PooledGaps;
use super::quantile_sorted;
use crate::model::itl::{bin_value_ms, ItlHistogram};
use rand_distr::Distribution;

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

/// Effective number of independent requests behind the pooled `q`-quantile of the gaps of
/// `requests` (start order, each with gaps). A pooled quantile is driven by each request's
/// score: its gaps above the pooled quantile minus (1 − q) × its gaps (the per-request
/// estimating equation); this is [`effective_size_of_values`] of that series.
pub(crate) fn effective_size_of_gaps(requests: &[ItlHistogram], q: f64) -> f64 {
    let Some(cut) = PooledGaps::of(requests).quantile(q) else {
        return 0.0;
    };
    let scores: Vec<f64> = requests
        .iter()
        .map(|h| {
            let above: u64 = h
                .bins()
                .iter()
                .filter(|&&(b, _)| bin_value_ms(b) > cut)
                .map(|&(_, c)| u64::from(c))
                .sum();
            above as f64 - (1.0 - q) * h.count() as f64
        })
        .collect();
    effective_size_of_values(&scores)
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

/// Effective number of independent requests in `series` (values in start order): n divided by
/// the variance inflation 1 + 2 Σ λ(k/M) ρ(k) of its ranks, with the flat-top window λ and the
/// bandwidth M = 2·m̂ of Politis & White (m̂: the first lag after which K_n = max(5, √log10 n)
/// autocorrelations in a row stay below 2·√(log10 n / n)). Never more than n, never below n/10
/// (nor 2). Series shorter than 8 are taken as independent.
pub(crate) fn effective_size(series: &[f64]) -> f64 {
    effective_size_of(&centered_ranks(series))
}

/// [`effective_size`] of the values themselves rather than their ranks: the right one for a
/// mean (throughput), where the size of each value matters.
pub(crate) fn effective_size_of_values(series: &[f64]) -> f64 {
    let n = series.len();
    if n == 0 {
        return 0.0;
    }
    let mean = series.iter().sum::<f64>() / n as f64;
    effective_size_of(&series.iter().map(|v| v - mean).collect::<Vec<_>>())
}

/// The flat-top long-run variance rule on an already centred series.
fn effective_size_of(x: &[f64]) -> f64 {
    let n = x.len();
    if n < 8 {
        return n as f64;
    }
    let c0: f64 = x.iter().map(|v| v * v).sum::<f64>() / n as f64;
    if c0 <= 0.0 {
        return n as f64;
    }
    let rho = |k: usize| -> f64 {
        x.iter().zip(&x[k..]).map(|(a, b)| a * b).sum::<f64>() / n as f64 / c0
    };
    let nf = n as f64;
    let k_n = 5usize.max(nf.log10().sqrt().ceil() as usize);
    let threshold = 2.0 * (nf.log10() / nf).sqrt();
    let max_lag = (n / 2).saturating_sub(k_n).max(1);
    let rhos: Vec<f64> = (0..=max_lag + k_n)
        .map(|k| if k < n { rho(k) } else { 0.0 })
        .collect();
    let m_hat = (0..=max_lag)
        .find(|&m| (1..=k_n).all(|i| rhos[m + i].abs() < threshold))
        .unwrap_or(max_lag);
    let big_m = (2 * m_hat).min(n - 1);
    let mut inflation = 1.0;
    for (k, r) in rhos.iter().enumerate().take(big_m + 1).skip(1) {
        let t = k as f64 / big_m as f64;
        let weight = if t <= 0.5 { 1.0 } else { 2.0 * (1.0 - t) };
        inflation += 2.0 * weight * r;
    }
    // Floored at n/10: a larger inflation comes from a level shift inside the step (the first
    // requests run while the queue fills up), which both sides share, not from sampling.
    (nf / inflation.max(1.0)).clamp((nf / 10.0).max(2.0), nf)
}

/// The requests at the start of a closed-loop step that every run of it shares: at N streams
/// the first N start together before any queue has formed, so behind a cap their latencies
/// step up from the unqueued level to the queued one. That level shift is the step's design,
/// the same on both sides, not sampling noise; read as correlation it would shrink the
/// effective size of an unchanged queued step to its floor (and a bimodal P50 resampled from a
/// dozen requests swings by half). So `of` (one of the effective sizes above) is measured on
/// the requests past the first `start` (at most half the step); when they are nearly
/// independent there (at least [`INDEPENDENT_SHARE`] of their number), that ratio is applied to
/// the whole step, otherwise the whole step's estimate stands. `start` is 0 for open-loop steps, whose arrivals do not start
/// together.
pub(crate) fn effective_size_past_start(
    series: &[f64],
    start: usize,
    of: impl Fn(&[f64]) -> f64,
) -> f64 {
    let n = series.len();
    let tail = &series[start.min(n / 2)..];
    if tail.len() == n || tail.len() < 8 {
        return of(series);
    }
    // Only when the start explains the correlation: past it the requests are (nearly)
    // independent. A queue whose waits stay correlated past the start keeps the whole step's
    // cautious estimate (the calibration measured more false alarms otherwise).
    let past = of(tail);
    if past < INDEPENDENT_SHARE * tail.len() as f64 {
        return of(series);
    }
    (past * n as f64 / tail.len() as f64).min(n as f64)
}

/// The share of its requests a series' effective size must keep to count as independent.
const INDEPENDENT_SHARE: f64 = 0.8;

/// Effective number of independent requests for the `q`-quantile of `series` (start order):
/// the variance of a sample quantile is driven by the indicator 1{x > Q_q}, so this is
/// [`effective_size`] of that indicator series (n when no value lies above the quantile).
pub(crate) fn effective_size_at(series: &[f64], q: f64) -> f64 {
    let mut sorted = series.to_vec();
    sorted.sort_by(f64::total_cmp);
    let Some(cut) = quantile_sorted(&sorted, q) else {
        return 0.0;
    };
    let above: Vec<f64> = series
        .iter()
        .map(|&x| f64::from(u8::from(x > cut)))
        .collect();
    effective_size(&above)
}

/// Mid-ranks (ties share their average rank), centred on their mean.
fn centered_ranks(series: &[f64]) -> Vec<f64> {
    let n = series.len();
    let mut idx: Vec<usize> = (0..n).collect();
    idx.sort_by(|&a, &b| series[a].total_cmp(&series[b]));
    let mut ranks = vec![0.0; n];
    let mut i = 0;
    while i < n {
        let mut j = i;
        while j + 1 < n && series[idx[j + 1]] == series[idx[i]] {
            j += 1;
        }
        let mid = (i + j) as f64 / 2.0;
        for &k in &idx[i..=j] {
            ranks[k] = mid;
        }
        i = j + 1;
    }
    let mean = (n - 1) as f64 / 2.0;
    ranks.iter().map(|r| r - mean).collect()
}

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
    let z = super::drift::z_of(confidence);
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

#[cfg(test)]
#[path = "inference_tests.rs"]
mod tests;
