//! Capacity arithmetic on fixed summary rows: step choice, Little's law, limits and headroom.

use super::*;
use crate::stats::StepSummary;

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

fn slo_1s() -> Slo {
    Slo {
        ttft: Some(std::time::Duration::from_secs(1)),
        ttfc: None,
        tpot: Some(std::time::Duration::from_millis(50)),
        e2e: None,
    }
}

#[test]
fn lowest_step_that_carries_the_rate_within_the_slo_and_littles_law() {
    let limits = Limits {
        concurrency: Some(50),
        rpm: None,
        tpm: Some(2_000_000),
        ..Limits::default()
    };
    let p = plan(&demo(), 10.0, &slo_1s(), &limits, None, &[]);
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
    // Each limit's largest rate is taken at the highest step that met the SLO (no findings
    // here, so no knee: 20 streams), whatever the target rate.
    let max = m.max_sustainable_rps.unwrap();
    assert!((max - 50.0 / 0.910).abs() < 1e-9, "{max}");
    assert_eq!(m.limits_at.as_ref().map(|b| b.concurrency), Some(20));
    assert_eq!(
        m.measured_slo_rps,
        Some(20.3),
        "step 50 misses the TTFT SLO"
    );
    assert!(m.notes.is_empty(), "{:?}", m.notes);
}

#[test]
fn tpm_binds_first_when_tokens_are_scarce_and_overruns_are_negative_headroom() {
    let limits = Limits {
        concurrency: Some(100),
        rpm: Some(6000),
        tpm: Some(60_000),
        ..Limits::default()
    };
    let p = plan(&demo(), 10.0, &slo_1s(), &limits, None, &[]);
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
    let none = Limits::default();
    let p = plan(&demo(), 30.0, &slo_1s(), &none, None, &[]);
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

    let strict = Slo {
        ttft: Some(std::time::Duration::from_millis(100)),
        ttfc: None,
        ..Slo::default()
    };
    let p = plan(&demo(), 1.0, &strict, &none, None, &[]);
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
    assert!(crate::findings::slo::judge(&rows[1], &slo_1s())
        .miss
        .unwrap()
        .contains("failed"));
    let p = plan(&rows, 10.0, &slo_1s(), &Limits::default(), None, &[]);
    assert_eq!(p.models[0].step.as_ref().unwrap().concurrency, 20);
}

/// A scenario against the embedded simulator with this `target.sim` and `load:` block.
fn sim_scenario(sim: &str, load: &str) -> (tempfile::TempDir, crate::scenario::Scenario) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("p.txt"), "x".repeat(400)).unwrap();
    let prompt = if load.contains("prompt_tokens") {
        ""
    } else {
        "\n  prompt_file: p.txt"
    };
    let yaml = format!(
        "name: est\ntarget:\n  sim: {{{sim}}}\n  models: [m]\nrequest:{prompt}\n  \
         max_tokens: 40\nload:\n{load}"
    );
    let s = crate::scenario::load_str(&yaml, &dir.path().join("s.yaml"), &|_| None).unwrap();
    (dir, s)
}

#[test]
fn a_rate_step_lasts_its_arrivals_over_the_rate_plus_the_tail() {
    // 500 ms per request, no cap: 120 arrivals at 10 req/s take 12 s, then the last one's 0.5 s.
    let (_d, s) = sim_scenario(
        "ttft: 110ms, tpot: 10ms, output_tokens: 40",
        "  mode: rate\n  ladder: [10, 20]\n  requests_per_step: 120\n",
    );
    let steps = estimate::estimate(&s, None);
    let e = &steps[0];
    assert_eq!((e.value, e.unit), (10, crate::model::LadderUnit::Rps));
    assert_eq!((e.offered_rps, e.requests), (Some(10.0), Some(120)));
    assert!((e.duration_s.unwrap() - 12.5).abs() < 1e-9, "{e:?}");
    assert!((steps[1].duration_s.unwrap() - 6.5).abs() < 1e-9);
    // The offered rate is what the account sees: 600 requests/min; 5 in flight (Little).
    assert!((e.rpm.unwrap() - 600.0).abs() < 1e-9);
    assert!((e.in_flight.unwrap() - 5.0).abs() < 1e-9);
    let words = words::dry_run(&s, &steps, None);
    assert!(
        words.contains("req/s") && !words.contains("streams"),
        "{words}"
    );
    assert!(words.contains("about 19.0s"), "{words}");
}

#[test]
fn a_rate_above_the_servers_capacity_drains_a_backlog_at_most_the_cap() {
    // 4 streams of 0.5 s serve 8 req/s. 20 req/s for 120 arrivals: 6 s of arrivals.
    let sim = "ttft: 110ms, tpot: 10ms, output_tokens: 40, concurrency_cap: 4";
    let (_d, s) = sim_scenario(
        sim,
        "  mode: rate\n  ladder: [20]\n  requests_per_step: 120\n",
    );
    let e = &estimate::estimate(&s, None)[0];
    // Without a cap on requests in flight everything is served, at 8 req/s: 15 s + 0.5 s.
    assert!((e.duration_s.unwrap() - 15.5).abs() < 1e-9, "{e:?}");
    let capped = "  mode: rate\n  ladder: [20]\n  requests_per_step: 120\n  max_concurrency: 16\n";
    let (_d, s) = sim_scenario(sim, capped);
    let e = &estimate::estimate(&s, None)[0];
    // A backlog of at most 16 drains at 8 req/s: 6 s + 2 s + 0.5 s; 16 in flight at most.
    assert!((e.duration_s.unwrap() - 8.5).abs() < 1e-9, "{e:?}");
    assert_eq!(e.in_flight, Some(10.0));
}

#[test]
fn rate_steps_are_warned_about_by_requests_in_flight_not_streams() {
    let (_d, s) = sim_scenario(
        "ttft: 110ms, tpot: 10ms, output_tokens: 40",
        "  mode: rate\n  ladder: [4, 40]\n  requests_per_step: 100\n",
    );
    let steps = estimate::estimate(&s, None);
    let limits = Limits {
        concurrency: Some(8),
        rpm: Some(1000),
        tpm: None,
        ..Limits::default()
    };
    let w = estimate::limit_warnings(&limits, &steps);
    assert!(
        w[0].contains("m at 40 req/s: ≈ 20 requests in flight")
            && w[0].contains("above limits.concurrency 8"),
        "{w:?}"
    );
    assert!(
        w[1].contains("m at 40 req/s: planned ≈ 2400 requests/min"),
        "{w:?}"
    );
}

#[test]
fn a_prompt_size_ladder_runs_every_step_at_its_load_with_the_steps_prompt() {
    let (_d, s) = sim_scenario(
        "ttft: 100ms, prefill_per_token: 0.1ms, tpot: 10ms, output_tokens: 11",
        "  ladder_over: prompt_tokens\n  concurrency: 2\n  ladder: [1000, 4000]\n  requests_per_step: 40\n",
    );
    let steps = estimate::estimate(&s, None);
    assert_eq!(steps[1].unit, crate::model::LadderUnit::PromptTokens);
    assert_eq!(steps[1].input_per_request, 4000.0);
    assert_eq!(steps[1].in_flight, Some(2.0), "2 streams, not 4000");
    // 0.1 + 0.4 + 0.1 s per request on 2 streams: 40 requests take 12 s.
    assert!(
        (steps[1].duration_s.unwrap() - 12.0).abs() < 1e-9,
        "{:?}",
        steps[1]
    );
    let words = words::dry_run(&s, &steps, None);
    assert!(words.contains("every step at 2 streams"), "{words}");
    assert!(words.contains("prompt tok"), "{words}");
    let limits = Limits {
        concurrency: Some(1),
        ..Limits::default()
    };
    let w = estimate::limit_warnings(&limits, &steps);
    assert!(w[0].starts_with("load.concurrency is 2 streams"), "{w:?}");
}

#[test]
fn a_plan_from_a_rate_ladder_names_the_offered_step() {
    let mut rows = demo();
    for r in &mut rows {
        r.ladder_unit = crate::model::LadderUnit::Rps;
        r.offered_rps = Some(f64::from(r.concurrency));
    }
    let p = plan(&rows, 10.0, &slo_1s(), &Limits::default(), None, &[]);
    let text = plain_words(&p);
    assert!(
        text.contains("m: measured at the 10 req/s step (13.5 RPS achieved"),
        "{text}"
    );
    let p = plan(&rows, 30.0, &slo_1s(), &Limits::default(), None, &[]);
    assert!(
        p.models[0].notes[0].contains("(the most was 20.30 RPS at the 20 req/s step)"),
        "{:?}",
        p.models[0].notes
    );
}

#[test]
fn durations_round_once_then_split() {
    use super::words::secs;
    assert_eq!(secs(119.94), "119.9s");
    assert_eq!(secs(120.0), "2m00s");
    assert_eq!(secs(179.4), "2m59s");
    assert_eq!(secs(179.6), "3m00s");
    assert_eq!(secs(239.5), "4m00s");
    assert_eq!(secs(3599.7), "60m00s");
    assert_eq!(secs(18_599_999_999_999.9), "310000000000m00s");
    for v in [120.4, 599.5, 1e6 - 0.4, 1.86e13 - 0.1] {
        assert!(!secs(v).contains("m60s"), "{v}: {}", secs(v));
    }
}

/// A searched run's rows: TTFT P90 with its 95% bounds (± 60 ms), the rate each step carried.
/// Under a 1 s TTFT bound: 16 meets with confidence, 20 only on its point, 24 and 32 miss;
/// 48 meets on its point values by luck, above the first miss.
fn searched() -> Vec<StepSummary> {
    [
        (1, 4, 40.0, 300.0),
        (2, 8, 80.0, 300.0),
        (3, 16, 90.0, 700.0),
        (4, 32, 114.0, 2400.0),
        (5, 20, 113.0, 980.0),
        (6, 24, 114.0, 1200.0),
        (7, 48, 200.0, 900.0),
    ]
    .into_iter()
    .map(|(step, c, rps, ttft)| StepSummary {
        ttft_p90_lo_ms: Some(ttft - 60.0),
        ttft_p90_hi_ms: Some(ttft + 60.0),
        ..row(step, c, rps, ttft, 200.0)
    })
    .collect()
}

fn ttft_1s() -> Slo {
    Slo {
        ttft: Some(std::time::Duration::from_secs(1)),
        ttfc: None,
        ..Slo::default()
    }
}

#[test]
fn a_searched_run_is_sized_from_its_capacity_and_its_uncertainty() {
    let rows = searched();
    let none = Limits::default();
    // No SLO of its own: the search's.
    let p = plan(&rows, 50.0, &Slo::default(), &none, Some(&ttft_1s()), &[]);
    assert_eq!(p.bounds.slo_ttft_ms, Some(1000.0));
    let m = &p.models[0];
    assert_eq!(m.sized_from, SizedFrom::Search);
    let c = m.capacity.as_ref().unwrap();
    assert_eq!((c.capacity.max, c.capacity.lo, c.capacity.hi), (20, 16, 23));
    assert_eq!(
        (c.rps, c.rps_lo, c.rps_missed),
        (113.0, Some(90.0), Some(114.0))
    );
    assert_eq!(c.fit, Fit::Fits);
    assert_eq!(m.basis, Basis::Measured);
    assert_eq!(
        m.step.as_ref().unwrap().concurrency,
        8,
        "the lowest carrying 50"
    );
    let text = plain_words(&p);
    for needle in [
        "sized from          the search: max concurrency meeting TTFT P90 ≤ 1 s: 20 (16–23)",
        "capacity carries    113 RPS at 20 streams; 90 RPS at 16 streams (met with confidence); the first step missing it carried 114 RPS",
        "target              50 RPS = 44% of it: fits with confidence",
    ] {
        assert!(text.contains(needle), "{needle} missing:\n{text}");
    }

    // Between the confident step's rate and the capacity's: at its edge, on the capacity step.
    let p = plan(&rows, 100.0, &ttft_1s(), &none, Some(&ttft_1s()), &[]);
    let m = &p.models[0];
    assert_eq!(m.capacity.as_ref().unwrap().fit, Fit::Edge);
    assert_eq!(m.step.as_ref().unwrap().concurrency, 20);

    // Beyond: never the lucky 48-stream step above the first miss (the steps alone pick it).
    let p = plan(&rows, 150.0, &ttft_1s(), &none, None, &[]);
    assert_eq!(p.models[0].sized_from, SizedFrom::Steps);
    assert_eq!(p.models[0].step.as_ref().unwrap().concurrency, 48);
    assert!(plain_words(&p).contains("the ladder's steps (the run has no `load.search`)"));
    let p = plan(&rows, 500.0, &ttft_1s(), &none, Some(&ttft_1s()), &[]);
    let m = &p.models[0];
    assert_eq!(m.basis, Basis::BeyondCapacity);
    assert_eq!(m.step.as_ref().unwrap().concurrency, 20);
    let c = m.capacity.as_ref().unwrap();
    assert_eq!(
        (c.replicas, c.replicas_lo, c.replicas_hi),
        (Some(5), Some(5), Some(6))
    );
    assert_eq!(
        m.concurrency_needed,
        Some(100),
        "500 RPS × 0.2 s over all copies"
    );
    let text = plain_words(&p);
    assert!(text.contains("m: SCALED OUT from 20 streams"), "{text}");
    assert!(
        text.contains("500 RPS = 442% of it: beyond it: 5 copies of the measured service (5–6 within the uncertainty)"),
        "{text}"
    );
    assert!(m.notes[0].contains("5 copies"), "{:?}", m.notes);

    // A plan SLO other than the search's: the capacity under it, said so.
    let strict = Slo {
        ttft: Some(std::time::Duration::from_millis(500)),
        ttfc: None,
        ..Slo::default()
    };
    let p = plan(&rows, 50.0, &strict, &none, Some(&ttft_1s()), &[]);
    let m = &p.models[0];
    assert_eq!(m.capacity.as_ref().unwrap().capacity.max, 8);
    assert!(
        m.notes
            .iter()
            .any(|n| n.contains("The search aimed at TTFT P90 ≤ 1 s")),
        "{:?}",
        m.notes
    );
}

#[test]
fn a_search_that_never_missed_bounds_the_copies_from_above_only() {
    let rows: Vec<StepSummary> = searched()
        .into_iter()
        .filter(|r| r.concurrency <= 16)
        .collect();
    let p = plan(
        &rows,
        200.0,
        &ttft_1s(),
        &Limits::default(),
        Some(&ttft_1s()),
        &[],
    );
    let c = p.models[0].capacity.as_ref().unwrap();
    assert!(c.capacity.open_ended);
    assert_eq!((c.replicas, c.replicas_lo), (Some(3), None));
    assert!(
        plain_words(&p).contains("beyond what the search reached: at most 3 copies"),
        "{}",
        plain_words(&p)
    );
    // Nothing meets the SLO: no capacity, no plan, sized from the steps.
    let strict = Slo {
        ttft: Some(std::time::Duration::from_millis(100)),
        ttfc: None,
        ..Slo::default()
    };
    let p = plan(&rows, 1.0, &strict, &Limits::default(), Some(&strict), &[]);
    assert_eq!(p.models[0].basis, Basis::NoStepMeetsSlo);
    assert_eq!(p.models[0].sized_from, SizedFrom::Steps);
}

#[test]
fn a_priced_run_costs_the_target_rate_for_an_hour_at_the_recommended_step() {
    let mut rows = demo();
    for (r, c) in rows.iter_mut().zip([0.5, 0.67, 0.9, 1.2]) {
        r.cost_per_1k_ok = Some(c);
    }
    let mut p = plan(&rows, 10.0, &slo_1s(), &Limits::default(), None, &[]);
    p.currency = Some("USD".into());
    let m = &p.models[0];
    // The plan rests on 10 streams: 10 req/s × 3,600 s × 0.67 / 1,000 = 24.12 per hour.
    assert!((m.cost_per_hour.unwrap() - 24.12).abs() < 1e-9);
    let words = plain_words(&p);
    assert!(
        words.contains("cost per hour       24.12 USD at 10 RPS (0.6700 USD per 1,000 successful requests at 10 streams)"),
        "{words}"
    );
    let json = serde_json::to_value(&p).unwrap();
    assert_eq!(json["currency"], "USD");
    // An unpriced run says nothing of cost, in words or JSON.
    let plain = plan(&demo(), 10.0, &slo_1s(), &Limits::default(), None, &[]);
    assert!(!plain_words(&plain).contains("cost"));
    let json = serde_json::to_value(&plain).unwrap();
    assert!(json.get("currency").is_none() && json["models"][0].get("cost_per_hour").is_none());
}

/// The demo's rows with what the knee needs to name its cause and estimate its cap: mean TTFT
/// (152 ms, then 323 ms at 20 streams: queueing) and a flat TPOT.
fn demo_with_knee() -> (Vec<StepSummary>, Vec<crate::findings::ModelFindings>) {
    let mut rows = demo();
    for (r, mean) in rows.iter_mut().zip([152.0, 152.0, 323.0, 1_500.0]) {
        r.ttft_mean_ms = Some(mean);
        r.tpot_p50_ms = Some(15.0);
        r.ttft_p50_ms = Some(mean);
    }
    let f = crate::findings::analyze("m", &rows, None);
    (rows, vec![f])
}

#[test]
fn the_plan_rests_on_steps_below_the_knee_and_the_limits_do_not_depend_on_the_target() {
    let (rows, findings) = demo_with_knee();
    let crate::findings::KneeFinding::Knee(k) = &findings[0].knee else {
        panic!("no knee: {:?}", findings[0].knee);
    };
    assert_eq!((k.max_clean_concurrency, k.concurrency), (10, 20));
    assert_eq!(k.estimated_cap.map(f64::round), Some(16.0), "{k:?}");
    let limits = Limits {
        concurrency: Some(16),
        ..Limits::default()
    };
    let at = |rps: f64| plan(&rows, rps, &slo_1s(), &limits, None, &findings);
    // 15 RPS: 20 streams carried it within the SLO, but queueing; the plan rests on 10 streams.
    let p = at(15.0);
    let m = &p.models[0];
    assert_eq!(m.basis, Basis::Extrapolated);
    assert_eq!(m.step.as_ref().unwrap().concurrency, 10);
    assert!(
        m.notes[0].starts_with("No step below the knee (at 20 streams) carried 15 RPS"),
        "{:?}",
        m.notes
    );
    assert!(
        m.notes[0].contains("no replica (or account) carries more than the cap"),
        "{:?}",
        m.notes
    );
    // The largest sustainable rate is the run's: the same at 10, 15 and 30 RPS.
    let maxes: Vec<f64> = [10.0, 15.0, 30.0]
        .iter()
        .map(|r| at(*r).models[0].max_sustainable_rps.unwrap())
        .collect();
    assert!(
        maxes.iter().all(|m| (m - 16.0 / 0.737).abs() < 1e-9),
        "{maxes:?}"
    );
    let words = plain_words(&at(30.0));
    assert!(
        words.contains("max sustainable     21.71 RPS under the declared limits, at the latency measured at 10 streams"),
        "{words}"
    );
}

#[test]
fn the_needed_concurrency_is_related_to_the_knees_cap() {
    let (rows, findings) = demo_with_knee();
    let none = Limits::default();
    let at = |rps: f64| plan(&rows, rps, &slo_1s(), &none, None, &findings);
    // 10 RPS × 0.737 s: 8 streams, under the cap ≈ 16.
    let p = at(10.0);
    let cap = p.models[0].cap.as_ref().unwrap();
    assert_eq!(
        (cap.source, cap.per_replica, cap.replicas),
        (CapSource::KneeCap, 16.0, 1)
    );
    // 30 RPS × 0.737 s = 22.11: 23 streams, two copies of a 16-stream cap.
    let p = at(30.0);
    let m = &p.models[0];
    assert_eq!(m.concurrency_needed, Some(23));
    assert_eq!(m.cap.as_ref().unwrap().replicas, 2);
    // A target of unknown kind (a baseline CSV keeps no scenario): both levers.
    let words = plain_words(&p);
    assert!(
        words.contains(
            "replicas or limit   needs 23 concurrent streams; the run's knee shows a cap ≈ 16 per replica → 2 replicas if you run the server; on a hosted API or a gateway, a concurrency limit of at least 23, or the load spread over 2 keys or accounts like this one"
        ),
        "{words}"
    );
    // A server the user runs: replicas.
    let mut own = p.clone();
    own.target_kind = Some(crate::model::TargetKind::SelfRun {
        basis: crate::model::target_kind::SelfRunBasis::Simulator,
    });
    let words = plain_words(&own);
    assert!(
        words.contains(
            "replicas            needs 23 concurrent streams; the run's knee shows a cap ≈ 16 per replica → 2 replicas\n"
        ),
        "{words}"
    );
    // A hosted API: the account's limit to ask for, no replicas.
    let mut hosted = p.clone();
    hosted.target_kind = Some(crate::model::TargetKind::of_base_url(
        "https://api.openai.com/v1",
    ));
    let words = plain_words(&hosted);
    assert!(
        words.contains(
            "account limit       needs 23 concurrent streams; the run's knee shows a cap ≈ 16 on this account → ask OpenAI for a concurrency limit of at least 23, or the load spread over 2 keys or accounts like this one\n"
        ),
        "{words}"
    );
    assert!(!words.contains("→ 2 replicas"), "{words}");
    let json = serde_json::to_value(&hosted).unwrap();
    assert_eq!(json["target_kind"]["kind"], "hosted");
    assert_eq!(json["target_kind"]["provider"], "OpenAI");
    let json = serde_json::to_value(&p).unwrap();
    assert_eq!(json["models"][0]["cap"]["source"], "knee_cap");
    assert_eq!(json["models"][0]["cap"]["replicas"], 2);

    // No knee up to the top step: one copy held at least that many; more is an upper bound.
    let flat: Vec<StepSummary> = rows.iter().take(2).cloned().collect();
    let f = vec![crate::findings::analyze("m", &flat, None)];
    let p = plan(&flat, 30.0, &slo_1s(), &none, None, &f);
    let cap = p.models[0].cap.as_ref().unwrap();
    assert_eq!(
        (cap.source, cap.replicas, cap.at_most),
        (CapSource::NoKnee, 3, true)
    );
    assert!(
        plain_words(&p).contains("no knee up to 10 streams → at most 3 replicas"),
        "{}",
        plain_words(&p)
    );
}

#[test]
fn steps_that_met_the_slo_only_past_the_knee_give_no_plan() {
    let (mut rows, findings) = demo_with_knee();
    // Half the requests of the clean steps failed, so only the queueing steps meet the SLO.
    for r in rows.iter_mut().take(2) {
        r.failed = 60;
        r.succeeded = 60;
    }
    let p = plan(&rows, 10.0, &slo_1s(), &Limits::default(), None, &findings);
    let m = &p.models[0];
    assert_eq!(m.basis, Basis::NoStepMeetsSlo, "{:?}", m.notes);
    assert!(
        m.notes[0].starts_with("No step below the knee (at 20 streams) met the SLO"),
        "{:?}",
        m.notes
    );
}

/// Issue 38: tool definitions are input tokens on every request (providers count them), so the
/// estimate adds their JSON / 4 to the prompt's.
#[test]
fn the_tools_count_as_input_in_the_estimate() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("p.txt"), "x".repeat(400)).unwrap();
    let tools = r#"[{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}]"#;
    std::fs::write(dir.path().join("tools.json"), tools).unwrap();
    let load = |extra: &str| {
        let yaml = format!(
            "name: est\ntarget:\n  sim: {{}}\n  models: [m]\nrequest:\n  prompt_file: p.txt\n{extra}  \
             max_tokens: 40\nload:\n  ladder: [1]\n  requests_per_step: 4\n"
        );
        crate::scenario::load_str(&yaml, &dir.path().join("s.yaml"), &|_| None).unwrap()
    };
    let without = estimate::estimate(&load(""), None)[0].input_per_request;
    let with = estimate::estimate(&load("  tools: tools.json\n"), None)[0].input_per_request;
    assert_eq!(without, 100.0);
    // [{"function":{"name":"get_weather","parameters":{"type":"object"}},"type":"function"}]
    // is 86 characters: 22 tokens.
    assert_eq!(with - without, 22.0);
}

#[test]
fn a_priced_dry_run_estimates_each_models_cost_from_its_token_sizes() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("p.txt"), "x".repeat(400)).unwrap();
    let yaml = "name: est\ntarget:\n  sim: {ttft: 10ms, tpot: 1ms, output_tokens: 40, reasoning_tokens: 10, \
        models: {a: {ttft: 10ms}, b: {ttft: 20ms}}}\n  models: [a, b]\nrequest:\n  prompt_file: p.txt\n  \
        max_tokens: 40\nload:\n  ladder: [1, 2]\n  requests_per_step: 20\n  warmup_requests: 2\n\
        pricing:\n  currency: EUR\n  models:\n    a: {input: 1, output: 10}\n    b: {input: 2, output: 20}\n";
    let s = crate::scenario::load_str(yaml, &dir.path().join("s.yaml"), &|_| None).unwrap();
    let steps = estimate::estimate(&s, None);
    // 100 prompt tokens; the simulator's 40 answer + 10 reasoning tokens are billed as output.
    assert_eq!(
        (steps[0].input_per_request, steps[0].output_per_request),
        (100.0, 50.0)
    );
    // Per model 2 steps × (20 + 2 warmup) = 44 requests × (100 × 1 + 50 × 10) / 1M.
    let est = estimate::cost(&s, &steps).unwrap();
    assert_eq!(est.currency, "EUR");
    let figures: Vec<f64> = est.models.iter().map(|(_, c)| c.unwrap()).collect();
    assert!((figures[0] - 0.0264).abs() < 1e-12, "{est:?}");
    assert!((figures[1] - 0.0528).abs() < 1e-12, "{est:?}");
    let line = words::cost_line(&s, &steps).unwrap();
    assert!(
        line.starts_with("estimated cost: ≈ 0.0792 EUR (a ≈ 0.0264, b ≈ 0.0528) for 88 requests (warmup included)"),
        "{line}"
    );
    assert!(words::dry_run(&s, &steps, None).contains(&line));
    // A step that lasts a duration against a server of unknown latency: no figure, said so.
    let timed = yaml.replace("  requests_per_step: 20\n", "  duration: 10s\n");
    let mut s = crate::scenario::load_str(&timed, &dir.path().join("s.yaml"), &|_| None).unwrap();
    s.target.endpoint = crate::scenario::Endpoint::Url("http://127.0.0.1:9/v1".into());
    let line = words::cost_line(&s, &estimate::estimate(&s, None)).unwrap();
    assert!(line.starts_with("estimated cost: ? EUR: "), "{line}");
    // Unpriced: nothing.
    s.pricing = None;
    assert_eq!(words::cost_line(&s, &steps), None);
}
