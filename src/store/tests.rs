//! Tests of the run directory, baselines and loading.

use super::requests_csv::tests::request;
use super::summary_csv::tests::summary_row;
use super::*;
use crate::model::{Slo, StepRun};
use std::fs;
use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

const STAMP: u64 = 1_795_977_005; // 2026-11-29T18:30:05Z

fn at(secs: u64) -> SystemTime {
    UNIX_EPOCH + Duration::from_secs(secs)
}

fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn write_atomic_creates_dirs_replaces_content_and_leaves_no_temp_files() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("a/b/out.csv");
    write_atomic(&target, b"first").unwrap();
    assert_eq!(fs::read(&target).unwrap(), b"first");
    write_atomic(&target, b"second, longer").unwrap();
    assert_eq!(fs::read(&target).unwrap(), b"second, longer");
    write_atomic(&target, b"").unwrap();
    assert_eq!(fs::read(&target).unwrap(), b"");
    assert_eq!(names(&dir.path().join("a/b")), ["out.csv"]);
}

#[test]
fn failed_write_atomic_removes_its_temp_file() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("taken");
    fs::create_dir(&target).unwrap();
    fs::write(target.join("keep"), b"x").unwrap();
    let err = write_atomic(&target, b"data").unwrap_err();
    assert!(err.to_string().starts_with("cannot replace "), "{err}");
    assert!(err.to_string().contains("taken"), "{err}");
    assert_eq!(names(dir.path()), ["taken"]);
    assert_eq!(names(&target), ["keep"]);
}

#[test]
fn timestamps_are_utc_and_clamped() {
    assert_eq!(rfc3339_utc(at(STAMP)), "2026-11-29T18:30:05Z");
    assert_eq!(
        rfc3339_utc(UNIX_EPOCH - Duration::from_secs(5)),
        "1970-01-01T00:00:00Z"
    );
    assert_eq!(rfc3339_utc(at(u64::MAX / 4)), "9999-12-31T23:59:59Z");
    assert!(!host_name().is_empty());
}

#[test]
fn run_dirs_are_timestamped_and_never_reused() {
    let out = tempfile::tempdir().unwrap();
    let first = create_run_dir(out.path(), "demo", at(STAMP)).unwrap();
    assert_eq!(first.path, out.path().join("demo/2026-11-29T18-30-05Z"));
    assert!(first.path.is_dir());
    let second = create_run_dir(out.path(), "demo", at(STAMP)).unwrap();
    assert_eq!(second.path, out.path().join("demo/2026-11-29T18-30-05Z-2"));
    let third = create_run_dir(out.path(), "demo", at(STAMP)).unwrap();
    assert_eq!(third.path, out.path().join("demo/2026-11-29T18-30-05Z-3"));
    for bad in ["", "..", "a/b", "."] {
        let err = create_run_dir(out.path(), bad, at(STAMP)).unwrap_err();
        assert!(
            matches!(err, StoreError::BadScenarioName { .. }),
            "{bad}: {err}"
        );
    }
}

#[test]
fn run_dir_writes_every_file_and_meta_round_trips() {
    let out = tempfile::tempdir().unwrap();
    let run = create_run_dir(out.path(), "demo", at(STAMP)).unwrap();
    let meta = Meta {
        tool_version: "0.1.0".into(),
        scenario: "demo".into(),
        fingerprint: "abc".into(),
        host: "box".into(),
        started_at: rfc3339_utc(at(STAMP)),
        finished_at: rfc3339_utc(at(STAMP + 90)),
        command_line: vec!["ladder".into(), "run".into(), "demo.yaml".into()],
        interrupted: true,
        models: vec!["gpt-4o".into()],
        ladder: vec![5, 10],
        ladder_unit: Default::default(),
        notes: vec![],
        complete: true,
        steps: vec![],
        slo: Slo::default(),
        short_below: 0.1,
        shard: None,
        merged_from: vec![],
        stopped_by: None,
        client: None,
    };
    run.write_summary(&[summary_row("gpt-4o", 1)]).unwrap();
    run.write_requests(&[request("gpt-4o", 1, 0, 0)]).unwrap();
    run.write_scenario_yaml("name: demo\n").unwrap();
    run.write_workload_yaml("api: openai-chat\n").unwrap();
    run.write_meta(&meta).unwrap();
    run.write_findings_json(&serde_json::json!({"knee": null}))
        .unwrap();
    assert_eq!(
        names(&run.path),
        [
            FINDINGS_FILE,
            META_FILE,
            REQUESTS_FILE,
            SCENARIO_FILE,
            SUMMARY_FILE,
            WORKLOAD_FILE
        ]
    );
    assert_eq!(read_meta(&run.path.join(META_FILE)).unwrap(), meta);
    let json = fs::read_to_string(run.path.join(META_FILE)).unwrap();
    assert!(
        json.contains("\"finished_at\": \"2026-11-29T18:31:35Z\""),
        "{json}"
    );
}

#[test]
fn rebuilt_summaries_use_the_runs_short_threshold_and_old_meta_reads_the_default() {
    let out = tempfile::tempdir().unwrap();
    let run = create_run_dir(out.path(), "demo", at(STAMP)).unwrap();
    // 150 of 200 tokens, no `length`: short under 80%, not under the default 10%.
    let mut r = request("gpt-4o", 1, 0, 0);
    r.output_tokens = Some(150);
    r.finish_reason = Some("stop".into());
    run.write_requests(&[r]).unwrap();
    let mut meta = read_meta_fixture();
    meta.ladder = vec![5];
    meta.short_below = 0.8;
    assert_eq!(rebuild_run(&run.path, &meta).unwrap().summaries[0].short, 1);
    meta.short_below = 0.1;
    assert_eq!(rebuild_run(&run.path, &meta).unwrap().summaries[0].short, 0);
    // meta.json written before it kept `short_below`: the default.
    run.write_meta(&meta).unwrap();
    let path = run.path.join(META_FILE);
    let mut json: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(&path).unwrap()).unwrap();
    json.as_object_mut().unwrap().remove("short_below");
    fs::write(&path, json.to_string()).unwrap();
    let old = read_meta(&path).unwrap();
    assert_eq!(old.short_below, crate::scenario::DEFAULT_SHORT_BELOW);
}

#[test]
fn load_result_from_run_dir() {
    let out = tempfile::tempdir().unwrap();
    let run = create_run_dir(out.path(), "demo", at(STAMP)).unwrap();
    run.write_summary(&[summary_row("gpt-4o", 1)]).unwrap();
    let bare = load_result(&run.path).unwrap();
    assert_eq!(bare.summaries, vec![summary_row("gpt-4o", 1)]);
    assert_eq!((bare.requests, bare.workload_yaml), (None, None));
    assert_eq!(bare.label, run.path.display().to_string());

    run.write_requests(&[request("gpt-4o", 1, 0, 0)]).unwrap();
    run.write_workload_yaml("api: openai-chat\n").unwrap();
    let full = load_result(&run.path).unwrap();
    assert_eq!(full.requests, Some(vec![request("gpt-4o", 1, 0, 0)]));
    assert_eq!(full.workload_yaml.as_deref(), Some("api: openai-chat\n"));
    // The run's own summary.csv loads the same run, sidecars included.
    let via_file = load_result(&run.path.join(SUMMARY_FILE)).unwrap();
    assert_eq!(via_file.requests, full.requests);
    assert_eq!(via_file.workload_yaml, full.workload_yaml);
}

#[test]
fn a_pool_keeps_the_newest_runs_in_time_order() {
    let dir = tempfile::tempdir().unwrap();
    let runs = dir.path().join("b.runs");
    let summary = summary_csv(&[]);
    for id in [
        "2026-01-01T00-00-00Z-10",
        "2026-01-01T00-00-00Z",
        "2026-01-01T00-00-00Z-2",
    ] {
        add_to_pool(&runs, id, &summary, 5).unwrap();
    }
    let ids = |d: &Path| -> Vec<String> {
        read_pool(d)
            .unwrap()
            .into_iter()
            .map(|(id, _)| id)
            .collect()
    };
    assert_eq!(
        ids(&runs),
        [
            "2026-01-01T00-00-00Z",
            "2026-01-01T00-00-00Z-2",
            "2026-01-01T00-00-00Z-10"
        ]
    );
    assert_eq!(
        add_to_pool(&runs, "2026-01-02T00-00-00Z", &summary, 2).unwrap(),
        2
    );
    assert_eq!(
        ids(&runs),
        ["2026-01-01T00-00-00Z-10", "2026-01-02T00-00-00Z"]
    );
    clear_pool(&runs).unwrap();
    assert!(!runs.exists());
    assert!(read_pool(&runs).unwrap().is_empty());
}

#[test]
fn load_result_from_baseline_with_and_without_sidecars() {
    let dir = tempfile::tempdir().unwrap();
    let paths = baseline_paths(&dir.path().join("baselines"), "demo");
    assert_eq!(paths.summary, dir.path().join("baselines/demo.csv"));
    assert_eq!(
        paths.requests,
        dir.path().join("baselines/demo.requests.csv")
    );
    assert_eq!(
        paths.workload,
        dir.path().join("baselines/demo.workload.yaml")
    );
    let summary = summary_csv(&[summary_row("m", 1), summary_row("m", 2)]);
    let requests = requests_csv(&[request("m", 1, 0, 0)]);
    write_baseline(&paths, &summary, &requests, "api: x\n").unwrap();
    let full = load_result(&paths.summary).unwrap();
    assert_eq!(full.summaries.len(), 2);
    assert_eq!(full.requests, Some(vec![request("m", 1, 0, 0)]));
    assert_eq!(full.workload_yaml.as_deref(), Some("api: x\n"));

    fs::remove_file(&paths.requests).unwrap();
    fs::remove_file(&paths.workload).unwrap();
    let bare = load_result(&paths.summary).unwrap();
    assert_eq!(bare.summaries, full.summaries);
    assert_eq!((bare.requests, bare.workload_yaml), (None, None));
    assert_eq!(names(&dir.path().join("baselines")), ["demo.csv"]);
}

#[test]
fn load_result_errors_say_what_is_wrong() {
    let dir = tempfile::tempdir().unwrap();
    let msg = |p: &Path| load_result(p).unwrap_err().to_string();

    let missing = dir.path().join("nope.csv");
    assert!(msg(&missing).contains("nope.csv does not exist: expected a run directory"));

    let out = dir.path().join("runs");
    let run = create_run_dir(&out, "demo", at(STAMP)).unwrap();
    run.write_summary(&[summary_row("m", 1)]).unwrap();
    let m = msg(&out.join("demo"));
    assert!(
        m.contains("is not a run directory: it has no summary.csv"),
        "{m}"
    );
    assert!(
        m.contains("the latest is") && m.contains("2026-11-29T18-30-05Z"),
        "{m}"
    );

    let paths = baseline_paths(dir.path(), "b");
    write_baseline(&paths, &summary_csv(&[]), &requests_csv(&[]), "").unwrap();
    assert!(msg(&paths.summary).contains("b.csv has a header but no rows"));
    assert!(msg(&paths.requests).contains("pass the baseline `b.csv` instead"));
    assert!(msg(&paths.workload).contains("expected a run directory or a baseline `.csv`"));
}

#[test]
fn an_incomplete_run_says_where_it_stopped() {
    let mut meta = read_meta_fixture();
    assert_eq!(meta.stopped_at(&[]), None, "complete");
    meta.complete = false;
    assert_eq!(
        meta.stopped_at(&[]).as_deref(),
        Some("stopped in step 1 of 2 (at 5 streams)")
    );
    meta.steps
        .push(StepRun::new("gpt-4o", 1, 5, Default::default()));
    assert_eq!(
        meta.stopped_at(&[]).as_deref(),
        Some("stopped between steps 1 and 2 of 2 (at 10 streams next)")
    );
    let in_step_2 = [request("gpt-4o", 2, 0, 0)];
    assert_eq!(
        meta.stopped_at(&in_step_2).as_deref(),
        Some("stopped in step 2 of 2 (at 10 streams)")
    );
    meta.steps.push(meta.steps[0].clone());
    assert!(meta.stopped_at(&[]).unwrap().contains("after step 2 of 2"));
}

fn read_meta_fixture() -> Meta {
    Meta {
        tool_version: "0.1.0".into(),
        scenario: "demo".into(),
        fingerprint: "abc".into(),
        host: "box".into(),
        started_at: String::new(),
        finished_at: String::new(),
        command_line: vec![],
        interrupted: false,
        models: vec!["gpt-4o".into()],
        ladder: vec![5, 10],
        ladder_unit: Default::default(),
        notes: vec![],
        complete: true,
        steps: vec![],
        slo: Slo::default(),
        short_below: 0.1,
        shard: None,
        merged_from: vec![],
        stopped_by: None,
        client: None,
    }
}
