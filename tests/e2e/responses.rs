//! `api: openai-responses` end to end (issue 36, part 1): `ladder run` against the simulator's
//! `/v1/responses` measures TTFT, TPOT, tokens and usage as on chat; a 429 is rate-limited and a
//! `response.failed` is classified by its code; streamed reasoning gives TTFC after TTFT;
//! sessions send their history as input items; `ladder check` passes against it and names a
//! model served through another endpoint and a refused `store` field.

use crate::check::{check, says, Answer, Fake};
use crate::support::{col, num, read_csv, Project};
use std::collections::BTreeMap;
use std::path::PathBuf;

fn scenario(name: &str, sim: &str, request: &str, load: &str) -> String {
    format!(
        "name: {name}\ntarget:\n  api: openai-responses\n  sim: {{{sim}}}\n  models: [sim-model]\n\
         request:\n  prompt_file: prompts/p.txt\n  system_file: prompts/p.txt\n{request}load:\n{load}\n"
    )
}

fn run(p: &Project, name: &str, yaml: &str) -> PathBuf {
    let f = p.scenario(name, yaml);
    p.ladder()
        .args(["run", "--no-color", "--quiet"])
        .arg(&f)
        .assert()
        .success();
    let dirs = p.run_dirs(name);
    assert_eq!(dirs.len(), 1, "one run directory");
    dirs[0].clone()
}

fn records(dir: &std::path::Path) -> Vec<BTreeMap<String, String>> {
    let (h, rows) = read_csv(&dir.join("requests.csv"));
    rows.iter()
        .map(|r| h.iter().cloned().zip(r.iter().cloned()).collect())
        .collect()
}

#[test]
fn a_ladder_measures_what_it_measures_on_chat() {
    let p = Project::new();
    let yaml = scenario(
        "resp",
        "ttft: 80ms, tpot: 4ms, tpot_jitter: 0, output_tokens: 12, prefix_cache: true",
        "  max_tokens: 32\n",
        "  ladder: [1, 2]\n  requests_per_step: 4",
    );
    let dir = run(&p, "resp", &yaml);
    let stats: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("sim_stats.json")).unwrap())
            .unwrap();
    assert_eq!(stats["requests"]["/v1/responses"], 8, "{stats}");
    assert_eq!(stats["rejected"]["400"], 0, "every body accepted: {stats}");
    let (h, all) = read_csv(&dir.join("requests.csv"));
    assert_eq!(all.len(), 8);
    for r in &all {
        assert_eq!(r[col(&h, "status")], "ok", "{r:?}");
        assert_eq!(r[col(&h, "tokens_source")], "usage", "{r:?}");
        assert_eq!(num(r, &h, "output_tokens"), 12.0, "{r:?}");
        assert_eq!(num(r, &h, "token_events"), 12.0, "{r:?}");
        assert!(num(r, &h, "input_tokens") > 0.0, "{r:?}");
        assert_eq!(r[col(&h, "finish_reason")], "stop", "{r:?}");
        let ttft = num(r, &h, "ttft_ms");
        assert!((79.0..600.0).contains(&ttft), "TTFT {ttft}");
        // TTFC is TTFT when nothing reasoned.
        assert_eq!(num(r, &h, "ttfc_ms"), ttft, "{r:?}");
        let tpot = num(r, &h, "tpot_ms");
        assert!(tpot > 0.0 && tpot < 104.0, "TPOT {tpot}");
        let last = ttft + 11.0 * tpot;
        assert!(last >= 80.0 + 11.0 * 4.0 - 1.0, "last token at {last} ms");
    }
    let (h, steps) = read_csv(&dir.join("summary.csv"));
    assert_eq!(steps.len(), 2);
    for s in &steps {
        assert_eq!(num(s, &h, "succeeded"), 4.0);
        assert_eq!(num(s, &h, "output_tokens"), 48.0);
        assert!(num(s, &h, "ttft_p50_ms") >= 79.0);
    }
}

#[test]
fn a_429_is_rate_limited_failures_by_their_code_and_a_cut_is_length() {
    let p = Project::new();
    // 6 requests a minute, and every other stream fails in-band (`response.failed`,
    // `server_error`) or ends without its terminal event.
    let yaml = scenario(
        "limits",
        "ttft: 5ms, tpot: 1ms, output_tokens: 12, rpm: 6, seed: 3, \
         faults: {inband_error: 0.3, no_done: 0.2}",
        "  max_tokens: 5\n",
        "  ladder: [4]\n  requests_per_step: 16",
    );
    let dir = run(&p, "limits", &yaml);
    let rows = records(&dir);
    assert_eq!(rows.len(), 16);
    let class = |c: &str| rows.iter().filter(|r| r["error_class"] == c).count();
    assert!(class("http_429") >= 8, "{rows:?}");
    for r in rows.iter().filter(|r| r["error_class"] == "http_429") {
        assert_eq!(r["http_status"], "429", "{r:?}");
        assert_eq!(r["error_type"], "rate_limit_exceeded", "{r:?}");
        assert_eq!(r["limit_kind"], "requests", "{r:?}");
    }
    // Against a sim whose faults fire but whose limit does not: each fault's class.
    let p = Project::new();
    let yaml = scenario(
        "faults",
        "ttft: 5ms, tpot: 1ms, output_tokens: 12, seed: 3, \
         faults: {inband_error: 0.3, no_done: 0.2}",
        "  max_tokens: 5\n",
        "  ladder: [4]\n  requests_per_step: 40",
    );
    let dir = run(&p, "faults", &yaml);
    let rows = records(&dir);
    let by = |c: &str| rows.iter().filter(|r| r["error_class"] == c).count();
    assert!(
        by("http_5xx") > 0 && by("disconnect") > 0 && by("") > 0,
        "{rows:?}"
    );
    assert_eq!(by("http_5xx") + by("disconnect") + by(""), 40, "{rows:?}");
    for r in &rows {
        match r["error_class"].as_str() {
            // `response.failed` on an HTTP 200 stream, classified by `error.code`.
            "http_5xx" => {
                assert_eq!(r["http_status"], "200", "{r:?}");
                assert_eq!(r["error_type"], "server_error", "{r:?}");
            }
            "disconnect" => assert!(r["error_message"].contains("response.completed"), "{r:?}"),
            // Cut at max_output_tokens: response.incomplete, recorded as length.
            _ => {
                assert_eq!(r["finish_reason"], "length", "{r:?}");
                assert_eq!(r["output_tokens"], "5", "{r:?}");
            }
        }
    }
}

#[test]
fn streamed_reasoning_puts_ttfc_after_ttft() {
    let p = Project::new();
    let yaml = scenario(
        "think",
        "ttft: 20ms, tpot: 3ms, tpot_jitter: 0, output_tokens: 8, reasoning_tokens: 20, \
         stream_reasoning: true",
        "  max_tokens: 64\n  extra_body: {reasoning: {effort: low, summary: auto}}\n",
        "  ladder: [2]\n  requests_per_step: 6",
    );
    let dir = run(&p, "think", &yaml);
    let (h, all) = read_csv(&dir.join("requests.csv"));
    for r in &all {
        assert_eq!(r[col(&h, "status")], "ok", "{r:?}");
        let (ttft, ttfc) = (num(r, &h, "ttft_ms"), num(r, &h, "ttfc_ms"));
        // 20 reasoning tokens at 3 ms each come before the answer: the simulator sends the first
        // answer token at 20 + 20 × 3 ms. (Not TTFT + 57 ms: a loaded client may read the first
        // token late and the next ones in a burst; no token can be read before it is sent.)
        assert!(
            ttfc > ttft && ttfc >= 80.0 - 1.0,
            "TTFT {ttft}, TTFC {ttfc}"
        );
        assert_eq!(num(r, &h, "reasoning_tokens"), 20.0, "{r:?}");
        assert_eq!(num(r, &h, "output_tokens"), 28.0, "{r:?}");
    }
}

#[test]
fn sessions_send_their_history_as_input_items() {
    let p = Project::new();
    let yaml = scenario(
        "turns",
        "ttft: 5ms, tpot: 1ms, output_tokens: 40",
        "  max_tokens: 40\n  session: {turns: 3}\n",
        "  ladder: [1]\n  requests_per_step: 3",
    );
    let dir = run(&p, "turns", &yaml);
    let (h, all) = read_csv(&dir.join("requests.csv"));
    assert_eq!(all.len(), 3);
    let inputs: Vec<f64> = all.iter().map(|r| num(r, &h, "input_tokens")).collect();
    // Each turn sends the earlier turns and answers again: the input grows.
    assert!(
        inputs[0] < inputs[1] && inputs[1] < inputs[2],
        "input tokens per turn: {inputs:?}"
    );
}

#[test]
fn check_passes_against_the_responses_endpoint() {
    let p = Project::new();
    let yaml = scenario(
        "ok",
        "ttft: 5ms, tpot: 1ms",
        "  max_tokens: 16\n",
        "  ladder: [1]",
    );
    let f = p.scenario("ok", &yaml);
    let out = check(&p, &[f.to_str().unwrap()], None);
    assert_eq!(out.code, 0, "{}", out.stdout);
    says(
        &out,
        &[
            "ok  sim-model  TTFT ",
            "16 tokens, usage reported",
            "openai-responses",
        ],
    );
}

/// OpenAI's answer to a Responses-only model on chat completions, and a server whose
/// `/responses` refuses the `store` field.
fn picky(_: &str, path: &str) -> Answer {
    if path == "/v1/chat/completions" {
        return (
            "404 Not Found",
            "application/json",
            r#"{"error":{"message":"This model is only supported in v1/responses and not in v1/chat/completions.","type":"invalid_request_error","param":"model","code":null}}"#.into(),
        );
    }
    (
        "400 Bad Request",
        "application/json",
        r#"{"error":{"message":"Unrecognized request argument supplied: store","type":"invalid_request_error","param":null,"code":null}}"#.into(),
    )
}

#[test]
fn check_names_the_endpoint_a_model_needs_and_a_refused_store() {
    let fake = Fake::start(picky);
    let p = Project::new();
    let base = format!("{}/v1", fake.base);
    let out = check(&p, &["--base-url", &base, "--model", "gpt-5-codex"], None);
    assert_eq!(out.code, 1, "{}", out.stdout);
    says(
        &out,
        &[
            "the model `gpt-5-codex` is served through /responses, not /chat/completions",
            "set `api: openai-responses`",
        ],
    );
    let out = check(
        &p,
        &[
            "--base-url",
            &base,
            "--model",
            "m",
            "--api",
            "openai-responses",
        ],
        None,
    );
    assert_eq!(out.code, 1, "{}", out.stdout);
    says(
        &out,
        &[
            "the server refuses the `store` field",
            "add `store: null` to request.extra_body",
        ],
    );
    let bodies = fake.bodies.lock().unwrap();
    let sent: serde_json::Value = bodies
        .iter()
        .rev()
        .find_map(|b| serde_json::from_str(b).ok())
        .expect("a request body");
    assert_eq!(sent["store"], false, "{sent}");
    assert_eq!(
        sent["max_output_tokens"], 16,
        "the smallest limit OpenAI takes: {sent}"
    );
    assert_eq!(sent["input"], "Reply with one word: ok", "{sent}");
}

#[test]
fn a_chained_session_sends_the_previous_response_id() {
    let p = Project::new();
    let yaml = scenario(
        "chain",
        "ttft: 5ms, tpot: 1ms, output_tokens: 40",
        "  max_tokens: 40\n  session: {turns: 3, chain: previous_response_id}\n  \
         extra_body: {store: true}\n",
        "  ladder: [1]\n  requests_per_step: 3",
    );
    let dir = run(&p, "chain", &yaml);
    let stats: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("sim_stats.json")).unwrap())
            .unwrap();
    assert_eq!(
        stats["rejected"]["400"], 0,
        "every previous_response_id found: {stats}"
    );
    let (h, all) = read_csv(&dir.join("requests.csv"));
    assert_eq!(all.len(), 3);
    let input: Vec<f64> = all.iter().map(|r| num(r, &h, "input_tokens")).collect();
    let output: Vec<f64> = all.iter().map(|r| num(r, &h, "output_tokens")).collect();
    // Each turn sends only its own prompt (as large as the first turn's) and the previous id;
    // the simulator adds the stored conversation, as the API does.
    assert_eq!(
        input[1],
        input[0] + output[0] + input[0],
        "{input:?} {output:?}"
    );
    assert_eq!(
        input[2],
        input[1] + output[1] + input[0],
        "{input:?} {output:?}"
    );
}

#[test]
fn a_chain_needs_stored_responses_and_the_responses_api() {
    let p = Project::new();
    let refused = |name: &str, yaml: &str, words: &[&str]| {
        let f = p.scenario(name, yaml);
        let out = p.ladder().arg("validate").arg(&f).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr).to_string();
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        for w in words {
            assert!(stderr.contains(w), "missing `{w}` in {stderr}");
        }
    };
    let chain = "  max_tokens: 40\n  session: {turns: 3, chain: previous_response_id}\n";
    refused(
        "nostore",
        &scenario("nostore", "ttft: 5ms", chain, "  ladder: [1]"),
        &[
            "request.session.chain",
            "add store: true to request.extra_body",
        ],
    );
    let on_chat = scenario("chat", "ttft: 5ms", chain, "  ladder: [1]")
        .replace("api: openai-responses", "api: openai-chat");
    refused(
        "chat",
        &on_chat,
        &[
            "openai-chat has no chained responses",
            "use openai-responses",
        ],
    );
}
