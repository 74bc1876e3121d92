//! Capacity arithmetic on fixed summary rows: step choice, Little's law, limits and headroom.

use super::*;
use crate::stats::StepSummary;

#[test]
fn slo_and_limits_come_from_the_normalized_scenario() {
    let yaml = "name: x\nslo:\n  ttft: 1s\n  tpot: 50ms\n  e2e: null\nlimits:\n  concurrency: 50\n  rpm: null\n  tpm: 2000000\n";
    let (slo, limits) = slo_and_limits(yaml);
    assert_eq!(
        slo,
        SloMs {
            ttft: Some(1000.0),
            tpot: Some(50.0),
            e2e: None
        }
    );
    assert_eq!(
        limits,
        DeclaredLimits {
            concurrency: Some(50),
            rpm: None,
            tpm: Some(2_000_000)
        }
    );
    assert_eq!(slo_and_limits(": not yaml ["), Default::default());
}

fn row(step: u32, c: u32, rps: f64, ttft_p90: f64, e2e_mean: f64) -> StepSummary {
    StepSummary {
        model: "m".into(),
        step,
        concurrency: c,
        attempted: 120,
        succeeded: 120,
        ttft_p90_ms: Some(ttft_p90),
        tpot_p90_ms: Some(15.0),
        e2e_p90_ms: Some(e2e_mean * 1.1),
        e2e_mean_ms: Some(e2e_mean),
        input_tokens: 120 * 94,
        output_tokens: 120 * 40,
        rps,
        ..StepSummary::default()
    }
}

/// The demo's shape: a 16-stream cap, TTFT climbs past 10 streams.
fn demo() -> Vec<StepSummary> {
    vec![
        row(1, 5, 6.78, 152.0, 737.0),
        row(2, 10, 13.5, 152.0, 737.0),
        row(3, 20, 20.3, 880.0, 910.0),
        row(4, 50, 20.3, 1634.0, 1977.0),
    ]
}

fn slo_1s() -> SloMs {
    SloMs {
        ttft: Some(1000.0),
        tpot: Some(50.0),
        e2e: None,
    }
}

#[test]
fn lowest_step_that_carries_the_rate_within_the_slo_and_littles_law() {
    let limits = DeclaredLimits {
        concurrency: Some(50),
        rpm: None,
        tpm: Some(2_000_000),
    };
    let p = plan(&demo(), 10.0, &slo_1s(), &limits);
    let m = &p.models[0];
    assert_eq!(m.basis, Basis::Measured);
    let b = m.step.as_ref().unwrap();
    assert_eq!(b.concurrency, 10, "5 streams carried only 6.78 RPS");
    assert_eq!(m.concurrency_needed, Some(8), "10 × 0.737 s = 7.37");
    assert!((m.tpm_needed.unwrap() - 80_400.0).abs() < 1e-6);
    assert!((m.rpm_needed - 600.0).abs() < 1e-9);
    assert_eq!(m.limits.len(), 2);
    let conc = &m.limits[0];
    assert!((conc.headroom_pct - (50.0 - 7.37) / 50.0 * 100.0).abs() < 1e-9);
    assert_eq!(m.binding_limit, Some(LimitName::Concurrency));
    let max = m.max_sustainable_rps.unwrap();
    assert!((max - 50.0 / 0.737).abs() < 1e-9, "{max}");
    assert_eq!(
        m.measured_slo_rps,
        Some(20.3),
        "step 50 misses the TTFT SLO"
    );
    assert!(m.notes.is_empty(), "{:?}", m.notes);
}

#[test]
fn tpm_binds_first_when_tokens_are_scarce_and_overruns_are_negative_headroom() {
    let limits = DeclaredLimits {
        concurrency: Some(100),
        rpm: Some(6000),
        tpm: Some(60_000),
    };
    let p = plan(&demo(), 10.0, &slo_1s(), &limits);
    let m = &p.models[0];
    assert_eq!(m.binding_limit, Some(LimitName::Tpm));
    let tpm = m.limits.iter().find(|c| c.limit == LimitName::Tpm).unwrap();
    assert!(tpm.headroom_pct < 0.0, "80,400 needed > 60,000 declared");
    assert!((m.max_sustainable_rps.unwrap() - 60_000.0 / (60.0 * 134.0)).abs() < 1e-9);
    assert!(
        plain_words(&p).contains("tpm 60,000: OVER by 34%"),
        "{}",
        plain_words(&p)
    );
}

#[test]
fn a_rate_no_step_carried_is_extrapolated_and_an_unmet_slo_gives_no_plan() {
    let none = DeclaredLimits::default();
    let p = plan(&demo(), 30.0, &slo_1s(), &none);
    let m = &p.models[0];
    assert_eq!(m.basis, Basis::Extrapolated);
    assert_eq!(
        m.step.as_ref().unwrap().concurrency,
        20,
        "highest step within the SLO"
    );
    assert!(
        m.notes[0].contains("No measured step carried 30 RPS"),
        "{:?}",
        m.notes
    );
    assert_eq!(m.binding_limit, None);
    assert!(plain_words(&p).contains("EXTRAPOLATED from 20 streams"));

    let strict = SloMs {
        ttft: Some(100.0),
        ..SloMs::default()
    };
    let p = plan(&demo(), 1.0, &strict, &none);
    assert_eq!(p.models[0].basis, Basis::NoStepMeetsSlo);
    assert!(
        p.models[0].notes[0].contains("TTFT P90 152 ms > 100 ms"),
        "{:?}",
        p.models[0].notes
    );
}

#[test]
fn a_step_with_more_than_one_percent_failures_does_not_meet_the_slo() {
    let mut rows = demo();
    rows[1].failed = 2;
    rows[1].attempted = 122;
    assert!(slo_miss(&rows[1], &slo_1s()).unwrap().contains("failed"));
    let p = plan(&rows, 10.0, &slo_1s(), &DeclaredLimits::default());
    assert_eq!(p.models[0].step.as_ref().unwrap().concurrency, 20);
}
