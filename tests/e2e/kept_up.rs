//! The client must keep up (issue 50, part 3): a step whose client did not keep up with its own
//! plan is invalid for the gate, in the run's findings and in every diff format, and the gate
//! neither passes (exit 0) nor fails (exit 3) on its evidence: exit 4. The client is starved on
//! purpose and reproducibly with the test hook `LADDER_TEST_MAX_IN_FLIGHT` (docs/development.md):
//! 3 requests in flight at most, so the 8-stream step holds 3 of its 8 streams in flight and
//! delivers about 3/8 of the baseline's throughput, a regression past the gate were it evidence.

use crate::support::session::Session;
use crate::support::sim_scenario;
use serde_json::Value;

/// `[2, 8]` streams of short answers; gates wide enough that an unchanged server passes on a
/// loaded machine (as `diff_gate`'s), and a throughput gate of 40% that 3 of 8 streams fails.
fn scenario() -> String {
    sim_scenario(
        "kept",
        "    ttft: 20ms\n    tpot: 5ms\n    tpot_jitter: 0.02\n    output_tokens: 16\n    seed: 5",
        "  ladder: [2, 8]\n  requests_per_step: 60",
        16,
    ) + "gates:\n  ttft: {p90: 200%, p99: 200%, floor: 50ms}\n  tpot: {p90: 200%, p99: 200%, floor: 5ms}\n  \
         itl: {p90: 200%, p99: 200%, floor: 5ms}\n  e2e: {p90: 200%, p99: 200%, floor: 100ms}\n  throughput: 40%\n"
}

const CAUSE: &str = "sim-model · the client did not keep up at 8 streams in the new run: only ";
const FIX: &str = "fix: fewer streams per process or `--shard`";

#[test]
fn a_starved_step_is_invalid_in_every_format_and_the_gate_says_inconclusive() {
    let s = Session::new();
    s.scenario("kept", &scenario());
    s.args(["run", "--quiet", "--save-baseline", "scenarios/kept.yaml"])
        .run();

    // The run itself says the step is invalid (its findings), and its verdict exits 4.
    let run = s
        .args(["run", "scenarios/kept.yaml", "--no-step-summary"])
        .args(["--against", "baselines/kept.csv"])
        .env("LADDER_TEST_MAX_IN_FLIGHT", "3")
        .code(4)
        .stderr("note: LADDER_TEST_MAX_IN_FLIGHT=3: at most 3 requests in flight")
        .stdout("At 8 streams: invalid for the gate: the client did not keep up (only ")
        .stdout("ladder diff: INCONCLUSIVE")
        .stdout(CAUSE)
        .run()
        .stdout;
    assert!(!run.contains("At 2 streams: invalid"), "{run}");

    let diff = |format: &str, extra: &[&str]| {
        s.args(["diff", "--no-step-summary", "--format", format])
            .args(extra)
            .args(["baselines/kept.csv", "runs/kept"])
            .code(4)
            .run()
            .stdout
    };
    let table = diff("table", &[]);
    println!("{table}");
    assert!(table.starts_with("ladder diff: INCONCLUSIVE\n"), "{table}");
    let invalid = table
        .lines()
        .find(|l| l.starts_with("invalid: "))
        .unwrap_or_else(|| panic!("no invalid line:\n{table}"));
    assert!(
        invalid.starts_with(&format!("invalid: {CAUSE}")) && invalid.ends_with(FIX),
        "{invalid}"
    );
    assert!(table.contains("0 regressions"), "{table}");
    let full = diff("table", &["--full"]);
    assert!(
        full.contains("set aside (the client did not keep up):")
            && full.contains("· TPM at 8 streams: set aside, invalid for the gate: ")
            && full.contains("as measured (regressed)"),
        "{full}"
    );

    let md = diff("markdown", &[]);
    assert!(md.starts_with("## ladder diff: INCONCLUSIVE"), "{md}");
    assert!(
        md.contains(&format!("Invalid for the gate: {CAUSE}")),
        "{md}"
    );

    let json: Value = serde_json::from_str(&diff("json", &[])).expect("JSON on stdout");
    assert_eq!(json["outcome"], "inconclusive", "{json}");
    assert_eq!(json["exit_code"], 4, "{json}");
    let steps = json["invalid_steps"].as_array().unwrap();
    assert_eq!(steps.len(), 1, "{json}");
    assert_eq!(
        (&steps[0]["side"], &steps[0]["concurrency"]),
        (&"new".into(), &8.into())
    );
    assert_eq!(steps[0]["shortfalls"][0]["kind"], "thin_load", "{json}");
    let in_flight = steps[0]["shortfalls"][0]["in_flight"].as_f64().unwrap();
    assert!(in_flight < 3.2, "{in_flight}");
    let checks = json["checks"].as_array().unwrap();
    let tpm = checks
        .iter()
        .find(|k| k["title"] == "TPM at 8 streams")
        .expect("a TPM check at 8 streams");
    assert_eq!(tpm["verdict"]["kind"], "inconclusive", "{tpm}");
    assert_eq!(tpm["set_aside"], true, "{tpm}");
    // Without the rule this was the regression the gate would have failed on.
    assert!(
        tpm["detail"]
            .as_str()
            .unwrap()
            .contains("as measured (regressed)"),
        "{tpm}"
    );
    assert!(
        checks
            .iter()
            .filter(|k| k["concurrency"] == 2)
            .all(|k| k.get("set_aside").is_none()),
        "{json}"
    );

    let xml = diff("junit", &[]);
    assert!(
        xml.contains("<testsuite name=\"client\" tests=\"1\" failures=\"1\""),
        "{xml}"
    );
    assert!(xml.contains("type=\"invalid\""), "{xml}");
    assert!(
        xml.contains("the client did not keep up at 8 streams in the new run: only "),
        "{xml}"
    );

    // Either side: the starved run as the baseline of the healthy one.
    let runs = s.project().run_dirs("kept");
    let [healthy, starved] = &runs[..] else {
        panic!("{runs:?}");
    };
    s.args(["diff", "--no-step-summary"])
        .arg(starved)
        .arg(healthy)
        .code(4)
        .stdout("invalid: sim-model · the client did not keep up at 8 streams in the baseline: ")
        .run();
}

/// Rate mode: a client held to 1 request in flight sends 20 req/s of 100-ms requests seconds
/// late; the step is invalid by its send lag, and the run's own verdict exits 4.
#[test]
fn a_rate_step_whose_sends_fell_behind_is_invalid() {
    let s = Session::new();
    let yaml = scenario()
        .replace("name: kept", "name: late")
        .replace("  ladder: [2, 8]\n", "  mode: rate\n  ladder: [20]\n")
        .replace("requests_per_step: 60", "requests_per_step: 40");
    s.scenario("late", &yaml);
    s.args(["run", "--quiet", "--save-baseline", "scenarios/late.yaml"])
        .run();
    s.args(["run", "scenarios/late.yaml", "--no-step-summary"])
        .args(["--against", "baselines/late.csv"])
        .env("LADDER_TEST_MAX_IN_FLIGHT", "1")
        .code(4)
        .stdout("At 20 req/s: invalid for the gate: the client did not keep up (requests went out ")
        .stdout("invalid: sim-model · the client did not keep up at 20 req/s in the new run: requests went out ")
        .stdout("fix: a lower rate per process or `--shard`")
        .stdout_lacks("throughput saturation")
        .run();
}
