//! `load: {search: {slo, max}}` as a user runs it: without a ladder, the run doubles from one
//! stream until a step misses the SLO, bisects back, and reports the highest concurrency meeting
//! it with its uncertainty, here against a simulator whose TTFT P90 crosses 150 ms at about 20
//! streams (8 served at once, 70 ms each: TTFT ≈ 40 + 70 × (N/8 − 1) ms). A rerun judged
//! against a faster baseline is a capacity regression.

use crate::support::Project;
use serde_json::Value;

fn scenario(cap: u32) -> String {
    // `cap` streams served at once.
    format!(
        "name: search\ntarget:\n  api: openai-chat\n  sim: {{ttft: 40ms, tpot: 3ms, tpot_jitter: 0, \
         output_tokens: 10, concurrency_cap: {cap}, seed: 3}}\n  models: [sim-model]\nrequest:\n  \
         prompt_file: prompts/p.txt\n  max_tokens: 10\nload:\n  requests_per_step: 64\n  \
         search: {{slo: {{ttft_p90: 150ms}}, max: 64}}\n"
    )
}

#[test]
fn search_finds_the_highest_concurrency_meeting_the_slo() {
    let p = Project::new();
    let f = p.scenario("search", &scenario(8));
    let out = p
        .ladder()
        .args(["--quiet", "run", "--format", "json", "--save-baseline"])
        .arg(&f)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let values: Vec<u64> = doc["summary"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["concurrency"].as_u64().unwrap())
        .collect();
    for v in [1, 2, 4, 8, 16, 32] {
        assert!(values.contains(&v), "doubling from 1: {values:?}");
    }
    assert!(
        !values.contains(&64),
        "32 missed, so 64 is never tried: {values:?}"
    );
    let cap = &doc["findings"][0]["capacity"];
    let (max, lo, hi) = (
        cap["max"].as_u64().unwrap(),
        cap["lo"].as_u64().unwrap(),
        cap["hi"].as_u64().unwrap(),
    );
    // About 17 when the streams stay in step (two waits of 70 ms pass 150 ms once more than
    // 10% of requests queue twice), up to 20 when they drift apart; a loaded machine read 16.
    assert!(
        (15..=23).contains(&max),
        "capacity {max} ({lo}–{hi}), steps {values:?}"
    );
    assert!(lo <= max && max <= hi && hi < 32, "{cap}");
    let sentences = doc["findings"][0]["sentences"].to_string();
    assert!(
        sentences.contains("max concurrency meeting TTFT P90 ≤ 150 ms: "),
        "{sentences}"
    );
    // Half the server: the capacity drops beyond its uncertainty, a regression (exit 3).
    let out = p
        .ladder()
        .args([
            "--quiet",
            "run",
            "--format",
            "json",
            "--sim-set",
            "concurrency_cap=4",
        ])
        .arg("--against")
        .arg(p.path().join("baselines/search.csv"))
        .arg(&f)
        .output()
        .unwrap();
    let diff = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(3), "{diff}");
    assert!(
        diff.contains("capacity dropped beyond its uncertainty"),
        "{diff}"
    );
}
