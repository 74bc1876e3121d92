//! Issue 34, part 2: one rule for where TTFT starts rising (`findings::rise`), seen as a user
//! sees it. A concurrency cap just crossed makes one stream in thirteen wait a whole service
//! time: P90 barely moves, P99 and the server's queue do, and that is a knee. The search
//! scenario shipped in `scenarios/` reports a knee and a capacity that agree.

use crate::support::{sim_scenario, Project};
use serde_json::Value;

fn run_json(p: &Project, scenario: &std::path::Path) -> Value {
    let out = p
        .ladder()
        .args(["--quiet", "run", "--format", "json"])
        .arg(scenario)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The cap-80 ladder (30/60/90) scaled down to keep `make test` fast: cap 12, ladder
/// 4/8/13, so that the last step crosses the cap by one stream, as 90 crosses 80.
#[test]
fn a_cap_just_crossed_is_a_knee_though_p90_barely_moves() {
    let p = Project::new();
    let f = p.scenario(
        "crossed",
        &sim_scenario(
            "crossed",
            "    ttft: 100ms\n    tpot: 5ms\n    tpot_jitter: 0\n    output_tokens: 20\n    concurrency_cap: 12\n    seed: 7",
            "  ladder: [4, 8, 13]\n  requests_per_step: 130\n  warmup_requests: 0",
            20,
        ),
    );
    let doc = run_json(&p, &f);
    let knee = &doc["findings"][0]["knee"];
    assert_eq!(knee["status"], "knee", "{knee}");
    assert_eq!(
        (
            knee["max_clean_concurrency"].as_u64(),
            knee["concurrency"].as_u64()
        ),
        (Some(8), Some(13)),
        "{knee}"
    );
    assert_eq!(knee["kind"], "queueing", "{knee}");
    let (r, a) = (&knee["reference"], &knee["at_knee"]);
    let p90 = |e: &Value| e["ttft_p90_ms"].as_f64().unwrap();
    let p99 = |e: &Value| e["ttft_p99_ms"].as_f64().unwrap();
    // The just-crossed shape: one request in thirteen waits about 200 ms.
    eprintln!(
        "P90 {:.0} -> {:.0}, P99 {:.0} -> {:.0}, rise {}",
        p90(r),
        p90(a),
        p99(r),
        p99(a),
        knee["rise"]
    );
    assert!(p99(a) >= p99(r) + 100.0, "{knee}");
    let signals = knee["rise"]["signals"].to_string();
    assert!(
        signals.contains("tail") || signals.contains("server_queue"),
        "{knee}"
    );
    let cap = knee["estimated_cap"].as_f64().unwrap();
    assert!((10.0..=14.0).contains(&cap), "{knee}");
    let sentences = doc["findings"][0]["sentences"][0].as_str().unwrap();
    assert!(
        sentences.starts_with("TTFT knee in (8, 13] streams: queueing, confirmed by the server"),
        "{sentences}"
    );
    assert!(sentences.contains("; P99 "), "{sentences}");
}

/// `scenarios/search.yaml` as shipped: the knee lies at or above the simulator's cap (16) and
/// no later than the first step the search found missing its SLO, and `plan` sizes from the
/// same capacity (tests/e2e/search.rs checks plan against the findings).
#[test]
fn the_search_scenarios_knee_and_search_agree() {
    let p = Project::new();
    let repo = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    std::fs::copy(
        repo.join("scenarios/prompts/support.txt"),
        p.path().join("scenarios/prompts/support.txt"),
    )
    .unwrap();
    let f = p.scenario(
        "search",
        &std::fs::read_to_string(repo.join("scenarios/search.yaml")).unwrap(),
    );
    let doc = run_json(&p, &f);
    let findings = &doc["findings"][0];
    let (knee, cap) = (&findings["knee"], &findings["capacity"]);
    assert_eq!(knee["status"], "knee", "{findings}");
    let (lo, hi) = (
        knee["max_clean_concurrency"].as_u64().unwrap(),
        knee["concurrency"].as_u64().unwrap(),
    );
    let (max, first_miss) = (
        cap["max"].as_u64().unwrap(),
        cap["hi"].as_u64().unwrap() + 1,
    );
    eprintln!("knee ({lo}, {hi}], capacity {cap}");
    assert!(lo >= 16, "no knee below the cap: {knee}");
    assert!(
        hi <= first_miss,
        "the knee ({lo}, {hi}] is no later than the first miss {first_miss}: {findings}"
    );
    assert!(max >= 16 && max < hi.max(first_miss), "{cap}");
    assert_eq!(knee["kind"], "queueing", "{knee}");
}
