//! A step's pooled inter-token gaps: the per-request histograms (`model::ItlHistogram`) added
//! together, and the type-7 percentile of counts per bin that the step summary and the
//! bootstrap share.

use crate::model::itl::{bin_value_ms, ItlHistogram, MAX_BIN};

/// Gap counts of many requests added together, per bin: a step's pooled gaps.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PooledGaps {
    counts: Vec<u64>,
    total: u64,
}

impl Default for PooledGaps {
    fn default() -> Self {
        PooledGaps {
            counts: vec![0; usize::from(MAX_BIN) + 1],
            total: 0,
        }
    }
}

impl PooledGaps {
    pub fn of<'a>(requests: impl IntoIterator<Item = &'a ItlHistogram>) -> Self {
        let mut p = PooledGaps::default();
        for h in requests {
            p.add(h);
        }
        p
    }

    pub fn add(&mut self, h: &ItlHistogram) {
        for &(b, c) in h.bins() {
            self.counts[usize::from(b)] += u64::from(c);
            self.total += u64::from(c);
        }
    }

    pub fn total(&self) -> u64 {
        self.total
    }

    /// Type-7 `q`-quantile of the pooled gaps (each at its bin's midpoint); `None` without gaps.
    pub fn quantile(&self, q: f64) -> Option<f64> {
        quantile_of_counts(&self.counts, 0, self.total, q)
    }
}

/// Type-7 `q`-quantile of `total` values given as counts per bin, `counts[i]` being bin
/// `first + i`. Shared by the step summary and the bootstrap.
pub(crate) fn quantile_of_counts(counts: &[u64], first: u16, total: u64, q: f64) -> Option<f64> {
    if total == 0 {
        return None;
    }
    let h = (total - 1) as f64 * q.clamp(0.0, 1.0);
    let lo = h.floor() as u64;
    let frac = h - lo as f64;
    // The values at 0-based ranks lo and lo + 1.
    let (mut x_lo, mut x_hi) = (None, None);
    let mut seen = 0u64;
    for (i, &c) in counts.iter().enumerate() {
        if c == 0 {
            continue;
        }
        seen += c;
        let v = || bin_value_ms(first + i as u16);
        if x_lo.is_none() && seen > lo {
            x_lo = Some(v());
        }
        if seen > lo + 1 || seen == total {
            x_hi = Some(v());
            break;
        }
    }
    let (x_lo, x_hi) = (x_lo?, x_hi?);
    Some(x_lo + frac * (x_hi - x_lo))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::itl::bin_of;
    use crate::stats::quantile;

    #[test]
    fn pooled_percentiles_are_within_the_bin_resolution_of_the_exact_ones() {
        // Gaps of three requests, spread over two decades, some tied at 0.
        let requests: Vec<Vec<f64>> = vec![
            (0..200).map(|i| 8.0 + f64::from(i % 17) * 0.9).collect(),
            (0..50).map(|i| 30.0 + f64::from(i) * 3.7).collect(),
            vec![0.0, 0.0, 0.0, 400.0, 12.5],
        ];
        let all: Vec<f64> = requests.iter().flatten().copied().collect();
        let pooled = PooledGaps::of(
            &requests
                .iter()
                .map(|g| ItlHistogram::from_gaps(g))
                .collect::<Vec<_>>(),
        );
        assert_eq!(pooled.total(), all.len() as u64);
        let bound = (1.0f64 / 64.0).exp2();
        for q in [0.0, 0.01, 0.5, 0.9, 0.99, 1.0] {
            let exact = quantile(&all, q).unwrap();
            let approx = pooled.quantile(q).unwrap();
            if exact == 0.0 {
                assert_eq!(approx, 0.0);
            } else {
                assert!(
                    approx / exact <= bound && exact / approx <= bound,
                    "q {q}: exact {exact}, from bins {approx}"
                );
            }
        }
        assert_eq!(PooledGaps::default().quantile(0.5), None);
        // One gap: every quantile is its bin's value.
        let one = PooledGaps::of([&ItlHistogram::from_gaps(&[20.0])]);
        assert_eq!(one.quantile(0.99), Some(bin_value_ms(bin_of(20.0))));
    }
}
