//! Unit tests of the findings: knee position, kind and cap on synthetic ladders, the wall,
//! efficiency, grouping of request records, serialization and the self-check notes.

use super::*;

/// One summary row: `ttft` = (P50, P90), means and TPOT P50 as given, 100 attempts, all ok.
fn row(step: u32, concurrency: u32, ttft: (f64, f64), tpot_p50: f64) -> StepSummary {
    StepSummary {
        model: "m".into(),
        step,
        concurrency,
        attempted: 100,
        succeeded: 100,
        ttft_p50_ms: Some(ttft.0),
        ttft_p90_ms: Some(ttft.1),
        ttft_mean_ms: Some(ttft.0),
        tpot_p50_ms: Some(tpot_p50),
        e2e_mean_ms: Some(2000.0),
        tpm: 1000.0 * f64::from(concurrency),
        rps: 0.5 * f64::from(concurrency),
        ..StepSummary::default()
    }
}

/// Ladder with the given concurrencies, TTFT (P50, P90) and TPOT P50 per step.
fn ladder(conc: &[u32], ttft: &[(f64, f64)], tpot: &[f64]) -> Vec<StepSummary> {
    (0..conc.len())
        .map(|i| row(i as u32 + 1, conc[i], ttft[i], tpot[i]))
        .collect()
}

fn knee(f: &ModelFindings) -> &Knee {
    match &f.knee {
        KneeFinding::Knee(k) => k,
        other => panic!("expected a knee, got {other:?}"),
    }
}

#[test]
fn queueing_ladder_finds_knee_interval_cap_and_sentence() {
    // Cap 16, service time 2 s: below the cap TTFT ≈ 205 ms; at 20 streams X = 8 rps,
    // E2E = 20 / 8 = 2.5 s, wait 500 ms; at 40 streams the wait is 3 s.
    let mut steps = ladder(
        &[1, 2, 5, 10, 20, 40],
        &[
            (205.0, 230.0),
            (205.0, 220.0),
            (205.0, 212.0),
            (205.0, 215.0),
            (705.0, 1450.0),
            (3205.0, 6000.0),
        ],
        &[20.0, 20.0, 20.5, 20.0, 21.0, 20.0],
    );
    steps[4].rps = 8.0;
    steps[4].e2e_mean_ms = Some(2500.0);
    let f = analyze("m", &steps, None);
    let k = knee(&f);
    assert_eq!((k.step, k.concurrency, k.kind), (5, 20, KneeKind::Queueing));
    assert_eq!((k.max_clean_concurrency, k.suggested_next), (10, Some(15)));
    assert_eq!((k.reference.step, k.reference.ttft_p90_ms), (3, 212.0));
    assert_eq!(
        (k.at_knee.ttft_p50_ms, k.at_knee.ttft_mean_ms),
        (Some(705.0), Some(705.0))
    );
    assert!((k.estimated_cap.unwrap() - 16.0).abs() < 1e-9);
    assert_eq!((f.knee.step(), f.knee_concurrency()), (Some(5), Some(20)));
    assert_eq!(
        f.sentences()[0],
        "TTFT knee in (10, 20] streams: queueing, TPOT flat (inferred from client timings) (TTFT P90 212 → 1450 ms, mean 205 → 705 ms); \
         estimated cap ≈ 16; max clean concurrency 10. Try 15 streams to narrow it. \
         (Point values: no per-request samples for a confidence bound.)"
    );
}

#[test]
fn knee_found_when_only_a_fifth_waits_and_the_median_stays_flat() {
    // Cap 16: at 20 streams 4 of 20 requests queue, so P50 does not move but P90 does.
    let steps = ladder(
        &[4, 8, 16, 20, 24],
        &[
            (200.0, 210.0),
            (200.0, 215.0),
            (201.0, 220.0),
            (202.0, 1200.0),
            (203.0, 2100.0),
        ],
        &[20.0; 5],
    );
    let k = knee(&analyze("m", &steps, None)).clone();
    assert_eq!(
        (k.step, k.max_clean_concurrency, k.concurrency),
        (4, 16, 20)
    );
    assert_eq!((k.kind, k.suggested_next), (KneeKind::Queueing, Some(18)));
    assert_eq!(k.at_knee.ttft_p50_ms, Some(202.0));
}

#[test]
fn saturation_when_tpot_rises_with_ttft() {
    let steps = ladder(
        &[1, 2, 4, 8],
        &[
            (150.0, 200.0),
            (160.0, 210.0),
            (400.0, 500.0),
            (900.0, 1200.0),
        ],
        &[20.0, 21.0, 30.0, 45.0],
    );
    let f = analyze("m", &steps, None);
    let k = knee(&f);
    assert_eq!(
        (k.step, k.kind, k.max_clean_concurrency, k.suggested_next),
        (3, KneeKind::Saturation, 2, Some(3))
    );
    assert!(f.sentences()[0].starts_with(
        "TTFT knee in (2, 4] streams: saturation, TPOT up 50% (inferred from client timings) (TTFT P90 200 → 500 ms"
    ));
    // The interval (16, 17] cannot be narrowed.
    let steps = ladder(&[16, 17], &[(100.0, 100.0), (400.0, 500.0)], &[10.0, 10.0]);
    assert_eq!(knee(&analyze("m", &steps, None)).suggested_next, None);
}

#[test]
fn flat_noisy_ladder_has_no_knee() {
    // Best 190 ms from step 3 on: threshold max(285, 290) = 290; nothing reaches it.
    let steps = ladder(
        &[1, 2, 4, 8, 16, 32],
        &[
            (150.0, 200.0),
            (150.0, 260.0),
            (150.0, 190.0),
            (150.0, 280.0),
            (150.0, 240.0),
            (150.0, 285.0),
        ],
        &[20.0; 6],
    );
    let f = analyze("m", &steps, None);
    assert_eq!(
        f.knee,
        KneeFinding::None {
            highest_step: 6,
            highest_concurrency: 32,
            ttft_ms_per_1k_tokens: None,
        }
    );
    assert_eq!(
        (f.knee.step(), f.knee_concurrency(), f.wall_concurrency()),
        (None, None, None)
    );
    assert_eq!(f.sentences()[0], "No TTFT knee up to 32 streams.");
    // The boundary counts as a knee: 290 at the last step.
    let mut edge = steps.clone();
    edge[5].ttft_p90_ms = Some(290.0);
    assert_eq!(analyze("m", &edge, None).knee.step(), Some(6));
}

#[test]
fn knee_must_persist() {
    let steps = ladder(
        &[1, 2, 4, 8, 16],
        &[
            (150.0, 200.0),
            (150.0, 210.0),
            (600.0, 900.0),
            (150.0, 220.0),
            (150.0, 230.0),
        ],
        &[20.0; 5],
    );
    assert!(matches!(
        analyze("m", &steps, None).knee,
        KneeFinding::None { .. }
    ));
    // Two high steps, then recovery: still no knee.
    let steps = ladder(
        &[1, 2, 4, 8],
        &[(1.0, 200.0), (1.0, 900.0), (1.0, 950.0), (1.0, 210.0)],
        &[20.0; 4],
    );
    assert!(matches!(
        analyze("m", &steps, None).knee,
        KneeFinding::None { .. }
    ));
    // A spike that recovers, then a real knee later: the later one is reported, and the
    // spike does not lower the bar.
    let steps = ladder(
        &[1, 2, 4, 8, 16],
        &[
            (1.0, 200.0),
            (1.0, 900.0),
            (1.0, 210.0),
            (1.0, 700.0),
            (1.0, 800.0),
        ],
        &[20.0; 5],
    );
    let f = analyze("m", &steps, None);
    assert_eq!((knee(&f).step, knee(&f).reference.step), (4, 1));
}

#[test]
fn not_enough_samples_names_the_step() {
    let mut steps = ladder(&[1, 2, 4, 8, 16], &[(1.0, 200.0); 5], &[20.0; 5]);
    steps[4].succeeded = 12;
    let f = analyze("m", &steps, None);
    assert_eq!(
        f.knee,
        KneeFinding::NotEnoughSamples {
            step: 5,
            concurrency: 16,
            n: 12,
            needed: 20
        }
    );
    assert_eq!(
        f.sentences()[0],
        "Knee: not analysed (the step at 16 streams has 12 successful requests; need ≥ 20)."
    );
    // All errors at a step: no TTFT at all.
    steps[4].succeeded = 0;
    steps[4].ttft_p90_ms = None;
    assert_eq!(
        analyze("m", &steps, None).knee,
        KneeFinding::NotEnoughSamples {
            step: 5,
            concurrency: 16,
            n: 0,
            needed: 20
        }
    );
    // Exactly 20 is enough.
    steps[4].succeeded = 20;
    steps[4].ttft_p90_ms = Some(200.0);
    assert!(matches!(
        analyze("m", &steps, None).knee,
        KneeFinding::None { .. }
    ));
    let empty = analyze("m", &[], None);
    assert_eq!(
        (empty.knee.clone(), empty.wall.clone()),
        (KneeFinding::NoSteps, WallFinding::None)
    );
    assert_eq!(empty.sentences(), vec!["No steps to analyze.".to_string()]);
}

#[test]
fn estimated_cap_matches_little_law_on_md_c_ladder() {
    // M/D/c-like closed loop, cap 16, service 2 s (TTFT 200 ms + decode 1.8 s). Above the cap
    // X = 8 rps and E2E = N / X; measured rps 5% low and E2E 100 ms high (ramp effects).
    let conc = [4u32, 8, 12, 16, 24, 32];
    let steps: Vec<StepSummary> = conc
        .iter()
        .enumerate()
        .map(|(i, &c)| {
            let x = f64::from(c.min(16)) / 2.0;
            let e2e = f64::from(c) / x * 1000.0;
            let wait = e2e - 2000.0;
            let mut s = row(i as u32 + 1, c, (200.0 + wait, 210.0 + 3.0 * wait), 10.0);
            s.ttft_mean_ms = Some(200.0 + wait);
            s.rps = x * 0.95;
            s.e2e_mean_ms = Some(e2e + 100.0);
            s
        })
        .collect();
    let k = knee(&analyze("m", &steps, None)).clone();
    assert_eq!(
        (k.concurrency, k.max_clean_concurrency, k.kind),
        (24, 16, KneeKind::Queueing)
    );
    let cap = k.estimated_cap.unwrap();
    assert!((cap - 16.0).abs() <= 1.6, "K̂ = {cap}");
}

#[test]
fn rate_limited_knee_when_429s_at_the_knee_step() {
    let mut steps = ladder(
        &[1, 2, 4],
        &[(1.0, 200.0), (1.0, 210.0), (1.0, 900.0)],
        &[20.0; 3],
    );
    steps[2].err_429 = 5;
    let f = analyze("m", &steps, None);
    assert_eq!(
        (knee(&f).kind, knee(&f).rate_429),
        (KneeKind::RateLimited, 0.05)
    );
    assert!(f.sentences()[0].starts_with("TTFT knee in (2, 4] streams: rate-limited, 5.0% 429s"));
}

fn wall_extras(first_429: &[u64], tokens: &[u64], requests: &[u64]) -> Vec<StepExtras> {
    (0..first_429.len())
        .map(|i| StepExtras {
            first_attempt_429: first_429[i],
            limits_named: [
                (LimitKind::Tokens, tokens[i]),
                (LimitKind::Requests, requests[i]),
            ]
            .into_iter()
            .filter(|(_, n)| *n > 0)
            .collect(),
            quota_errors: 0,
            ..StepExtras::default()
        })
        .collect()
}

#[test]
fn wall_at_the_first_persistent_step_with_kind() {
    let mut steps = ladder(&[5, 10, 20, 40], &[(1.0, 200.0); 4], &[20.0; 4]);
    for s in &mut steps {
        s.attempted = 200;
    }
    steps[2].tpm_total = 1_900_000.0;
    steps[2].rps = 12.0;
    steps[2].duration_s = 90.0;
    // Step 2: 1 (< 3); step 3: 8/200 = 4%; step 4: 40. Retries hid them from err_429.
    let extras = wall_extras(&[0, 1, 8, 40], &[0, 0, 6, 30], &[0, 1, 1, 2]);
    let f = analyze("m", &steps, Some(&extras));
    assert_eq!(
        f.wall,
        WallFinding::Wall {
            step: 3,
            concurrency: 20,
            count_429: 8,
            rate_429: 0.04,
            kind: Some(LimitKind::Tokens),
            limit: None,
            counted: None,
            ramp_from: None,
            tpm_total_at_wall: 1_900_000.0,
            rps_at_wall: 12.0,
            duration_s_at_wall: 90.0,
        }
    );
    assert_eq!((f.wall.step(), f.wall_concurrency()), (Some(3), Some(20)));
    assert_eq!(
        f.sentences()[1],
        "Rate-limit wall at 20 streams: 4.0% of requests got 429 (tokens per minute; ≈ 1.9M tokens/min got through at the wall step)."
    );
    // Request hints win: request limit, RPM shown.
    let extras = wall_extras(&[0, 1, 8, 40], &[0, 0, 1, 1], &[0, 0, 5, 9]);
    let f = analyze("m", &steps, Some(&extras));
    assert!(matches!(
        f.wall,
        WallFinding::Wall {
            kind: Some(LimitKind::Requests),
            ..
        }
    ));
    assert!(f.sentences()[1]
        .ends_with("(requests per minute; ≈ 720 requests/min got through at the wall step)."));
    // A wall step shorter than a minute: the bucket's burst overstates the limit; say so.
    let mut short = steps.clone();
    short[2].duration_s = 12.0;
    let f = analyze("m", &short, Some(&extras));
    assert!(
        f.sentences()[1].contains("That step lasted 12 s")
            && f.sentences()[1].contains("duration: 1m"),
        "{}",
        f.sentences()[1]
    );
    // No hints: kind unknown. 2 429s in 100 attempts is 2% but fewer than 3: not a wall step.
    let extras = wall_extras(&[0, 2, 8, 40], &[0; 4], &[0; 4]);
    steps[1].attempted = 100;
    let f = analyze("m", &steps, Some(&extras));
    assert!(matches!(
        f.wall,
        WallFinding::Wall {
            step: 3,
            kind: None,
            ..
        }
    ));
    assert!(
        f.sentences()[1]
            .contains("limit kind unknown; ≈ 1.9M tokens/min and 720 requests/min got through at the wall step"),
        "{:?}",
        f.sentences()
    );
    // 3 429s in 400 attempts is below 1%: the wall moves to step 4.
    steps[2].attempted = 400;
    let extras = wall_extras(&[0, 0, 3, 40], &[0; 4], &[0; 4]);
    assert_eq!(analyze("m", &steps, Some(&extras)).wall.step(), Some(4));
}

#[test]
fn isolated_429s_and_quota_errors_are_not_a_wall() {
    let mut steps = ladder(&[1, 2, 4, 8], &[(1.0, 200.0); 4], &[20.0; 4]);
    steps[1].err_429 = 1;
    steps[2].err_429 = 2;
    let f = analyze("m", &steps, None);
    assert_eq!(f.wall, WallFinding::IsolatedRateLimits { total: 3 });
    assert_eq!(
        f.sentences()[1],
        "Isolated 429s (3 in total); no rate-limit wall."
    );
    // A wall-sized burst that does not persist is isolated too.
    steps[1].err_429 = 10;
    steps[2].err_429 = 0;
    assert_eq!(
        analyze("m", &steps, None).wall,
        WallFinding::IsolatedRateLimits { total: 10 }
    );
    // Quota errors: no wall, a note instead.
    steps[1].err_429 = 0;
    let extras: Vec<StepExtras> = (0..4)
        .map(|i| StepExtras {
            quota_errors: 25 * i,
            ..StepExtras::default()
        })
        .collect();
    let f = analyze("m", &steps, Some(&extras));
    assert_eq!(f.wall, WallFinding::None);
    assert_eq!(f.notes.len(), 1);
    assert!(f.notes[0].starts_with("150 requests failed with quota errors"));
    assert_eq!(f.sentences().last(), Some(&f.notes[0]));
}

#[test]
fn mismatched_extras_are_ignored_with_a_note() {
    let mut steps = ladder(&[1, 2], &[(1.0, 200.0); 2], &[20.0; 2]);
    steps[1].err_429 = 4;
    let extras = [StepExtras::default()];
    let f = analyze("m", &steps, Some(&extras));
    assert!(f.notes[0].contains("1 entries for 2 steps"));
    assert_eq!(f.wall.step(), Some(2));
}

#[test]
fn efficiency_is_relative_per_stream_throughput_and_steps_are_sorted() {
    let mut steps = ladder(&[4, 8, 16, 32], &[(1.0, 200.0); 4], &[20.0; 4]);
    steps[3].tpm = 16_000.0;
    steps.reverse();
    let f = analyze("m", &steps, None);
    let eff: Vec<(u32, Option<f64>)> = f
        .efficiency
        .iter()
        .map(|e| (e.step, e.throughput_efficiency))
        .collect();
    assert_eq!(
        eff,
        vec![
            (1, Some(1.0)),
            (2, Some(1.0)),
            (3, Some(1.0)),
            (4, Some(0.5))
        ]
    );
    // First step without throughput: efficiency undefined, not NaN.
    let mut zero = ladder(&[1, 2], &[(1.0, 200.0); 2], &[20.0; 2]);
    zero[0].tpm = 0.0;
    assert!(analyze("m", &zero, None)
        .efficiency
        .iter()
        .all(|e| e.throughput_efficiency.is_none()));
}

#[test]
fn extras_from_records_groups_by_model_and_step() {
    let rec = |model: &str, step, first_429, kind, class| RequestRecord {
        model: model.into(),
        step,
        first_attempt_429: first_429,
        limit_kind: kind,
        error_class: class,
        ..RequestRecord::default()
    };
    let records = [
        rec("a", 1, false, None, None),
        rec("a", 2, true, Some(LimitKind::Tokens), None),
        rec(
            "a",
            2,
            true,
            Some(LimitKind::Tokens),
            Some(ErrorClass::Http429),
        ),
        rec(
            "a",
            2,
            true,
            Some(LimitKind::Requests),
            Some(ErrorClass::Http429),
        ),
        rec("a", 2, false, None, Some(ErrorClass::Quota)),
        rec("b", 2, true, None, Some(ErrorClass::Http429)),
    ];
    let map = extras_from_records(&records);
    assert_eq!(map.len(), 3);
    assert_eq!(map[&("a".to_string(), 1)].first_attempt_429, 0);
    assert_eq!(map[&("a".to_string(), 1)].usage.requests, 1, "one success");
    let a2 = &map[&("a".to_string(), 2)];
    assert_eq!((a2.first_attempt_429, a2.quota_errors), (3, 1));
    assert_eq!(
        a2.limits_named,
        [(LimitKind::Tokens, 2), (LimitKind::Requests, 1)]
            .into_iter()
            .collect()
    );
    assert_eq!(map[&("b".to_string(), 2)].first_attempt_429, 1);
}

#[test]
fn findings_serialize_with_a_status_tag() {
    let steps = ladder(&[1, 2], &[(1.0, 200.0), (1.0, 900.0)], &[20.0; 2]);
    let json = serde_json::to_value(analyze("m", &steps, None)).unwrap();
    assert_eq!(json["knee"]["status"], "knee");
    assert_eq!(json["knee"]["kind"], "queueing");
    assert_eq!(json["wall"]["status"], "none");
    let back: ModelFindings = serde_json::from_value(json).unwrap();
    assert_eq!(back.knee.step(), Some(2));
}

#[test]
fn self_check_flags_a_busy_client_and_light_load_only() {
    let mut busy = StepSummary {
        concurrency: 50,
        attempted: 500,
        succeeded: 500,
        client_cpu_pct: Some(97.0),
        loop_lag_p99_ms: Some(12.0),
        achieved_concurrency: Some(20.0),
        concurrency_steady: Some(20.0),
        ..StepSummary::default()
    };
    let notes = self_check_notes(&[&busy]);
    assert_eq!(notes.len(), 3, "{notes:?}");
    assert!(notes[0].contains("client CPU 97%"));
    assert!(notes[1].contains("20.0 requests were in flight"));
    assert_eq!(
        notes[2],
        "At 50 streams: the client's event loop ran 12.0 ms late (P99): timings at this step include client delay."
    );
    // Several late steps are one note, not one per step.
    let mut other = busy.clone();
    other.concurrency = 80;
    other.loop_lag_p99_ms = Some(6.3);
    other.client_cpu_pct = None;
    other.achieved_concurrency = None;
    other.concurrency_steady = None;
    let mut third = other.clone();
    third.concurrency = 100;
    third.loop_lag_p99_ms = Some(7.0);
    let notes = self_check_notes(&[&busy, &other, &third]);
    let late: Vec<&String> = notes.iter().filter(|n| n.contains("event loop")).collect();
    assert_eq!(
        late,
        ["At 50, 80 and 100 streams: the client's event loop ran late (P99 12.0, 6.3 and 7.0 ms): timings at these steps include client delay."],
        "{notes:?}"
    );
    busy.client_cpu_pct = Some(40.0);
    busy.loop_lag_p99_ms = Some(0.4);
    busy.achieved_concurrency = Some(49.0);
    busy.concurrency_steady = Some(49.0);
    assert!(self_check_notes(&[&busy]).is_empty());
    // Too few requests to judge the achieved concurrency.
    busy.attempted = 60;
    busy.succeeded = 60;
    busy.achieved_concurrency = Some(10.0);
    busy.concurrency_steady = Some(10.0);
    assert!(self_check_notes(&[&busy]).is_empty());
    // Mostly fast failures (a wrong key): not a client bottleneck.
    busy.attempted = 500;
    busy.succeeded = 10;
    assert!(self_check_notes(&[&busy]).is_empty());
}

#[test]
fn decode_saturation_without_a_ttft_knee_is_reported() {
    let mut steps = ladder(&[2, 4, 8, 16], &[(1.0, 200.0); 4], &[20.0; 4]);
    let tpot = [3.0, 6.0, 12.0, 24.0];
    for (s, t) in steps.iter_mut().zip(tpot) {
        s.tpot_p50_ms = Some(t);
    }
    let f = analyze("m", &steps, None);
    assert!(matches!(f.knee, KneeFinding::None { .. }));
    let note = f
        .notes
        .iter()
        .find(|n| n.starts_with("Decode saturation"))
        .expect("no saturation note");
    assert!(
        note.contains("3.0 ms at 2 streams to 24.0 ms at 16 streams (×8.0)"),
        "{note}"
    );
    assert!(note.contains("from 4 streams on"), "{note}");
    // A flat TPOT, or a rise that does not persist, says nothing.
    let mut flat = ladder(&[2, 4, 8, 16], &[(1.0, 200.0); 4], &[20.0; 4]);
    for (s, t) in flat.iter_mut().zip([3.0, 3.1, 4.0, 3.0]) {
        s.tpot_p50_ms = Some(t);
    }
    assert!(analyze("m", &flat, None)
        .notes
        .iter()
        .all(|n| !n.starts_with("Decode saturation")));
}

#[test]
fn a_cap_estimate_below_the_clean_step_is_said_not_contradicted() {
    // Fast backend, cap 6: at 8 streams TTFT P90 rises 22 -> 79 ms (below the +100 ms floor),
    // at 16 it clears the threshold. Service 200 ms: X = 6 / 0.2 s = 30 rps, so 16 streams
    // see E2E = 16 / 30 s = 533 ms, a wait of 333 ms; Little's law says ≈ 6 in service.
    let mut steps = ladder(
        &[2, 4, 8, 16],
        &[(20.0, 22.0), (20.0, 22.0), (25.0, 79.0), (350.0, 600.0)],
        &[5.0; 4],
    );
    let k = &mut steps[3];
    k.rps = 30.0;
    k.e2e_mean_ms = Some(1600.0 / 3.0);
    k.ttft_mean_ms = Some(20.0 + 1000.0 / 3.0);
    let f = analyze("m", &steps, None);
    let s = &f.sentences()[0];
    assert!(s.starts_with("TTFT knee in (8, 16]"), "{s}");
    assert!(s.contains("estimated cap ≈ 6"), "{s}");
    assert!(
        s.contains("The cap estimate is below 8") && s.contains("try 6 streams to confirm"),
        "{s}"
    );
    assert!(!s.contains("Try 12"), "{s}");
}

/// The ladder with each step's 95% bounds of TTFT P90 from the given samples.
fn bounded(steps: &[StepSummary], samples: &[Vec<f64>]) -> Vec<StepSummary> {
    steps
        .iter()
        .zip(samples)
        .map(|(s, v)| {
            let mut v = v.clone();
            v.sort_by(f64::total_cmp);
            let (lo, hi) = crate::stats::p90_bounds(&v).unwrap();
            StepSummary {
                ttft_p90_lo_ms: Some(lo),
                ttft_p90_hi_ms: Some(hi),
                ..s.clone()
            }
        })
        .collect()
}

/// `n` TTFTs: `base` ms for most requests, `tail` ms for every `every`-th.
fn ttfts(n: usize, base: f64, tail: f64, every: usize) -> Vec<f64> {
    (0..n)
        .map(|i| {
            if i % every == 0 {
                tail
            } else {
                base + (i % 7) as f64
            }
        })
        .collect()
}

#[test]
fn knee_needs_confidence_not_a_lucky_point() {
    // A noisy server: at every step 1 in 8 requests takes 7 s, the rest 200 ms. The sample
    // P90s happen to read low at the first steps and high later (the point rule sees a knee),
    // but the bounds overlap: no knee.
    let steps = ladder(
        &[1, 2, 4, 8],
        &[
            (205.0, 240.0),
            (205.0, 260.0),
            (205.0, 7000.0),
            (205.0, 7000.0),
        ],
        &[20.0; 4],
    );
    assert_eq!(knee(&analyze("m", &steps, None)).concurrency, 4);
    let noisy: Vec<Vec<f64>> = (0..4).map(|_| ttfts(100, 200.0, 7000.0, 8)).collect();
    let f = analyze("m", &bounded(&steps, &noisy), None);
    assert!(matches!(f.knee, KneeFinding::None { .. }), "{:?}", f.knee);
    assert_eq!(f.knee_status(), Some(None));

    // Real queueing: from 4 streams on, most requests wait seconds.
    let queued = vec![
        ttfts(100, 200.0, 260.0, 10),
        ttfts(100, 200.0, 260.0, 10),
        ttfts(100, 2500.0, 7000.0, 3),
        ttfts(100, 5000.0, 9000.0, 3),
    ];
    let f = analyze("m", &bounded(&steps, &queued), None);
    let k = knee(&f);
    assert_eq!((k.concurrency, k.with_confidence), (4, true));
    assert!(
        !f.sentences()[0].contains("Point values"),
        "{}",
        f.sentences()[0]
    );
}

#[test]
fn not_analysed_is_not_no_knee_and_cap_is_for_queueing_only() {
    let mut steps = ladder(&[1, 2], &[(1.0, 200.0); 2], &[20.0; 2]);
    steps[1].succeeded = 5;
    assert_eq!(analyze("m", &steps, None).knee_status(), None);
    // Saturation knee: no cap estimate (requests do not wait in line).
    let steps = ladder(
        &[1, 2, 4],
        &[(205.0, 230.0), (205.0, 230.0), (900.0, 1500.0)],
        &[20.0, 20.0, 40.0],
    );
    let f = analyze("m", &steps, None);
    assert_eq!(
        (knee(&f).kind, knee(&f).estimated_cap),
        (KneeKind::Saturation, None)
    );
}

#[test]
fn rate_limited_knee_uses_the_wall_rule() {
    // 2 first-attempt 429s out of 100 (2%): the share is there but not the count of 3.
    let steps = ladder(
        &[1, 2, 4],
        &[(205.0, 230.0), (205.0, 230.0), (900.0, 1500.0)],
        &[20.0, 20.0, 20.0],
    );
    let extras: Vec<StepExtras> = [0, 0, 2]
        .iter()
        .map(|&n| StepExtras {
            first_attempt_429: n,
            ..StepExtras::default()
        })
        .collect();
    let f = analyze("m", &steps, Some(&extras));
    assert_eq!(knee(&f).kind, KneeKind::Queueing);
    assert!(rate_limited(3, 100) && !rate_limited(2, 100) && !rate_limited(3, 400));
}

#[test]
fn prompt_size_knee_is_prefill_without_a_cap() {
    // One stream, prompts of 256…4096 tokens: TTFT grows with the prompt (prefill), TPOT flat,
    // and bends at 4096 (a straight line from the first two would say 360 ms there, not 900).
    let mut steps = ladder(
        &[256, 1024, 4096],
        &[(100.0, 110.0), (150.0, 160.0), (850.0, 900.0)],
        &[20.0, 20.0, 20.0],
    );
    for s in &mut steps {
        s.ladder_unit = LadderUnit::PromptTokens;
        s.rps = 1.0;
    }
    let f = analyze("m", &steps, None);
    let k = knee(&f);
    assert_eq!((k.concurrency, k.kind), (4096, KneeKind::Prefill));
    assert_eq!(k.estimated_cap, None);
    let s = &f.sentences()[0];
    assert!(
        s.starts_with("TTFT knee in (1024, 4096] prompt tokens: prefill"),
        "{s}"
    );
    // (900 − 110) ms over 3840 tokens.
    assert!(
        s.contains("TTFT grows with prompt size: +206 ms per 1k prompt tokens"),
        "{s}"
    );
    assert!(!s.contains("queueing") && !s.contains("cap"), "{s}");
}

/// Issue 20's llama-server case: two slots on a CPU. TPOT rises from 1 to 2 streams (two
/// sequences decoded together), then stays; TTFT P90 jumps at 4 streams. By TPOT alone the knee
/// reads as saturation; llama.cpp's own prompt_ms (its queue derived from it) and
/// `requests_deferred` say queueing.
#[test]
fn server_evidence_overrides_a_tpot_rise_that_is_not_the_cause() {
    use crate::model::TimingSource;
    let mut steps = ladder(
        &[1, 2, 4, 8],
        &[(40.0, 42.0), (41.0, 44.0), (300.0, 590.0), (900.0, 1756.0)],
        &[16.5, 21.0, 21.5, 22.0],
    );
    let sample = |ttft: f64| PartSample {
        ttft_ms: ttft,
        headers_ms: Some(ttft - 0.5),
        queue_ms: None,
        prefill_ms: Some(30.0),
        processing_ms: None,
        source: Some(TimingSource::LlamaCpp),
    };
    let extras: Vec<StepExtras> = steps
        .iter()
        .map(|s| StepExtras {
            parts: (0..100)
                .map(|i| {
                    sample(
                        s.ttft_p50_ms.unwrap()
                            + (s.ttft_p90_ms.unwrap() - s.ttft_p50_ms.unwrap()) * f64::from(i)
                                / 89.0,
                    )
                })
                .collect(),
            ..StepExtras::default()
        })
        .collect();
    let without = analyze("m", &steps, Some(&extras[..0]));
    assert_eq!(knee(&without).kind, KneeKind::Saturation);
    assert!(
        without.sentences()[0].contains("inferred from client timings"),
        "{}",
        without.sentences()[0]
    );
    let f = analyze("m", &steps, Some(&extras));
    let k = knee(&f);
    assert_eq!(
        (k.kind, k.max_clean_concurrency, k.concurrency),
        (KneeKind::Queueing, 2, 4)
    );
    let e = k.server_evidence.as_ref().unwrap();
    assert!(!e.confirms_client);
    let q = &e.series[0];
    assert_eq!(q.series, "server_queue_p90_ms");
    assert!(q.reference < 5.0 && q.at_knee > 500.0, "{q:?}");
    assert!(
        f.sentences()[0].contains("queueing, by the server's own data (TPOT +"),
        "{}",
        f.sentences()[0]
    );
    // With /metrics: requests_deferred 0 -> 2, processing capped at 2.
    for (s, (w, r)) in steps
        .iter_mut()
        .zip([(0.0, 1.0), (0.0, 2.0), (2.0, 2.0), (6.0, 2.0)])
    {
        (
            s.server_waiting_max,
            s.server_waiting_mean,
            s.server_running_max,
        ) = (Some(w), Some(w * 0.8), Some(r));
    }
    let f = analyze("m", &steps, Some(&extras));
    let e = knee(&f).server_evidence.clone().unwrap();
    assert_eq!(e.running_cap, Some(2.0));
    let words = f.sentences()[0].clone();
    assert!(
        words.contains("waiting 0 → 2") && words.contains("running capped at 2"),
        "{words}"
    );
    // Parts per step: at 8 streams TTFT is mostly the server queue.
    let p8 = f.ttft_parts.iter().find(|p| p.concurrency == 8).unwrap();
    let q8 = p8.server_queue.as_ref().unwrap();
    assert!(q8.p50_ms > 0.8 * p8.ttft.p50_ms, "{p8:?}");
    // Knee with no server evidence of a queue: the client's classification stands, and says so.
    let flat: Vec<StepExtras> = steps
        .iter()
        .map(|s| StepExtras {
            parts: (0..100)
                .map(|_| PartSample {
                    queue_ms: Some(0.0),
                    source: Some(TimingSource::Sim),
                    ..sample(s.ttft_p90_ms.unwrap())
                })
                .collect(),
            ..StepExtras::default()
        })
        .collect();
    for s in &mut steps {
        (
            s.server_waiting_max,
            s.server_waiting_mean,
            s.server_running_max,
        ) = (None, None, None);
    }
    let f = analyze("m", &steps, Some(&flat));
    assert_eq!(knee(&f).kind, KneeKind::Saturation);
    assert!(
        f.sentences()[0].contains("the server's data does not show a queue"),
        "{}",
        f.sentences()[0]
    );
}

#[test]
fn a_linear_prefill_is_a_slope_not_a_knee() {
    // scenarios/prefill-sweep.yaml: 80 ms + 0.05 ms per prompt token, 2 streams. TTFT P90
    // passes 1.5 × the first step's at 4096 tokens, but on the straight line through the first
    // two steps: no bend, so no knee; the sentence gives the slope instead.
    let line = |x: f64| 80.0 + 0.05 * x;
    let sizes = [256, 1024, 4096, 8192];
    let mut steps = ladder(
        &sizes,
        &sizes.map(|x| (line(f64::from(x)), line(f64::from(x)) + 3.0)),
        &[10.0; 4],
    );
    for s in &mut steps {
        s.ladder_unit = LadderUnit::PromptTokens;
        let p = s.ttft_p90_ms.unwrap();
        (s.ttft_p90_lo_ms, s.ttft_p90_hi_ms) = (Some(p - 4.0), Some(p + 5.0));
    }
    let f = analyze("m", &steps, None);
    assert!(
        matches!(f.knee, KneeFinding::None { ttft_ms_per_1k_tokens: Some(v), .. } if (v - 50.0).abs() < 1.0),
        "{:?}",
        f.knee
    );
    assert_eq!(
        f.sentences()[0],
        "No TTFT knee up to 8192-token prompts: TTFT grows with prompt size in a straight line, +50 ms per 1k prompt tokens (TTFT P90), with no bend beyond its uncertainty."
    );
    // A nearly noiseless server (bounds a millisecond wide) whose large prompts take 8-14 ms
    // more to upload: beyond the bounds, but not a bend that matters, so still a slope.
    let mut tight = steps.clone();
    for (s, extra) in tight.iter_mut().zip([0.0, 0.0, 8.0, 14.0]) {
        let p = s.ttft_p90_ms.unwrap() + extra;
        s.ttft_p90_ms = Some(p);
        (s.ttft_p90_lo_ms, s.ttft_p90_hi_ms) = (Some(p - 0.5), Some(p + 0.5));
    }
    let f = analyze("m", &tight, None);
    assert!(matches!(f.knee, KneeFinding::None { .. }), "{:?}", f.knee);
    // The same ladder bending at 4096 (a KV cache spilling, say): beyond the steepest line the
    // first two steps' bounds allow (0.062 ms a token from 139 ms), so a knee.
    for (s, extra) in steps[2..].iter_mut().zip([400.0, 900.0]) {
        for v in [
            &mut s.ttft_p90_ms,
            &mut s.ttft_p90_lo_ms,
            &mut s.ttft_p90_hi_ms,
        ] {
            *v = v.map(|x| x + extra);
        }
    }
    let f = analyze("m", &steps, None);
    let k = knee(&f);
    assert_eq!((k.concurrency, k.kind), (4096, KneeKind::Prefill));
}

/// Issue 34: a hosted API (or a gateway) reports one time for queue and prefill together
/// (`openai-processing-ms`). It is never read as prefill: growing with load while TPOT stays
/// flat, it makes the knee queueing, inferred, with the series named for what it is; flat
/// while TTFT grows, the wait was outside the server's time and the client's reading stands.
#[test]
fn an_unsplit_server_time_growing_with_load_is_queueing_inferred() {
    use crate::model::TimingSource;
    let mut steps = ladder(
        &[10, 20, 40],
        &[(300.0, 320.0), (302.0, 322.0), (900.0, 1300.0)],
        &[20.0, 20.0, 20.5],
    );
    steps[2].ttft_mean_ms = Some(800.0);
    let extras = |in_server: bool| -> Vec<StepExtras> {
        steps
            .iter()
            .map(|s| StepExtras {
                parts: (0..100)
                    .map(|i| {
                        let (p50, p90) = (s.ttft_p50_ms.unwrap(), s.ttft_p90_ms.unwrap());
                        let ttft = p50 + (p90 - p50) * f64::from(i) / 89.0;
                        PartSample {
                            ttft_ms: ttft,
                            headers_ms: Some(ttft - 1.0),
                            queue_ms: None,
                            prefill_ms: None,
                            processing_ms: Some(if in_server { ttft - 3.0 } else { 297.0 }),
                            source: Some(TimingSource::OpenAi),
                        }
                    })
                    .collect(),
                ..StepExtras::default()
            })
            .collect()
    };
    let f = analyze("m", &steps, Some(&extras(true)));
    let k = knee(&f);
    assert_eq!((k.concurrency, k.kind), (40, KneeKind::Queueing));
    assert!(k.estimated_cap.is_some());
    let e = k.server_evidence.as_ref().unwrap();
    assert!(e.inferred && e.confirms_client && e.only_unsplit(), "{e:?}");
    let cause = k.cause();
    assert!(!cause.seen);
    assert!(
        cause.words.starts_with(
            "queueing, inferred (the server's time grew with load, TPOT flat): server: queue + prefill, not split, P90 "
        ) && cause.words.ends_with(" ms (openai)"),
        "{}",
        cause.words
    );
    let sentence = &f.sentences()[0];
    assert!(sentence.contains(&cause.words), "{sentence}");
    assert!(!sentence.contains(": prefill"), "{sentence}");
    let p = f.ttft_parts.last().unwrap();
    assert!(p.prefill.is_none() && p.server_queue.is_none());
    assert_eq!(p.server_processing.as_ref().unwrap().source, "openai");

    let f = analyze("m", &steps, Some(&extras(false)));
    let k = knee(&f);
    assert_eq!(k.kind, KneeKind::Queueing);
    assert!(!k.server_evidence.as_ref().unwrap().inferred);
    let words = k.cause().words;
    assert!(
        words.starts_with("queueing, TPOT flat (inferred from client timings; the server's time did not grow with TTFT: server: queue + prefill, not split, P90 297 → 297 ms (openai))"),
        "{words}"
    );
}

/// Agents outgrowing a prefix cache: TTFT P90 rises while TPOT stays flat and the cache hit
/// share falls; without server data the cause is cache misses, inferred, not queueing. The same
/// ladder with a steady share is queueing; a share that fell a little (1 point) is not misses.
#[test]
fn a_knee_whose_cache_hit_share_fell_is_called_cache_misses() {
    let mut steps = ladder(
        &[2, 4, 8, 16],
        &[
            (150.0, 150.0),
            (150.0, 151.0),
            (150.0, 500.0),
            (280.0, 500.0),
        ],
        &[4.0, 4.0, 4.0, 4.0],
    );
    for (s, cached) in steps.iter_mut().zip([790, 808, 600, 453]) {
        (s.input_tokens, s.cached_tokens) = (1000, cached);
    }
    let f = analyze("m", &steps, None);
    let k = knee(&f);
    assert_eq!((k.concurrency, k.kind), (8, KneeKind::CacheMisses));
    assert_eq!(k.estimated_cap, None, "no cap: nothing queued");
    let cause = k.cause();
    assert!(!cause.seen, "no server data: inferred");
    assert_eq!(
        cause.words,
        "prefill of cache misses, inferred (TPOT flat): cache hit share 79% → 60%"
    );
    assert!(f.sentences()[0].starts_with(
        "TTFT knee in (4, 8] streams: prefill of cache misses, inferred (TPOT flat): cache hit share 79% → 60% (TTFT P90 150 → 500 ms"
    ));
    for (s, cached) in steps.iter_mut().zip([790, 808, 800, 790]) {
        s.cached_tokens = cached;
    }
    assert_eq!(knee(&analyze("m", &steps, None)).kind, KneeKind::Queueing);
    assert!(crate::findings::cache_share_fell(Some(0.84), Some(0.78)));
    assert!(!crate::findings::cache_share_fell(Some(0.84), Some(0.83)));
    assert!(
        !crate::findings::cache_share_fell(Some(0.10), Some(0.04)),
        "90% → 96% uncached"
    );
    assert!(!crate::findings::cache_share_fell(None, Some(0.0)));
}

/// A step whose client did not keep up is said first among the model's notes, before the
/// notes that read its figures as the server's (a rate step's saturation).
#[test]
fn an_invalid_step_leads_the_findings_notes() {
    let starved = StepSummary {
        concurrency_steady: Some(12.0),
        ..row(2, 30, (100.0, 120.0), 10.0)
    };
    let steps = [row(1, 10, (100.0, 120.0), 10.0), starved];
    let notes = analyze("m", &steps, None).notes;
    assert!(
        notes[0].starts_with("At 30 streams: invalid for the gate: the client did not keep up (only 12.0 of 30 streams in flight"),
        "{notes:?}"
    );
    assert_eq!(
        notes
            .iter()
            .filter(|n| n.contains("invalid for the gate"))
            .count(),
        1,
        "{notes:?}"
    );
}

/// The Little's-law note reads the steady window: a step whose tail drained (its whole-step
/// average well under the streams) says nothing; one whose streams sat idle in the steady
/// window says so with the cause and the fix; no steady window (logs, short steps) says nothing.
#[test]
fn the_thin_load_note_reads_the_steady_window() {
    let step = |achieved: Option<f64>, steady: Option<f64>, cpu: Option<f64>| StepSummary {
        achieved_concurrency: achieved,
        concurrency_steady: steady,
        client_cpu_pct: cpu,
        ..row(1, 30, (100.0, 120.0), 10.0)
    };
    // The drained tail: 21.1 of 30 over the whole step, 29.8 in the steady window.
    assert_eq!(thin_load_note(&step(Some(21.1), Some(29.8), None)), None);
    // No steady window: nothing to say, however low the whole-step average.
    assert_eq!(thin_load_note(&step(Some(12.0), None, None)), None);
    let said = thin_load_note(&step(Some(20.0), Some(21.0), Some(70.0))).unwrap();
    assert!(
        said.starts_with("At 30 streams: only 21.0 requests were in flight on average in the steady window (Little's law), not 30"),
        "{said}"
    );
    assert!(said.contains("(client CPU 70% of a core)"), "{said}");
    assert!(said.contains("shard the load"), "{said}");
    // At the threshold (80% of the streams) it stays silent; an open-loop step never fires.
    assert_eq!(thin_load_note(&step(None, Some(24.0), None)), None);
    let open = StepSummary {
        ladder_unit: LadderUnit::Rps,
        ..step(None, Some(5.0), None)
    };
    assert_eq!(thin_load_note(&open), None);
    // Too few requests per stream (fewer than 2 each) to read a steady window.
    let short = StepSummary {
        attempted: 50,
        succeeded: 50,
        ..step(None, Some(5.0), None)
    };
    assert_eq!(thin_load_note(&short), None);
}
