//! The other wire APIs end to end: `anthropic-messages` and `openai-completions` against the
//! embedded simulator (and, for the exact headers and usage semantics, a canned Anthropic server),
//! and a two-model comparison where the simulator serves the models at different speeds.

use crate::support::{col, num, read_csv, Project};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::Path;
use std::sync::{Arc, Mutex};

const KEY: &str = "sk-ant-e2e-0123456789abcdef";

fn scenario(name: &str, api: &str, target_extra: &str, sim: &str, load: &str) -> String {
    format!(
        "name: {name}\ntarget:\n  api: {api}\n{target_extra}{sim}request:\n  prompt_file: prompts/p.txt\n  \
         system_file: prompts/p.txt\n  max_tokens: 12\nload:\n{load}\n"
    )
}

/// Runs `ladder run --no-color` on a scenario and returns (stdout, run directory).
fn run(p: &Project, name: &str, yaml: &str) -> (String, std::path::PathBuf) {
    let f = p.scenario(name, yaml);
    let out = p
        .ladder()
        .env("LADDER_E2E_KEY", KEY)
        .args(["run", "--no-color"])
        .arg(&f)
        .assert()
        .success();
    let dirs = p.run_dirs(name);
    assert_eq!(dirs.len(), 1, "one run directory");
    let stdout = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    (stdout, dirs[0].clone())
}

fn json(path: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap()
}

/// Every request hit `path` on the simulator, and it rejected none.
fn assert_sim_served(dir: &Path, path: &str, requests: u64) {
    let stats = json(&dir.join("sim_stats.json"));
    assert_eq!(stats["requests"][path].as_u64(), Some(requests), "{stats}");
    assert_eq!(
        stats["rejected"]["401"].as_u64(),
        Some(0),
        "key not accepted"
    );
    assert_eq!(
        stats["rejected"]["400"].as_u64(),
        Some(0),
        "body not accepted"
    );
    for t in json(&dir.join("sim_truth.json")).as_array().unwrap() {
        assert_eq!(t["path"], path, "{t}");
    }
}

/// Each request succeeded with `tokens` output tokens from server usage, TTFT at least the
/// simulated `ttft_ms` (and not absurdly more), its last token no earlier than the simulator
/// sends it (TTFT + (n − 1) × TPOT ≥ the configured ones), TPOT not absurdly more than `tpot_ms`.
fn assert_records(dir: &Path, tokens: f64, ttft_ms: f64, tpot_ms: f64, finish: &str) {
    let (h, rows) = read_csv(&dir.join("requests.csv"));
    assert!(!rows.is_empty());
    for r in &rows {
        assert_eq!(r[col(&h, "status")], "ok", "{r:?}");
        assert_eq!(r[col(&h, "tokens_source")], "usage", "{r:?}");
        assert_eq!(num(r, &h, "output_tokens"), tokens, "{r:?}");
        assert_eq!(num(r, &h, "token_events"), tokens, "{r:?}");
        assert!(num(r, &h, "input_tokens") > 0.0, "{r:?}");
        assert_eq!(r[col(&h, "finish_reason")], finish, "{r:?}");
        let ttft = num(r, &h, "ttft_ms");
        assert!(
            ttft >= ttft_ms - 1.0 && ttft < ttft_ms + 500.0,
            "TTFT {ttft}"
        );
        // A loaded client may read the first token late and the rest in a burst (a small TPOT)
        // and timers run late (a large one), so TPOT alone has only a loose range; the last
        // token's time cannot come early: the simulator sends token k at TTFT + k × TPOT.
        let tpot = num(r, &h, "tpot_ms");
        assert!(tpot > 0.0 && tpot < tpot_ms + 100.0, "TPOT {tpot}");
        assert_last_token_not_early(r, &h, ttft_ms, tpot_ms);
    }
}

/// The request's last token came no earlier than the simulator's schedule sends it.
fn assert_last_token_not_early(r: &[String], h: &[String], ttft_ms: f64, tpot_ms: f64) {
    let n = num(r, h, "output_tokens");
    let last = num(r, h, "ttft_ms") + (n - 1.0) * num(r, h, "tpot_ms");
    let due = ttft_ms + (n - 1.0) * tpot_ms;
    assert!(
        last >= due - 1.0,
        "last token at {last} ms, due at {due} ms: {r:?}"
    );
}

#[test]
fn anthropic_messages_against_the_simulator() {
    let p = Project::new();
    let sim = format!(
        "  sim:\n    ttft: 80ms\n    tpot: 4ms\n    tpot_jitter: 0\n    output_tokens: 12\n    \
         require_api_key: {KEY}\n  models: [claude-sim]\n"
    );
    let yaml = scenario(
        "anth",
        "anthropic-messages",
        &format!("  api_key: {KEY}\n"),
        &sim,
        "  ladder: [1, 2]\n  requests_per_step: 4",
    );
    let (_, dir) = run(&p, "anth", &yaml);
    assert_sim_served(&dir, "/v1/messages", 8);
    assert_records(&dir, 12.0, 80.0, 4.0, "end_turn");
    let (h, rows) = read_csv(&dir.join("summary.csv"));
    assert_eq!(rows.len(), 2);
    for r in &rows {
        assert_eq!(num(r, &h, "succeeded"), 4.0);
        assert_eq!(num(r, &h, "output_tokens"), 48.0);
    }
}

#[test]
fn openai_completions_against_the_simulator() {
    let p = Project::new();
    let sim =
        "  sim:\n    ttft: 60ms\n    tpot: 5ms\n    tpot_jitter: 0\n    output_tokens: 10\n  \
               models: [sim-model]\n";
    let yaml = scenario(
        "comp",
        "openai-completions",
        "",
        sim,
        "  ladder: [1, 2]\n  requests_per_step: 4",
    );
    let (_, dir) = run(&p, "comp", &yaml);
    assert_sim_served(&dir, "/v1/completions", 8);
    assert_records(&dir, 10.0, 60.0, 5.0, "stop");
}

/// One captured request: path, lower-cased headers, JSON body.
struct Captured {
    path: String,
    headers: Vec<(String, String)>,
    body: serde_json::Value,
}

impl Captured {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

fn read_request(stream: &mut std::net::TcpStream) -> Option<Captured> {
    let mut reader = BufReader::new(stream);
    let mut line = String::new();
    reader.read_line(&mut line).ok()?;
    let path = line.split_whitespace().nth(1)?.to_string();
    let mut headers = Vec::new();
    loop {
        line.clear();
        reader.read_line(&mut line).ok()?;
        let l = line.trim_end();
        if l.is_empty() {
            break;
        }
        let (k, v) = l.split_once(':')?;
        headers.push((k.trim().to_ascii_lowercase(), v.trim().to_string()));
    }
    let len: usize = headers
        .iter()
        .find(|(k, _)| k == "content-length")
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    let mut body = vec![0; len];
    reader.read_exact(&mut body).ok()?;
    let body = serde_json::from_slice(&body).unwrap_or(serde_json::Value::Null);
    Some(Captured {
        path,
        headers,
        body,
    })
}

/// A server on 127.0.0.1 that records each request and answers it with `stream` (SSE), then
/// closes the connection. Returns its base URL (with `/v1`) and the captured requests.
fn canned_server(stream: &'static str) -> (String, Arc<Mutex<Vec<Captured>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}/v1", listener.local_addr().unwrap());
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = Arc::clone(&seen);
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(mut conn) = conn else { continue };
            if let Some(c) = read_request(&mut conn) {
                log.lock().unwrap().push(c);
            }
            let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\
                        cache-control: no-cache\r\nconnection: close\r\n\r\n";
            let _ = conn.write_all(head.as_bytes());
            let _ = conn.write_all(stream.as_bytes());
        }
    });
    (base, seen)
}

/// Three text deltas; usage grows cumulatively (1, 5, 9): the last value is the count.
const ANTHROPIC_STREAM: &str = "event: message_start
data: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[],\"model\":\"claude-e2e\",\"stop_reason\":null,\"usage\":{\"input_tokens\":25,\"output_tokens\":1}}}

event: content_block_start
data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}

event: ping
data: {\"type\":\"ping\"}

event: content_block_delta
data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Hello\"}}

event: content_block_delta
data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\" load\"}}

event: message_delta
data: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":null},\"usage\":{\"output_tokens\":5}}

event: content_block_delta
data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\" tester!\"}}

event: content_block_stop
data: {\"type\":\"content_block_stop\",\"index\":0}

event: message_delta
data: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\",\"stop_sequence\":null},\"usage\":{\"output_tokens\":9}}

event: message_stop
data: {\"type\":\"message_stop\"}

";

#[test]
fn anthropic_client_sends_its_headers_and_takes_the_last_usage() {
    let (base, seen) = canned_server(ANTHROPIC_STREAM);
    let p = Project::new();
    let target =
        format!("  base_url: {base}\n  api_key: ${{LADDER_E2E_KEY}}\n  models: [claude-e2e]\n");
    let yaml = scenario(
        "canned",
        "anthropic-messages",
        &target,
        "",
        "  ladder: [1]\n  requests_per_step: 2",
    );
    let (_, dir) = run(&p, "canned", &yaml);
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 2, "requests received");
    for c in seen.iter() {
        assert_eq!(c.path, "/v1/messages");
        assert_eq!(c.header("x-api-key"), Some(KEY));
        assert_eq!(c.header("anthropic-version"), Some("2023-06-01"));
        assert_eq!(c.header("authorization"), None, "no bearer for Anthropic");
        assert_eq!(c.body["model"], "claude-e2e");
        assert_eq!(c.body["max_tokens"], 12);
        assert_eq!(c.body["stream"], true);
        assert!(c.body["system"]
            .as_str()
            .is_some_and(|s| s.contains("hello")));
        assert_eq!(c.body["messages"][0]["role"], "user");
    }
    let (h, rows) = read_csv(&dir.join("requests.csv"));
    assert_eq!(rows.len(), 2);
    for r in &rows {
        assert_eq!(r[col(&h, "status")], "ok", "{r:?}");
        assert_eq!(num(r, &h, "output_tokens"), 9.0, "last usage, not summed");
        assert_eq!(num(r, &h, "token_events"), 3.0);
        assert_eq!(r[col(&h, "tokens_source")], "usage");
        assert_eq!(num(r, &h, "input_tokens"), 25.0);
        assert_eq!(r[col(&h, "finish_reason")], "end_turn");
    }
    let all = p.all_files();
    for f in all.iter().filter(|f| f.is_file()) {
        let text = std::fs::read_to_string(f).unwrap_or_default();
        assert!(!text.contains(KEY), "the key leaked into {}", f.display());
    }
}

/// Data rows of the comparison table (the table whose header names both models).
fn comparison_rows<'a>(stdout: &'a str, a: &str, b: &str) -> Vec<Vec<&'a str>> {
    let lines: Vec<&str> = stdout.lines().collect();
    let start = lines
        .iter()
        .position(|l| l.contains(a) && l.contains(b) && l.contains('│'))
        .unwrap_or_else(|| panic!("no comparison table in:\n{stdout}"));
    lines[start..]
        .iter()
        .take_while(|l| !l.starts_with('╰'))
        .filter(|l| l.starts_with('│'))
        .map(|l| l.split('│').map(str::trim).collect::<Vec<_>>())
        .filter(|cells| cells.get(1).is_some_and(|c| c.parse::<u32>().is_ok()))
        .collect()
}

#[test]
fn two_models_at_different_speeds_are_compared_side_by_side() {
    let p = Project::new();
    let sim = "  sim:\n    ttft: 100ms\n    tpot: 5ms\n    tpot_jitter: 0\n    output_tokens: 10\n    \
               models:\n      fast: {ttft: 20ms, tpot: 2ms}\n      slow: {ttft: 150ms, tpot: 8ms}\n  \
               models: [fast, slow]\n";
    let yaml = scenario(
        "two",
        "openai-chat",
        "",
        sim,
        "  ladder: [1, 2]\n  requests_per_step: 6",
    );
    let (stdout, dir) = run(&p, "two", &yaml);
    let rows = comparison_rows(&stdout, "fast", "slow");
    assert_eq!(rows.len(), 2, "one row per step:\n{stdout}");
    for cells in &rows {
        // │ streams │ fast: TTFT P90 │ TPOT P50 │ TPM │ errors │ slow: TTFT P90 │ ... │
        assert!(cells[2].ends_with('*'), "fast not marked: {cells:?}");
        assert!(!cells[6].contains('*'), "slow marked: {cells:?}");
    }
    assert!(stdout.contains("* lowest TTFT P90"), "{stdout}");

    let (h, rows) = read_csv(&dir.join("summary.csv"));
    let by = |model: &str| -> Vec<&Vec<String>> {
        rows.iter()
            .filter(|r| r[col(&h, "model")] == model)
            .collect()
    };
    let (fast, slow) = (by("fast"), by("slow"));
    assert_eq!(
        (fast.len(), slow.len(), rows.len()),
        (2, 2, 4),
        "rows keyed by model"
    );
    for (f, s) in fast.iter().zip(&slow) {
        assert_eq!(f[col(&h, "step")], s[col(&h, "step")]);
        assert!(num(f, &h, "tpot_p50_ms") < num(s, &h, "tpot_p50_ms"));
        assert!(num(f, &h, "ttft_p90_ms") < num(s, &h, "ttft_p90_ms"));
    }
    // Each model at its own speed: no request's last token before its model's schedule.
    let (rh, requests) = read_csv(&dir.join("requests.csv"));
    for r in &requests {
        let (ttft, tpot) = match r[col(&rh, "model")].as_str() {
            "fast" => (20.0, 2.0),
            _ => (150.0, 8.0),
        };
        assert_last_token_not_early(r, &rh, ttft, tpot);
    }
    let findings = json(&dir.join("findings.json"));
    let models: Vec<&str> = findings
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|f| f["model"].as_str())
        .collect();
    assert_eq!(models, ["fast", "slow"], "findings per model");
    assert!(
        stdout.contains("fast: ") && stdout.contains("slow: "),
        "{stdout}"
    );
}
