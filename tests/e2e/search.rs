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
    // The table and summary.csv list the steps by load; the findings say the order they ran in.
    assert!(
        sentences.contains("The search ran ")
            && sentences.contains(" more steps, in this order: 2, 4, 8, 16, 32, "),
        "{sentences}"
    );
    let run_dir = doc["run_dir"].as_str().unwrap();
    let csv = std::fs::read_to_string(p.path().join(run_dir).join("summary.csv")).unwrap();
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let col = header.iter().position(|h| *h == "concurrency").unwrap();
    let loads: Vec<u32> = csv
        .lines()
        .skip(1)
        .map(|l| l.split(',').nth(col).unwrap().parse().unwrap())
        .collect();
    let mut sorted = loads.clone();
    sorted.sort_unstable();
    assert_eq!(loads, sorted, "summary.csv by load");
    plan_is_sized_from_the_capacity(&p, run_dir, cap);
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

/// `ladder plan` on the searched run: sized from the capacity the run found (the same one,
/// under the search's SLO: the scenario has no `slo:` of its own), the target's share of the
/// rate it carries, and copies of the service for a rate beyond it.
fn plan_is_sized_from_the_capacity(p: &Project, run_dir: &str, cap: &Value) {
    let plan = |rps: &str, format: &str| {
        let out = p
            .ladder()
            .args(["plan", run_dir, "--rps", rps, "--format", format])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    let doc: Value = serde_json::from_str(&plan("1", "json")).unwrap();
    assert_eq!(doc["slo_ttft_ms"], 150.0, "the search's SLO: {doc}");
    let m = &doc["models"][0];
    assert_eq!(m["sized_from"], "search", "{m}");
    for k in ["max", "lo", "hi"] {
        assert_eq!(m["capacity"][k], cap[k], "{k}: {m} vs findings {cap}");
    }
    assert_eq!(m["capacity"]["fit"], "fits", "{m}");
    let rate = m["capacity"]["rps"].as_f64().unwrap();
    assert!(rate > 10.0, "{m}");
    let text = plan("1", "table");
    assert!(
        text.contains(
            "sized from          the search: max concurrency meeting TTFT P90 ≤ 150 ms: "
        ),
        "{text}"
    );
    assert!(text.contains(": fits with confidence"), "{text}");
    // Three times the capacity's rate: three copies at least, the figures scaled out.
    let beyond = format!("{:.0}", (rate * 3.0).ceil());
    let doc: Value = serde_json::from_str(&plan(&beyond, "json")).unwrap();
    let m = &doc["models"][0];
    assert_eq!(m["basis"], "beyond_capacity", "{m}");
    assert_eq!(m["step"]["concurrency"], cap["max"], "{m}");
    assert!(m["capacity"]["replicas"].as_u64().unwrap() >= 3, "{m}");
    let text = plan(&beyond, "table");
    assert!(
        text.contains("SCALED OUT from") && text.contains("copies of the measured service"),
        "{text}"
    );
}
