//! `request.stream: false` end to end (issue 36, part 2): on every dialect, `ladder run` against
//! the simulator records E2E and the usage's tokens and leaves TTFT, TTFC, TPOT and ITL empty;
//! the simulator answers with one JSON body after the whole generation time, with its 429s, its
//! faults and its `Server-Timing`.

use crate::support::{col, num, read_csv, Project};
use std::path::PathBuf;

fn scenario(name: &str, api: &str, sim: &str, load: &str) -> String {
    format!(
        "name: {name}\ntarget:\n  api: {api}\n  sim: {{{sim}}}\n  models: [sim-model]\n\
         request:\n  prompt_file: prompts/p.txt\n  max_tokens: 32\n  stream: false\nload:\n{load}\n"
    )
}

fn run(p: &Project, name: &str, yaml: &str) -> (PathBuf, String) {
    let f = p.scenario(name, yaml);
    let out = p
        .ladder()
        .args(["run", "--no-color"])
        .arg(&f)
        .assert()
        .success();
    let dirs = p.run_dirs(name);
    assert_eq!(dirs.len(), 1, "one run directory");
    let stdout = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    (dirs[0].clone(), stdout)
}

#[test]
fn every_dialect_measures_e2e_and_tokens_without_a_first_token() {
    let p = Project::new();
    for (api, stop, route) in [
        ("openai-chat", "stop", "/v1/chat/completions"),
        ("openai-completions", "stop", "/v1/completions"),
        ("anthropic-messages", "end_turn", "/v1/messages"),
        ("openai-responses", "stop", "/v1/responses"),
    ] {
        let name = format!("ns-{api}");
        let yaml = scenario(
            &name,
            api,
            "ttft: 60ms, tpot: 3ms, tpot_jitter: 0, output_tokens: 10",
            "  ladder: [1, 2]\n  requests_per_step: 3",
        );
        let (dir, stdout) = run(&p, &name, &yaml);
        let stats: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("sim_stats.json")).unwrap())
                .unwrap();
        assert_eq!(stats["requests"][route], 6, "{api}: {stats}");
        let (h, rows) = read_csv(&dir.join("requests.csv"));
        assert_eq!(rows.len(), 6, "{api}");
        for r in &rows {
            assert_eq!(r[col(&h, "status")], "ok", "{api}: {r:?}");
            for empty in ["ttft_ms", "ttfc_ms", "tpot_ms", "itl_hist"] {
                assert_eq!(r[col(&h, empty)], "", "{api}: {empty} {r:?}");
            }
            // The whole answer comes after the whole generation: 60 ms + 9 gaps of 3 ms.
            let e2e = num(r, &h, "e2e_ms");
            assert!((86.0..1000.0).contains(&e2e), "{api}: E2E {e2e}");
            assert_eq!(num(r, &h, "output_tokens"), 10.0, "{api}: {r:?}");
            assert!(num(r, &h, "input_tokens") > 0.0, "{api}: {r:?}");
            assert_eq!(r[col(&h, "tokens_source")], "usage", "{api}: {r:?}");
            assert_eq!(r[col(&h, "token_events")], "0", "{api}: {r:?}");
            assert_eq!(r[col(&h, "finish_reason")], stop, "{api}: {r:?}");
            // The simulator's Server-Timing came with the answer's headers.
            assert_eq!(r[col(&h, "server_timing_source")], "sim", "{api}: {r:?}");
        }
        let (h, steps) = read_csv(&dir.join("summary.csv"));
        assert_eq!(steps.len(), 2, "{api}");
        for s in &steps {
            assert_eq!(s[col(&h, "ttft_p50_ms")], "", "{api}: {s:?}");
            assert_eq!(s[col(&h, "tpot_p50_ms")], "", "{api}: {s:?}");
            assert!(num(s, &h, "e2e_p50_ms") >= 86.0, "{api}: {s:?}");
            assert_eq!(num(s, &h, "output_tokens"), 30.0, "{api}: {s:?}");
        }
        // The table says why TTFT, TPOT and ITL are empty.
        assert!(
            stdout.contains("TTFT, TPOT and ITL: – (not measured)")
                && stdout.contains("not streamed (request.stream: false)"),
            "{api}: {stdout}"
        );
    }
}

#[test]
fn the_knee_goes_by_e2e_when_nothing_streamed() {
    let p = Project::new();
    // Four slots: at 16 streams the rest wait, and a whole answer comes later.
    let yaml = scenario(
        "knee",
        "anthropic-messages",
        "ttft: 60ms, tpot: 3ms, tpot_jitter: 0, output_tokens: 10, concurrency_cap: 4",
        "  ladder: [1, 4, 16]\n  requests_per_step: 24",
    );
    let (_, stdout) = run(&p, "knee", &yaml);
    assert!(
        stdout.contains("E2E knee in (4, 16] streams")
            && stdout.contains("Not streamed: the knee goes by E2E"),
        "{stdout}"
    );
    // The markdown document: TTFT and TPOT read –, with the note.
    let f = p.scenario("knee", &yaml);
    let out = p
        .ladder()
        .args(["run", "--no-color", "--quiet", "--format", "markdown"])
        .arg(&f)
        .output()
        .unwrap();
    let md = String::from_utf8_lossy(&out.stdout);
    assert!(
        md.contains("| – | – |") && md.contains("TTFT, TPOT and ITL: – (not measured)"),
        "{md}"
    );
    assert!(md.contains("E2E knee"), "{md}");
    // diff says why TTFT is not judged, plan sizes from E2E alone.
    let dirs = p.run_dirs("knee");
    let out = p
        .ladder()
        .args(["diff", "--no-color"])
        .arg(&dirs[0])
        .arg(&dirs[1])
        .output()
        .unwrap();
    let diff = String::from_utf8_lossy(&out.stdout);
    assert!(
        diff.contains("measured on neither side (not streamed"),
        "{diff}"
    );
    let out = p
        .ladder()
        .args(["plan", "--rps", "20"])
        .arg(&dirs[1])
        .output()
        .unwrap();
    let plan = String::from_utf8_lossy(&out.stdout);
    assert!(plan.contains("mean E2E") && !plan.contains("; )"), "{plan}");
}

#[test]
fn limits_and_faults_answer_a_whole_request_as_data() {
    let p = Project::new();
    // 6 requests a minute: the rest are 429s.
    let yaml = scenario(
        "limited",
        "openai-chat",
        "ttft: 5ms, tpot: 1ms, output_tokens: 8, rpm: 6, seed: 3",
        "  ladder: [4]\n  requests_per_step: 12",
    );
    let (dir, _) = run(&p, "limited", &yaml);
    let (h, rows) = read_csv(&dir.join("requests.csv"));
    let limited = rows
        .iter()
        .filter(|r| r[col(&h, "error_class")] == "http_429")
        .count();
    assert!(limited >= 6, "{rows:?}");
    // Faults in a whole answer: an error body and a cut JSON body.
    for api in ["openai-chat", "anthropic-messages", "openai-responses"] {
        let name = format!("faults-{api}");
        let yaml = scenario(
            &name,
            api,
            "ttft: 5ms, tpot: 1ms, output_tokens: 8, seed: 5, \
             faults: {inband_error: 0.3, malformed: 0.2}",
            "  ladder: [4]\n  requests_per_step: 30",
        );
        let (dir, _) = run(&p, &name, &yaml);
        let (h, rows) = read_csv(&dir.join("requests.csv"));
        let by = |c: &str| {
            rows.iter()
                .filter(|r| r[col(&h, "error_class")] == c)
                .count()
        };
        let in_band = by("stream_error") + by("http_5xx");
        assert!(
            in_band > 0 && by("protocol") > 0 && by("") > 0,
            "{api}: {rows:?}"
        );
        assert_eq!(in_band + by("protocol") + by(""), 30, "{api}: {rows:?}");
        if api == "openai-responses" {
            // A failed response object (`status: failed`), classified by its code.
            assert_eq!(by("stream_error"), 0, "{rows:?}");
            for r in rows
                .iter()
                .filter(|r| r[col(&h, "error_class")] == "http_5xx")
            {
                assert_eq!(r[col(&h, "error_type")], "server_error", "{r:?}");
                assert_eq!(r[col(&h, "http_status")], "200", "{r:?}");
            }
        }
    }
}

#[test]
fn validate_refuses_a_ttft_bound_without_streaming() {
    let p = Project::new();
    let yaml = "name: bad\ntarget:\n  sim: {}\n  models: [sim-model]\nrequest:\n  \
                prompt_file: prompts/p.txt\n  stream: false\nslo:\n  e2e: 2s\n  ttft: 500ms\n\
                load:\n  ladder: [1]\n";
    let f = p.scenario("bad", yaml);
    let out = p.ladder().arg("validate").arg(&f).assert().code(2);
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(
        stderr.contains("bad.yaml:10: slo.ttft:") && stderr.contains("bound E2E instead"),
        "{stderr}"
    );
}
