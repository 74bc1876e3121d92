//! `load.mode: replay` as a user runs it against the simulator: every request goes out at its
//! trace time divided by the speed (checked per request from `requests.csv`: scheduled time =
//! start − send lag), with its own sizes; a Mooncake trace's shared `hash_ids` come back as
//! cached tokens from the simulator's prefix cache; the dry run estimates each step from the
//! trace; the findings say where the replay breaks.

use crate::support::{col, num, read_csv, Project};
use serde_json::Value;

/// 30 requests at irregular times over about 3 s, 64 prompt tokens and 4 output tokens each.
fn irregular_trace() -> (String, Vec<f64>) {
    let times: Vec<f64> = (0..30).map(|i| f64::from(i * 100 + (i % 3) * 37)).collect();
    let lines: Vec<String> = times
        .iter()
        .map(|t| format!("{{\"timestamp\": {t}, \"input_tokens\": 64, \"output_tokens\": 4}}"))
        .collect();
    (lines.join("\n") + "\n", times)
}

fn replay_scenario(name: &str, sim: &str, speed: &str) -> String {
    format!(
        "name: {name}\ntarget:\n  api: openai-chat\n  sim: {sim}\n  models: [sim-model]\n\
         request:\n  max_tokens: 32\nload:\n  mode: replay\n  trace: trace.jsonl\n  \
         speed: {speed}\nslo:\n  ttft: 2s\n"
    )
}

#[test]
fn replay_sends_each_request_at_its_trace_time_over_the_speed() {
    let p = Project::new();
    let (trace, times) = irregular_trace();
    std::fs::write(p.path().join("scenarios/trace.jsonl"), trace).unwrap();
    let f = p.scenario(
        "replay",
        &replay_scenario(
            "replay",
            "{ttft: 20ms, tpot: 2ms, output_tokens: 16, seed: 1}",
            "[1, 3]",
        ),
    );
    let dry = p
        .ladder()
        .args(["run", "--dry-run"])
        .arg(&f)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&dry.stdout);
    assert!(dry.status.success(), "{text}");
    assert!(
        text.contains("replay: ") && text.contains("30 requests over 3.0 s at 1×"),
        "{text}"
    );
    let out = p
        .ladder()
        .args(["--quiet", "run", "--format", "json"])
        .arg(&f)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let dir = &p.run_dirs("replay")[0];
    let (h, rows) = read_csv(&dir.join("summary.csv"));
    assert_eq!(rows.len(), 2);
    for (r, speed) in rows.iter().zip([1.0, 3.0]) {
        assert_eq!(r[col(&h, "ladder_unit")], "speed");
        assert_eq!(num(r, &h, "attempted"), 30.0);
        // The trace's own rate (29 gaps over 2.974 s) × the speed.
        let offered = num(r, &h, "offered_rps");
        let want = 29.0 / 2.974 * speed;
        assert!(
            (offered - want).abs() < 0.01,
            "offered {offered}, want {want}"
        );
    }
    let (rh, reqs) = read_csv(&dir.join("requests.csv"));
    let mut lags = Vec::new();
    for (step, speed) in [(1u32, 1.0), (2, 3.0)] {
        let mut mine: Vec<&Vec<String>> = reqs
            .iter()
            .filter(|r| r[col(&rh, "step")] == step.to_string())
            .collect();
        mine.sort_by_key(|r| r[col(&rh, "seq")].parse::<u32>().unwrap());
        assert_eq!(mine.len(), 30);
        let sched = |r: &Vec<String>| num(r, &rh, "started_at_ms") - num(r, &rh, "send_lag_ms");
        let t0 = sched(mine[0]);
        for (r, t) in mine.iter().zip(&times) {
            let want = t / speed;
            let got = sched(r) - t0;
            assert!(
                (got - want).abs() < 0.5,
                "step {step} seq {}: scheduled at {got:.3} ms, trace says {want:.3} ms",
                r[col(&rh, "seq")]
            );
            assert_eq!(num(r, &rh, "input_tokens"), 64.0, "the trace's prompt size");
            assert_eq!(num(r, &rh, "max_tokens"), 4.0, "the trace's output size");
            lags.push(num(r, &rh, "send_lag_ms"));
        }
    }
    lags.sort_by(f64::total_cmp);
    let p99 = lags[(lags.len() * 99).div_ceil(100) - 1];
    assert!(lags[0] >= 0.0);
    eprintln!(
        "replay send lag over 60 requests: P50 {:.2} ms, P99 {p99:.2} ms",
        lags[30]
    );
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let sentences = doc["findings"][0]["sentences"].to_string();
    assert!(
        sentences.contains("Holds up to 3× production") || sentences.contains("Breaks at"),
        "{sentences}"
    );
}

#[test]
fn mooncake_shared_hash_ids_are_served_from_the_simulators_prefix_cache() {
    let p = Project::new();
    // Five requests sharing their first two 512-token blocks, then one that shares nothing.
    let mut lines: Vec<String> = (0..5)
        .map(|i| {
            format!(
                "{{\"timestamp\": {}, \"input_length\": 1100, \"output_length\": 4, \"hash_ids\": [7, 8, {}]}}",
                i * 150,
                100 + i
            )
        })
        .collect();
    lines.push(
        "{\"timestamp\": 800, \"input_length\": 1100, \"output_length\": 4, \"hash_ids\": [9, 10, 11]}"
            .into(),
    );
    std::fs::write(p.path().join("scenarios/trace.jsonl"), lines.join("\n")).unwrap();
    let f = p.scenario(
        "mooncake",
        &replay_scenario(
            "mooncake",
            "{ttft: 20ms, tpot: 2ms, output_tokens: 16, prefix_cache: true, seed: 1}",
            "[1]",
        ),
    );
    p.ladder()
        .args(["--quiet", "run"])
        .arg(&f)
        .assert()
        .success();
    let dir = &p.run_dirs("mooncake")[0];
    let (rh, mut reqs) = read_csv(&dir.join("requests.csv"));
    reqs.sort_by_key(|r| r[col(&rh, "seq")].parse::<u32>().unwrap());
    // No usage detail (empty) when nothing was cached.
    let cached: Vec<f64> = reqs
        .iter()
        .map(|r| r[col(&rh, "cached_tokens")].parse().unwrap_or(0.0))
        .collect();
    assert_eq!(cached[0], 0.0, "first sight of blocks 7, 8: {cached:?}");
    for c in &cached[1..5] {
        assert!(
            *c >= 1024.0 && *c < 1100.0,
            "two shared blocks cached: {cached:?}"
        );
    }
    assert_eq!(
        cached[5], 0.0,
        "no shared first id, nothing cached: {cached:?}"
    );
    assert!(reqs.iter().all(|r| num(r, &rh, "input_tokens") == 1100.0));
}

/// The recorded LLM calls of the shipped agent trace: per session (by first start), each
/// call's (start, end) in ms from the first call.
fn recorded_sessions(text: &str) -> Vec<Vec<(f64, f64)>> {
    let doc: Value = serde_json::from_str(text).unwrap();
    let mut by_trace: std::collections::BTreeMap<String, Vec<(f64, f64)>> = Default::default();
    let spans = doc["resourceSpans"][0]["scopeSpans"][0]["spans"]
        .as_array()
        .unwrap();
    let ms = |v: &Value| v.as_str().unwrap().parse::<u64>().unwrap();
    let t0 = spans
        .iter()
        .map(|s| ms(&s["startTimeUnixNano"]))
        .min()
        .unwrap();
    for s in spans {
        let op = s["attributes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|a| a["key"] == "gen_ai.operation.name")
            .map(|a| a["value"]["stringValue"].clone());
        if op != Some(Value::from("chat")) {
            continue;
        }
        let at = |k: &str| (ms(&s[k]) - t0) as f64 / 1e6;
        by_trace
            .entry(s["traceId"].as_str().unwrap().to_string())
            .or_default()
            .push((at("startTimeUnixNano"), at("endTimeUnixNano")));
    }
    let mut sessions: Vec<Vec<(f64, f64)>> = by_trace.into_values().collect();
    for s in &mut sessions {
        s.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
    sessions.sort_by(|a, b| a[0].0.total_cmp(&b[0].0));
    sessions
}

#[test]
fn the_agent_trace_replays_sessions_whose_turns_wait_for_the_previous_answer() {
    let p = Project::new();
    let repo = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios");
    std::fs::create_dir_all(p.path().join("scenarios/traces")).unwrap();
    for f in ["agent-replay.yaml", "traces/agent-sessions.otlp.json"] {
        std::fs::copy(repo.join(f), p.path().join("scenarios").join(f)).unwrap();
    }
    let dry = p
        .ladder()
        .args(["run", "--dry-run", "scenarios/agent-replay.yaml"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&dry.stdout);
    assert!(dry.status.success(), "{text}");
    assert!(
        text.contains("otlp trace, 24 requests")
            && text.contains("sessions: 6 sessions of 3–5 turns (24 requests), 18 tool spans"),
        "{text}"
    );
    p.ladder()
        .args(["--quiet", "run", "scenarios/agent-replay.yaml"])
        .assert()
        .success();
    let sessions = recorded_sessions(
        &std::fs::read_to_string(repo.join("traces/agent-sessions.otlp.json")).unwrap(),
    );
    let dir = &p.run_dirs("agent-replay")[0];
    let (h, rows) = read_csv(&dir.join("requests.csv"));
    for (step, speed) in [("1", 1.0), ("2", 4.0)] {
        let mine: Vec<&Vec<String>> = rows.iter().filter(|r| r[col(&h, "step")] == step).collect();
        assert_eq!(mine.len(), 24, "step {step}");
        let first = mine
            .iter()
            .map(|r| num(r, &h, "started_at_ms"))
            .fold(f64::INFINITY, f64::min);
        for (w, recorded) in sessions.iter().enumerate() {
            let mut turns: Vec<&&Vec<String>> = mine
                .iter()
                .filter(|r| r[col(&h, "worker")] == w.to_string())
                .collect();
            turns.sort_by_key(|r| r[col(&h, "seq")].parse::<u32>().unwrap());
            let got: Vec<String> = turns.iter().map(|r| r[col(&h, "turn")].clone()).collect();
            let want: Vec<String> = (1..=recorded.len()).map(|t| t.to_string()).collect();
            assert_eq!(got, want, "step {step} session {w}");
            let of = recorded.len().to_string();
            assert!(turns.iter().all(|r| r[col(&h, "task_turns")] == of));
            // The session starts at its recorded start / the speed.
            let start = num(turns[0], &h, "started_at_ms") - first;
            let want = recorded[0].0 / speed;
            assert!(
                (start - want).abs() < 25.0,
                "session {w} at {start} ms, want {want}"
            );
            for k in 1..turns.len() {
                let ended =
                    num(turns[k - 1], &h, "started_at_ms") + num(turns[k - 1], &h, "e2e_ms");
                let after = num(turns[k], &h, "started_at_ms") - ended;
                let gap = (recorded[k].0 - recorded[k - 1].1) / speed;
                assert!(
                    after >= gap - 2.0 && after < gap + 25.0,
                    "step {step} session {w} turn {}: {after:.1} ms after the previous answer, recorded gap / speed {gap:.1}",
                    k + 1
                );
            }
        }
    }
    let (h, rows) = read_csv(&dir.join("summary.csv"));
    for r in &rows {
        assert_eq!(r[col(&h, "tasks")], "6", "sessions as tasks: {r:?}");
        assert!(r[col(&h, "cache_hit_by_turn")].starts_with("1:0"), "{r:?}");
    }
}
