//! Faults and limits end to end: what the embedded simulator says it injected (`sim_stats.json`)
//! must be exactly what the client recorded, class by class (docs/files.md); retries keep the
//! successful attempt's timings; the rate-limit wall counts first attempts; a TPM limit is
//! reported as a token wall at the step where the token budget runs out.

use crate::support::{num, read_csv, Project};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

/// A scenario against the simulator with an explicit api, sim block, load and extra top-level
/// YAML (`retry:` ...). `sim` is indented 4, `load` 2.
fn scenario(name: &str, api: &str, sim: &str, timeouts: &str, load: &str, extra: &str) -> String {
    format!(
        "name: {name}\ntarget:\n  api: {api}\n  sim:\n{sim}\n  models: [sim-model]\n  timeouts: {timeouts}\nrequest:\n  prompt_file: prompts/p.txt\n  max_tokens: 8\nload:\n{load}\n{extra}"
    )
}

fn json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn count(v: &Value, key: &str) -> u64 {
    v[key]
        .as_u64()
        .unwrap_or_else(|| panic!("`{key}` is not a count in {v}"))
}

/// The rows of requests.csv as column-name maps.
fn request_rows(dir: &Path) -> Vec<BTreeMap<String, String>> {
    let (h, rows) = read_csv(&dir.join("requests.csv"));
    rows.into_iter()
        .map(|r| h.iter().cloned().zip(r).collect())
        .collect()
}

fn f(row: &BTreeMap<String, String>, name: &str) -> f64 {
    let v = &row[name];
    v.parse()
        .unwrap_or_else(|_| panic!("{name} is not a number: `{v}` in {row:?}"))
}

fn mean(xs: &[f64]) -> f64 {
    xs.iter().sum::<f64>() / xs.len().max(1) as f64
}

/// Every fault kind at 5% (half the requests fail), 320 requests, stalls longer than the idle
/// timeout: each injected fault must be recorded as its class, no more, no less. An in-band
/// error is a `stream_error`, except on the Responses API, whose `response.failed` names its
/// code (`server_error`: a 5xx).
fn every_fault_kind_is_recorded_as_its_class(api: &str) {
    let inband = if api == "openai-responses" {
        "http_5xx"
    } else {
        "stream_error"
    };
    let p = Project::new();
    let sim = "    ttft: 5ms\n    tpot: 1ms\n    output_tokens: 8\n    seed: 11\n    faults:\n      http_500: 0.05\n      http_502: 0.05\n      http_503: 0.05\n      overloaded_529: 0.05\n      disconnect: 0.05\n      stall: 0.05\n      stall_for: 5s\n      malformed: 0.05\n      inband_error: 0.05\n      no_done: 0.05\n      json_body: 0.05";
    let load = "  ladder: [4, 8]\n  requests_per_step: 160\n  warmup_requests: 0";
    let file = p.scenario(
        "faults",
        &scenario("faults", api, sim, "{idle: 2s}", load, ""),
    );
    // Failed requests are data, not a failure of the run.
    p.ladder()
        .args(["run", "--quiet"])
        .arg(&file)
        .assert()
        .code(0);
    let dir = &p.run_dirs("faults")[0];
    let stats = json(&dir.join("sim_stats.json"));
    let injected = |k: &str| count(&stats["faults"], k);
    let rows = request_rows(dir);
    assert_eq!(rows.len(), 320);
    // Every dialect's endpoint, as the simulator routes them.
    let served: u64 = ladder::dialect::Api::ALL
        .into_iter()
        .map(|api| count(&stats["requests"], &ladder::sim::route_path(api)))
        .sum();
    assert_eq!(served, 320, "every attempt reached the server once");

    let mut by_class: BTreeMap<String, u64> = BTreeMap::new();
    let mut by_status: BTreeMap<String, u64> = BTreeMap::new();
    for r in &rows {
        *by_class.entry(r["error_class"].clone()).or_default() += 1;
        if r["error_class"] == "http_5xx" {
            *by_status.entry(r["http_status"].clone()).or_default() += 1;
        }
        assert_eq!(r["attempts"], "1", "no retry policy, one attempt: {r:?}");
        assert_eq!(r["status"] == "ok", r["error_class"].is_empty(), "{r:?}");
    }
    let got = |class: &str| by_class.get(class).copied().unwrap_or(0);
    let kinds = [
        "http_500",
        "http_502",
        "http_503",
        "overloaded_529",
        "disconnect",
        "stall",
        "malformed",
        "inband_error",
        "no_done",
        "json_body",
    ];
    for k in kinds {
        assert!(injected(k) > 0, "seeded run injected no `{k}`: {stats}");
    }
    let in_band = |class: &str| {
        if class == inband {
            injected("inband_error")
        } else {
            0
        }
    };
    let expected = [
        (
            "http_5xx",
            injected("http_500")
                + injected("http_502")
                + injected("http_503")
                + injected("overloaded_529")
                + in_band("http_5xx"),
        ),
        ("disconnect", injected("disconnect") + injected("no_done")),
        ("protocol", injected("malformed") + injected("json_body")),
        ("stream_error", in_band("stream_error")),
        ("timeout_idle", injected("stall")),
        ("", 320 - kinds.iter().map(|k| injected(k)).sum::<u64>()),
    ];
    for (class, want) in expected {
        assert_eq!(
            got(class),
            want,
            "{api}: class `{class}`: recorded {by_class:?}, injected {}",
            stats["faults"]
        );
    }
    assert_eq!(
        by_class.len(),
        expected.iter().filter(|(_, n)| *n > 0).count(),
        "unexpected classes: {by_class:?}"
    );
    for (status, kind) in [
        ("500", "http_500"),
        ("502", "http_502"),
        ("503", "http_503"),
        ("529", "overloaded_529"),
    ] {
        assert_eq!(
            by_status.get(status).copied().unwrap_or(0),
            injected(kind),
            "{api}: HTTP {status}"
        );
    }
    // A stall is cut by the idle timeout, long before the stall ends.
    for r in rows.iter().filter(|r| r["error_class"] == "timeout_idle") {
        let e2e = f(r, "e2e_ms");
        assert!((300.0..4000.0).contains(&e2e), "stalled e2e {e2e}: {r:?}");
        assert!(
            f(r, "token_events") >= 1.0,
            "stall strikes mid-stream: {r:?}"
        );
    }
    // In-band errors keep the provider's error type.
    for r in rows.iter().filter(|r| r["error_class"] == "stream_error") {
        assert!(!r["error_type"].is_empty(), "{r:?}");
    }

    // summary.csv agrees with requests.csv.
    let (h, srows) = read_csv(&dir.join("summary.csv"));
    assert_eq!(srows.len(), 2);
    let mut sum = BTreeMap::<&str, f64>::new();
    for row in &srows {
        let attempted = num(row, &h, "attempted");
        assert_eq!(
            attempted,
            num(row, &h, "succeeded") + num(row, &h, "failed")
        );
        assert_eq!(attempted, 160.0);
        for c in [
            "succeeded",
            "err_429",
            "err_5xx",
            "err_timeout",
            "err_other",
        ] {
            *sum.entry(c).or_default() += num(row, &h, c);
        }
    }
    assert_eq!(sum["succeeded"], got("") as f64);
    assert_eq!(sum["err_429"], 0.0);
    assert_eq!(sum["err_5xx"], got("http_5xx") as f64);
    assert_eq!(sum["err_timeout"], got("timeout_idle") as f64);
    assert_eq!(
        sum["err_other"],
        (got("disconnect") + got("protocol") + got("stream_error")) as f64
    );
    // Request by request, the server's truth (matched on x-request-id) says which fault each
    // got, and the client recorded exactly its class. Streams still stalled when the run ended
    // may be missing from the truth (it is taken before the simulator shuts down).
    let truth = json(&dir.join("sim_truth.json"));
    let truth = truth.as_array().expect("sim_truth.json is a list");
    let class_of: BTreeMap<&str, &str> = rows
        .iter()
        .map(|r| (r["request_id"].as_str(), r["error_class"].as_str()))
        .collect();
    let mut seen = 0;
    for t in truth {
        let id = t["request_id"].as_str().expect("truth request_id");
        let class = class_of
            .get(id)
            .unwrap_or_else(|| panic!("server saw {id}, the client has no record"));
        let want = match t["fault"].as_str() {
            None => "",
            Some("http_500" | "http_502" | "http_503" | "overloaded_529") => "http_5xx",
            Some("disconnect" | "no_done") => "disconnect",
            Some("malformed" | "json_body") => "protocol",
            Some("inband_error") => inband,
            Some("stall") => "timeout_idle",
            Some(other) => panic!("unknown fault {other}"),
        };
        assert_eq!(*class, want, "{api}: {id} got fault {:?}", t["fault"]);
        seen += 1;
    }
    assert!(
        seen as u64 >= 320 - injected("stall"),
        "{seen} truth records"
    );
}

#[test]
fn every_fault_kind_is_recorded_as_its_class_openai_chat() {
    every_fault_kind_is_recorded_as_its_class("openai-chat");
}

#[test]
fn every_fault_kind_is_recorded_as_its_class_anthropic() {
    every_fault_kind_is_recorded_as_its_class("anthropic-messages");
}

#[test]
fn every_fault_kind_is_recorded_as_its_class_openai_responses() {
    every_fault_kind_is_recorded_as_its_class("openai-responses");
}

#[test]
fn every_fault_kind_is_recorded_as_its_class_openai_completions() {
    every_fault_kind_is_recorded_as_its_class("openai-completions");
}

/// 30% 503s with three attempts: retried records carry `attempts` and `retry_wait_ms`, but their
/// TTFT is the successful attempt's, and the step's wall time includes the waits.
#[test]
fn retries_keep_the_successful_attempts_timings() {
    let p = Project::new();
    let sim = "    ttft: 50ms\n    tpot: 2ms\n    tpot_jitter: 0\n    output_tokens: 8\n    seed: 5\n    faults: {http_503: 0.3}";
    let load = "  ladder: [4]\n  requests_per_step: 60\n  warmup_requests: 0";
    let retry = "retry: {max_attempts: 3, initial_backoff: 100ms, max_backoff: 400ms}\n";
    let file = p.scenario(
        "retry",
        &scenario("retry", "openai-chat", sim, "{}", load, retry),
    );
    p.ladder()
        .args(["run", "--quiet"])
        .arg(&file)
        .assert()
        .code(0);
    let dir = &p.run_dirs("retry")[0];
    let rows = request_rows(dir);
    assert_eq!(rows.len(), 60);
    let stats = json(&dir.join("sim_stats.json"));

    let attempts: f64 = rows.iter().map(|r| f(r, "attempts")).sum();
    assert_eq!(
        attempts as u64,
        count(&stats["requests"], "/v1/chat/completions"),
        "every attempt is one server request"
    );
    // Every attempt but a successful last one was a 503.
    let failed_final = rows.iter().filter(|r| r["status"] == "error").count() as f64;
    assert_eq!(
        (attempts - rows.len() as f64 + failed_final) as u64,
        count(&stats["faults"], "http_503")
    );
    for r in &rows {
        let (a, wait) = (f(r, "attempts"), f(r, "retry_wait_ms"));
        assert!((1.0..=3.0).contains(&a), "{r:?}");
        assert_eq!(a == 1.0, wait == 0.0, "waits only between attempts: {r:?}");
        if r["status"] == "error" {
            assert_eq!(r["error_class"], "http_5xx");
            assert_eq!(a, 3.0, "a 503 is retried until attempts run out: {r:?}");
        }
    }
    let ok = |retried: bool| -> Vec<&BTreeMap<String, String>> {
        rows.iter()
            .filter(|r| r["status"] == "ok" && (f(r, "attempts") > 1.0) == retried)
            .collect()
    };
    let (first, retried) = (ok(false), ok(true));
    assert!(
        retried.len() >= 3 && first.len() >= 10,
        "{} retried, {} first-attempt successes",
        retried.len(),
        first.len()
    );
    let ttft = |rs: &[&BTreeMap<String, String>]| {
        mean(&rs.iter().map(|r| f(r, "ttft_ms")).collect::<Vec<_>>())
    };
    let wait = mean(
        &retried
            .iter()
            .map(|r| f(r, "retry_wait_ms"))
            .collect::<Vec<_>>(),
    );
    assert!(
        wait >= 20.0,
        "mean retry wait {wait} ms is too small to tell"
    );
    let (t_first, t_retried) = (ttft(&first), ttft(&retried));
    assert!(
        (t_retried - t_first).abs() < 0.5 * wait,
        "retried TTFT {t_retried:.1} ms vs first-attempt {t_first:.1} ms: waits ({wait:.0} ms) leaked into TTFT"
    );
    // The step lasted at least as long as its longest request, waits included.
    let (h, srows) = read_csv(&dir.join("summary.csv"));
    let duration_ms = num(&srows[0], &h, "duration_s") * 1000.0;
    let first_start = rows
        .iter()
        .map(|r| f(r, "started_at_ms"))
        .fold(f64::INFINITY, f64::min);
    let longest = rows
        .iter()
        .map(|r| f(r, "started_at_ms") + f(r, "retry_wait_ms") + f(r, "e2e_ms") - first_start)
        .fold(0.0, f64::max);
    assert!(
        duration_ms + 1.0 >= longest,
        "step duration {duration_ms:.0} ms shorter than a request with its retries ({longest:.0} ms)"
    );
}

/// An RPM limit that runs out in the second step, with retries that honour `retry-after-ms`:
/// retries hide some 429s from the final classes, but the wall counts first attempts.
#[test]
fn rate_limit_wall_counts_first_attempts_even_when_retries_succeed() {
    let p = Project::new();
    // 300 requests per minute: a full bucket of 300, refilled at 5/s. The ladder asks for 340.
    let sim =
        "    ttft: 1ms\n    tpot: 1ms\n    tpot_jitter: 0\n    output_tokens: 2\n    rpm: 300";
    let load = "  ladder: [8, 16]\n  requests_per_step: 170\n  warmup_requests: 0";
    let retry =
        "retry: {max_attempts: 6, initial_backoff: 10ms, max_backoff: 50ms, max_retry_after: 1s}\n";
    let file = p.scenario(
        "rpm",
        &scenario("rpm", "openai-chat", sim, "{}", load, retry),
    );
    let out = p.ladder().args(["run"]).arg(&file).assert().code(0);
    let stdout = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    let dir = &p.run_dirs("rpm")[0];
    let rows = request_rows(dir);
    let stats = json(&dir.join("sim_stats.json"));

    // Every attempt but a successful last one was a 429.
    let attempts: f64 = rows.iter().map(|r| f(r, "attempts")).sum();
    let failed_final = rows.iter().filter(|r| r["status"] == "error").count() as f64;
    assert_eq!(
        (attempts - rows.len() as f64 + failed_final) as u64,
        count(&stats["rate_limited"], "requests")
    );
    let step2: Vec<_> = rows.iter().filter(|r| r["step"] == "2").collect();
    assert!(
        rows.iter()
            .filter(|r| r["step"] == "1")
            .all(|r| r["first_attempt_429"] == "false" && r["status"] == "ok"),
        "step 1 fits in the bucket"
    );
    let first_429 = step2
        .iter()
        .filter(|r| r["first_attempt_429"] == "true")
        .count() as u64;
    let recovered = step2
        .iter()
        .filter(|r| r["first_attempt_429"] == "true" && r["status"] == "ok")
        .count();
    assert!(first_429 >= 3, "the bucket ran out in step 2: {first_429}");
    assert!(recovered >= 1, "no retry after a 429 succeeded");
    for r in step2.iter().filter(|r| r["error_class"] == "http_429") {
        assert_eq!(r["first_attempt_429"], "true");
        assert_eq!(r["limit_kind"], "requests", "{r:?}");
        assert!(!r["retry_after_ms"].is_empty(), "{r:?}");
    }
    let (h, srows) = read_csv(&dir.join("summary.csv"));
    let err_429 = num(&srows[1], &h, "err_429") as u64;
    assert!(
        err_429 < first_429,
        "retries hid {recovered} of the 429s from err_429 ({err_429} vs {first_429})"
    );
    let findings = json(&dir.join("findings.json"));
    let wall = &findings[0]["wall"];
    assert_eq!(wall["status"], "wall", "{findings}");
    assert_eq!(wall["step"], 2);
    assert_eq!(
        count(wall, "count_429"),
        first_429,
        "the wall counts first attempts"
    );
    assert_eq!(wall["kind"], "requests");
    assert!(
        stdout.contains("Rate-limit wall at 16 streams") && stdout.contains("requests per minute"),
        "{stdout}"
    );
}

/// A TPM limit (prompt + max_tokens per request, like real providers): the bucket covers the
/// first two steps and runs out in the third, so the wall is at 8 streams, named a token limit.
#[test]
fn tpm_limit_gives_a_token_wall_at_the_expected_step() {
    let p = Project::new();
    // Each request costs 12 prompt tokens (45 chars / 4) + 20 max_tokens = 32; 60 per step:
    // steps 1+2 take 3840 of 4500, step 3 needs 1920 more (refill: 75 tokens/s).
    let sim =
        "    ttft: 5ms\n    tpot: 1ms\n    tpot_jitter: 0\n    output_tokens: 20\n    tpm: 4500";
    let load = "  ladder: [1, 2, 8, 16]\n  requests_per_step: 60\n  warmup_requests: 0";
    let yaml = scenario("tpm", "openai-chat", sim, "{}", load, "")
        .replace("max_tokens: 8", "max_tokens: 20");
    let file = p.scenario("tpm", &yaml);
    let out = p.ladder().args(["run"]).arg(&file).assert().code(0);
    let stdout = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    let dir = &p.run_dirs("tpm")[0];
    let rows = request_rows(dir);
    let stats = json(&dir.join("sim_stats.json"));
    let limited: Vec<_> = rows
        .iter()
        .filter(|r| r["error_class"] == "http_429")
        .collect();
    assert_eq!(
        limited.len() as u64,
        count(&stats["rate_limited"], "tokens")
    );
    assert_eq!(count(&stats["rate_limited"], "requests"), 0);
    assert!(
        rows.iter()
            .filter(|r| r["step"] == "1" || r["step"] == "2")
            .all(|r| r["status"] == "ok"),
        "the first two steps fit in the token bucket"
    );
    let findings = json(&dir.join("findings.json"));
    let wall = &findings[0]["wall"];
    assert_eq!(wall["status"], "wall", "{findings}");
    assert_eq!(wall["step"], 3, "{wall}");
    assert_eq!(wall["concurrency"], 8);
    assert!(stdout.contains("Rate-limit wall at 8 streams"), "{stdout}");
    // The 429s say which limit: the headers (x-ratelimit-*-tokens) and the body name tokens.
    for r in &limited {
        assert_eq!(r["limit_kind"], "tokens", "{r:?}");
    }
    assert_eq!(wall["kind"], "tokens", "{wall}");
    assert!(stdout.contains("tokens per minute"), "{stdout}");
}
