//! Tests of `compare()` as a whole: matching, refusal, error rate, throughput, findings,
//! unmatched steps, determinism and the exit-code policy. The latency rules themselves are
//! tested in `latency.rs`, the statistics in `stats::inference`.

use super::*;
use crate::error::ExitCode;
use rand::rngs::StdRng;
use rand::SeedableRng;

fn row(model: &str, step: u32, conc: u32, n: u64, ttft_p90: f64) -> StepSummary {
    StepSummary {
        model: model.into(),
        step,
        concurrency: conc,
        attempted: n,
        succeeded: n,
        ttft_p50_ms: Some(ttft_p90 * 0.6),
        ttft_p90_ms: Some(ttft_p90),
        ttft_p99_ms: Some(ttft_p90 * 1.5),
        tpot_p50_ms: Some(20.0),
        tpot_p90_ms: Some(25.0),
        tpot_p99_ms: Some(30.0),
        itl_p50_ms: Some(20.0),
        itl_p90_ms: Some(26.0),
        itl_p99_ms: Some(40.0),
        e2e_p50_ms: Some(3000.0),
        e2e_p90_ms: Some(3500.0),
        e2e_p99_ms: Some(4000.0),
        ttft_mean_ms: Some(ttft_p90 * 0.6),
        e2e_mean_ms: Some(3000.0),
        output_tokens: n * 100,
        tpm: 60_000.0,
        rps: 5.0,
        duration_s: 80.0,
        ..StepSummary::default()
    }
}

fn side(label: &str, rows: Vec<StepSummary>) -> Side {
    Side {
        label: label.into(),
        fingerprint: "fp1".into(),
        summaries: rows,
        ..Side::default()
    }
}

fn find<'a>(
    c: &'a Comparison,
    model: &str,
    conc: Option<u32>,
    metric: Metric,
    p: Option<Percentile>,
) -> &'a Check {
    c.checks
        .iter()
        .find(|k| {
            k.model == model && k.concurrency == conc && k.metric == metric && k.percentile == p
        })
        .unwrap_or_else(|| panic!("no check {model} {conc:?} {metric:?} {p:?}"))
}

fn opts() -> CompareOptions {
    CompareOptions::default()
}

#[test]
fn refuses_different_workloads_with_a_unified_diff() {
    let mut b = side("baselines/demo.csv", vec![row("m", 1, 10, 400, 800.0)]);
    let mut n = side("runs/demo/2024", vec![row("m", 1, 10, 400, 800.0)]);
    n.fingerprint = "fp2".into();
    b.workload_yaml = Some("name: demo\nmax_tokens: 200\nladder: [5, 10]\n".into());
    n.workload_yaml = Some("name: demo\nmax_tokens: 300\nladder: [5, 10]\n".into());
    let c = compare(&b, &n, &opts());
    let r = c.refused.as_ref().expect("refused");
    assert_eq!((r.base_fp.as_str(), r.new_fp.as_str()), ("fp1", "fp2"));
    assert!(
        r.unified_diff
            .starts_with("--- baselines/demo.csv\n+++ runs/demo/2024\n"),
        "{}",
        r.unified_diff
    );
    assert!(
        r.unified_diff
            .contains("\n-max_tokens: 200\n+max_tokens: 300\n"),
        "{}",
        r.unified_diff
    );
    assert!(c.checks.is_empty());
    assert_eq!(
        (c.outcome(), c.exit_code()),
        (Outcome::Refused, ExitCode::Error)
    );

    n.workload_yaml = None;
    let c = compare(&b, &n, &opts());
    assert_eq!(
        c.refused.unwrap().unified_diff,
        "workload not recorded in runs/demo/2024; cannot show what changed\n"
    );

    let allowed = CompareOptions {
        allow_different_workload: true,
        ..opts()
    };
    let c = compare(&b, &n, &allowed);
    assert!(c.refused.is_none());
    assert!(!c.checks.is_empty());
    assert!(
        c.notes[0].contains("fingerprint fp1 vs fp2"),
        "{:?}",
        c.notes
    );
}

#[test]
fn matches_steps_by_concurrency_and_lists_unmatched() {
    // Baseline ladder [10, 20]; new ladder [5, 10] plus a model the baseline never ran.
    let b = side(
        "base",
        vec![
            row("m", 1, 10, 400, 800.0),
            row("m", 2, 20, 400, 900.0),
            row("old", 1, 10, 400, 1.0),
        ],
    );
    let n = side(
        "new",
        vec![
            row("m", 1, 5, 400, 700.0),
            row("m", 2, 10, 400, 800.0),
            row("fresh", 1, 10, 400, 1.0),
        ],
    );
    let c = compare(&b, &n, &opts());
    assert_eq!(
        c.unmatched,
        vec![
            "model fresh: only in the new run (new)",
            "model m at 5 streams: only in the new run (new)",
            "model m at 20 streams: only in the baseline (base)",
            "model old: only in the baseline (base)",
        ]
    );
    // Only concurrency 10 of model m is compared; it carries the new side's step index.
    assert!(c
        .checks
        .iter()
        .all(|k| k.model == "m" && k.concurrency == Some(10) && k.step == Some(2)));
    // 4 latencies × 3 percentiles + error rate + TPM + RPS + decode rate.
    assert_eq!(c.checks.len(), 16);
    let k = find(&c, "m", Some(10), Metric::Ttft, Some(Percentile::P90));
    assert_eq!(
        (k.verdict.clone(), k.method),
        (Verdict::NoChange, Method::Approximate)
    );
    assert_eq!(k.title(), "TTFT P90 at 10 streams");
}

#[test]
fn summaries_only_regression_and_exit_code() {
    let b = side("base", vec![row("m", 1, 10, 400, 800.0)]);
    let n = side("new", vec![row("m", 1, 10, 400, 1000.0)]);
    let c = compare(&b, &n, &opts());
    let k = find(&c, "m", Some(10), Metric::Ttft, Some(Percentile::P90));
    assert_eq!(k.verdict, Verdict::Regressed);
    assert!((k.ratio.unwrap() - 0.25).abs() < 1e-12);
    // P99 moved 1200 → 1500 (+25% > 20%).
    assert_eq!(
        find(&c, "m", Some(10), Metric::Ttft, Some(Percentile::P99)).verdict,
        Verdict::Regressed
    );
    assert_eq!(
        find(&c, "m", Some(10), Metric::Ttft, Some(Percentile::P50)).verdict,
        Verdict::Info
    );
    assert_eq!(
        (c.outcome(), c.exit_code()),
        (Outcome::Regression, ExitCode::Regression)
    );
    assert_eq!(
        c.counts(),
        Counts {
            regressed: 2,
            improved: 0,
            below_gate: 0,
            no_change: 8,
            inconclusive: 0,
            skipped: 0
        }
    );
}

#[test]
fn an_unfinished_side_is_never_a_pass() {
    let unfinished = |mut c: Comparison| {
        c.incomplete = vec!["the new run (runs/x) was interrupted".into()];
        c
    };
    // No regression in the steps that ran: incomplete, exit 1 (not 0).
    let b = side("base", vec![row("m", 1, 10, 400, 800.0)]);
    let same = side("new", vec![row("m", 1, 10, 400, 800.0)]);
    let c = unfinished(compare(&b, &same, &opts()));
    assert_eq!(
        (c.outcome(), c.exit_code()),
        (Outcome::Incomplete, ExitCode::Error)
    );
    assert!(c.incomplete_reason().unwrap().contains("was interrupted"));
    // Too few samples to decide: still incomplete (exit 1), not inconclusive.
    let few = |l| side(l, vec![row("m", 1, 10, 20, 800.0)]);
    let c = unfinished(compare(&few("base"), &few("new"), &opts()));
    assert_eq!(c.exit_code(), ExitCode::Error);
    // A regression in the steps that ran is real evidence: exit 3.
    let slower = side("new", vec![row("m", 1, 10, 400, 1000.0)]);
    let c = unfinished(compare(&b, &slower, &opts()));
    assert_eq!(
        (c.outcome(), c.exit_code()),
        (Outcome::Regression, ExitCode::Regression)
    );
    assert_eq!(c.incomplete_reason(), None);
}

#[test]
fn sample_size_advice_counts_the_failed_requests() {
    // 20 attempted, 15 succeeded (25% failed): 40 successes need 54 requests per step.
    let lossy = |l| {
        let mut r = row("m", 1, 10, 20, 800.0);
        r.succeeded = 15;
        r.failed = 5;
        side(l, vec![r])
    };
    let c = compare(&lossy("base"), &lossy("new"), &opts());
    let tpm = find(&c, "m", Some(10), Metric::Tpm, None);
    assert!(
        tpm.detail.contains("(have 15 / 15): use requests_per_step ≥ 54 (40 successes at the 75% success rate seen)"),
        "{}",
        tpm.detail
    );
    assert_eq!(latency::requests_for(40, &[(20, 20), (20, 15)]), 54);
    assert_eq!(latency::requests_for(40, &[(20, 20), (0, 0)]), 40);
    assert_eq!(latency::requests_for(400, &[(20, 0)]), 400);
}

#[test]
fn exit_codes_inconclusive_and_strict() {
    // n = 20: every P90/P99 gate is skipped → inconclusive even without --strict (and so are
    // TPM, RPS and the decode rate, which need 40 successes per side).
    let b = side("base", vec![row("m", 1, 10, 20, 800.0)]);
    let n = side("new", vec![row("m", 1, 10, 20, 800.0)]);
    let c = compare(&b, &n, &opts());
    // 9 gated skips: P90/P99 of TTFT, TPOT, E2E, plus TPM, RPS and the decode rate (ITL is
    // information only).
    assert_eq!(c.counts().skipped, 9);
    assert_eq!(
        (c.outcome(), c.exit_code()),
        (Outcome::Inconclusive, ExitCode::Inconclusive)
    );
    let k = find(&c, "m", Some(10), Metric::Ttft, Some(Percentile::P90));
    assert!(
        matches!(&k.verdict, Verdict::Skipped { reason } if reason.contains("use requests_per_step ≥ 40"))
    );

    // n = 100: P90 gates run, P99 gates skipped → pass, but inconclusive with --strict.
    let b = side("base", vec![row("m", 1, 10, 100, 800.0)]);
    let n = side("new", vec![row("m", 1, 10, 100, 800.0)]);
    assert_eq!(compare(&b, &n, &opts()).exit_code(), ExitCode::Ok);
    let strict = CompareOptions {
        strict: true,
        ..opts()
    };
    assert_eq!(compare(&b, &n, &strict).exit_code(), ExitCode::Inconclusive);

    // A regression wins over inconclusive.
    let mut worse = row("m", 1, 10, 20, 800.0);
    worse.attempted = 2000;
    worse.failed = 1000;
    let mut b0 = row("m", 1, 10, 20, 800.0);
    b0.attempted = 2000;
    let c = compare(&side("b", vec![b0]), &side("n", vec![worse]), &opts());
    assert_eq!(c.exit_code(), ExitCode::Regression);

    // No matched step at all: nothing was judged.
    let c = compare(
        &side("b", vec![row("m", 1, 10, 400, 1.0)]),
        &side("n", vec![row("m", 1, 20, 400, 1.0)]),
        &opts(),
    );
    assert_eq!(c.exit_code(), ExitCode::Inconclusive);
}

#[test]
fn error_rate_needs_size_and_significance() {
    let judge = |bf: u64, ba: u64, nf: u64, na: u64| {
        let mut b = row("m", 1, 10, 400, 800.0);
        let mut n = row("m", 1, 10, 400, 800.0);
        (b.failed, b.attempted, n.failed, n.attempted) = (bf, ba, nf, na);
        let c = compare(&side("b", vec![b]), &side("n", vec![n]), &opts());
        find(&c, "m", Some(10), Metric::ErrorRate, None).clone()
    };
    let k = judge(10, 1000, 40, 1000);
    assert_eq!(
        (k.verdict.clone(), k.method),
        (Verdict::Regressed, Method::FisherExact)
    );
    assert_eq!((k.base, k.new), (Some(0.01), Some(0.04)));
    assert!(k.detail.contains("+3.00 pp"), "{}", k.detail);
    // +2 pp on 50 requests: above the gate, not significant: the data cannot tell.
    let k = judge(0, 50, 1, 50);
    assert!(
        matches!(k.verdict, Verdict::Inconclusive { requests_per_step: Some(n) } if n > 50),
        "{:?}",
        k.verdict
    );
    assert!(
        k.detail.contains("requests per step would decide it"),
        "{}",
        k.detail
    );
    // +0.1 pp on 1000 requests: within the gate and not significant.
    assert_eq!(judge(10, 1000, 11, 1000).verdict, Verdict::NoChange);
    // +0.5 pp on 100k requests: significant, below the 1 pp gate.
    assert_eq!(
        judge(1000, 100_000, 1500, 100_000).verdict,
        Verdict::BelowGate
    );
    assert_eq!(judge(40, 1000, 10, 1000).verdict, Verdict::Improved);
    assert!(matches!(
        judge(0, 0, 1, 10).verdict,
        Verdict::Skipped { .. }
    ));
}

#[test]
fn throughput_point_rule() {
    let judge = |tpm_b: f64, tpm_n: f64, dur_n: f64| {
        let b = row("m", 1, 10, 400, 800.0);
        let mut n = row("m", 1, 10, 400, 800.0);
        (n.tpm, n.duration_s) = (tpm_n, dur_n);
        let mut b2 = b.clone();
        b2.tpm = tpm_b;
        let c = compare(&side("b", vec![b2]), &side("n", vec![n]), &opts());
        find(&c, "m", Some(10), Metric::Tpm, None).verdict.clone()
    };
    assert_eq!(judge(60_000.0, 48_000.0, 80.0), Verdict::Regressed);
    assert_eq!(judge(60_000.0, 57_000.0, 80.0), Verdict::NoChange);
    assert_eq!(judge(60_000.0, 72_000.0, 80.0), Verdict::Improved);
    assert!(matches!(judge(60_000.0, 1.0, 0.0), Verdict::Skipped { .. }));
    assert!(matches!(judge(0.0, 1.0, 80.0), Verdict::Skipped { .. }));
}

#[test]
fn knee_and_wall_moves() {
    let judge = |b: Option<Option<u32>>, n: Option<Option<u32>>| {
        let mut bs = side("b", vec![row("m", 1, 50, 400, 800.0)]);
        let mut ns = side("n", vec![row("m", 1, 50, 400, 800.0)]);
        if let Some(b) = b {
            bs.knee.insert("m".into(), b);
        }
        if let Some(n) = n {
            ns.knee.insert("m".into(), n);
        }
        let c = compare(&bs, &ns, &opts());
        c.checks
            .iter()
            .find(|k| k.metric == Metric::Knee)
            .map(|k| (k.verdict.clone(), k.detail.clone()))
    };
    let (v, d) = judge(Some(Some(50)), Some(Some(20))).unwrap();
    assert_eq!(
        (v, d.as_str()),
        (Verdict::Regressed, "knee moved down from 50 to 20 streams")
    );
    assert_eq!(
        judge(Some(None), Some(Some(20))).unwrap().0,
        Verdict::Regressed
    );
    assert_eq!(
        judge(Some(Some(20)), Some(Some(20))).unwrap().0,
        Verdict::NoChange
    );
    assert_eq!(
        judge(Some(Some(20)), Some(Some(50))).unwrap().0,
        Verdict::Improved
    );
    assert_eq!(
        judge(Some(Some(20)), Some(None)).unwrap().0,
        Verdict::Improved
    );
    assert_eq!(judge(Some(None), Some(None)).unwrap().0, Verdict::NoChange);
    // "Gone" needs the new run to have reached the baseline's knee step.
    let mut bs = side("b", vec![row("m", 1, 50, 400, 800.0)]);
    let mut ns = side("n", vec![row("m", 1, 10, 400, 800.0)]);
    bs.knee.insert("m".into(), Some(20));
    ns.knee.insert("m".into(), None);
    let c = compare(&bs, &ns, &opts());
    let k = c.checks.iter().find(|k| k.metric == Metric::Knee).unwrap();
    assert!(
        matches!(&k.verdict, Verdict::Skipped { reason } if reason.contains("stopped at 10 streams")),
        "{:?}",
        k.verdict
    );
    assert!(matches!(
        judge(Some(Some(20)), None).unwrap().0,
        Verdict::Skipped { .. }
    ));
    assert_eq!(judge(None, None), None);

    // The wall uses the same rule and fails the comparison.
    let mut bs = side("b", vec![row("m", 1, 10, 400, 800.0)]);
    let mut ns = side("n", vec![row("m", 1, 10, 400, 800.0)]);
    bs.wall.insert("m".into(), None);
    ns.wall.insert("m".into(), Some(10));
    let c = compare(&bs, &ns, &opts());
    let w = c.checks.iter().find(|k| k.metric == Metric::Wall).unwrap();
    assert_eq!(
        (w.verdict.clone(), w.new, w.title()),
        (Verdict::Regressed, Some(10.0), "wall".to_string())
    );
    assert_eq!(c.exit_code(), ExitCode::Regression);
}

fn samples(model: &str, step: u32, n: usize, scale: f64, seed: u64) -> Vec<RequestSample> {
    let mut rng = StdRng::seed_from_u64(seed);
    (0..n)
        .map(|_| {
            let z = crate::stats::inference::std_normal(&mut rng);
            RequestSample {
                model: model.into(),
                step,
                worker: 0,
                started_at_ms: 0.0,
                ok: true,
                ttft_ms: Some(scale * 500.0 * (0.4 * z).exp()),
                tpot_ms: Some(20.0 + z.abs()),
                e2e_ms: Some(3000.0 + 100.0 * z),
                ttfc_ms: None,
                output_tokens: Some(100),
                input_tokens: None,
                cached_tokens: None,
                cache_write_tokens: None,
                reasoning_tokens: None,
                sent_to: None,
                itl: None,
                parts: None,
            }
        })
        .collect()
}

#[test]
fn samples_use_the_bootstrap_except_itl_and_are_deterministic() {
    let mut b = side("b", vec![row("m", 1, 10, 400, 800.0)]);
    let mut n = side("n", vec![row("m", 3, 10, 400, 800.0)]);
    b.samples = Some(samples("m", 1, 400, 1.0, 1));
    // New side: step index 3 holds concurrency 10; a failed request must not count.
    let mut ns = samples("m", 3, 400, 1.4, 2);
    ns.push(RequestSample {
        ok: false,
        ttft_ms: Some(1e9),
        ..ns[0].clone()
    });
    n.samples = Some(ns);
    let c = compare(&b, &n, &opts());
    let ttft = find(&c, "m", Some(10), Metric::Ttft, Some(Percentile::P90));
    assert_eq!(
        (ttft.method, ttft.verdict.clone()),
        (Method::Bootstrap, Verdict::Regressed),
        "{}",
        ttft.detail
    );
    assert!(ttft.ci.is_some());
    let itl = find(&c, "m", Some(10), Metric::Itl, Some(Percentile::P90));
    assert_eq!((itl.method, itl.gated), (Method::Approximate, false));
    assert!(
        itl.detail
            .contains("neither side kept per-request inter-token gaps"),
        "{}",
        itl.detail
    );
    // P99 on exactly 400 successful samples per side is judged, not skipped.
    let p99 = find(&c, "m", Some(10), Metric::Ttft, Some(Percentile::P99));
    assert!(
        !matches!(p99.verdict, Verdict::Skipped { .. }),
        "{}",
        p99.detail
    );

    // Same inputs, same output; and adding another model does not change this one's CI.
    assert_eq!(compare(&b, &n, &opts()), c);
    b.summaries.push(row("z", 1, 10, 400, 800.0));
    n.summaries.push(row("z", 1, 10, 400, 800.0));
    let c2 = compare(&b, &n, &opts());
    assert_eq!(
        find(&c2, "m", Some(10), Metric::Ttft, Some(Percentile::P90)).ci,
        ttft.ci
    );
    // A different seed gives a (slightly) different CI.
    let other = compare(&b, &n, &CompareOptions { seed: 99, ..opts() });
    assert_ne!(
        find(&other, "m", Some(10), Metric::Ttft, Some(Percentile::P90)).ci,
        ttft.ci
    );
}

#[test]
fn duplicate_rows_are_noted() {
    let b = side(
        "b",
        vec![row("m", 1, 10, 400, 800.0), row("m", 2, 10, 400, 800.0)],
    );
    let n = side("n", vec![row("m", 1, 10, 400, 800.0)]);
    let c = compare(&b, &n, &opts());
    assert_eq!(
        c.notes,
        vec!["the baseline has two rows for model m at 10 streams; the later one was used"]
    );
}

/// A closed-loop step: `workers` streams, each sending `per_worker` requests back to back;
/// request k of worker w takes `e2e(w, k)` ms and yields 100 tokens.
fn closed_loop(
    step: u32,
    workers: u32,
    per_worker: u32,
    e2e: impl Fn(u32, u32) -> f64,
) -> Vec<RequestSample> {
    let mut out = Vec::new();
    for w in 0..workers {
        let mut t = f64::from(w) * 10.0;
        for k in 0..per_worker {
            let d = e2e(w, k);
            out.push(RequestSample {
                model: "m".into(),
                step,
                worker: w,
                started_at_ms: t,
                ok: true,
                ttft_ms: Some(200.0 + (d % 97.0)),
                tpot_ms: Some(10.0),
                e2e_ms: Some(d),
                ttfc_ms: None,
                output_tokens: Some(100),
                input_tokens: None,
                cached_tokens: None,
                cache_write_tokens: None,
                reasoning_tokens: None,
                sent_to: None,
                itl: None,
                parts: None,
            });
            t += d;
        }
    }
    out
}

/// Deterministic spread of service times: 500..=2,450 ms in a scrambled order.
fn service(w: u32, k: u32, seed: u32) -> f64 {
    500.0 + f64::from((w * 131 + k * 37 + seed * 17) % 40) * 50.0
}

#[test]
fn throughput_uses_the_steady_window_with_a_ci() {
    let with = |samples: Vec<RequestSample>, rps: f64| {
        let mut s = side("x", vec![row("m", 1, 8, 400, 800.0)]);
        s.summaries[0].rps = rps;
        s.samples = Some(samples);
        s
    };
    let base = with(closed_loop(1, 8, 50, |w, k| service(w, k, 0)), 5.0);
    let same = with(closed_loop(1, 8, 50, |w, k| service(w, k, 3)), 5.0);
    let slower = with(closed_loop(1, 8, 50, |w, k| 1.3 * service(w, k, 3)), 5.0);
    let c = compare(&base, &same, &opts());
    let rps = find(&c, "m", Some(8), Metric::Rps, None);
    assert_eq!(rps.method, Method::BatchMeans);
    let (lo, hi) = rps.ci.expect("a CI");
    assert!(lo < 0.0 && hi > 0.0, "{lo} {hi}");
    assert!(
        matches!(
            rps.verdict,
            Verdict::NoChange | Verdict::Inconclusive { .. }
        ),
        "{}",
        rps.detail
    );
    assert!(rps.detail.contains("steady windows"), "{}", rps.detail);
    // Without a recorded steady rate the point value is the window's (8 streams / 1.475 s mean
    // service ≈ 5.4/s), not the summary's whole-step 5.0; with one, exactly the recorded one.
    let point = rps.base.unwrap();
    assert!((5.0..6.0).contains(&point) && point != 5.0, "{point}");
    let mut recorded = base.clone();
    recorded.summaries[0].rps_steady = Some(5.25);
    recorded.summaries[0].tpm_steady = Some(31_000.0);
    let c = compare(&recorded, &recorded, &opts());
    assert_eq!(find(&c, "m", Some(8), Metric::Rps, None).base, Some(5.25));
    assert_eq!(
        find(&c, "m", Some(8), Metric::Tpm, None).new,
        Some(31_000.0)
    );
    let c = compare(&base, &slower, &opts());
    for metric in [Metric::Rps, Metric::Tpm] {
        let k = find(&c, "m", Some(8), metric, None);
        assert_eq!(k.verdict, Verdict::Regressed, "{}", k.detail);
        assert!(k.ci.unwrap().1 < 0.0);
    }
}

/// A capped server finishes its streams in bursts (16 slots, 50 streams queued, a 735 ms
/// cycle): its throughput is the steadiest figure of the run, so a side diffed against itself
/// decides "no change", and the same server 15% slower is a regression.
#[test]
fn throughput_at_a_cap_decides() {
    // 50 workers in a closed loop in front of a FIFO queue and 16 slots, 130 requests.
    let capped = |cycle_ms: f64| {
        let mut free = [0.0f64; 16];
        // (arrival, worker), served in arrival order.
        let mut arrivals: Vec<(f64, u32)> = (0..50).map(|w| (f64::from(w) * 0.1, w)).collect();
        let (mut v, mut sent) = (Vec::new(), 50u32);
        while let Some(i) =
            (0..arrivals.len()).min_by(|&a, &b| arrivals[a].0.total_cmp(&arrivals[b].0))
        {
            let (at, w) = arrivals.swap_remove(i);
            let slot = (0..16)
                .min_by(|&a, &b| free[a].total_cmp(&free[b]))
                .unwrap();
            let begin = free[slot].max(at);
            let service = cycle_ms * (1.0 + 0.01 * f64::from((v.len() as u32 * 7) % 5));
            free[slot] = begin + service;
            v.push(RequestSample {
                model: "m".into(),
                step: 1,
                worker: w,
                started_at_ms: at,
                ok: true,
                ttft_ms: Some(begin - at + 0.2 * service),
                tpot_ms: Some(15.0),
                e2e_ms: Some(free[slot] - at),
                ttfc_ms: None,
                output_tokens: Some(40),
                input_tokens: None,
                cached_tokens: None,
                cache_write_tokens: None,
                reasoning_tokens: None,
                sent_to: None,
                itl: None,
                parts: None,
            });
            if sent < 130 {
                sent += 1;
                arrivals.push((free[slot], w));
            }
        }
        let mut s = side("x", vec![row("m", 1, 50, 130, 800.0)]);
        s.samples = Some(v);
        s
    };
    let base = capped(735.0);
    let c = compare(&base, &base, &opts());
    for metric in [Metric::Rps, Metric::Tpm] {
        let k = find(&c, "m", Some(50), metric, None);
        assert_eq!(k.verdict, Verdict::NoChange, "{}", k.detail);
    }
    let c = compare(&base, &capped(735.0 / 0.85), &opts());
    for metric in [Metric::Rps, Metric::Tpm] {
        let k = find(&c, "m", Some(50), metric, None);
        assert_eq!(k.verdict, Verdict::Regressed, "{}", k.detail);
    }
}

#[test]
fn token_counts_from_different_sources_skip_tpot_and_tpm() {
    let mut b = row("m", 1, 10, 400, 800.0);
    let mut n = row("m", 1, 10, 400, 800.0);
    b.tokens_usage_share = Some(1.0);
    n.tokens_usage_share = Some(0.0);
    n.tpot_p90_ms = Some(50.0);
    let c = compare(
        &side("b", vec![b.clone()]),
        &side("n", vec![n.clone()]),
        &opts(),
    );
    let tpot = find(&c, "m", Some(10), Metric::Tpot, Some(Percentile::P90));
    assert!(
        matches!(&tpot.verdict, Verdict::Skipped { reason } if reason.contains("from server usage, the new run from chunk counts")),
        "{:?}",
        tpot.verdict
    );
    assert!(matches!(
        find(&c, "m", Some(10), Metric::Tpm, None).verdict,
        Verdict::Skipped { .. }
    ));
    // TTFT and RPS do not depend on token counts.
    assert!(!matches!(
        find(&c, "m", Some(10), Metric::Rps, None).verdict,
        Verdict::Skipped { .. }
    ));
    // Same source, or an older summary without the column: judged.
    n.tokens_usage_share = None;
    let c = compare(&side("b", vec![b]), &side("n", vec![n]), &opts());
    assert_eq!(
        find(&c, "m", Some(10), Metric::Tpot, Some(Percentile::P90)).verdict,
        Verdict::Regressed
    );
}

#[test]
fn inconclusive_latency_counts_and_fails_only_under_strict() {
    // 60 requests per side, one side with a long tail: the CI spans 0 and reaches past +10%.
    let spread = |seed: u64, scale: f64| -> Vec<RequestSample> {
        let mut v = samples("m", 1, 60, scale, seed);
        for (i, s) in v.iter_mut().enumerate() {
            s.started_at_ms = i as f64 * 100.0;
            s.worker = (i % 4) as u32;
        }
        v
    };
    let mut b = side("b", vec![row("m", 1, 4, 60, 800.0)]);
    let mut n = side("n", vec![row("m", 1, 4, 60, 800.0)]);
    b.samples = Some(spread(1, 1.0));
    n.samples = Some(spread(2, 1.05));
    let c = compare(&b, &n, &opts());
    let k = find(&c, "m", Some(4), Metric::Ttft, Some(Percentile::P90));
    let (lo, hi) = k.ci.unwrap();
    assert!(lo < 0.0 && hi > 0.10, "{lo} {hi}");
    let Verdict::Inconclusive {
        requests_per_step: Some(need),
    } = k.verdict
    else {
        panic!("{:?}: {}", k.verdict, k.detail)
    };
    assert!(need > 60, "{need}");
    assert!(
        k.detail.starts_with("inconclusive: TTFT P90"),
        "{}",
        k.detail
    );
    assert!(c.counts().inconclusive >= 1);
    assert_ne!(c.exit_code(), ExitCode::Regression);
    let strict = CompareOptions {
        strict: true,
        ..opts()
    };
    assert_eq!(compare(&b, &n, &strict).exit_code(), ExitCode::Inconclusive);
}

#[test]
fn no_change_needs_the_whole_ci_inside_the_gate() {
    // 2,000 requests per side from the same distribution: a narrow CI around 0.
    let mut b = side("b", vec![row("m", 1, 4, 2000, 800.0)]);
    let mut n = side("n", vec![row("m", 1, 4, 2000, 800.0)]);
    b.samples = Some(samples("m", 1, 2000, 1.0, 1));
    n.samples = Some(samples("m", 1, 2000, 1.0, 2));
    let c = compare(&b, &n, &opts());
    let k = find(&c, "m", Some(4), Metric::Ttft, Some(Percentile::P90));
    let (lo, hi) = k.ci.unwrap();
    assert!(lo > -0.10 && hi < 0.10, "{lo} {hi}");
    assert!(
        matches!(k.verdict, Verdict::NoChange | Verdict::BelowGate),
        "{}",
        k.detail
    );
}

#[test]
fn sample_size_notes_say_which_gates_will_be_skipped() {
    use crate::scenario::{Budget, LadderOver, Load, LoadMode};
    use std::time::Duration;
    let load = |ladder: Vec<u32>, budget| Load {
        refine: 0,
        ladder,
        mode: LoadMode::Concurrency,
        ladder_over: LadderOver::Load,
        seed: 1,
        budget,
        warmup_requests: 0,
        ramp_up: Duration::ZERO,
        pause_between_steps: Duration::ZERO,
        trace: None,
        search: None,
        agent: None,
    };
    assert_eq!(
        sample_size_notes(&load(vec![5, 10], Budget::RequestsPerStep(120))),
        vec!["P99 gates need 400 requests per step; this scenario has 120: they will be skipped"]
    );
    assert!(sample_size_notes(&load(vec![5], Budget::RequestsPerStep(400))).is_empty());
    let notes = sample_size_notes(&load(vec![1, 20], Budget::RequestsPerWorker(20)));
    assert_eq!(
        notes,
        vec![
            "P90 and throughput gates need 40 requests per step; this scenario has 20 at 1 stream: they will be skipped",
            "P99 gates need 400 requests per step; this scenario has 20 at 1 stream: they will be skipped"
        ]
        .into_iter()
        .map(String::from)
        .collect::<Vec<_>>()
    );
    let notes = sample_size_notes(&load(vec![4], Budget::RequestsPerStep(10)));
    assert_eq!(notes.len(), 2, "{notes:?}");
    assert!(notes[1].contains("skipped too"));
    let notes = sample_size_notes(&load(vec![4], Budget::Duration(Duration::from_secs(60))));
    assert!(notes[0].contains("depends on the server"));
}

#[test]
fn a_knee_move_needs_separated_ttft_bounds_at_the_new_knee_step() {
    let judge = |new_lo: f64| {
        let mut b = row("m", 1, 20, 400, 800.0);
        let mut n = row("m", 1, 20, 400, 900.0);
        (b.ttft_p90_lo_ms, b.ttft_p90_hi_ms) = (Some(700.0), Some(950.0));
        (n.ttft_p90_lo_ms, n.ttft_p90_hi_ms) = (Some(new_lo), Some(1200.0));
        let mut bs = side("b", vec![b]);
        let mut ns = side("n", vec![n]);
        bs.knee.insert("m".into(), Some(50));
        ns.knee.insert("m".into(), Some(20));
        let c = compare(&bs, &ns, &opts());
        c.checks
            .iter()
            .find(|k| k.metric == Metric::Knee)
            .unwrap()
            .clone()
    };
    let k = judge(900.0);
    assert!(
        matches!(k.verdict, Verdict::Inconclusive { .. }),
        "{:?}",
        k.verdict
    );
    assert!(
        k.detail.contains("may have flipped by chance"),
        "{}",
        k.detail
    );
    assert_eq!(judge(1000.0).verdict, Verdict::Regressed);
}

#[test]
fn a_pooled_baseline_says_what_its_cis_cover() {
    let runs = |k: usize, fp: &str| -> Vec<PooledRun> {
        (0..k)
            .map(|i| PooledRun {
                id: format!("2026113{i}T000000Z"),
                summaries: vec![StepSummary {
                    fingerprint: fp.into(),
                    ..row("m", 1, 10, 400, 800.0 + 40.0 * i as f64)
                }],
            })
            .collect()
    };
    let notes = |pool: Vec<PooledRun>| {
        let mut b = side("b", vec![row("m", 1, 10, 400, 800.0)]);
        b.pool = pool;
        let n = side("n", vec![row("m", 1, 10, 400, 800.0)]);
        compare(&b, &n, &opts()).notes
    };
    assert!(notes(vec![]).is_empty());
    let two = notes(runs(2, "fp1"));
    assert!(
        two.iter()
            .any(|n| n.contains("pools 2 runs: the CIs cover sampling within one run only")),
        "{two:?}"
    );
    let three = notes(runs(3, "fp1"));
    assert!(
        three.iter().any(|n| n
            .contains("the baseline pools 3 runs (20261130T000000Z … 20261132T000000Z)")
            && n.contains("widened by the run-to-run spread")),
        "{three:?}"
    );
    // A run of another workload is left out, and then 2 runs remain.
    let mut mixed = runs(3, "fp1");
    mixed[1].summaries[0].fingerprint = "other".into();
    let mixed = notes(mixed);
    assert!(
        mixed
            .iter()
            .any(|n| n.contains("20261131T000000Z has another workload")),
        "{mixed:?}"
    );
    assert!(
        mixed.iter().any(|n| n.contains("pools 2 runs")),
        "{mixed:?}"
    );
}

#[test]
fn a_knee_move_with_samples_needs_the_ttft_check_to_exclude_zero() {
    // Same TTFT distribution on both sides at step 20: the knee "moved" from 50 to 20 by
    // chance, and the TTFT P90 check's CI spans 0, so the move is inconclusive.
    let judge = |scale: f64| {
        let mut b = side("b", vec![row("m", 1, 20, 400, 800.0)]);
        let mut n = side("n", vec![row("m", 1, 20, 400, 800.0)]);
        b.samples = Some(samples("m", 1, 400, 1.0, 7));
        n.samples = Some(samples("m", 1, 400, scale, 8));
        b.knee.insert("m".into(), Some(50));
        n.knee.insert("m".into(), Some(20));
        let c = compare(&b, &n, &opts());
        c.checks
            .iter()
            .find(|k| k.metric == Metric::Knee)
            .unwrap()
            .clone()
    };
    let k = judge(1.0);
    assert!(
        matches!(k.verdict, Verdict::Inconclusive { .. }),
        "{}",
        k.detail
    );
    assert!(
        k.detail.contains("rise of TTFT P90 is not confirmed"),
        "{}",
        k.detail
    );
    assert_eq!(judge(1.6).verdict, Verdict::Regressed);
}

/// n requests whose 60 gaps each come from the request's own decode speed (20 ms × a per-request
/// log-normal factor, σ 0.25) with ±5% jitter per gap, all × `scale`.
fn gap_samples(step: u32, n: usize, scale: f64, seed: u64) -> Vec<RequestSample> {
    let mut rng = StdRng::seed_from_u64(seed);
    (0..n)
        .map(|i| {
            let speed = 20.0 * scale * (0.25 * crate::stats::inference::std_normal(&mut rng)).exp();
            let gaps: Vec<f64> = (0..60)
                .map(|_| speed * (1.0 + 0.05 * crate::stats::inference::std_normal(&mut rng)))
                .collect();
            RequestSample {
                model: "m".into(),
                step,
                worker: (i % 8) as u32,
                started_at_ms: i as f64 * 100.0,
                ok: true,
                ttft_ms: Some(200.0),
                tpot_ms: Some(speed),
                e2e_ms: Some(200.0 + 60.0 * speed),
                ttfc_ms: None,
                output_tokens: Some(61),
                input_tokens: None,
                cached_tokens: None,
                cache_write_tokens: None,
                reasoning_tokens: None,
                sent_to: None,
                itl: Some(crate::model::ItlHistogram::from_gaps(&gaps)),
                parts: None,
            }
        })
        .collect()
}

#[test]
fn itl_is_judged_by_resampling_whole_requests_when_both_sides_kept_gaps() {
    let judged = |scale: f64, seed: u64, base_gaps: bool| {
        let mut b = side("b", vec![row("m", 1, 8, 120, 800.0)]);
        let mut n = side("n", vec![row("m", 1, 8, 120, 800.0)]);
        let mut bs = gap_samples(1, 120, 1.0, 1);
        if !base_gaps {
            bs.iter_mut().for_each(|r| r.itl = None);
        }
        b.samples = Some(bs);
        n.samples = Some(gap_samples(1, 120, scale, seed));
        let c = compare(&b, &n, &opts());
        let p90 = find(&c, "m", Some(8), Metric::Itl, Some(Percentile::P90)).clone();
        let p99 = find(&c, "m", Some(8), Metric::Itl, Some(Percentile::P99)).clone();
        (p90, p99)
    };
    // Decode 30% slower: regressed, with a bootstrap CI, gated.
    let (slow, p99) = judged(1.3, 2, true);
    assert_eq!(
        (slow.method, slow.verdict.clone(), slow.gated),
        (Method::Bootstrap, Verdict::Regressed, true),
        "{}",
        slow.detail
    );
    let (lo, hi) = slow.ci.unwrap();
    assert!(lo > 0.0 && hi > 0.3, "{lo} {hi}");
    // P99 counts requests, not gaps: 120 requests (7,200 gaps) are too few.
    assert!(
        matches!(p99.verdict, Verdict::Skipped { ref reason } if reason.contains("(have 120 / 120)")),
        "{}",
        p99.detail
    );
    assert!(p99.gated && p99.ci.is_none());
    // The same server again: never regressed; the CI reflects the spread between requests
    // (each request's 60 gaps move together), so it is far wider than ±1%.
    let (same, _) = judged(1.0, 3, true);
    assert!(
        matches!(
            same.verdict,
            Verdict::NoChange | Verdict::Inconclusive { .. }
        ),
        "{}",
        same.detail
    );
    let (lo, hi) = same.ci.unwrap();
    assert!(
        hi - lo > 0.05,
        "CI [{lo}, {hi}] too narrow for 120 requests"
    );
    // An older baseline without gaps: information only, and the line says why.
    let (old, _) = judged(1.3, 2, false);
    assert_eq!((old.verdict.clone(), old.gated), (Verdict::Info, false));
    assert!(
        old.detail
            .contains("the baseline did not keep per-request inter-token gaps"),
        "{}",
        old.detail
    );
}

#[test]
fn a_pooled_baseline_widens_checks_by_the_drift_its_runs_show() {
    let judge = |pool: Vec<PooledRun>| {
        let mut b = side("b", vec![row("m", 1, 10, 400, 836.0)]);
        let mut n = side("n", vec![row("m", 1, 10, 400, 836.0)]);
        b.samples = Some(samples("m", 1, 400, 1.0, 11));
        n.samples = Some(samples("m", 1, 400, 1.25, 12));
        b.pool = pool;
        let c = compare(&b, &n, &opts());
        find(&c, "m", Some(10), Metric::Ttft, Some(Percentile::P90)).clone()
    };
    let runs = |p90s: &[f64]| -> Vec<PooledRun> {
        p90s.iter()
            .enumerate()
            .map(|(i, &q)| PooledRun {
                id: format!("run-{i}"),
                summaries: vec![StepSummary {
                    fingerprint: "fp1".into(),
                    ..row("m", 1, 10, 400, q)
                }],
            })
            .collect()
    };
    let plain = judge(vec![]);
    assert_eq!(plain.verdict, Verdict::Regressed, "{}", plain.detail);
    // The baseline's runs spread ±12% at this step: a 25% difference is within drift.
    let drifting = judge(runs(&[740.0, 836.0, 940.0]));
    let ((lo, hi), (plo, phi)) = (drifting.ci.unwrap(), plain.ci.unwrap());
    assert!(lo < plo && hi > phi, "{lo} {hi} vs {plo} {phi}");
    assert!(
        matches!(drifting.verdict, Verdict::Inconclusive { .. }),
        "{}",
        drifting.detail
    );
    assert!(
        drifting.detail.contains("widened for drift between runs")
            && drifting.detail.contains("over 3 baseline runs"),
        "{}",
        drifting.detail
    );
    // Runs that agree: the verdict stands, and says so.
    let steady = judge(runs(&[836.0, 836.0, 836.0]));
    assert_eq!(
        (steady.verdict.clone(), steady.ci),
        (plain.verdict, plain.ci)
    );
    assert!(steady.detail.contains("not widened"), "{}", steady.detail);
}

/// Answers half as long on an unchanged server: TPM and RPS are shown, not gated (they follow
/// the answers' length), and the decode rate, which holds, is the throughput gate; with the same
/// lengths TPM is gated as before.
#[test]
fn tpm_and_rps_follow_answer_length_and_are_not_gated_when_it_changes() {
    let b = side("base", vec![row("m", 1, 10, 400, 800.0)]);
    let mut short = row("m", 1, 10, 400, 800.0);
    short.output_tokens /= 2;
    short.tpm /= 2.0;
    short.e2e_mean_ms = Some(480.0 + (3000.0 - 480.0) * 49.0 / 99.0);
    let c = compare(&b, &side("new", vec![short]), &opts());
    for metric in [Metric::Tpm, Metric::Rps] {
        let k = find(&c, "m", Some(10), metric, None);
        assert!(!k.gated, "{k:?}");
        assert!(
            k.detail
                .starts_with("answers 50% shorter (100 → 50 tokens per success)"),
            "{}",
            k.detail
        );
    }
    assert_eq!(
        find(&c, "m", Some(10), Metric::Tpm, None).verdict,
        Verdict::Info
    );
    let d = find(&c, "m", Some(10), Metric::DecodeRate, None);
    assert!(d.gated && d.verdict == Verdict::NoChange, "{d:?}");
    assert!(d.ratio.unwrap().abs() < 1e-9, "{d:?}");
    assert_eq!(c.exit_code(), ExitCode::Ok);
    // Same lengths, TPM halved: gated, a regression.
    let mut slow = row("m", 1, 10, 400, 800.0);
    slow.tpm /= 2.0;
    let c = compare(&b, &side("new", vec![slow]), &opts());
    let k = find(&c, "m", Some(10), Metric::Tpm, None);
    assert!(k.gated && k.verdict == Verdict::Regressed, "{k:?}");
}

/// Before a run: the smallest change a gate can detect comes from the baseline compared with
/// itself, its CI scaled to the planned requests per step by the rule of the inconclusive
/// advice (a quarter of the requests, twice the half-width); P99 below 400 is said to be skipped.
#[test]
fn the_smallest_detectable_change_scales_the_baselines_own_spread() {
    use super::budget::{detectable, lines, Bound, ChangeUnit, Reach};
    let mut b = side("baselines/b.csv", vec![row("m", 1, 10, 400, 800.0)]);
    b.samples = Some(samples("m", 1, 400, 1.0, 1));
    let gates = crate::scenario::Gates::default();
    let ttft_p90 = |planned: u64| {
        let all = detectable(&b, &gates, &|_| Some(planned));
        let d = all.iter().find(|d| d.name == "TTFT P90").unwrap().clone();
        (all, d)
    };
    let (_, at50) = ttft_p90(50);
    let (all, at100) = ttft_p90(100);
    let (
        Reach::Change { smallest: s50, .. },
        Reach::Change {
            smallest: s100,
            unit,
            bound,
            ..
        },
    ) = (&at50.what, &at100.what)
    else {
        panic!("{at50:?} {at100:?}");
    };
    assert_eq!(
        (*unit, *bound),
        (ChangeUnit::Rise, Bound::Spread),
        "{at100:?}"
    );
    assert!(*s100 > gates.ttft.p90, "{s100}");
    // Half the requests, √2 the half-width.
    assert!((s50 / s100 - 2f64.sqrt()).abs() < 1e-9, "{s50} {s100}");
    // The inverse rule: the requests per step that would bring it to half the width.
    assert_eq!(super::requests_to_decide(100, *s100, s100 / 2.0), Some(400));
    let p99 = all.iter().find(|d| d.name == "TTFT P99").unwrap();
    assert_eq!(
        p99.what,
        Reach::Cannot("skipped: needs 400 successful requests per step".into())
    );
    let said = lines(&all, &b.label).join("\n");
    assert!(
        said.starts_with("smallest change each gate can detect at 100 requests per step (from the spread of baselines/b.csv):"),
        "{said}"
    );
    assert!(said.contains("  TTFT P90: +"), "{said}");
    assert!(said.contains("(the spread) at 10 streams"), "{said}");
}

/// TTFC is judged when either side reasoned, from the requests' `ttfc_ms`; a baseline written
/// before TTFC was kept (no TTFC columns, `reasoned` 0) is still judged against from its
/// sidecar samples, and a summary-only old baseline is skipped saying it lacks the figure.
#[test]
fn ttfc_is_judged_when_a_side_reasoned_also_against_an_older_baseline() {
    let with_ttfc = |mut v: Vec<RequestSample>, think: f64| {
        for s in &mut v {
            s.ttfc_ms = s.ttft_ms.map(|t| t + think);
        }
        v
    };
    let old = row("m", 1, 10, 400, 800.0);
    let mut reasoned = row("m", 1, 10, 400, 800.0);
    reasoned.reasoned = 400;
    reasoned.ttfc_p90_ms = Some(2400.0);
    let mut b = side("b", vec![old.clone()]);
    let mut n = side("n", vec![reasoned.clone()]);
    b.samples = Some(with_ttfc(samples("m", 1, 400, 1.0, 1), 0.0));
    n.samples = Some(with_ttfc(samples("m", 1, 400, 1.0, 1), 1500.0));
    let c = compare(&b, &n, &opts());
    let ttfc = find(&c, "m", Some(10), Metric::Ttfc, Some(Percentile::P90));
    assert_eq!(
        (ttfc.method, ttfc.verdict.clone()),
        (Method::Bootstrap, Verdict::Regressed),
        "{}",
        ttfc.detail
    );
    let ttft = find(&c, "m", Some(10), Metric::Ttft, Some(Percentile::P90));
    assert_ne!(ttft.verdict, Verdict::Regressed, "{}", ttft.detail);
    // Summaries only: the old baseline has no TTFC figure to compare with.
    let c = compare(
        &side("b", vec![old.clone()]),
        &side("n", vec![reasoned]),
        &opts(),
    );
    let ttfc = find(&c, "m", Some(10), Metric::Ttfc, Some(Percentile::P90));
    assert!(
        matches!(ttfc.verdict, Verdict::Skipped { .. }) && ttfc.detail.contains("baseline"),
        "{}",
        ttfc.detail
    );
    // Neither side reasoned: no TTFC check at all.
    let c = compare(
        &side("b", vec![old.clone()]),
        &side("n", vec![old]),
        &opts(),
    );
    assert!(c.checks.iter().all(|k| k.metric != Metric::Ttfc));
}

/// A knee gone because every step slowed (a server that stopped caching prefixes) is not an
/// improvement: TTFT P90 rose below the baseline's knee, and the knee check says so instead.
#[test]
fn a_knee_gone_because_the_whole_curve_rose_is_not_an_improvement() {
    let knee = |ttft_new: f64| {
        let mut bs = side(
            "b",
            vec![row("m", 1, 10, 400, 800.0), row("m", 2, 20, 400, 2_400.0)],
        );
        let mut ns = side(
            "n",
            vec![
                row("m", 1, 10, 400, ttft_new),
                row("m", 2, 20, 400, 2_400.0),
            ],
        );
        bs.knee.insert("m".into(), Some(20));
        ns.knee.insert("m".into(), None);
        let c = compare(&bs, &ns, &opts());
        let ttft = find(&c, "m", Some(10), Metric::Ttft, Some(Percentile::P90)).clone();
        let k = c.checks.iter().find(|k| k.metric == Metric::Knee).unwrap();
        (ttft.verdict, k.verdict.clone())
    };
    // The low step as fast as before: the knee's going is an improvement.
    assert_eq!(knee(800.0), (Verdict::NoChange, Verdict::Improved));
    // The low step slowed as much as the knee step: not judged, and why.
    let (ttft, k) = knee(2_400.0);
    assert_eq!(ttft, Verdict::Regressed);
    assert!(
        matches!(&k, Verdict::Skipped { reason } if reason.contains("the knee at 20 streams in the baseline is gone, but TTFT P90 rose below it too (at 10 streams)")),
        "{k:?}"
    );
}
