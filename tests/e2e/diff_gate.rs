//! The release gate end to end: same server passes, slower decode fails with exit 3 naming the
//! metric, a different workload refuses to judge (exit 1) and shows the scenario diff.

use crate::support::{sim_scenario, Project};

fn gate_scenario(max_tokens: u32) -> String {
    sim_scenario(
        "gate",
        // TPOT 20 ms: on a loaded machine the simulator's timers run late by a few ms per token
        // (a descheduled thread), so the A/A run must not be judged on tight gates. The gates are
        // wide (TPOT +50%, the rest +200% / −90%: more than a loaded machine's timing moves
        // them), and the slower decode is twice as slow (20 → 40 ms), far past the TPOT gate
        // and inside every other one, so only TPOT can regress.
        "    ttft: 40ms\n    tpot: 20ms\n    tpot_jitter: 0.02\n    output_tokens: 24\n    seed: 3",
        "  ladder: [8]\n  requests_per_step: 80",
        max_tokens,
    ) + "gates:\n  ttft: {p90: 200%, p99: 200%, floor: 50ms}\n  tpot: {p90: 50%, p99: 50%, floor: 2ms}\n  \
         itl: {p90: 200%, p99: 200%, floor: 5ms}\n  e2e: {p90: 200%, p99: 200%, floor: 100ms}\n  throughput: 90%\n"
}

/// A project with the gate scenario and a baseline saved from one run of it.
fn project_with_baseline() -> (Project, std::path::PathBuf, std::path::PathBuf) {
    let p = Project::new();
    let f = p.scenario("gate", &gate_scenario(24));
    p.ladder()
        .args(["run", "--quiet", "--save-baseline"])
        .arg(&f)
        .assert()
        .success();
    let baseline = p.path().join("baselines/gate.csv");
    (p, f, baseline)
}

#[test]
fn same_server_passes_slower_decode_is_caught_and_other_workload_is_refused() {
    let (p, f, baseline) = project_with_baseline();

    // Same server, same workload: no regression.
    p.ladder()
        .args(["run", "--quiet", "--against"])
        .arg(&baseline)
        .arg(&f)
        .assert()
        .code(0);

    // Decode twice as slow: TPOT regression, exit 3, names the metric.
    let out = p
        .ladder()
        .args(["run", "--quiet", "--sim-set", "tpot=40ms", "--against"])
        .arg(&baseline)
        .arg(&f)
        .assert()
        .code(3);
    let stdout = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    assert!(stdout.contains("TPOT"), "{stdout}");
    assert!(stdout.contains("P90"), "{stdout}");

    // A different workload (max_tokens changed) refuses to judge and shows the diff.
    let f2 = p.scenario("gate", &gate_scenario(12));
    let runs_before = p.run_dirs("gate").len();
    p.ladder()
        .args(["run", "--quiet"])
        .arg(&f2)
        .assert()
        .success();
    let newest = p.run_dirs("gate");
    assert_eq!(newest.len(), runs_before + 1);
    let new_dir = newest.last().unwrap();
    let out = p
        .ladder()
        .arg("diff")
        .arg(&baseline)
        .arg(new_dir)
        .assert()
        .code(1);
    let stdout = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    assert!(stdout.contains("max_tokens"), "{stdout}");
}
