//! Tests of `compare()` as a whole: matching, refusal, error rate, throughput, findings,
//! unmatched steps, determinism and the exit-code policy. The latency rules themselves are
//! tested in `latency.rs`, the statistics in `inference.rs`.

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
            "model m step 5: only in the new run (new)",
            "model m step 20: only in the baseline (base)",
            "model old: only in the baseline (base)",
        ]
    );
    // Only concurrency 10 of model m is compared; it carries the new side's step index.
    assert!(c
        .checks
        .iter()
        .all(|k| k.model == "m" && k.concurrency == Some(10) && k.step == Some(2)));
    // 4 latencies × 3 percentiles + error rate + TPM + RPS.
    assert_eq!(c.checks.len(), 15);
    let k = find(&c, "m", Some(10), Metric::Ttft, Some(Percentile::P90));
    assert_eq!(
        (k.verdict.clone(), k.method),
        (Verdict::NoChange, Method::Approximate)
    );
    assert_eq!(k.title(), "step 10 · TTFT P90");
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
            noise: 9,
            skipped: 0
        }
    );
}

#[test]
fn exit_codes_inconclusive_and_strict() {
    // n = 20: every P90/P99 gate is skipped → inconclusive even without --strict (and so are
    // TPM and RPS, which need 40 successes per side).
    let b = side("base", vec![row("m", 1, 10, 20, 800.0)]);
    let n = side("new", vec![row("m", 1, 10, 20, 800.0)]);
    let c = compare(&b, &n, &opts());
    assert_eq!(c.counts().skipped, 10);
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
        (Verdict::Regressed, Method::TwoProportion)
    );
    assert_eq!((k.base, k.new), (Some(0.01), Some(0.04)));
    assert!(k.detail.contains("+3.00 pp"), "{}", k.detail);
    // +2 pp on 50 requests: above the gate, not significant.
    assert_eq!(judge(0, 50, 1, 50).verdict, Verdict::NoChange);
    // +0.5 pp on 100k requests: significant, below the 1 pp gate.
    assert_eq!(
        judge(1000, 100_000, 1500, 100_000).verdict,
        Verdict::WithinNoise
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
        (
            Verdict::Regressed,
            "knee moved down from step 50 to step 20"
        )
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
        matches!(&k.verdict, Verdict::Skipped { reason } if reason.contains("stopped at step 10")),
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
            let z = super::inference::std_normal(&mut rng);
            RequestSample {
                model: model.into(),
                step,
                ok: true,
                ttft_ms: Some(scale * 500.0 * (0.4 * z).exp()),
                tpot_ms: Some(20.0 + z.abs()),
                e2e_ms: Some(3000.0 + 100.0 * z),
                output_tokens: Some(100),
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
    assert_eq!(itl.method, Method::Approximate);
    assert!(itl.detail.contains("ITL gaps are not kept per request"));
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
        vec!["the baseline has two rows for model m at concurrency 10; the later one was used"]
    );
}
