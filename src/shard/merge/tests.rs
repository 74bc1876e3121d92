use super::*;
use crate::model::RequestRecord;
use crate::store::ShardMeta;

fn meta(index: u32, total: u32) -> Meta {
    Meta {
        tool_version: "0.1.0".into(),
        scenario: "demo".into(),
        fingerprint: "fp1".into(),
        host: format!("pod-{index}"),
        started_at: format!("2026-11-30T10:00:0{index}Z"),
        finished_at: format!("2026-11-30T10:01:0{index}Z"),
        command_line: vec![],
        interrupted: false,
        models: vec!["m".into()],
        ladder: vec![4, 10],
        ladder_unit: Default::default(),
        notes: vec![],
        complete: true,
        steps: vec![],
        slo: Default::default(),
        short_below: 0.1,
        shard: Some(ShardMeta {
            index,
            total,
            start_at: Some("2026-11-30T10:00:00Z".into()),
            step_every_s: Some(60.0),
            origin_unix_ms: 1_000_000.0,
            clock_offset_ms: Some(0.0),
            clock_offset_error_ms: Some(5.0),
        }),
        merged_from: vec![],
        stopped_by: None,
        client: None,
    }
}

fn rec(step: u32, worker: u32, start: f64, ttft: f64) -> RequestRecord {
    RequestRecord {
        model: "m".into(),
        step,
        concurrency: 2,
        worker,
        request_id: format!("r-{step}-{worker}-{start}-{ttft}"),
        started_at_ms: start,
        ttft_ms: Some(ttft),
        tpot_ms: Some(10.0),
        e2e_ms: Some(ttft + 100.0),
        output_tokens: Some(11),
        attempts: 1,
        ..RequestRecord::default()
    }
}

/// A shard with one row per step: records `ttfts` at step 1 (and one record at step 2).
fn shard(index: u32, total: u32, ttfts: &[f64]) -> ShardRun {
    let mut records: Vec<RequestRecord> = ttfts
        .iter()
        .enumerate()
        .map(|(i, t)| rec(1, (i % 2) as u32, 10.0 * i as f64, *t))
        .collect();
    records.push(rec(2, 0, 60_000.0, 100.0));
    let summaries = [1u32, 2]
        .iter()
        .map(|&step| {
            let recs: Vec<RequestRecord> =
                records.iter().filter(|r| r.step == step).cloned().collect();
            let ctx = StepContext {
                scenario: "demo",
                fingerprint: "fp1",
                model: "m",
                step,
                concurrency: 2,
                duration_s: 10.0,
                slo: &Slo::default(),
                short_below: 0.1,
            };
            stats::summarize_step(&ctx, &recs)
        })
        .collect();
    ShardRun {
        label: format!("runs/demo/x-shard-{index}-of-{total}"),
        meta: meta(index, total),
        summaries,
        records,
        stopped: None,
    }
}

#[test]
fn percentiles_come_from_the_union_of_records_never_from_averages() {
    let low: Vec<f64> = (1..=50).map(f64::from).collect();
    let high: Vec<f64> = (51..=100).map(|x| f64::from(x) * 10.0).collect();
    let merged = merge(vec![shard(1, 2, &high), shard(0, 2, &low)], &Slo::default()).unwrap();
    assert!(merged.problems.is_empty(), "{:?}", merged.problems);
    let all: Vec<f64> = low.iter().chain(&high).copied().collect();
    let row = &merged.summaries[0];
    assert_eq!((row.step, row.concurrency, row.attempted), (1, 4, 100));
    assert_eq!(row.ttft_p90_ms, stats::quantile(&all, 0.9));
    assert_eq!(row.ttft_p50_ms, stats::quantile(&all, 0.5));
    // Not the average of the shards' own P90s.
    let own = |v: &[f64]| stats::quantile(v, 0.9).unwrap();
    assert_ne!(row.ttft_p90_ms, Some((own(&low) + own(&high)) / 2.0));
    // Step 2 of 10 streams: each shard ran 5; every record says 10 and workers are global.
    assert_eq!(merged.summaries[1].concurrency, 10);
    let step2: Vec<(u32, u32)> = merged
        .records
        .iter()
        .filter(|r| r.step == 2)
        .map(|r| (r.worker, r.concurrency))
        .collect();
    assert_eq!(step2, [(0, 10), (5, 10)]);
    // Step 1 of 4 streams: shard 1's workers 0 and 1 are workers 2 and 3.
    let workers: BTreeSet<u32> = merged
        .records
        .iter()
        .filter(|r| r.step == 1)
        .map(|r| r.worker)
        .collect();
    assert_eq!(workers.into_iter().collect::<Vec<_>>(), [0, 1, 2, 3]);
    assert_eq!(merged.records.len(), 102);
    let m = &merged.meta;
    assert_eq!((m.host.as_str(), m.interrupted), ("pod-0,pod-1", false));
    assert_eq!(m.started_at, "2026-11-30T10:00:00Z");
    assert_eq!(m.finished_at, "2026-11-30T10:01:01Z");
    assert_eq!(m.merged_from.len(), 2);
    assert!(m.shard.is_none());
}

#[test]
fn the_short_count_uses_the_runs_threshold() {
    // 11 of 20 tokens without `length`: short under 60%, not under the default 10%.
    let with_max = |mut s: ShardRun, short_below: f64| {
        s.meta.short_below = short_below;
        for r in &mut s.records {
            r.max_tokens = Some(20);
        }
        s
    };
    let run = |short_below| {
        let shards = vec![
            with_max(shard(0, 2, &[1.0, 2.0]), short_below),
            with_max(shard(1, 2, &[3.0]), short_below),
        ];
        merge(shards, &Slo::default()).unwrap().summaries[0].short
    };
    assert_eq!(run(0.6), 3);
    assert_eq!(run(0.1), 0);
}

#[test]
fn records_share_one_time_line_corrected_by_clock_offsets() {
    let mut a = shard(0, 2, &[100.0]);
    let mut b = shard(1, 2, &[100.0]);
    // b's clock runs 300 ms behind the target's; its origin reads 300 ms earlier.
    a.meta.shard.as_mut().unwrap().origin_unix_ms = 5_000.0;
    let sb = b.meta.shard.as_mut().unwrap();
    sb.origin_unix_ms = 4_750.0;
    sb.clock_offset_ms = Some(300.0);
    a.meta.shard.as_mut().unwrap().clock_offset_ms = Some(0.0);
    let merged = merge(vec![a, b], &Slo::default()).unwrap();
    let starts: Vec<f64> = merged
        .records
        .iter()
        .filter(|r| r.step == 1)
        .map(|r| r.started_at_ms)
        .collect();
    assert_eq!(starts, [0.0, 50.0]);
    // 300 ms apart from the median of two (150): within tolerance, no flag.
    assert!(merged.problems.is_empty(), "{:?}", merged.problems);
}

#[test]
fn missing_incomplete_late_and_skewed_shards_are_reported() {
    let a = shard(0, 4, &[100.0, 110.0]);
    let mut b = shard(1, 4, &[100.0]);
    b.stopped = Some("stopped in step 2 of 2 (concurrency 10)".into());
    let mut c = shard(3, 4, &[100.0]);
    for r in c.records.iter_mut().filter(|r| r.step == 2) {
        r.started_at_ms += 5_000.0; // step 2 began 5 s late
    }
    let mut d = shard(2, 4, &[100.0]);
    d.meta.shard.as_mut().unwrap().clock_offset_ms = Some(2_000.0);
    let merged = merge(vec![a, b, c, d], &Slo::default()).unwrap();
    let p = &merged.problems;
    assert!(p.contains(&Problem::Incomplete {
        index: 1,
        label: "runs/demo/x-shard-1-of-4".into(),
        why: "stopped in step 2 of 2 (concurrency 10)".into()
    }));
    assert!(p.iter().any(|x| matches!(x, Problem::Late { index: 3, step: 2, late_ms, .. } if (*late_ms - 5_000.0).abs() < 1e-9)), "{p:?}");
    assert!(
        p.iter()
            .any(|x| matches!(x, Problem::Clock { index: 2, .. })),
        "{p:?}"
    );
    assert!(merged.meta.interrupted);
    assert!(merged
        .meta
        .notes
        .iter()
        .any(|n| n.contains("did not finish")));
    // The incomplete shard's records are kept.
    assert_eq!(merged.summaries[0].attempted, 5);

    let partial = merge(
        vec![shard(0, 3, &[1.0]), shard(2, 3, &[1.0])],
        &Slo::default(),
    )
    .unwrap()
    .problems;
    assert_eq!(partial, [Problem::Missing { index: 1, total: 3 }]);
    assert!(partial[0].to_string().contains("shard 1/3 is missing"));
}

/// A step a shard did not finish holds fewer streams than the ladder for a reason no client
/// measured: no steady concurrency, so no step is called invalid for its client.
#[test]
fn a_step_missing_a_shards_part_has_no_steady_concurrency() {
    let whole = merge(
        vec![shard(0, 2, &[1.0; 8]), shard(1, 2, &[1.0; 8])],
        &Slo::default(),
    );
    assert!(whole.unwrap().summaries[0].concurrency_steady.is_some());
    let mut killed = shard(1, 2, &[1.0; 8]);
    killed.summaries.truncate(0);
    killed.stopped = Some("killed".into());
    let merged = merge(vec![shard(0, 2, &[1.0; 8]), killed], &Slo::default()).unwrap();
    assert_eq!(merged.summaries[0].concurrency_steady, None);
}

#[test]
fn shards_of_different_runs_are_refused() {
    let slo = Slo::default();
    assert_eq!(merge(vec![], &slo).unwrap_err(), MergeError::Empty);
    let mut other = shard(1, 2, &[1.0]);
    other.meta.fingerprint = "fp2".into();
    let e = merge(vec![shard(0, 2, &[1.0]), other], &slo).unwrap_err();
    assert!(e.to_string().contains("different workload"), "{e}");

    let mut plain = shard(1, 2, &[1.0]);
    plain.meta.shard = None;
    let e = merge(vec![shard(0, 2, &[1.0]), plain], &slo).unwrap_err();
    assert!(e.to_string().contains("not run with --shard"), "{e}");

    let e = merge(vec![shard(0, 2, &[1.0]), shard(0, 2, &[1.0])], &slo).unwrap_err();
    assert!(matches!(e, MergeError::Duplicate { index: 0, .. }), "{e}");

    let e = merge(vec![shard(0, 2, &[1.0]), shard(1, 3, &[1.0])], &slo).unwrap_err();
    assert!(e.to_string().contains("one of 3 shards"), "{e}");

    let mut ladder = shard(1, 2, &[1.0]);
    ladder.meta.ladder = vec![4, 20];
    let e = merge(vec![shard(0, 2, &[1.0]), ladder], &slo).unwrap_err();
    assert!(e.to_string().contains("step plan differs"), "{e}");

    let mut later = shard(1, 2, &[1.0]);
    later.meta.shard.as_mut().unwrap().start_at = Some("2026-12-01T00:00:00Z".into());
    let e = merge(vec![shard(0, 2, &[1.0]), later], &slo).unwrap_err();
    assert!(e.to_string().contains("different runs"), "{e}");
}

#[test]
fn rate_shards_add_up_to_the_offered_rate() {
    let rate = |index: u32| {
        let mut s = shard(index, 2, &[100.0, 110.0]);
        for r in &mut s.records {
            r.send_lag_ms = Some(0.1);
            r.worker = 0;
        }
        for row in &mut s.summaries {
            row.ladder_unit = crate::model::LadderUnit::Rps;
            row.offered_rps = Some(2.5);
        }
        s
    };
    let mut late = rate(1);
    for r in &mut late.records {
        // A first arrival 1.5 s in (at 2.5 req/s: under five mean gaps of 0.4 s) is chance.
        r.started_at_ms += 1_500.0;
    }
    let merged = merge(vec![rate(0), late], &Slo::default()).unwrap();
    assert!(merged.problems.is_empty(), "{:?}", merged.problems);
    // 5 req/s run as 2.5 + 2.5.
    assert_eq!(merged.summaries[0].offered_rps, Some(5.0));
    assert_eq!(
        merged.summaries[0].ladder_unit,
        crate::model::LadderUnit::Rps
    );
    let workers: BTreeSet<u32> = merged.records.iter().map(|r| r.worker).collect();
    assert_eq!(
        workers.into_iter().collect::<Vec<_>>(),
        [0, 1],
        "one dispatcher per shard"
    );
}
