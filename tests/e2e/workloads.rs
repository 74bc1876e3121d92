//! Issue 12 end to end: an open-loop rate ladder over a prompt set with cache-busting, against
//! the embedded simulator; the files say what was offered and sent, and no prompt text reaches
//! the workload sidecar.

use crate::support::{col, num, read_csv, Project};

#[test]
fn rate_ladder_over_a_prompt_set_records_lag_drops_and_no_prompt_text() {
    let p = Project::new();
    let set = p.path().join("scenarios/set.jsonl");
    std::fs::write(
        &set,
        "{\"prompt\": \"SECRET-PROMPT-ALPHA tell me a story\"}\n\
         {\"messages\": [{\"role\": \"user\", \"content\": \"SECRET-PROMPT-BETA\"}], \"max_tokens\": 8}\n",
    )
    .unwrap();
    let f = p.scenario(
        "rate",
        "name: rate\ntarget:\n  sim: {ttft: 50ms, tpot: 2ms, output_tokens: 8, seed: 1}\n  \
         models: [sim-model]\nrequest:\n  prompts: set.jsonl\n  max_tokens: 16\n  \
         cache_bust: true\nload:\n  mode: rate\n  ladder: [20, 40]\n  requests_per_step: 30\n  \
         max_concurrency: 64\n",
    );
    p.ladder()
        .args(["run", "--quiet", "--save-baseline"])
        .arg(&f)
        .assert()
        .success();
    let dir = &p.run_dirs("rate")[0];
    let (h, rows) = read_csv(&dir.join("summary.csv"));
    assert_eq!(rows.len(), 2);
    for r in &rows {
        assert_eq!(r[col(&h, "ladder_unit")], "rps");
        assert_eq!(num(r, &h, "attempted") + num(r, &h, "dropped"), 30.0);
        assert!(!r[col(&h, "send_lag_p99_ms")].is_empty());
        assert!(num(r, &h, "ttft_sched_p90_ms") >= num(r, &h, "ttft_p90_ms"));
    }
    assert_eq!(num(&rows[1], &h, "offered_rps"), 40.0);
    let (rh, reqs) = read_csv(&dir.join("requests.csv"));
    assert!(reqs.iter().all(|r| !r[col(&rh, "send_lag_ms")].is_empty()));
    // Round-robin over the set: both prompts' max_tokens appear.
    let max: Vec<&str> = reqs
        .iter()
        .map(|r| r[col(&rh, "max_tokens")].as_str())
        .collect();
    assert!(max.contains(&"16") && max.contains(&"8"), "{max:?}");
    for file in ["baselines/rate.workload.yaml", "baselines/rate.csv"] {
        let text = std::fs::read_to_string(p.path().join(file)).unwrap();
        assert!(
            !text.contains("SECRET-PROMPT"),
            "{file} holds prompt text:\n{text}"
        );
    }
    let w = std::fs::read_to_string(p.path().join("baselines/rate.workload.yaml")).unwrap();
    assert!(
        w.contains("file: set.jsonl") && w.contains("mode: rate"),
        "{w}"
    );
}
