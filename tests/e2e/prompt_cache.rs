//! Issue 38, parts 1 and 3, end to end against the embedded simulator: its prefix cache has a
//! capacity (`prefix_cache_tokens`) past which the least recently used prompts are evicted, so
//! the hit share and TTFT fall when the prompts in use outgrow it; a run with tools counts each
//! answer's tool calls in every dialect; Anthropic's `cache: auto` records cache reads and
//! writes apart.

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

/// The rows of a run's `requests.csv` as (header, rows), and a cell as a number (empty: 0).
fn cell(h: &[String], r: &[String], name: &str) -> f64 {
    let c = &r[col(h, name)];
    if c.is_empty() {
        0.0
    } else {
        c.parse().unwrap()
    }
}

fn write_tools(p: &Project) {
    std::fs::write(
        p.path().join("scenarios/tools.json"),
        r#"[{"type": "function", "function": {"name": "get_order_status",
             "description": "Status of an order", "parameters": {"type": "object",
             "properties": {"order_number": {"type": "string"}}, "required": ["order_number"]}}},
            {"type": "function", "function": {"name": "open_ticket"}}]"#,
    )
    .unwrap();
}

/// Issue 38, part 1: a run with tools against the simulator in each dialect counts every
/// answer's tool call and its argument tokens (one per streamed argument delta), the answer
/// ends with the dialect's reason for a call, and TTFT is still measured (the first argument
/// delta); `tool_choice: none` gets no call.
#[test]
fn a_tools_run_counts_the_tool_calls_in_every_dialect() {
    let p = Project::new();
    write_tools(&p);
    for (api, reason) in [
        ("openai-chat", "tool_calls"),
        ("anthropic-messages", "tool_use"),
        ("openai-responses", "stop"),
    ] {
        let name = format!("tools-{api}");
        let yaml = format!(
            "name: {name}\ntarget:\n  api: {api}\n  sim: {{ttft: 30ms, tpot: 2ms, output_tokens: 12, \
             tool_call_share: 1, seed: 3}}\n  models: [sim-model]\nrequest:\n  prompt_file: prompts/p.txt\n  \
             tools: tools.json\n  max_tokens: 32\nload:\n  ladder: [1, 2]\n  requests_per_step: 6\n"
        );
        let dir = run(&p, &name, &yaml, &[]);
        let (h, rows) = read_csv(&dir.join("requests.csv"));
        assert_eq!(rows.len(), 12);
        for r in &rows {
            assert_eq!(r[col(&h, "status")], "ok", "{api}: {r:?}");
            assert_eq!(cell(&h, r, "tool_calls"), 1.0, "{api}: {r:?}");
            assert_eq!(cell(&h, r, "tool_call_tokens"), 12.0, "{api}: {r:?}");
            assert_eq!(r[col(&h, "finish_reason")], reason, "{api}: {r:?}");
            assert!(num(r, &h, "ttft_ms") >= 29.0, "{api}: {r:?}");
            assert!(num(r, &h, "tpot_ms") > 0.0, "{api}: {r:?}");
        }
        let workload = std::fs::read_to_string(dir.join("scenario.yaml")).unwrap();
        assert!(workload.contains("file: tools.json"), "{workload}");
    }
    // tool_choice: none: the simulator answers with text.
    let yaml = "name: none\ntarget:\n  sim: {ttft: 30ms, tpot: 2ms, output_tokens: 12, tool_call_share: 1}\n  \
                models: [sim-model]\nrequest:\n  prompt_file: prompts/p.txt\n  tools: tools.json\n  \
                tool_choice: none\n  max_tokens: 32\nload:\n  ladder: [1]\n  requests_per_step: 4\n";
    let dir = run(&p, "none", yaml, &[]);
    let (h, rows) = read_csv(&dir.join("requests.csv"));
    assert!(
        rows.iter().all(|r| r[col(&h, "tool_calls")].is_empty()),
        "{rows:?}"
    );
    // A malformed tools file stops the run before it starts, naming the file and line.
    std::fs::write(
        p.path().join("scenarios/tools.json"),
        "[\n  {\"type\": \"function\",,}\n]",
    )
    .unwrap();
    let f = p.scenario("broken", &yaml.replace("name: none", "name: broken"));
    let out = p.ladder().args(["validate"]).arg(&f).assert().code(2);
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(
        stderr.contains("tools.json:2") && stderr.contains("request.tools"),
        "{stderr}"
    );
}

/// Issue 38, part 3: `cache: auto` on Anthropic sends breakpoints, and the simulator's usage
/// reports the prompt tokens read from its cache and those written to it apart; ladder records
/// them as `cached_tokens` and `cache_write_tokens`, and prices writes at `cache_write_input`.
/// Without `cache: auto` no write is reported.
#[test]
fn anthropic_cache_auto_records_cache_reads_and_writes_apart() {
    let p = Project::new();
    std::fs::write(
        p.path().join("scenarios/prompts/system.txt"),
        "You are the support assistant of a shop. ".repeat(60),
    )
    .unwrap();
    let set: String = (0..4)
        .map(|i| {
            format!(
                "{{\"prompt\": \"{}\"}}\n",
                format!("question {i} ").repeat(40)
            )
        })
        .collect();
    std::fs::write(p.path().join("scenarios/set.jsonl"), set).unwrap();
    let yaml = |name: &str, cache: &str| {
        format!(
            "name: {name}\ntarget:\n  api: anthropic-messages\n  sim: {{ttft: 20ms, tpot: 1ms, \
             output_tokens: 4, prefix_cache: true}}\n  models: [sim-model]\nrequest:\n  \
             system_file: prompts/system.txt\n  prompts: set.jsonl\n  max_tokens: 8\n{cache}\
             load:\n  ladder: [1]\n  requests_per_step: 8\npricing:\n  currency: USD\n  models:\n    \
             sim-model: {{input: 3, cached_input: 0.3, cache_write_input: 3.75, output: 15}}\n"
        )
    };
    let dir = run(&p, "auto", &yaml("auto", "  cache: auto\n"), &[]);
    let (h, rows) = read_csv(&dir.join("requests.csv"));
    let first = &rows[0];
    assert_eq!(cell(&h, first, "cached_tokens"), 0.0, "{first:?}");
    let written = cell(&h, first, "cache_write_tokens");
    assert!(
        written > 500.0,
        "the first request writes its prompt: {first:?}"
    );
    // The second request reads the shared system prompt and writes its own question.
    let second = &rows[1];
    let (read, wrote) = (
        cell(&h, second, "cached_tokens"),
        cell(&h, second, "cache_write_tokens"),
    );
    assert!(read > 500.0 && wrote > 0.0 && wrote < 200.0, "{second:?}");
    // The fifth repeats the first prompt: all read, nothing written.
    let fifth = &rows[4];
    assert_eq!(cell(&h, fifth, "cache_write_tokens"), 0.0, "{fifth:?}");
    assert_eq!(
        r_col(&h, fifth, "cache_write_tokens"),
        "0",
        "a reported 0 is kept, not empty"
    );
    assert!(
        cell(&h, fifth, "cached_tokens") >= written - 16.0,
        "{fifth:?}"
    );
    // Each part of the input is billed at its price (per 1M tokens).
    let input = cell(&h, second, "input_tokens");
    let output = cell(&h, second, "output_tokens");
    let want = ((input - read - wrote) * 3.0 + read * 0.3 + wrote * 3.75 + output * 15.0) / 1e6;
    assert!((cell(&h, second, "cost") - want).abs() < 1e-9, "{second:?}");
    // Without cache: auto the simulator still serves its cache but reports no writes.
    let dir = run(&p, "plain", &yaml("plain", ""), &[]);
    let (h, rows) = read_csv(&dir.join("requests.csv"));
    assert!(
        rows.iter()
            .all(|r| r[col(&h, "cache_write_tokens")].is_empty()),
        "{rows:?}"
    );
    assert!(cell(&h, &rows[1], "cached_tokens") > 500.0, "{:?}", rows[1]);
}

fn r_col<'a>(h: &[String], r: &'a [String], name: &str) -> &'a str {
    &r[col(h, name)]
}
