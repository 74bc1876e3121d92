//! `load: {refine: N}` as a user runs it: against the simulator's 16-stream cap, the ladder
//! runs its planned steps, then bisects the knee interval first (then the SLO's) with extra steps in
//! the same run directory, and the cap estimate lands within one stream of the true cap.

use crate::support::{sim_scenario, Project};
use serde_json::Value;

#[test]
fn refine_narrows_the_knee_and_finds_the_simulators_cap() {
    let p = Project::new();
    let yaml = sim_scenario(
        "refine",
        "    ttft: 60ms\n    tpot: 8ms\n    tpot_jitter: 0\n    output_tokens: 20\n    concurrency_cap: 16\n    seed: 7",
        "  ladder: [5, 10, 20, 50]\n  requests_per_step: 120\n  warmup_requests: 5\n  refine: 3",
        20,
    ) + "slo:\n  ttft: 400ms\n";
    let f = p.scenario("refine", &yaml);
    let out = p
        .ladder()
        .args(["--quiet", "run", "--format", "json"])
        .arg(&f)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let rows = doc["summary"].as_array().unwrap();
    let values: Vec<u64> = rows
        .iter()
        .map(|r| r["concurrency"].as_u64().unwrap())
        .collect();
    assert_eq!(rows.len(), 7, "4 planned + 3 refining steps: {values:?}");
    assert!(
        values.windows(2).all(|w| w[0] < w[1]),
        "rows by value: {values:?}"
    );
    let steps: Vec<u64> = rows.iter().map(|r| r["step"].as_u64().unwrap()).collect();
    assert!((5..=7).all(|k| steps.contains(&k)), "{steps:?}");
    let f = &doc["findings"][0];
    let knee = &f["knee"];
    let (lo, hi) = (
        knee["max_clean_concurrency"].as_u64().unwrap(),
        knee["concurrency"].as_u64().unwrap(),
    );
    // The knee comes first: the first refining step tries just above the cap the knee at 20
    // streams estimated (≈ 16), not the SLO's wider interval (20, 50].
    let first = rows.iter().find(|r| r["step"] == 5).unwrap()["concurrency"]
        .as_u64()
        .unwrap();
    assert!(
        (15..=18).contains(&first),
        "first refining step {first}: {values:?}"
    );
    // Then the cap itself: the knee narrowed to at most 2 streams (on the demo, (16, 17]).
    assert!(
        hi - lo <= 2 && lo >= 10 && hi <= 20,
        "narrowed from (10, 20]: ({lo}, {hi}] after steps {values:?}"
    );
    // Little's law on means: a client delay of d ms in the knee step's mean wait moves the
    // estimate by about N × d / E2E (E2E ≈ 60 + 19 × 8 = 212 ms), so ±2 allows ~25 ms of
    // client delay on a loaded machine and still tells 16 from the steps around it.
    let cap = knee["estimated_cap"].as_f64().unwrap();
    assert!((cap - 16.0).abs() <= 2.0, "estimated cap {cap}");
    let sentences: Vec<&str> = f["sentences"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(
        sentences
            .iter()
            .any(|s| s.starts_with("Refined with 3 more steps")),
        "{sentences:?}"
    );
}
