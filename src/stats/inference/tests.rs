//! Tests of the inference primitives on fixed synthetic data (no timing): the order-statistic
//! sampler against exact and naive resampling, the effective size against known correlation and
//! against a literal block bootstrap, the bounds, and Fisher's test against exact references.

use super::*;

fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol
}

#[test]
fn generator_stream_is_pinned() {
    // ChaCha8 from seed 1, uniforms from the raw u64 stream: these values must never change,
    // or every recorded verdict would shift.
    let mut g = generator(1);
    let first: Vec<f64> = (0..3).map(|_| unit(&mut g)).collect();
    let mut again = generator(1);
    assert_eq!(first, (0..3).map(|_| unit(&mut again)).collect::<Vec<_>>());
    assert!(first.iter().all(|u| *u > 0.0 && *u <= 1.0));
    insta::assert_debug_snapshot!("chacha8_seed1_units", first);
}

#[test]
fn lower_and_upper_bounds_use_binomial_order_statistics() {
    let data: Vec<f64> = (1..=100).map(f64::from).collect();
    // P(Bin(100, 0.9) ≥ l) ≥ 0.95 holds up to l = 85 (tail(85) ≈ 0.960, tail(86) ≈ 0.924).
    assert_eq!(lower_bound_order_stat(&data, 0.9, 0.95), Some(85.0));
    // Upper: the smallest u with P(Bin(100, 0.9) ≤ u − 1) ≥ 0.95 → u = 96 (P(≤ 95) ≈ 0.976,
    // P(≤ 94) ≈ 0.942).
    assert_eq!(upper_bound_order_stat(&data, 0.9, 0.95), Some(96.0));
    // P99 of 10 points: P(Bin(10, .99) ≥ 9) ≈ 0.996, P(≥ 10) ≈ 0.904.
    let ten: Vec<f64> = (1..=10).map(f64::from).collect();
    assert_eq!(lower_bound_order_stat(&ten, 0.99, 0.95), Some(9.0));
    // The upper bound of P90 of 20 points is the maximum, and of P99 there is none.
    let twenty: Vec<f64> = (1..=20).map(f64::from).collect();
    assert_eq!(upper_bound_order_stat(&twenty, 0.9, 0.95), None);
    assert_eq!(upper_bound_order_stat(&twenty, 0.9, 0.85), Some(20.0));
    assert_eq!(lower_bound_order_stat(&[1.0, 2.0, 3.0], 0.5, 0.95), None);
    assert_eq!(lower_bound_order_stat(&[], 0.9, 0.95), None);
    let big: Vec<f64> = (1..=100_000).map(f64::from).collect();
    let lb = lower_bound_order_stat(&big, 0.9, 0.95).unwrap();
    assert!((89_800.0..90_000.0).contains(&lb), "{lb}");
}

/// Exact reference: P(j-th of m resampled order statistics ≤ x(i)) = P(Bin(m, i/n) ≥ j).
fn binom_tail(m: usize, p: f64, j: usize) -> f64 {
    let mut pmf = vec![0.0; m + 1];
    let mut c = 1.0f64;
    for (k, slot) in pmf.iter_mut().enumerate() {
        *slot = c * p.powi(k as i32) * (1.0 - p).powi((m - k) as i32);
        c = c * (m - k) as f64 / (k + 1) as f64;
    }
    pmf[j..].iter().sum()
}

#[test]
fn order_statistic_sampler_matches_exact_bootstrap_distribution() {
    let n = 50;
    let data: Vec<f64> = (1..=n).map(|i| i as f64).collect();
    let mut rng = generator(7);
    let draws = 20_000;
    // Full-size resamples (m = n, q so that h = 49·q = 44: j = 45) and m-out-of-n (m = 20,
    // h = 19·q = 17: j = 18).
    for (m, q, j) in [(50usize, 44.0 / 49.0, 45usize), (20, 17.0 / 19.0, 18)] {
        let mut counts = vec![0usize; n + 1];
        for _ in 0..draws {
            counts[resampled_quantile(&data, q, m, &mut rng) as usize] += 1;
        }
        let mut cum = 0usize;
        for (i, count) in counts.iter().enumerate().skip(1) {
            cum += count;
            let empirical = cum as f64 / draws as f64;
            let exact = binom_tail(m, i as f64 / n as f64, j);
            assert!(
                close(empirical, exact, 0.015),
                "m={m} i={i}: {empirical} vs {exact}"
            );
        }
    }
}

/// Naive bootstrap: draw m with replacement, select, interpolate (type 7).
fn naive(sorted: &[f64], q: f64, m: usize, rng: &mut Generator) -> f64 {
    let n = sorted.len();
    let mut v: Vec<f64> = (0..m)
        .map(|_| sorted[((unit(rng) * n as f64).ceil() as usize).clamp(1, n) - 1])
        .collect();
    let h = (m - 1) as f64 * q;
    let lo = h.floor() as usize;
    let (_, x_lo, rest) = v.select_nth_unstable_by(lo, f64::total_cmp);
    let x_lo = *x_lo;
    let x_hi = rest.iter().copied().fold(f64::INFINITY, f64::min);
    if lo + 1 >= m {
        x_lo
    } else {
        x_lo + (h - lo as f64) * (x_hi - x_lo)
    }
}

#[test]
fn interpolated_sampler_matches_naive_resampling() {
    // Skewed data with ties, q with interpolation (h = 0.9 · 72 = 64.8; m = 30: h = 26.1).
    let mut data: Vec<f64> = (0..73)
        .map(|i| ((i * 37) % 73) as f64)
        .map(|x| (x / 20.0).exp().round())
        .collect();
    data.sort_by(f64::total_cmp);
    let mut rng = generator(11);
    let draws = 6_000;
    for m in [73, 30] {
        let mut fast: Vec<f64> = (0..draws)
            .map(|_| resampled_quantile(&data, 0.9, m, &mut rng))
            .collect();
        let mut slow: Vec<f64> = (0..draws).map(|_| naive(&data, 0.9, m, &mut rng)).collect();
        fast.sort_by(f64::total_cmp);
        slow.sort_by(f64::total_cmp);
        for q in [0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99] {
            let a = quantile_sorted(&fast, q).unwrap();
            let b = quantile_sorted(&slow, q).unwrap();
            assert!(
                close(a, b, 0.08 * b.abs().max(1.0)),
                "m={m} q={q}: fast {a} vs naive {b}"
            );
        }
    }
}

fn full(v: &[f64]) -> Resampled<'_> {
    Resampled {
        sorted: v,
        m: v.len(),
    }
}

#[test]
fn bootstrap_ci_covers_the_true_ratio_and_edge_cases() {
    let base: Vec<f64> = (1..=400).map(f64::from).collect();
    let new: Vec<f64> = base.iter().map(|x| x * 1.5).collect();
    let mut rng = generator(3);
    let (lo, hi) = bootstrap_ratio_ci(full(&base), full(&new), 0.9, 2000, 0.99, &mut rng).unwrap();
    assert!(lo < 0.5 && 0.5 < hi && lo > 0.3 && hi < 0.7, "({lo}, {hi})");
    // Fewer effective requests: a wider interval around the same ratio.
    let few = Resampled {
        sorted: &base,
        m: 50,
    };
    let few_new = Resampled {
        sorted: &new,
        m: 50,
    };
    let (lo2, hi2) = bootstrap_ratio_ci(few, few_new, 0.9, 2000, 0.99, &mut rng).unwrap();
    assert!(
        hi2 - lo2 > 1.8 * (hi - lo),
        "({lo2}, {hi2}) vs ({lo}, {hi})"
    );
    assert_eq!(
        bootstrap_ratio_ci(full(&[]), full(&new), 0.9, 10, 0.99, &mut rng),
        None
    );
    assert_eq!(
        bootstrap_ratio_ci(full(&base), full(&new), 0.9, 0, 0.99, &mut rng),
        None
    );
    // Single points: the ratio is exact.
    let ci = bootstrap_ratio_ci(full(&[2.0]), full(&[3.0]), 0.9, 50, 0.99, &mut rng).unwrap();
    assert!(close(ci.0, 0.5, 1e-12) && close(ci.1, 0.5, 1e-12));
    // Same seed, same answer.
    let a = bootstrap_ratio_ci(full(&base), full(&new), 0.99, 500, 0.99, &mut generator(5));
    let b = bootstrap_ratio_ci(full(&base), full(&new), 0.99, 500, 0.99, &mut generator(5));
    assert_eq!(a, b);
}

#[test]
fn zero_base_quantiles_give_infinite_not_nan_bounds() {
    // Half the baseline is 0 ms: many resampled medians are 0.
    let mut base = vec![0.0; 20];
    base.extend((1..=20).map(f64::from));
    let new: Vec<f64> = (1..=40).map(f64::from).collect();
    let (lo, hi) = bootstrap_ratio_ci(
        full(&base),
        full(&new),
        0.5,
        10_000,
        0.99,
        &mut generator(1),
    )
    .unwrap();
    assert!(!lo.is_nan() && !hi.is_nan(), "({lo}, {hi})");
    assert_eq!(hi, f64::INFINITY);
    // All zero on both sides: every ratio is undefined.
    assert_eq!(
        bootstrap_ratio_ci(
            full(&[0.0; 5]),
            full(&[0.0; 5]),
            0.5,
            100,
            0.99,
            &mut generator(1)
        ),
        None
    );
}

/// AR(1) series x_t = φ x_{t−1} + e_t, exponentiated into latencies (start order kept).
fn ar1(n: usize, phi: f64, seed: u64) -> Vec<f64> {
    let mut rng = generator(seed);
    let mut x = 0.0;
    (0..n)
        .map(|_| {
            x = phi * x + (1.0 - phi * phi).sqrt() * std_normal(&mut rng);
            100.0 * (0.5 * x).exp()
        })
        .collect()
}

#[test]
fn effective_size_follows_the_correlation() {
    // Independent: close to n.
    let iid = ar1(400, 0.0, 1);
    let e = effective_size(&iid);
    assert!((280.0..=400.0).contains(&e), "{e}");
    // AR(1) with φ = 0.8: (1 − φ)/(1 + φ) ≈ 1/9 of n for the values themselves; ranks of a
    // Gaussian series correlate slightly less. Accept a broad band around n/9 ≈ 44.
    let e = effective_size(&ar1(400, 0.8, 2));
    assert!((20.0..=90.0).contains(&e), "{e}");
    // Short or constant series are left alone.
    assert_eq!(effective_size(&[1.0, 2.0, 3.0]), 3.0);
    assert_eq!(effective_size(&[5.0; 50]), 50.0);
    // A trend (requests queue up more and more during the step) is not independent either.
    // Floored at n/10.
    let trend: Vec<f64> = (0..120).map(f64::from).collect();
    assert_eq!(effective_size(&trend), 12.0);
    // Values rather than ranks: a mean cares about sizes; independent values stay near n.
    assert!(effective_size_of_values(&iid) > 280.0);
}

#[test]
fn the_start_a_closed_loop_step_shares_is_not_read_as_correlation() {
    // The demo's 50 streams behind 16 slots: the first 16 unqueued, the next 34 part-queued,
    // then a steady queue with independent noise. Read whole, the level shift floors the
    // effective size at n/10; past the first 50 the noise is independent, and the whole step
    // gets the tail's ratio.
    let noise = ar1(120, 0.0, 5);
    let series: Vec<f64> = (0..120)
        .map(|i| match i {
            0..=15 => 150.0 + noise[i] / 100.0,
            16..=49 => 880.0 + noise[i] / 100.0,
            _ => 1625.0 + noise[i] / 10.0,
        })
        .collect();
    assert_eq!(effective_size_of_values(&series), 12.0);
    let past = effective_size_past_start(&series, 50, effective_size_of_values);
    assert!(past > 80.0 && past <= 120.0, "{past}");
    // Open loop (start 0) or too few requests past the start: the whole series, as before.
    assert_eq!(
        effective_size_past_start(&series, 0, effective_size_of_values),
        12.0
    );
    let short = &series[..12];
    assert_eq!(
        effective_size_past_start(short, 50, effective_size_of_values),
        effective_size_of_values(short)
    );
    // A queue whose waits stay correlated past the start keeps the whole step's estimate.
    let correlated: Vec<f64> = series[..50]
        .iter()
        .copied()
        .chain(ar1(70, 0.8, 7).into_iter().map(|v| 1600.0 + v))
        .collect();
    assert_eq!(
        effective_size_past_start(&correlated, 50, effective_size_of_values),
        effective_size_of_values(&correlated)
    );
    // Never more than n.
    let iid = ar1(100, 0.0, 6);
    assert!(effective_size_past_start(&iid, 10, effective_size) <= 100.0);
}

/// Literal moving-block bootstrap of the q-quantile (blocks of `len` consecutive requests).
fn block_bootstrap_sd(series: &[f64], q: f64, len: usize, resamples: usize) -> f64 {
    let mut rng = generator(99);
    let n = series.len();
    let starts = n - len + 1;
    let mut qs = Vec::with_capacity(resamples);
    for _ in 0..resamples {
        let mut v = Vec::with_capacity(n);
        while v.len() < n {
            let s = ((unit(&mut rng) * starts as f64).ceil() as usize).clamp(1, starts) - 1;
            v.extend_from_slice(&series[s..(s + len).min(s + n - v.len())]);
        }
        v.sort_by(f64::total_cmp);
        qs.push(quantile_sorted(&v, q).unwrap());
    }
    sd(&qs)
}

fn sd(v: &[f64]) -> f64 {
    let mean = v.iter().sum::<f64>() / v.len() as f64;
    (v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (v.len() - 1) as f64).sqrt()
}

#[test]
fn effective_size_bootstrap_matches_a_block_bootstrap_on_correlated_requests() {
    let series = ar1(400, 0.7, 5);
    let mut sorted = series.clone();
    sorted.sort_by(f64::total_cmp);
    let m = effective_size_at(&series, 0.9).round() as usize;
    let mut rng = generator(4);
    let fast: Vec<f64> = (0..4000)
        .map(|_| resampled_quantile(&sorted, 0.9, m, &mut rng))
        .collect();
    let iid: Vec<f64> = (0..4000)
        .map(|_| resampled_quantile(&sorted, 0.9, 400, &mut rng))
        .collect();
    let block = block_bootstrap_sd(&series, 0.9, 20, 2000);
    let (fast, iid) = (sd(&fast), sd(&iid));
    // The independent bootstrap is far too narrow; the effective-size one is in the block
    // bootstrap's range.
    assert!(iid < 0.75 * block, "iid {iid} vs block {block}");
    assert!(
        fast > 0.7 * block && fast < 1.5 * block,
        "effective-size {fast} (m = {m}) vs block {block}"
    );
}

#[test]
fn fisher_matches_exact_hypergeometric_tails() {
    // References: Σ C(n2,k) C(n1,f−k) / C(n,f) with Python's math.comb.
    let cases = [
        ((10, 1000, 30, 1000), 0.0010041667809150049),
        ((0, 50, 1, 50), 0.5),
        ((0, 120, 3, 120), 0.12343096234309624),
        ((30, 1000, 10, 1000), 0.9996990902116218),
        ((2, 40, 9, 40), 0.02381258244804356),
        ((0, 10, 0, 10), 1.0),
    ];
    for ((x1, n1, x2, n2), want) in cases {
        let got = fisher_p_rise(x1, n1, x2, n2);
        assert!(
            ((got - want) / want).abs() < 1e-9,
            "{x1}/{n1} → {x2}/{n2}: {got} vs {want}"
        );
    }
    let tiny = fisher_p_rise(1000, 100_000, 1500, 100_000);
    assert!(
        ((tiny - 3.5254397389304334e-24) / 3.5e-24).abs() < 1e-6,
        "{tiny}"
    );
    assert_eq!(fisher_p_rise(0, 0, 5, 100), 1.0);
    assert_eq!(fisher_p_rise(100, 100, 100, 100), 1.0);
}

/// Requests whose gaps share the request's speed (a per-request factor): pooling the gaps as if
/// independent would give a CI ~√60 times too narrow; resampling whole requests does not.
fn requests_with_own_speed(n: usize, seed: u64) -> Vec<ItlHistogram> {
    let mut rng = generator(seed);
    (0..n)
        .map(|_| {
            let speed = 20.0 * (0.3 * std_normal(&mut rng)).exp();
            let gaps: Vec<f64> = (0..60)
                .map(|_| speed * (1.0 + 0.02 * std_normal(&mut rng)))
                .collect();
            ItlHistogram::from_gaps(&gaps)
        })
        .collect()
}

#[test]
fn gap_bootstrap_resamples_whole_requests() {
    let base = requests_with_own_speed(200, 1);
    let new = requests_with_own_speed(200, 2);
    fn side(r: &[ItlHistogram]) -> GapRequests<'_> {
        GapRequests {
            requests: r,
            m: r.len(),
        }
    }
    let ci = |b: &[ItlHistogram], n: &[ItlHistogram], seed| {
        bootstrap_gaps_ratio_ci(side(b), side(n), 0.9, 2000, 0.99, &mut generator(seed)).unwrap()
    };
    let (lo, hi) = ci(&base, &new, 7);
    assert!(lo < 0.0 && hi > 0.0, "same server: [{lo}, {hi}]");
    // The spread of a P90 over 200 requests with σ 0.3 between requests: several percent each
    // way (the gaps' own ±2% jitter alone would give well under 1%).
    assert!(
        hi - lo > 0.08,
        "[{lo}, {hi}] is too narrow for 200 requests"
    );
    // Deterministic for a seed.
    assert_eq!(ci(&base, &new, 7), (lo, hi));
    // Every request 25% slower: the CI moves with it.
    let slower: Vec<ItlHistogram> = base
        .iter()
        .map(|h| {
            let mut s = ItlHistogram::default();
            for &(b, c) in h.bins() {
                for _ in 0..c {
                    s.add(crate::model::itl::bin_value_ms(b) * 1.25);
                }
            }
            s
        })
        .collect();
    let (lo, hi) = ci(&base, &slower, 7);
    assert!(lo > 0.0 && lo < 0.25 && hi > 0.25, "[{lo}, {hi}]");
    // No request with gaps on a side: no CI.
    assert_eq!(
        bootstrap_gaps_ratio_ci(side(&base), side(&[]), 0.9, 10, 0.99, &mut generator(1)),
        None
    );
}

#[test]
fn effective_size_of_gaps_sees_requests_correlated_in_time() {
    // Independent requests: about n.
    let independent = requests_with_own_speed(300, 3);
    let e = effective_size_of_gaps(&independent, 0.9);
    assert!(e > 200.0, "{e}");
    // Requests in runs of 20 sharing one speed (a slow period behind the same queue): far fewer.
    let mut rng = generator(4);
    let mut runs = Vec::new();
    for _ in 0..15 {
        let speed = 20.0 * (0.3 * std_normal(&mut rng)).exp();
        for _ in 0..20 {
            runs.push(ItlHistogram::from_gaps(&[speed; 30]));
        }
    }
    let e = effective_size_of_gaps(&runs, 0.9);
    assert!(e < 100.0, "{e}");
    assert_eq!(effective_size_of_gaps(&[], 0.9), 0.0);
}

/// What a whole-request ITL bootstrap costs: 400 requests per side with 300 gaps each spread
/// over a decade (a jittery real server), 10,000 resamples. `make calibrate` runs it (release).
#[test]
#[ignore]
fn gap_bootstrap_cost() {
    let mut rng = generator(9);
    let mut side = || -> Vec<ItlHistogram> {
        (0..400)
            .map(|_| {
                let speed = 20.0 * (0.3 * std_normal(&mut rng)).exp();
                let gaps: Vec<f64> = (0..300)
                    .map(|_| speed * (0.6 * std_normal(&mut rng)).exp())
                    .collect();
                ItlHistogram::from_gaps(&gaps)
            })
            .collect()
    };
    let (b, n) = (side(), side());
    let bins: usize = b.iter().map(|h| h.bins().len()).sum();
    let t = std::time::Instant::now();
    let ci = bootstrap_gaps_ratio_ci(
        GapRequests {
            requests: &b,
            m: 400,
        },
        GapRequests {
            requests: &n,
            m: 400,
        },
        0.9,
        10_000,
        0.99,
        &mut generator(1),
    );
    println!(
        "{} non-empty bins per request on average; 10,000 resamples in {:?}; CI {ci:?}",
        bins / b.len(),
        t.elapsed()
    );
    // Two draws of one process: the 99% CI of the P90's relative change holds 0 and is narrow
    // at this size (measured: [-4.2%, +9.1%]).
    let (lo, hi) = ci.expect("a CI from 400 requests per side");
    assert!(lo < 0.0 && hi > 0.0, "{lo}..{hi}");
    assert!(hi - lo < 0.25, "{lo}..{hi}");
}

#[test]
fn t_quantiles_match_the_tables() {
    // Two-sided 99%: t(0.995; df) from the tables.
    for (df, t) in [(3.0, 5.841), (5.0, 4.032), (10.0, 3.169), (30.0, 2.750)] {
        let got = t_two_sided(0.99, df);
        assert!((got / t - 1.0).abs() < 0.01, "df {df}: {got} vs {t}");
    }
    assert!((t_two_sided(0.99, f64::INFINITY) - 2.5758).abs() < 1e-3);
    // Below the floor of 2 degrees of freedom the floor's quantile (9.92; within 4%) is used.
    assert!((t_two_sided(0.99, 1.0) / 9.925 - 1.0).abs() < 0.05);
}

#[test]
fn rate_spread_and_ratio_ci() {
    assert_eq!(rate_spread(&[5.0]), None);
    assert_eq!(rate_spread(&[0.0, 0.0]), None);
    // Identical blocks: no spread, a CI of the point.
    let flat = rate_spread(&[4.0; 6]).unwrap();
    assert_eq!(flat.rel_var, 0.0);
    assert_eq!(rate_factor_ci(flat, flat, 0.99), (0.0, 0.0));
    // Blocks 9, 11 (mean 10, sd √2): relative variance 2 / 2 / 100.
    let s = rate_spread(&[9.0, 11.0]).unwrap();
    assert!((s.rel_var - 0.01).abs() < 1e-12 && (s.df - 1.0).abs() < 1e-12);
    // Wider with fewer degrees of freedom, symmetric on the log scale.
    let (lo, hi) = rate_factor_ci(s, s, 0.99);
    assert!(((1.0 + lo) * (1.0 + hi) - 1.0).abs() < 1e-12);
    let many = RateSpread {
        rel_var: 0.01,
        df: 1000.0,
    };
    let (_, hi_many) = rate_factor_ci(many, many, 0.99);
    assert!(hi > hi_many && hi_many > 0.0);
}

/// The search for a rank's bin finds the first bin whose count exceeds the rank from wherever
/// it starts: at the answer, next to it, or far away on either side.
#[test]
fn the_bin_of_a_rank_is_found_from_any_starting_bin() {
    let mut rng = generator(5);
    let requests: Vec<ItlHistogram> = (0..23)
        .map(|i| {
            let gaps: Vec<f64> = (0..(1 + i % 7))
                .map(|_| 10.0 * (1.2 * std_normal(&mut rng)).exp())
                .collect();
            ItlHistogram::from_gaps(&gaps)
        })
        .collect();
    let side = GapRequests {
        requests: &requests,
        m: 23,
    };
    let mut fast = GapResampler::new(side).unwrap();
    let mut draws = generator(6);
    for _ in 0..5 {
        fast.draw(0.5, &mut draws);
        let total = fast.up_to(fast.width - 1);
        for rank in 0..total {
            let want = (0..fast.width).find(|&j| fast.up_to(j) > rank).unwrap();
            for from in 0..fast.width + 3 {
                assert_eq!(
                    fast.bin_of_rank(rank, from),
                    want,
                    "rank {rank} from {from}"
                );
            }
        }
    }
}

/// The search over cumulative counts finds what pooling the drawn requests' gaps into a
/// dense array and scanning it (`stats::itl::quantile_of_counts`) finds, draw for draw.
#[test]
fn gap_resampler_matches_pooling_the_drawn_requests() {
    let mut rng = generator(4);
    let requests: Vec<ItlHistogram> = (0..37)
        .map(|i| {
            let speed = 10.0 * (0.4 * std_normal(&mut rng)).exp();
            let gaps: Vec<f64> = (0..(1 + i % 9))
                .map(|_| speed * (0.8 * std_normal(&mut rng)).exp())
                .collect();
            ItlHistogram::from_gaps(&gaps)
        })
        .collect();
    for (m, q) in [(37, 0.9), (12, 0.5), (1, 0.99), (37, 1.0), (20, 0.0)] {
        let side = GapRequests {
            requests: &requests,
            m,
        };
        let mut fast = GapResampler::new(side).unwrap();
        let (mut a, mut b) = (generator(7), generator(7));
        for _ in 0..200 {
            let got = fast.draw(q, &mut a);
            let mut pooled = PooledGaps::default();
            for _ in 0..m {
                let i = ((unit(&mut b) * requests.len() as f64).ceil() as usize)
                    .clamp(1, requests.len())
                    - 1;
                pooled.add(&requests[i]);
            }
            let want = pooled.quantile(q).unwrap();
            assert_eq!(got, want, "m {m}, q {q}");
        }
    }
}

#[test]
fn the_mean_ratio_ci_covers_the_change_and_its_normal_limit_agrees() {
    // Costs of 1 or 3 (mean 2, SD 1) against the same values doubled: the ratio is +100%; each
    // mean of 400 is known within 2.5% (SE), the ratio within √2 × 2.5% × 2 ≈ 7% (SE), so the
    // 99% CI is about ±18% around +100%.
    let base: Vec<f64> = (0..400)
        .map(|i| if i % 2 == 0 { 1.0 } else { 3.0 })
        .collect();
    let new: Vec<f64> = base.iter().map(|v| v * 2.0).collect();
    fn side(v: &[f64], m: usize) -> Resampled<'_> {
        Resampled { sorted: v, m }
    }
    let mut rng = generator(3);
    let (lo, hi) =
        bootstrap_mean_ratio_ci(side(&base, 400), side(&new, 400), 4000, 0.99, &mut rng).unwrap();
    assert!(
        lo > 0.75 && lo < 0.95 && hi > 1.05 && hi < 1.25,
        "[{lo}, {hi}]"
    );
    // The same sides compared with themselves straddle 0.
    let (lo, hi) =
        bootstrap_mean_ratio_ci(side(&base, 400), side(&base, 400), 4000, 0.99, &mut rng).unwrap();
    assert!(lo < 0.0 && hi > 0.0, "[{lo}, {hi}]");
    // Past EXACT_MEAN_DRAWS the normal limit: SE 0.25% per side, 99% half-width ≈ 0.9%.
    let many: Vec<f64> = (0..40_000)
        .map(|i| if i % 2 == 0 { 1.0 } else { 3.0 })
        .collect();
    let (lo, hi) = bootstrap_mean_ratio_ci(
        side(&many, 40_000),
        side(&many, 40_000),
        4000,
        0.99,
        &mut rng,
    )
    .unwrap();
    let half = (hi - lo) / 2.0;
    assert!(half > 0.0075 && half < 0.011, "half-width {half}");
    assert_eq!(
        bootstrap_mean_ratio_ci(side(&[], 0), side(&new, 4), 10, 0.99, &mut rng),
        None
    );
}
