//! `ladder run` against the embedded simulator: measured figures match the configured server,
//! and the files a run writes are complete and consistent.

use crate::support::{col, num, read_csv, sim_scenario, Project};

/// The figures come from the configured server: TTFT at least the configured 200 ms (a loaded
/// machine delays a timer, never advances it), TPOT near 20 ms, the token counts exact. The
/// bounds above are generous on purpose: exact timing is asserted in pretend time
/// (`runner::tests`, a paused clock), never against this machine's wall clock.
#[test]
fn concurrency_one_measures_the_configured_ttft_and_tpot() {
    let p = Project::new();
    let f = p.scenario(
        "accuracy",
        &sim_scenario(
            "accuracy",
            "    ttft: 200ms\n    tpot: 20ms\n    tpot_jitter: 0\n    output_tokens: 64\n    seed: 1",
            "  ladder: [1]\n  requests_per_step: 6\n  warmup_requests: 1",
            64,
        ),
    );
    p.ladder()
        .args(["run", "--quiet"])
        .arg(&f)
        .assert()
        .success();
    let dirs = p.run_dirs("accuracy");
    assert_eq!(dirs.len(), 1);
    let (h, rows) = read_csv(&dirs[0].join("summary.csv"));
    assert_eq!(rows.len(), 1);
    let ttft = num(&rows[0], &h, "ttft_p50_ms");
    let tpot = num(&rows[0], &h, "tpot_p50_ms");
    assert!(
        (200.0..2000.0).contains(&ttft),
        "TTFT P50 {ttft} ms, configured 200 ms"
    );
    assert!(
        (10.0..200.0).contains(&tpot),
        "TPOT P50 {tpot} ms, configured 20 ms"
    );
    assert_eq!(num(&rows[0], &h, "succeeded"), 6.0);
    assert_eq!(num(&rows[0], &h, "output_tokens"), 6.0 * 64.0);
}

#[test]
fn run_directory_is_complete_and_counts_add_up() {
    let p = Project::new();
    let f = p.scenario(
        "files",
        &sim_scenario(
            "files",
            "    ttft: 20ms\n    tpot: 2ms\n    output_tokens: 10\n    concurrency_cap: 3",
            "  ladder: [2, 4]\n  requests_per_step: 12\n  warmup_requests: 2",
            10,
        ),
    );
    let out = p.ladder().arg("run").arg(&f).assert().success();
    let stdout = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    assert!(stdout.contains("sim-model"), "no table in stdout: {stdout}");
    let dirs = p.run_dirs("files");
    assert_eq!(dirs.len(), 1);
    let d = &dirs[0];
    for name in [
        "summary.csv",
        "requests.csv",
        "scenario.yaml",
        "meta.json",
        "findings.json",
    ] {
        assert!(d.join(name).is_file(), "{name} missing in {}", d.display());
    }
    let (sh, srows) = read_csv(&d.join("summary.csv"));
    let (rh, rrows) = read_csv(&d.join("requests.csv"));
    assert_eq!(srows.len(), 2);
    let mut attempted_total = 0.0;
    for row in &srows {
        let attempted = num(row, &sh, "attempted");
        assert_eq!(
            attempted,
            num(row, &sh, "succeeded") + num(row, &sh, "failed")
        );
        assert_eq!(attempted, 12.0, "warmup requests must not be recorded");
        let step = &row[col(&sh, "step")];
        let n_req = rrows
            .iter()
            .filter(|r| &r[col(&rh, "step")] == step)
            .count();
        assert_eq!(n_req as f64, attempted, "requests.csv rows for step {step}");
        attempted_total += attempted;
    }
    assert_eq!(rrows.len() as f64, attempted_total);
    // Request ids are unique.
    let mut ids: Vec<&String> = rrows.iter().map(|r| &r[col(&rh, "request_id")]).collect();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), rrows.len());
    let meta: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(d.join("meta.json")).unwrap()).unwrap();
    assert_eq!(meta["interrupted"], serde_json::Value::Bool(false));
    assert_eq!(
        meta["fingerprint"].as_str().unwrap(),
        &srows[0][col(&sh, "fingerprint")]
    );
}

#[test]
fn save_baseline_writes_the_baseline_files() {
    let p = Project::new();
    let f = p.scenario(
        "base",
        &sim_scenario(
            "base",
            "    ttft: 10ms\n    tpot: 1ms\n    output_tokens: 5",
            "  ladder: [2]\n  requests_per_step: 6",
            5,
        ),
    );
    p.ladder()
        .args(["run", "--quiet", "--save-baseline"])
        .arg(&f)
        .assert()
        .success();
    let b = p.path().join("baselines");
    assert!(b.join("base.csv").is_file());
    assert!(b.join("base.requests.csv").is_file());
    let (_, rows) = read_csv(&b.join("base.requests.csv"));
    assert_eq!(rows.len(), 6);
}
