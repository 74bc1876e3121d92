//! How many requests were in flight: for each logged request, the requests of its group (model,
//! and key when the log has one) whose interval holds its start, itself included (so a closed
//! loop of c workers gives c, as a run's step does); the in-flight count over time as a step
//! function; and the levels a production ladder is grouped into.

use super::LogRequest;
use std::collections::BTreeMap;

/// The in-flight count each request met at its start, in `requests`' order, counted within its
/// group and divided by `sample_rate` (a log keeping 1 request in 10 has rate 0.1).
pub fn counts_at_start(requests: &[LogRequest], sample_rate: f64) -> Vec<u32> {
    let mut out = vec![0; requests.len()];
    for idx in groups(requests).values() {
        let mut starts: Vec<f64> = idx.iter().map(|&i| requests[i].start_ms).collect();
        let mut ends: Vec<f64> = idx.iter().map(|&i| requests[i].end_ms).collect();
        starts.sort_by(f64::total_cmp);
        ends.sort_by(f64::total_cmp);
        for &i in idx {
            let s = requests[i].start_ms;
            let started = starts.partition_point(|&t| t <= s);
            let ended = ends.partition_point(|&t| t <= s);
            out[i] = scaled(started.saturating_sub(ended).max(1), sample_rate);
        }
    }
    out
}

fn scaled(n: usize, sample_rate: f64) -> u32 {
    ((n as f64 / sample_rate).round() as u32).max(1)
}

/// Request indices by group, groups in name order.
pub fn groups(requests: &[LogRequest]) -> BTreeMap<String, Vec<usize>> {
    let mut g: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for (i, r) in requests.iter().enumerate() {
        g.entry(r.group()).or_default().push(i);
    }
    g
}

/// The in-flight count of one group over time: `(t_ms, count)` from `t_ms` until the next
/// change.
pub fn step_function(requests: &[&LogRequest], sample_rate: f64) -> Vec<(f64, u32)> {
    let mut events: Vec<(f64, i64)> = Vec::with_capacity(requests.len() * 2);
    for r in requests {
        events.push((r.start_ms, 1));
        events.push((r.end_ms, -1));
    }
    // Ends before starts at the same instant: a request ending as the next starts leaves one.
    events.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    let mut out: Vec<(f64, u32)> = Vec::new();
    let mut n: i64 = 0;
    for (t, d) in events {
        n += d;
        let c = if n <= 0 {
            0
        } else {
            scaled(n as usize, sample_rate)
        };
        match out.last_mut() {
            Some(last) if last.0 == t => last.1 = c,
            _ => out.push((t, c)),
        }
    }
    out
}

/// Milliseconds the step function spent at each count within `[from, to)`.
pub fn time_at_counts(steps: &[(f64, u32)], from: f64, to: f64) -> BTreeMap<u32, f64> {
    let mut out = BTreeMap::new();
    for w in steps.windows(2) {
        let (a, b) = (w[0].0.max(from), w[1].0.min(to));
        if b > a {
            *out.entry(w[0].1).or_insert(0.0) += b - a;
        }
    }
    out
}

/// One level of a production ladder: requests that met more than `lo - 1` and at most `hi`
/// in flight. Its ladder value is `hi`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Level {
    pub lo: u32,
    pub hi: u32,
}

/// The levels of one group, lowest first, and the width their counts were rounded to.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Levels {
    pub levels: Vec<Level>,
    pub width: u32,
}

impl Levels {
    /// The level holding `count` (below the first: the first; above the last: the last).
    pub fn index_of(&self, count: u32) -> usize {
        self.levels
            .iter()
            .position(|l| count <= l.hi)
            .unwrap_or(self.levels.len().saturating_sub(1))
    }

    /// Levels for these counts. Counts are rounded up to a width (1, 2, 4, 8, …): the smallest
    /// that leaves at most `max_levels` values holding `min_ok` successes each, together at
    /// least half of all successes. Those values are the levels; every sparser value joins the
    /// next level above it (the last level, above the top), as a ladder step's ramp-up belongs
    /// to its step. `ok` says which requests succeeded.
    pub fn choose(counts: &[u32], ok: &[bool], min_ok: u64, max_levels: usize) -> Levels {
        let mut hist: BTreeMap<u32, u64> = BTreeMap::new();
        for (&c, &good) in counts.iter().zip(ok) {
            *hist.entry(c).or_insert(0) += u64::from(good);
        }
        let total: u64 = hist.values().sum();
        let (Some(&min), Some(&max)) = (hist.keys().next(), hist.keys().next_back()) else {
            return Levels::default();
        };
        if total < min_ok.max(1) * 2 {
            // Not enough for two levels: one, over every count.
            return Levels {
                levels: vec![Level { lo: min, hi: max }],
                width: 1,
            };
        }
        let mut width = 1u32;
        let bins = loop {
            let bins = rounded(&hist, width);
            let dense: Vec<u64> = bins.values().copied().filter(|&n| n >= min_ok).collect();
            let covered = dense.iter().sum::<u64>() * 2 >= total;
            if (dense.len() <= max_levels.max(1) && covered) || bins.len() <= 1 {
                break bins;
            }
            width *= 2;
        };
        let mut levels: Vec<Level> = Vec::new();
        let mut pending: Option<(u32, u64)> = None;
        for (&hi, &n) in &bins {
            let first = levels.last().map_or(hi + 1 - width.min(hi), |l| l.hi + 1);
            let (from, before) = *pending.get_or_insert((first, 0));
            if n >= min_ok {
                levels.push(Level { lo: from, hi });
                pending = None;
            } else {
                pending = Some((from, before + n));
            }
        }
        // Sparse values above the last dense one: a level of their own when together they
        // hold enough (a capped step spreads its requests over several counts), else the top
        // of the last level.
        if let (Some((from, n)), Some(&top)) = (pending, bins.keys().next_back()) {
            match levels.last_mut() {
                Some(last) if n < min_ok => last.hi = top,
                _ => levels.push(Level { lo: from, hi: top }),
            }
        }
        Levels { levels, width }
    }
}

impl Levels {
    /// Splits the level holding `at` into `lo..=at` and `at + 1..=hi` when each half holds at
    /// least `min_ok` of the successes among `counts` (`ok` says which succeeded); false
    /// (and nothing changed) otherwise. How `refine` narrows a knee found between two levels.
    pub fn split(&mut self, at: u32, counts: &[u32], ok: &[bool], min_ok: u64) -> bool {
        let Some(i) = self.levels.iter().position(|l| l.lo <= at && at < l.hi) else {
            return false;
        };
        let Level { lo, hi } = self.levels[i];
        // Counts below the first level belong to it, as `index_of` places them.
        let floor = if i == 0 { 0 } else { lo };
        let successes = |from: u32, to: u32| {
            counts
                .iter()
                .zip(ok)
                .filter(|(&c, &good)| good && from <= c && c <= to)
                .count() as u64
        };
        if successes(floor, at) < min_ok || successes(at + 1, hi) < min_ok {
            return false;
        }
        self.levels[i] = Level { lo, hi: at };
        self.levels.insert(i + 1, Level { lo: at + 1, hi });
        true
    }
}

/// Successes per count rounded up to a multiple of `width`.
fn rounded(hist: &BTreeMap<u32, u64>, width: u32) -> BTreeMap<u32, u64> {
    let mut out = BTreeMap::new();
    for (&c, &n) in hist {
        *out.entry(c.div_ceil(width) * width).or_insert(0) += n;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(start: f64, end: f64, model: &str) -> LogRequest {
        LogRequest {
            start_ms: start,
            end_ms: end,
            model: model.into(),
            ..LogRequest::default()
        }
    }

    #[test]
    fn in_flight_counts_the_group_at_each_start_including_itself() {
        let rs = vec![
            req(0.0, 10.0, "a"),
            req(1.0, 5.0, "a"),
            req(2.0, 3.0, "b"),
            req(5.0, 8.0, "a"),
            req(10.0, 12.0, "a"),
        ];
        assert_eq!(counts_at_start(&rs, 1.0), [1, 2, 1, 2, 1]);
        assert_eq!(counts_at_start(&rs, 0.5), [2, 4, 2, 4, 2]);
        let a: Vec<&LogRequest> = rs.iter().filter(|r| r.model == "a").collect();
        let f = step_function(&a, 1.0);
        assert_eq!(
            f,
            [(0.0, 1), (1.0, 2), (5.0, 2), (8.0, 1), (10.0, 1), (12.0, 0)]
        );
        let t = time_at_counts(&f, 0.0, 100.0);
        assert_eq!((t[&1], t[&2]), (5.0, 7.0));
    }

    #[test]
    fn levels_keep_dense_values_join_sparse_ones_and_widen_when_too_many() {
        // A ladder read back: steps 1, 2, 4 and 8 with ramp-up requests in between (enough
        // at 7 for a level of their own by count, yet they belong to the step above).
        let mut counts = Vec::new();
        for (c, n) in [
            (1, 50),
            (2, 50),
            (3, 3),
            (4, 50),
            (5, 2),
            (7, 25),
            (8, 60),
            (9, 3),
        ] {
            counts.extend(std::iter::repeat(c).take(n));
        }
        let ok = vec![true; counts.len()];
        let l = Levels::choose(&counts, &ok, 40, 12);
        let his: Vec<u32> = l.levels.iter().map(|l| l.hi).collect();
        assert_eq!((his, l.width), (vec![1, 2, 4, 9], 1));
        assert_eq!(l.levels[3], Level { lo: 5, hi: 9 });
        assert_eq!(l.index_of(6), 3);
        // A day of traffic from 30 to 90 in flight: every value dense, rounded to 8s.
        let counts: Vec<u32> = (30..=90)
            .flat_map(|c| std::iter::repeat(c).take(40))
            .collect();
        let ok = vec![true; counts.len()];
        let l = Levels::choose(&counts, &ok, 20, 12);
        assert_eq!(l.width, 8);
        assert!(l.levels.iter().any(|l| l.hi == 64 && l.lo == 57), "{l:?}");
        assert!(l.levels.len() <= 12);
        // A capped step spreads its requests over the counts below its own: together a level.
        let mut counts = Vec::new();
        for (c, n) in [(2, 80), (4, 60), (10, 5), (12, 10), (14, 15), (16, 20)] {
            counts.extend(std::iter::repeat(c).take(n));
        }
        let ok = vec![true; counts.len()];
        let l = Levels::choose(&counts, &ok, 40, 12);
        assert_eq!(l.levels.last(), Some(&Level { lo: 5, hi: 16 }));
        assert_eq!(l.levels.len(), 3);
        // Thin traffic over many values: widened until levels hold enough.
        let counts: Vec<u32> = (1..=200)
            .flat_map(|c| std::iter::repeat(c).take(3))
            .collect();
        let ok = vec![true; counts.len()];
        let l = Levels::choose(&counts, &ok, 40, 12);
        assert_eq!(l.width, 16);
        assert!(l.levels.len() <= 13, "{l:?}");
        // Too few successes for two levels: one level.
        let l = Levels::choose(&[1, 2, 3], &[true, true, false], 20, 12);
        assert_eq!(l.levels, [Level { lo: 1, hi: 3 }]);
    }

    #[test]
    fn a_level_splits_only_when_both_halves_keep_enough_successes() {
        let mut counts = Vec::new();
        for (c, n) in [(8, 50), (40, 30), (50, 30), (60, 30)] {
            counts.extend(std::iter::repeat(c).take(n));
        }
        let ok = vec![true; counts.len()];
        let mut l = Levels {
            levels: vec![Level { lo: 1, hi: 8 }, Level { lo: 9, hi: 64 }],
            width: 8,
        };
        // 40 and 50 below 52 hold 60, 60 above holds 30: too thin with 40 needed.
        assert!(!l.split(52, &counts, &ok, 40));
        assert_eq!(l.levels.len(), 2);
        assert!(l.split(45, &counts, &ok, 30));
        assert_eq!(
            l.levels,
            [
                Level { lo: 1, hi: 8 },
                Level { lo: 9, hi: 45 },
                Level { lo: 46, hi: 64 }
            ]
        );
        assert_eq!(l.index_of(50), 2);
        // Failures do not count, and a point outside every level's inside splits nothing.
        let failed = vec![false; counts.len()];
        assert!(!l.split(55, &counts, &failed, 1));
        assert!(!l.split(64, &counts, &ok, 1));
    }
}
