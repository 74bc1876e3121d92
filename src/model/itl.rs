//! Inter-token gaps (ITL, docs/metrics.md) kept per request, compactly: a fixed log-spaced histogram
//! of the request's gaps. It travels in `requests.csv` and the baseline sidecar (column
//! `itl_hist`), so that a step's pooled ITL percentiles can be rebuilt from stored records
//! (`summarize`, `merge`, a killed run) and so that the diff can bootstrap ITL by resampling
//! whole requests (docs/gate.md), which per-step percentiles alone cannot do.
//!
//! **Bins.** Bin 0 holds gaps under 1 µs (two events read together: a gap of 0). Bin b ≥ 1
//! holds gaps in [2^((b−1)/32), 2^(b/32)) µs: 32 bins per doubling, each 2.2% wide, up to bin
//! 960 (2^30 µs ≈ 17.9 minutes; longer gaps count in the last bin). A gap stands for its bin's
//! geometric midpoint, so every gap is represented within a factor 2^(1/64), i.e. ±1.09%.
//!
//! **Percentiles.** A step's ITL P50/P90/P99 are the type-7 percentiles (docs/metrics.md) of the pooled
//! gaps of its successful requests, each gap replaced by its bin's midpoint. Type 7 is a convex
//! combination of two order statistics and the replacement is monotone, so the result lies
//! within a factor 2^(1/64) of the exact pooled percentile: at most 1.09% off (gaps under 1 µs
//! count as 0). Live and rebuilt summaries use this same rule, so they agree exactly.
//!
//! **Encoding** (one CSV cell, no commas): runs of consecutive bins separated by spaces, each
//! `FIRST:c1/c2/c3` (bins FIRST, FIRST+1, … with those counts; 0 allowed inside a run), e.g.
//! `426:3/5/0/1 470:1`. An empty cell is a request without gaps.

/// Bins per doubling of the gap.
pub const BINS_PER_OCTAVE: u32 = 32;
/// The last bin (gaps of 2^30 µs and more).
pub const MAX_BIN: u16 = 960;

/// One request's inter-token gaps as counts per bin (sorted by bin, counts > 0).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ItlHistogram {
    bins: Vec<(u16, u32)>,
}

/// The bin of a gap in milliseconds (NaN and negative gaps count as 0).
pub fn bin_of(gap_ms: f64) -> u16 {
    let us = gap_ms * 1000.0;
    if us.is_nan() || us < 1.0 {
        return 0;
    }
    // log2(us) × 32 ≥ 0 here, so truncation is its floor (`f64::floor` is a libm call, and
    // this runs once per gap); +inf saturates, and either way the last bin caps it.
    let below = (us.log2() * f64::from(BINS_PER_OCTAVE)) as u32;
    below.saturating_add(1).min(u32::from(MAX_BIN)) as u16
}

/// The value a gap in `bin` stands for, in ms: the bin's geometric midpoint (0 for bin 0).
pub fn bin_value_ms(bin: u16) -> f64 {
    if bin == 0 {
        return 0.0;
    }
    ((f64::from(bin) - 0.5) / f64::from(BINS_PER_OCTAVE)).exp2() / 1000.0
}

impl ItlHistogram {
    /// The histogram of `gaps_ms`: the same as [`add`](Self::add)ing them one by one, built
    /// from a bit set of the bins present instead (a request's gaps spread over tens of bins,
    /// and inserting each new bin into the sorted list cost more than the rest of the record,
    /// issue 24): the set's bits in order are the bins, and a gap's entry is the number of
    /// bits below its bin's.
    pub fn from_gaps(gaps_ms: &[f64]) -> Self {
        const WORDS: usize = MAX_BIN as usize / 64 + 1;
        let each: Vec<u16> = gaps_ms.iter().map(|&g| bin_of(g)).collect();
        let mut present = [0u64; WORDS];
        for &b in &each {
            present[usize::from(b / 64)] |= 1 << (b % 64);
        }
        let distinct = present.iter().map(|w| w.count_ones() as usize).sum();
        let mut bins: Vec<(u16, u32)> = Vec::with_capacity(distinct);
        // The number of bins below each word's first bit.
        let mut before = [0usize; WORDS];
        for (w, &word) in present.iter().enumerate() {
            before[w] = bins.len();
            let mut rest = word;
            while rest != 0 {
                bins.push((w as u16 * 64 + rest.trailing_zeros() as u16, 0));
                rest &= rest - 1;
            }
        }
        for &b in &each {
            let w = usize::from(b / 64);
            let below = present[w] & ((1u64 << (b % 64)) - 1);
            let c = &mut bins[before[w] + below.count_ones() as usize].1;
            *c = c.saturating_add(1);
        }
        ItlHistogram { bins }
    }

    pub fn add(&mut self, gap_ms: f64) {
        let b = bin_of(gap_ms);
        match self.bins.binary_search_by_key(&b, |&(bin, _)| bin) {
            Ok(i) => self.bins[i].1 = self.bins[i].1.saturating_add(1),
            Err(i) => self.bins.insert(i, (b, 1)),
        }
    }

    /// Number of gaps.
    pub fn count(&self) -> u64 {
        self.bins.iter().map(|&(_, c)| u64::from(c)).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.bins.is_empty()
    }

    /// (bin, count) pairs, sorted by bin, counts > 0.
    pub fn bins(&self) -> &[(u16, u32)] {
        &self.bins
    }

    /// The cell text (see the module docs); empty for no gaps.
    pub fn encode(&self) -> String {
        let mut out = String::new();
        self.encode_into(&mut out);
        out
    }

    /// Appends [`encode`](Self::encode)'s text to `out` (a `requests.csv` cell). Numbers are
    /// written with `itoa`: with `write!` this cell cost 14 k instructions per request, more
    /// than the rest of its row (issue 39, part 4; benches/RESULTS.md).
    pub fn encode_into(&self, out: &mut String) {
        let mut digits = itoa::Buffer::new();
        let mut prev: Option<u16> = None;
        for &(b, c) in &self.bins {
            match prev {
                // Up to two empty bins are cheaper as zeros than as a new run.
                Some(p) if b - p <= 3 => {
                    for _ in p + 1..b {
                        out.push_str("/0");
                    }
                    out.push('/');
                }
                Some(_) => {
                    out.push(' ');
                    out.push_str(digits.format(b));
                    out.push(':');
                }
                None => {
                    out.push_str(digits.format(b));
                    out.push(':');
                }
            }
            out.push_str(digits.format(c));
            prev = Some(b);
        }
    }

    /// Parses a cell written by [`encode`](Self::encode); the error says what is wrong.
    pub fn decode(text: &str) -> Result<Self, String> {
        let mut bins: Vec<(u16, u32)> = Vec::new();
        for run in text.split_whitespace() {
            let (first, counts) = run
                .split_once(':')
                .ok_or_else(|| format!("run `{run}` has no `BIN:` prefix"))?;
            let first: u16 = first
                .parse()
                .map_err(|_| format!("`{first}` is not a bin number"))?;
            if first > MAX_BIN {
                return Err(format!("bin {first} is past the last bin {MAX_BIN}"));
            }
            for (b, c) in (first..).zip(counts.split('/')) {
                let c: u32 = c.parse().map_err(|_| format!("`{c}` is not a gap count"))?;
                if b > MAX_BIN {
                    return Err(format!("bin {b} is past the last bin {MAX_BIN}"));
                }
                if bins.last().is_some_and(|&(last, _)| last >= b) {
                    return Err(format!("bin {b} is out of order"));
                }
                if c > 0 {
                    bins.push((b, c));
                }
            }
        }
        Ok(ItlHistogram { bins })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn bins_cover_the_documented_ranges() {
        assert_eq!(bin_of(0.0), 0);
        assert_eq!(bin_of(0.0009), 0);
        assert_eq!(bin_of(-3.0), 0);
        assert_eq!(bin_of(f64::NAN), 0);
        assert_eq!(bin_of(0.001), 1);
        // 1 ms = 1000 µs: log2(1000) × 32 = 318.9 → bin 319.
        assert_eq!(bin_of(1.0), 319);
        assert_eq!(bin_of(1e9), MAX_BIN);
        for b in 1..MAX_BIN {
            let v = bin_value_ms(b);
            assert_eq!(bin_of(v), b, "midpoint of bin {b}");
        }
        let bound = (1.0f64 / 64.0).exp2();
        // Every gap up to the last bin's lower edge (2^30 µs) is within ±1.09% of its bin's value.
        for i in 0..1500 {
            let g = 0.002 * 1.013f64.powi(i);
            assert!(g < 1.0e6);
            let v = bin_value_ms(bin_of(g));
            assert!(v / g <= bound && g / v <= bound, "{g} → {v}");
        }
    }

    #[test]
    fn encoding_round_trips_and_is_compact() {
        let h = ItlHistogram::from_gaps(&[10.0, 10.1, 10.4, 10.0, 11.0, 0.0, 250.0, 10.2]);
        let text = h.encode();
        assert!(!text.contains(','), "{text}");
        assert_eq!(ItlHistogram::decode(&text).unwrap(), h);
        assert_eq!(h.count(), 8);
        assert_eq!(ItlHistogram::decode("").unwrap(), ItlHistogram::default());
        assert_eq!(ItlHistogram::default().encode(), "");
        // Bins 426, 427, 429 in one run (one empty bin written as 0), 500 in another.
        let h = ItlHistogram {
            bins: vec![(426, 3), (427, 5), (429, 1), (500, 2)],
        };
        assert_eq!(h.encode(), "426:3/5/0/1 500:2");
        assert_eq!(ItlHistogram::decode("426:3/5/0/1 500:2").unwrap(), h);
    }

    /// The rule as written before it avoided `f64::floor` (issue 24).
    fn bin_by_floor(gap_ms: f64) -> u16 {
        let us = gap_ms * 1000.0;
        if us.is_nan() || us < 1.0 {
            return 0;
        }
        let b = (us.log2() * f64::from(BINS_PER_OCTAVE)).floor() + 1.0;
        b.min(f64::from(MAX_BIN)) as u16
    }

    #[test]
    fn bins_are_the_floor_rule() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand::rngs::StdRng::seed_from_u64(32);
        let mut gaps = vec![
            f64::INFINITY,
            f64::MAX,
            1e300,
            f64::NEG_INFINITY,
            -0.0,
            0.001,
        ];
        // Every bin edge and its neighbouring doubles.
        for b in 0..=u32::from(MAX_BIN) + 2 {
            let edge = (f64::from(b) / f64::from(BINS_PER_OCTAVE)).exp2() / 1000.0;
            let bits = edge.to_bits();
            gaps.extend((bits - 3..=bits + 3).map(f64::from_bits));
        }
        gaps.extend((0..200_000).map(|i| match i % 3 {
            0 => f64::from_bits(rng.gen()),
            1 => rng.gen_range(0.0..100.0),
            _ => rng.gen_range(0.0..2e6),
        }));
        for g in gaps {
            assert_eq!(bin_of(g), bin_by_floor(g), "{g:e}");
        }
    }

    #[test]
    fn from_gaps_is_adding_one_by_one() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand::rngs::StdRng::seed_from_u64(64);
        let odd = [
            0.0,
            -1.0,
            f64::NAN,
            f64::INFINITY,
            1e12,
            0.0009,
            0.001,
            1.0,
            20.0,
        ];
        for n in 0..3_000 {
            let gaps: Vec<f64> = (0..n % 150)
                .map(|i| match i % 5 {
                    0 => odd[rng.gen_range(0..odd.len())],
                    1 => rng.gen_range(0.0..1e6),
                    _ => 20.0 * rng.gen_range(0.5..2.0),
                })
                .collect();
            let mut one_by_one = ItlHistogram::default();
            for &g in &gaps {
                one_by_one.add(g);
            }
            assert_eq!(ItlHistogram::from_gaps(&gaps), one_by_one, "{gaps:?}");
        }
    }

    #[test]
    fn decode_names_the_problem() {
        for (text, says) in [
            ("426", "no `BIN:` prefix"),
            ("x:1", "not a bin number"),
            ("426:1/y", "not a gap count"),
            ("961:1", "past the last bin"),
            ("65535:1", "past the last bin"),
            ("430:1 426:2", "out of order"),
            ("958:1/1/1/1", "past the last bin"),
        ] {
            let e = ItlHistogram::decode(text).unwrap_err();
            assert!(e.contains(says), "{text}: {e}");
        }
    }
}
