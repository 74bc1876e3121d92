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

    // Same server, same workload: no regression, said in a few lines (issue 34, part 5): what
    // was judged, what was not decided; no per-check table without --full.
    let pass = s
        .args(["run", "--quiet", "scenarios/gate.yaml"])
        .args(["--against", "baselines/gate.csv"])
        .run()
        .stdout;
    let verdict = &pass[pass.find("ladder diff: PASS").expect(&pass)..];
    assert!(
        verdict.contains("judged: ")
            && verdict.contains(" checks of sim-model at 8 streams: TTFT P90, TPOT P90"),
        "{verdict}"
    );
    assert!(!verdict.contains("│ metric"), "{verdict}");
    assert!(verdict.contains("): --full"), "{verdict}");
    assert!(verdict.lines().count() <= 16, "{verdict}");

    // Decode twice as slow: TPOT regression, exit 3, names the metric in the grid of what
    // regressed; the other checks are not rows.
    let slow = s
        .args([
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
        .run()
        .stdout;
    let verdict = &slow[slow.find("ladder diff: REGRESSION").expect(&slow)..];
    let row = verdict
        .lines()
        .find(|l| l.starts_with("│ TPOT P90"))
        .unwrap_or_else(|| panic!("no TPOT P90 row:\n{verdict}"));
    assert!(row.contains("✗ +"), "{row}");
    assert!(!verdict.contains("│ error rate"), "{verdict}");

    // A folder of runs names its latest run, as for report and plan: the slower one, exit 3.
    s.args(["diff", "baselines/gate.csv", "runs/gate"])
        .code(3)
        .stderr("runs/gate holds runs: using the latest, runs/gate/")
        .stdout("ladder diff: REGRESSION")
        .run();

    // `--full` on `diff` prints every check, P50 and passing ones included.
    let run = s.project().run_dirs("gate").pop().unwrap();
    let full = s
        .args(["diff", "--full", "baselines/gate.csv"])
        .arg(&run)
        .code(3)
        .run()
        .stdout;
    assert!(full.contains("model: sim-model"), "{full}");
    assert!(full.contains("│ 8       │ error rate  │"), "{full}");
    assert!(
        full.contains("REGRESSED sim-model · TPOT P90 at 8 streams"),
        "{full}"
    );

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
