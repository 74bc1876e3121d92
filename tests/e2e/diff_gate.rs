//! The release gate end to end: same server passes, slower decode fails with exit 3 naming the
//! metric, a different workload refuses to judge (exit 1) and shows the scenario diff.

use crate::support::{sim_scenario, Project};

fn gate_scenario(max_tokens: u32) -> String {
    sim_scenario(
        "gate",
        // TPOT 20 ms: on a loaded machine the simulator's timers run late by a few ms per token
        // (a descheduled thread), which a 4 ms TPOT's 1 ms floor could call a regression in the
        // A/A run; here the gate is 2 ms. 30% slower decode is 6 ms per token.
        "    ttft: 40ms\n    tpot: 20ms\n    tpot_jitter: 0.02\n    output_tokens: 24\n    seed: 3",
        "  ladder: [8]\n  requests_per_step: 80",
        max_tokens,
    )
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

    // Decode 30% slower: TPOT regression, exit 3, names the metric.
    let out = p
        .ladder()
        .args(["run", "--quiet", "--sim-set", "tpot=26ms", "--against"])
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
