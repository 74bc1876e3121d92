//! Account limits as providers enforce them, end to end against the simulator: the wall comes
//! where the count the provider's rule charges reaches the limit, and the finding names the
//! rule and what moved the wall (an Anthropic-like input limit that leaves cache reads out, an
//! OpenAI-like token limit that charges `max_tokens`, a ramp refused while every limit still had
//! room). docs/simulator.md ("Account limits") and docs/metrics.md ("Rate-limit walls").

use crate::support::{read_csv, Project};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

/// Tool definitions of about 700 tokens: providers put tools first, so with `cache_bust` they
/// stay cached while the rest of the prompt does not.
fn tools_json() -> String {
    let desc = "Looks up an order in the store's order system and returns its status, items, \
                shipping address and history. "
        .repeat(24);
    serde_json::json!([{"type": "function", "function": {"name": "lookup_order",
        "description": desc, "parameters": {"type": "object",
        "properties": {"order_id": {"type": "string"}}, "required": ["order_id"]}}}])
    .to_string()
}

/// A fast simulator (E2E ≈ 150 ms) behind `api` with `limits` (YAML flow entries), a 250 ms
/// limit period (so a 2-s step is not one burst), the request and the ladder.
fn scenario(name: &str, api: &str, limits: &str, request: &str, ladder: &str) -> String {
    format!(
        "name: {name}\ntarget:\n  api: {api}\n  sim: {{ttft: 50ms, tpot: 2ms, tpot_jitter: 0, \
         output_tokens: 50, prefix_cache: true, limit_period: 250ms, {limits}}}\n  \
         models: [sim-model]\nrequest:\n{request}\nload:\n  ladder: {ladder}\n  duration: 2s\n  \
         warmup_requests: 0\n"
    )
}

struct Run {
    stdout: String,
    wall: Value,
    rows: Vec<BTreeMap<String, String>>,
}

fn run(p: &Project, name: &str, yaml: &str, extra: &[&str]) -> Run {
    let file = p.scenario(name, yaml);
    let before = p.run_dirs(name).len();
    let out = p
        .ladder()
        .args(["run"])
        .arg(&file)
        .args(extra)
        .assert()
        .code(0);
    let stdout = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    let dirs = p.run_dirs(name);
    assert_eq!(dirs.len(), before + 1);
    let dir = dirs.last().unwrap();
    let findings: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("findings.json")).unwrap()).unwrap();
    Run {
        stdout,
        wall: findings[0]["wall"].clone(),
        rows: rows(dir),
    }
}

fn rows(dir: &Path) -> Vec<BTreeMap<String, String>> {
    let (h, rows) = read_csv(&dir.join("requests.csv"));
    rows.into_iter()
        .map(|r| h.iter().cloned().zip(r).collect())
        .collect()
}

fn mean(rows: &[&BTreeMap<String, String>], f: impl Fn(&BTreeMap<String, String>) -> f64) -> f64 {
    rows.iter().map(|r| f(r)).sum::<f64>() / rows.len() as f64
}

fn n(r: &BTreeMap<String, String>, k: &str) -> f64 {
    r[k].parse().unwrap_or(0.0)
}

fn wall_at(w: &Value) -> f64 {
    assert_eq!(w["status"], "wall", "{w}");
    w["concurrency"].as_f64().unwrap()
}

/// The concurrency at which a closed loop's rate of `per_request` tokens reaches `limit` per
/// minute: Little's law with the E2E the unrefused requests took.
fn where_it_binds(rows: &[BTreeMap<String, String>], limit: f64, per_request: f64) -> f64 {
    let ok: Vec<_> = rows.iter().filter(|r| r["status"] == "ok").collect();
    let e2e_s = mean(&ok, |r| n(r, "e2e_ms")) / 1000.0;
    limit / 60.0 / per_request * e2e_s
}

#[test]
fn an_input_limit_that_leaves_cache_reads_out_binds_where_the_uncached_rate_reaches_it() {
    let p = Project::new();
    std::fs::write(p.path().join("scenarios/tools.json"), tools_json()).unwrap();
    let request = "  tools: tools.json\n  prompt: {synthetic_tokens: 300}\n  cache_bust: true\n  \
                   max_tokens: 50";
    let yaml = scenario(
        "itpm",
        "anthropic-messages",
        "itpm: 1000000",
        request,
        "[2, 4, 6, 7, 8, 9, 10, 12]",
    );
    let free = run(&p, "itpm", &yaml, &[]);
    let ok: Vec<_> = free.rows.iter().filter(|r| r["status"] == "ok").collect();
    let uncached = mean(&ok, |r| n(r, "input_tokens") - n(r, "cached_tokens"));
    let cached_share = mean(&ok, |r| n(r, "cached_tokens")) / mean(&ok, |r| n(r, "input_tokens"));
    assert!(cached_share > 0.5, "the tools are cached: {cached_share}");
    let expected = where_it_binds(&free.rows, 1e6, uncached);
    let at = wall_at(&free.wall);
    assert!(
        (at - expected).abs() <= 0.15 * expected,
        "wall at {at}, the uncached rate reaches the limit at {expected:.1}: {}",
        free.stdout
    );
    assert_eq!(free.wall["kind"], "input_tokens", "{}", free.wall);
    assert_eq!(free.wall["limit"], 1_000_000);
    assert_eq!(
        free.wall["counted"]["rule"], "uncached_input",
        "{}",
        free.wall
    );
    for phrase in [
        "input tokens per minute, limit 1.0M",
        "What counts is uncached input (cache reads do not count)",
        "The cached share (",
        "counting every input token it would be at ~",
    ] {
        assert!(free.stdout.contains(phrase), "{phrase}: {}", free.stdout);
    }
    for r in free.rows.iter().filter(|r| r["error_class"] == "http_429") {
        assert_eq!(
            (r["limit_kind"].as_str(), r["limit_value"].as_str()),
            ("input_tokens", "1000000")
        );
    }
    // Cache reads counted: the same traffic hits the limit earlier, and the finding says so.
    let counted = run(&p, "itpm", &yaml, &["--sim-set", "itpm_cached=counted"]);
    let every = mean(&ok, |r| n(r, "input_tokens"));
    let earlier = where_it_binds(&counted.rows, 1e6, every);
    let at_counted = wall_at(&counted.wall);
    assert!(at_counted < at, "counted {at_counted} vs free {at}");
    // The ladder steps there are 2 and 4: the wall is the first step past where it binds.
    assert!(
        at_counted >= earlier * 0.85 && (at_counted <= 2.0 || 2.0 < earlier * 1.15),
        "wall at {at_counted}, binds at {earlier:.1}"
    );
    assert_eq!(
        counted.wall["counted"]["rule"], "all_input",
        "{}",
        counted.wall
    );
}

#[test]
fn an_openai_token_limit_charges_max_tokens_so_halving_it_moves_the_wall_unless_the_prompt_is_larger(
) {
    let p = Project::new();
    let yaml = |prompt: u32, max: u32, ladder: &str| {
        let request = format!("  prompt: {{synthetic_tokens: {prompt}}}\n  max_tokens: {max}");
        scenario(
            "tpm",
            "openai-chat",
            "tpm: 1000000, tpm_counts: larger",
            &request,
            ladder,
        )
    };
    // Larger of prompt and max_tokens: 1000 a request binds at ~2.5 streams, 500 at ~5.
    let long = run(&p, "tpm", &yaml(100, 1000, "[2, 3, 4, 5, 6, 8]"), &[]);
    let half = run(&p, "tpm", &yaml(100, 500, "[2, 3, 4, 5, 6, 8]"), &[]);
    let (at_long, at_half) = (wall_at(&long.wall), wall_at(&half.wall));
    assert!(
        at_half > at_long,
        "max_tokens 500: {at_half}, 1000: {at_long}"
    );
    let expected = where_it_binds(&half.rows, 1e6, 500.0);
    assert!(
        (at_half - expected).abs() <= 0.15 * expected + 1.0,
        "{at_half} vs {expected:.1}"
    );
    assert_eq!(long.wall["kind"], "tokens");
    assert_eq!(
        long.wall["counted"]["rule"],
        "larger_of_prompt_and_max_tokens"
    );
    assert!(
        long.stdout.contains("max_tokens (1000) is reserved for every request whatever it generates: halving it would move the wall to ~"),
        "{}",
        long.stdout
    );
    // A prompt larger than max_tokens: max_tokens does not count, halving it moves nothing.
    let big = run(&p, "tpm", &yaml(1000, 400, "[2, 3, 4]"), &[]);
    let big_half = run(&p, "tpm", &yaml(1000, 200, "[2, 3, 4]"), &[]);
    assert_eq!(wall_at(&big.wall), wall_at(&big_half.wall));
    assert!(
        big_half.stdout.contains(
            "is larger than max_tokens (200), so lowering max_tokens does not move this wall"
        ),
        "{}",
        big_half.stdout
    );
}

#[test]
fn a_sudden_ramp_refused_while_the_limits_had_room_is_an_acceleration_limit() {
    let p = Project::new();
    let yaml = scenario(
        "ramp",
        "anthropic-messages",
        "rpm: 1000000, accel: 3",
        "  prompt: {synthetic_tokens: 100}\n  max_tokens: 50",
        "[1, 16]",
    );
    let r = run(&p, "ramp", &yaml, &[]);
    assert_eq!(r.wall["kind"], "acceleration", "{}", r.wall);
    assert_eq!(r.wall["ramp_from"], 1);
    assert!(
        r.stdout.contains("Acceleration limit at 16 streams")
            && r.stdout
                .contains("naming no limit while the rate-limit headers still showed room")
            && !r.stdout.contains("Rate-limit wall"),
        "{}",
        r.stdout
    );
    // The 429s named no limit: the client told it from the headroom their headers showed.
    let refused: Vec<_> = r
        .rows
        .iter()
        .filter(|r| r["error_class"] == "http_429")
        .collect();
    assert!(!refused.is_empty());
    for row in refused {
        assert_eq!(row["limit_kind"], "", "{row:?}");
        assert!(n(row, "ratelimit_headroom") > 0.5, "{row:?}");
    }
}

#[test]
fn a_run_against_a_url_with_no_baseline_warns_before_the_step_that_will_cross_a_declared_limit() {
    let p = Project::new();
    let sim = crate::support::start_sim(&["ttft=50ms", "tpot=2ms", "output_tokens=50"]);
    // About 125 tokens a request at 6.7 requests/s per stream: 50k tokens/min a stream, so the
    // declared 150k is crossed at 4 streams (and not at 2).
    let yaml = crate::support::url_scenario(
        "declared",
        &sim.base_url,
        "  ladder: [1, 2, 4]\n  duration: 2s\n  warmup_requests: 0",
        50,
    )
    .replace(
        "prompt_file: prompts/p.txt",
        "prompt: {synthetic_tokens: 75}",
    ) + "limits:\n  tpm: 150000\n";
    let file = p.scenario("declared", &yaml);
    let out = p.ladder().args(["run"]).arg(&file).assert().code(0);
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    let warning = stderr
        .find("before the next step: sim-model at 4 streams: planned ≈")
        .unwrap_or_else(|| panic!("no warning before 4 streams:\n{stderr}"));
    assert!(stderr[warning..].contains("from the steps measured so far) exceeds limits.tpm 150000"));
    let step3 = stderr.find("step 3/3").expect("the third step started");
    let step2 = stderr.find("step 2/3").expect("the second step started");
    assert!(
        step2 < warning && warning < step3,
        "said between steps 2 and 3:\n{stderr}"
    );
    assert_eq!(
        stderr.matches("before the next step").count(),
        1,
        "{stderr}"
    );
}

#[test]
fn plan_names_the_input_limit_that_binds_and_a_run_at_that_rate_hits_it_there() {
    let p = Project::new();
    std::fs::write(p.path().join("scenarios/tools.json"), tools_json()).unwrap();
    let request = "  tools: tools.json\n  prompt: {synthetic_tokens: 300}\n  cache_bust: true\n  \
                   max_tokens: 50";
    let limits = "limits:\n  itpm: 1000000\n  itpm_cached: free\n";
    let below = scenario(
        "measured",
        "anthropic-messages",
        "itpm: 1000000",
        request,
        "[2, 4]",
    ) + limits;
    let measured = run(&p, "measured", &below, &[]);
    assert_eq!(measured.wall["status"], "none", "{}", measured.wall);
    let dir = p.run_dirs("measured").pop().unwrap();
    let out = p
        .ladder()
        .args(["plan"])
        .arg(&dir)
        .args(["--rps", "30", "--format", "json"])
        .assert()
        .code(0);
    let plan: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    let m = &plan["models"][0];
    assert_eq!(m["binding_limit"], "itpm", "{m}");
    let at = m["max_sustainable_rps"].as_f64().unwrap();
    let text = p
        .ladder()
        .args(["plan"])
        .arg(&dir)
        .args(["--rps", "30"])
        .assert()
        .code(0);
    let text = String::from_utf8_lossy(&text.get_output().stdout).to_string();
    assert!(
        text.contains("counted as          itpm: uncached input only:")
            && text.contains("read from the cache is free)"),
        "{text}"
    );
    // A run at rates around the prediction: no wall below it, a wall above it. A 1-s bucket
    // (not the 250 ms of the other tests) absorbs a loaded client's bursts at the lower rate;
    // 8-s steps drain it at the higher one.
    let (lo, hi) = ((at * 0.85).round() as u32, (at * 1.2).round() as u32);
    let rate = scenario(
        "at-rate",
        "anthropic-messages",
        "itpm: 1000000",
        request,
        &format!("[{lo}, {hi}]\n  mode: rate\n  arrivals: {{gamma: {{burstiness: 20}}}}"),
    )
    .replace("limit_period: 250ms", "limit_period: 1s")
    .replace("duration: 2s", "duration: 8s");
    let r = run(&p, "at-rate", &rate, &[]);
    assert_eq!(r.wall["status"], "wall", "{}", r.stdout);
    assert_eq!(
        r.wall["concurrency"], hi,
        "predicted {at:.1} req/s: {}",
        r.stdout
    );
    assert_eq!(r.wall["kind"], "input_tokens");
}
