//! Issue 38, parts 1 and 3, end to end against the embedded simulator: its prefix cache has a
//! capacity (`prefix_cache_tokens`) past which the least recently used prompts are evicted, so
//! the hit share and TTFT fall when the prompts in use outgrow it.

use crate::support::{col, num, read_csv, Project};
use std::path::{Path, PathBuf};

/// Runs `yaml` as scenario `name` with `--sim-set` overrides; its run directory.
fn run(p: &Project, name: &str, yaml: &str, sets: &[&str]) -> PathBuf {
    let f = p.scenario(name, yaml);
    let mut cmd = p.ladder();
    cmd.args(["run", "--no-color", "--quiet"]).arg(&f);
    for s in sets {
        cmd.args(["--sim-set", s]);
    }
    cmd.assert().success();
    let dirs = p.run_dirs(name);
    assert_eq!(dirs.len(), 1, "one run directory");
    dirs[0].clone()
}

/// Σ cached tokens ÷ Σ input tokens, and the mean TTFT, over the successful requests.
fn hit_share_and_ttft(dir: &Path) -> (f64, f64) {
    let (h, rows) = read_csv(&dir.join("requests.csv"));
    let (mut cached, mut input, mut ttft) = (0.0, 0.0, 0.0);
    for r in &rows {
        assert_eq!(r[col(&h, "status")], "ok", "{r:?}");
        let c = &r[col(&h, "cached_tokens")];
        cached += if c.is_empty() {
            0.0
        } else {
            c.parse().unwrap()
        };
        input += num(r, &h, "input_tokens");
        ttft += num(r, &h, "ttft_ms");
    }
    (cached / input, ttft / rows.len() as f64)
}

/// Eight prompts of ~500 tokens each, used round-robin by one worker five times over: with
/// room for all eight, every round after the first reads its whole prompt from the cache; with
/// room for four, each prompt is evicted before its turn comes again (LRU's worst case) and
/// every request pays its prefill.
#[test]
fn the_hit_share_and_ttft_fall_when_the_prompts_outgrow_the_cache() {
    let p = Project::new();
    let set: String = (0..8)
        .map(|i| {
            format!(
                "{{\"prompt\": \"{}\"}}\n",
                format!("topic {i} ").repeat(250)
            )
        })
        .collect();
    std::fs::write(p.path().join("scenarios/set.jsonl"), set).unwrap();
    let yaml = |name: &str| {
        format!(
            "name: {name}\ntarget:\n  sim: {{ttft: 20ms, prefill_per_token: 200us, tpot: 1ms, \
             output_tokens: 4, prefix_cache: true, seed: 1}}\n  models: [sim-model]\n\
             request:\n  prompts: set.jsonl\n  max_tokens: 4\nload:\n  ladder: [1]\n  \
             requests_per_step: 40\n"
        )
    };
    let roomy = run(&p, "roomy", &yaml("roomy"), &["prefix_cache_tokens=8000"]);
    let tight = run(&p, "tight", &yaml("tight"), &["prefix_cache_tokens=2000"]);
    let (roomy_share, roomy_ttft) = hit_share_and_ttft(&roomy);
    let (tight_share, tight_ttft) = hit_share_and_ttft(&tight);
    // 32 of 40 requests repeat a held prompt: all its whole blocks (496 of 500 tokens).
    assert!(
        (0.75..0.8).contains(&roomy_share),
        "roomy cache: hit share {roomy_share}"
    );
    assert_eq!(tight_share, 0.0, "outgrown cache: hit share {tight_share}");
    // A miss pays ~500 × 200 µs = 100 ms of prefill.
    assert!(
        tight_ttft > roomy_ttft + 50.0,
        "TTFT {roomy_ttft} ms with room, {tight_ttft} ms without"
    );
    // The simulator's /metrics counters say the same, under vLLM's names.
    let stats = |dir: &Path| -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(dir.join("sim_stats.json")).unwrap()).unwrap()
    };
    let (r, t) = (stats(&roomy), stats(&tight));
    assert_eq!(t["prefix_cache_hits"], 0, "{t}");
    assert!(r["prefix_cache_hits"].as_u64().unwrap() > 30 * 400, "{r}");
    assert!(
        r["prefix_cache_queries"].as_u64().unwrap() >= 40 * 500,
        "{r}"
    );
}
