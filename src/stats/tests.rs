//! Unit tests of the step summaries (`stats`).

use super::*;
use crate::model::ItlHistogram;
use crate::model::Slo;
use crate::model::{ErrorClass, RequestRecord, TokensSource};
use std::time::Duration;

fn close(actual: Option<f64>, expected: f64) {
    let a = actual.unwrap_or_else(|| panic!("expected {expected}, got None"));
    assert!(
        (a - expected).abs() <= 1e-9 * expected.abs().max(1.0),
        "{a} != {expected}"
    );
}

#[test]
fn describe_drops_nan_and_matches_numpy() {
    let d = describe(&[4.0, f64::NAN, 1.0, 3.0, 2.0]).unwrap();
    assert_eq!(d.n, 4);
    close(Some(d.p50), 2.5);
    close(Some(d.p90), 3.7);
    close(Some(d.p99), 3.97);
    close(Some(d.mean), 2.5);
    assert_eq!((d.min, d.max), (1.0, 4.0));
    let one = describe(&[7.0]).unwrap();
    assert_eq!(
        (one.n, one.p50, one.p99, one.mean, one.min, one.max),
        (1, 7.0, 7.0, 7.0, 7.0, 7.0)
    );
    assert_eq!(describe(&[]), None);
    assert_eq!(describe(&[f64::NAN, f64::NAN]), None);
}

fn ok(
    ttft: f64,
    tpot: Option<f64>,
    e2e: f64,
    out: Option<u64>,
    inp: Option<u64>,
    itl: &[f64],
) -> RequestRecord {
    RequestRecord {
        ttft_ms: Some(ttft),
        tpot_ms: tpot,
        e2e_ms: Some(e2e),
        output_tokens: out,
        input_tokens: inp,
        itl: Some(ItlHistogram::from_gaps(itl)),
        ..RequestRecord::default()
    }
}

fn err(class: ErrorClass, e2e: Option<f64>) -> RequestRecord {
    RequestRecord {
        error_class: Some(class),
        e2e_ms: e2e,
        ..RequestRecord::default()
    }
}

fn hand_built() -> Vec<RequestRecord> {
    vec![
        ok(
            100.0,
            Some(10.0),
            1000.0,
            Some(91),
            Some(50),
            &[10.0, 10.0, 12.0],
        ),
        ok(200.0, Some(20.0), 2000.0, Some(91), Some(50), &[20.0, 30.0]),
        ok(300.0, None, 300.0, Some(1), None, &[]),
        ok(400.0, Some(40.0), 4000.0, None, Some(50), &[40.0]),
        err(ErrorClass::Http429, None),
        err(ErrorClass::Quota, Some(50.0)),
        err(ErrorClass::Http5xx, Some(100.0)),
        err(ErrorClass::TimeoutTotal, Some(5000.0)),
        err(ErrorClass::TimeoutFirstToken, None),
        err(ErrorClass::Interrupted, Some(250.0)),
    ]
}

fn ctx<'a>(slo: &'a Slo, duration_s: f64) -> StepContext<'a> {
    StepContext {
        scenario: "chat",
        fingerprint: "abc123",
        model: "m1",
        step: 3,
        concurrency: 8,
        duration_s,
        slo,
        short_below: 0.1,
    }
}

#[test]
fn token_sums_saturate_instead_of_wrapping() {
    let huge = 9_900_000_000_000_000_000u64;
    let records: Vec<RequestRecord> = (0..4)
        .map(|_| ok(100.0, Some(10.0), 500.0, Some(huge), Some(huge), &[10.0]))
        .collect();
    let s = summarize_step(&ctx(&Slo::default(), 10.0), &records);
    assert_eq!((s.output_tokens, s.input_tokens), (u64::MAX, u64::MAX));
}

#[test]
fn cost_per_1k_successes_and_per_1m_output_tokens_come_from_the_priced_successes() {
    let priced = |out: u64, cost: Option<f64>| RequestRecord {
        cost,
        ..ok(100.0, Some(10.0), 500.0, Some(out), Some(10), &[10.0])
    };
    let records = vec![
        priced(100, Some(0.002)),
        priced(300, Some(0.004)),
        // No usage reported: not priced, in neither figure.
        priced(1000, None),
        // A billed failure keeps its cost in requests.csv, not in the step's figures.
        RequestRecord {
            error_class: Some(ErrorClass::Http5xx),
            ..priced(100, Some(1.0))
        },
    ];
    let s = summarize_step(&ctx(&Slo::default(), 10.0), &records);
    close(s.cost_per_1k_ok, 3.0);
    close(s.cost_per_1m_output, 0.006 / 400.0 * 1e6);
    let unpriced = summarize_step(&ctx(&Slo::default(), 10.0), &[priced(10, None)]);
    assert_eq!(
        (unpriced.cost_per_1k_ok, unpriced.cost_per_1m_output),
        (None, None)
    );
}

#[test]
fn ttfc_and_the_reasoning_share_come_from_the_answering_successes() {
    let reasoning = |ttft: f64, ttfc: Option<f64>, out: u64, r: Option<u64>| RequestRecord {
        ttfc_ms: ttfc,
        reasoning_tokens: r,
        ..ok(ttft, Some(10.0), 900.0, Some(out), None, &[10.0])
    };
    let records = vec![
        // Streamed reasoning: the answer starts 400 ms after the first token.
        reasoning(100.0, Some(500.0), 100, Some(60)),
        // Hidden reasoning: the first token is the answer's.
        reasoning(300.0, Some(300.0), 100, Some(20)),
        // Reasoned to the limit: no answer token, no TTFC.
        reasoning(100.0, None, 50, Some(50)),
        // No reasoning and no count.
        reasoning(200.0, Some(200.0), 50, None),
        // A failure's figures are not counted.
        RequestRecord {
            error_class: Some(ErrorClass::Http5xx),
            ..reasoning(1.0, Some(9000.0), 1000, Some(1000))
        },
    ];
    let s = summarize_step(&ctx(&Slo::default(), 10.0), &records);
    assert_eq!(s.reasoned, 3);
    close(s.ttfc_p50_ms, 300.0);
    close(s.ttfc_p99_ms, 496.0);
    close(s.reasoning_share, 130.0 / 300.0);
    // A step without reasoning shows TTFC = TTFT, no reasoning and no share.
    let plain = vec![reasoning(100.0, Some(100.0), 10, None); 3];
    let s = summarize_step(&ctx(&Slo::default(), 10.0), &plain);
    assert_eq!((s.reasoned, s.reasoning_share), (0, None));
    assert_eq!(s.ttfc_p90_ms, s.ttft_p90_ms);
    assert!(!s.any_reasoning());
}

#[test]
fn goodput_counts_a_ttfc_bound_and_an_answer_that_never_came_misses_it() {
    let slo = Slo {
        ttfc: Some(Duration::from_millis(300)),
        ..Slo::default()
    };
    let answered = |ttfc: Option<f64>| RequestRecord {
        ttfc_ms: ttfc,
        ..ok(100.0, Some(10.0), 900.0, Some(20), None, &[10.0])
    };
    let records = vec![
        answered(Some(250.0)),
        answered(Some(350.0)),
        answered(None),
        answered(Some(100.0)),
    ];
    let s = summarize_step(&ctx(&slo, 10.0), &records);
    close(s.goodput, 0.5);
}

#[test]
fn error_classes_are_counted_by_name() {
    let records = vec![
        err(ErrorClass::Http401, Some(5.0)),
        err(ErrorClass::Disconnect, Some(5.0)),
        err(ErrorClass::Http401, Some(5.0)),
        ok(100.0, Some(10.0), 500.0, Some(3), None, &[10.0]),
    ];
    let s = summarize_step(&ctx(&Slo::default(), 10.0), &records);
    assert_eq!(s.error_classes, "http_401:2 disconnect:1");
}

#[test]
fn summarize_step_checks_every_column() {
    let slo = Slo {
        ttft: Some(Duration::from_millis(350)),
        ttfc: None,
        tpot: Some(Duration::from_millis(30)),
        e2e: Some(Duration::from_secs(3)),
    };
    let s = summarize_step(&ctx(&slo, 10.0), &hand_built());
    assert_eq!(s.schema_version, SCHEMA_VERSION);
    assert_eq!(
        (
            s.scenario.as_str(),
            s.fingerprint.as_str(),
            s.model.as_str()
        ),
        ("chat", "abc123", "m1")
    );
    assert_eq!((s.step, s.concurrency), (3, 8));
    assert_eq!((s.attempted, s.succeeded, s.failed), (10, 4, 6));
    // Quota and Interrupted are "other"; both timeout kinds are timeouts.
    assert_eq!(
        (s.err_429, s.err_5xx, s.err_timeout, s.err_other),
        (1, 1, 2, 2)
    );
    close(s.ttft_p50_ms, 250.0);
    close(s.ttft_p90_ms, 370.0);
    close(s.ttft_p99_ms, 397.0);
    close(s.ttft_mean_ms, 250.0);
    close(s.tpot_p50_ms, 20.0);
    close(s.tpot_p90_ms, 36.0);
    close(s.tpot_p99_ms, 39.6);
    // ITL pooled: [10, 10, 12, 20, 30, 40], each at its bin's midpoint (±1.09%).
    let near = |a: Option<f64>, e: f64| {
        let a = a.unwrap();
        assert!((a / e - 1.0).abs() <= 0.011, "{a} vs {e}");
    };
    near(s.itl_p50_ms, 16.0);
    near(s.itl_p90_ms, 35.0);
    near(s.itl_p99_ms, 39.5);
    close(s.e2e_p50_ms, 1500.0);
    close(s.e2e_p90_ms, 3400.0);
    close(s.e2e_p99_ms, 3940.0);
    close(s.e2e_mean_ms, 1825.0);
    assert_eq!((s.output_tokens, s.input_tokens), (183, 150));
    close(Some(s.tpm), 1098.0);
    close(Some(s.tpm_total), 1998.0);
    close(Some(s.rps), 0.4);
    // Requests 1-3 meet every bound (3 has no TPOT: passes); 4 misses the TTFT bound.
    close(s.goodput, 0.3);
    close(Some(s.duration_s), 10.0);
    // Σ E2E over all records that have one: 12,700 ms over 10 s.
    close(s.achieved_concurrency, 1.27);
    assert_eq!((s.client_cpu_pct, s.loop_lag_p99_ms), (None, None));
}

#[test]
fn goodput_without_slo_is_success_share_and_missing_ttft_fails_a_bound() {
    let s = summarize_step(&ctx(&Slo::default(), 10.0), &hand_built());
    close(s.goodput, 0.4);
    let slo = Slo {
        ttft: Some(Duration::from_secs(1)),
        ttfc: None,
        ..Slo::default()
    };
    let mut no_ttft = ok(1.0, None, 5.0, Some(1), None, &[]);
    no_ttft.ttft_ms = None;
    let s = summarize_step(
        &ctx(&slo, 1.0),
        &[no_ttft, ok(5.0, None, 9.0, None, None, &[])],
    );
    close(s.goodput, 0.5);
}

#[test]
fn summarize_edge_cases() {
    let slo = Slo::default();
    let empty = summarize_step(&ctx(&slo, 5.0), &[]);
    assert_eq!(
        (
            empty.attempted,
            empty.goodput,
            empty.ttft_p50_ms,
            empty.itl_p99_ms
        ),
        (0, None, None, None)
    );
    assert_eq!((empty.tpm, empty.rps), (0.0, 0.0));
    assert_eq!(empty.achieved_concurrency, Some(0.0));

    let errors = [
        err(ErrorClass::Http429, None),
        err(ErrorClass::Connect, Some(30.0)),
    ];
    let s = summarize_step(&ctx(&slo, 0.0), &errors);
    assert_eq!(
        (s.attempted, s.succeeded, s.failed, s.err_429, s.err_other),
        (2, 0, 2, 1, 1)
    );
    assert_eq!(
        (s.goodput, s.e2e_mean_ms, s.achieved_concurrency),
        (Some(0.0), None, None)
    );

    let s = summarize_step(&ctx(&slo, f64::NAN), &hand_built());
    assert_eq!(
        (s.tpm, s.tpm_total, s.rps, s.duration_s),
        (0.0, 0.0, 0.0, 0.0)
    );
    assert!(s.tpm.is_finite() && s.achieved_concurrency.is_none());
}

#[test]
fn summary_carries_the_steady_window_and_token_source() {
    let mut recs: Vec<RequestRecord> = (0..4)
        .map(|i| RequestRecord {
            worker: i % 2,
            started_at_ms: f64::from(i / 2) * 1000.0,
            e2e_ms: Some(1000.0),
            ttft_ms: Some(100.0),
            output_tokens: Some(50),
            tokens_source: Some(if i == 0 {
                TokensSource::Chunks
            } else {
                TokensSource::Usage
            }),
            ..RequestRecord::default()
        })
        .collect();
    recs[3].error_class = Some(ErrorClass::Http5xx);
    let s = summarize_step(&ctx(&Slo::default(), 2.0), &recs);
    close(s.steady_s, 2.0);
    close(s.concurrency_steady, 2.0);
    // Decode spans [100, 1000] ×2 and [1100, 2000] lie inside [0, 2000]: 3 in 2 s.
    close(s.rps_steady, 1.5);
    close(s.tpm_steady, 150.0 / 2.0 * 60.0);
    close(s.tokens_usage_share, 2.0 / 3.0);
}
