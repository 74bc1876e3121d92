//! The release gate end to end: same server passes, slower decode fails with exit 3 naming the
//! metric, a different workload refuses to judge (exit 1) and shows the scenario diff.

use crate::support::session::Session;
use crate::support::sim_scenario;

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

#[test]
fn same_server_passes_slower_decode_is_caught_and_other_workload_is_refused() {
    let s = Session::new();
    s.scenario("gate", &gate_scenario(24));
    s.args(["run", "--quiet", "--save-baseline", "scenarios/gate.yaml"])
        .run();

    // Same server, same workload: no regression.
    s.args(["run", "--quiet", "scenarios/gate.yaml"])
        .args(["--against", "baselines/gate.csv"])
        .run();

    // Decode twice as slow: TPOT regression, exit 3, names the metric.
    s.args([
        "run",
        "--quiet",
        "--sim-set",
        "tpot=40ms",
        "scenarios/gate.yaml",
    ])
    .args(["--against", "baselines/gate.csv"])
    .code(3)
    .stdout("TPOT")
    .stdout("P90")
    .run();

    // A different workload (max_tokens changed) refuses to judge and shows the diff.
    s.scenario("gate", &gate_scenario(12));
    let runs_before = s.project().run_dirs("gate").len();
    s.args(["run", "--quiet", "scenarios/gate.yaml"]).run();
    let runs = s.project().run_dirs("gate");
    assert_eq!(runs.len(), runs_before + 1);
    s.args(["diff", "baselines/gate.csv"])
        .arg(runs.last().unwrap())
        .code(1)
        .stdout("max_tokens")
        .run();
}
