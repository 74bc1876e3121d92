//! Agents (`load.agent`, issue 38) through the real binary against the embedded simulator with a
//! prefix cache: `scenarios/agents.yaml` as shipped. Each agent's turns come in order (1 to 6,
//! then a new task) in `requests.csv`; the step's conversations (the cache hit share overall and
//! by turn, TTFT of first and later turns, complete tasks) are in `summary.csv` and in the
//! terminal table, whose steps count agents. The simulator's cache holds 24,000 tokens: from 8
//! agents on their histories evict each other and the knee is called cache misses; with room for
//! every agent there is no knee.

use crate::support::{col, read_csv, Project};
use std::path::Path;

/// A project holding the shipped `scenarios/agents.yaml` and its system prompt.
fn project() -> Project {
    let p = Project::new();
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios");
    for f in ["agents.yaml", "prompts/agent-system.txt"] {
        std::fs::copy(repo.join(f), p.path().join("scenarios").join(f)).unwrap();
    }
    p
}

#[test]
fn agents_that_outgrow_the_prefix_cache_make_a_knee_called_cache_misses() {
    let p = project();
    let out = p
        .ladder()
        .args(["run", "--no-color", "scenarios/agents.yaml"])
        .assert()
        .success();
    let stdout = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    assert!(stdout.contains("│ agents │"), "{stdout}");
    assert!(stdout.contains("conversations:"), "{stdout}");
    assert!(stdout.contains("cache hit by turn"), "{stdout}");
    assert!(
        stdout.contains("TTFT knee in (4, 8] agents: prefill of cache misses: cache hit share"),
        "{stdout}"
    );
    assert!(stdout.contains("server queue flat"), "{stdout}");
    let dir = &p.run_dirs("agents")[0];
    let (h, rows) = read_csv(&dir.join("requests.csv"));
    let cell = |r: &Vec<String>, name: &str| r[col(&h, name)].clone();
    // Every agent: turns 1 to 6, twice (12 requests per agent and step).
    for step in ["1", "2", "3", "4"] {
        let mine: Vec<&Vec<String>> = rows
            .iter()
            .filter(|r| cell(r, "step") == step && cell(r, "worker") == "0")
            .collect();
        let turns: Vec<String> = mine.iter().map(|r| cell(r, "turn")).collect();
        assert_eq!(
            turns,
            ["1", "2", "3", "4", "5", "6"].repeat(2),
            "step {step}"
        );
        assert!(mine.iter().all(|r| cell(r, "task_turns") == "6"));
    }
    let shares = by_turn(&dir.join("summary.csv"), &[2, 4, 8, 16]);
    // Room for every agent at 4: first turns hit the shared system prompt, later turns all but
    // their new answer and tool result; at 16 the last turns' histories were evicted.
    assert!(shares[1][0] > 0.9, "{shares:?}");
    assert!(
        shares[1][1..].iter().all(|s| (0.6..0.95).contains(s)),
        "{shares:?}"
    );
    assert!(shares[3][5] < 0.5, "{shares:?}");
}

#[test]
fn agents_with_room_in_the_prefix_cache_have_no_knee() {
    let p = project();
    let out = p
        .ladder()
        .args(["run", "--no-color", "scenarios/agents.yaml"])
        .args(["--sim-set", "prefix_cache_tokens=1000000"])
        .assert()
        .success();
    let stdout = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    assert!(stdout.contains("No TTFT knee up to 16 agents."), "{stdout}");
    let shares = by_turn(&p.run_dirs("agents")[0].join("summary.csv"), &[2, 4, 8, 16]);
    assert!(shares[3][5] > 0.8, "{shares:?}");
}

/// Each step's cache hit share by turn (`summary.csv`), checking the steps' agents, their
/// complete tasks (two per agent) and the conversation columns on the way.
fn by_turn(summary: &Path, agents: &[u32]) -> Vec<Vec<f64>> {
    let (h, rows) = read_csv(summary);
    assert_eq!(rows.len(), agents.len());
    rows.iter()
        .zip(agents)
        .map(|(r, agents)| {
            assert_eq!(r[col(&h, "ladder_unit")], "agents");
            assert_eq!(r[col(&h, "concurrency")], agents.to_string());
            assert_eq!(r[col(&h, "tasks")], (2 * agents).to_string(), "{r:?}");
            for c in ["ttft_first_p50_ms", "ttft_later_p90_ms", "task_e2e_p50_ms"] {
                assert!(!r[col(&h, c)].is_empty(), "{c}: {r:?}");
            }
            // A task: six turns and five 100 ms tool runs.
            let task: f64 = r[col(&h, "task_e2e_p50_ms")].parse().unwrap();
            assert!(task > 6.0 * 60.0 + 500.0, "task E2E {task} ms");
            let turns: Vec<(u32, f64)> = r[col(&h, "cache_hit_by_turn")]
                .split(' ')
                .map(|c| {
                    let (t, s) = c.split_once(':').unwrap();
                    (t.parse().unwrap(), s.parse().unwrap())
                })
                .collect();
            assert_eq!(
                turns.iter().map(|t| t.0).collect::<Vec<_>>(),
                [1, 2, 3, 4, 5, 6]
            );
            turns.into_iter().map(|t| t.1).collect()
        })
        .collect()
}

/// `diff` (through `run --against`) judges the cache hit share: a simulator that stops caching
/// prefixes fails on it at every step (exit 3), and the TTFT decomposition names the prefill of
/// cache misses; the same workload run again passes.
#[test]
fn a_server_that_stops_caching_prefixes_fails_the_gate_and_a_rerun_passes() {
    let p = project();
    let run = |extra: &[&str]| {
        let out = p
            .ladder()
            .args([
                "run",
                "--no-color",
                "scenarios/agents.yaml",
                "--ladder",
                "4,8",
            ])
            .args(extra)
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        (out.status.code(), text)
    };
    let (code, _) = run(&["--save-baseline"]);
    assert_eq!(code, Some(0));
    let against = ["--against", "baselines/agents.csv"];
    let (code, same) = run(&against);
    assert_eq!(code, Some(0), "an unchanged rerun passes:\n{same}");
    assert!(same.contains("0 regressions"), "{same}");
    let off = [&against[..], &["--sim-set", "prefix_cache=false"]].concat();
    let (code, stdout) = run(&off);
    assert_eq!(code, Some(3), "{stdout}");
    let row = stdout
        .lines()
        .find(|l| l.contains("│ cache hit share"))
        .unwrap_or_else(|| panic!("no cache hit share row:\n{stdout}"));
    assert_eq!(
        row.matches("✗").count(),
        2,
        "regressed at 4 and 8 agents: {row}"
    );
    let cause = stdout
        .lines()
        .find(|l| l.contains("TTFT P90 at 4 agents:"))
        .unwrap_or_else(|| panic!("no TTFT decomposition at 4 agents:\n{stdout}"));
    assert!(
        cause.contains(": prefill (cache misses): cache hit share 8") && cause.ends_with("% → 0%"),
        "{cause}"
    );
    // Without the cache every step is slow and the baseline's knee of cache misses is gone:
    // not an improvement, since TTFT rose below it too.
    assert!(stdout.contains("0 improvements"), "{stdout}");
    // The decode rate is judged though agents in step leave blocks without decoding.
    assert!(
        !stdout.contains("decode rate: the steady windows hold no usable"),
        "{stdout}"
    );
}

/// `ladder plan --agents` (and `--tasks-per-hour`) on a run of agents: its figures are those of
/// the step it names in `summary.csv` (mean task time, turns and tokens per task, the cache hit
/// share, mean E2E), put through Little's law; a run without tasks is refused (exit 2).
#[test]
fn plan_sizes_agents_from_the_runs_summary() {
    let p = project();
    p.ladder()
        .args(["run", "--quiet", "scenarios/agents.yaml", "--ladder", "2,4"])
        .assert()
        .success();
    let dir = p.run_dirs("agents")[0].clone();
    let json = |extra: &[&str]| -> serde_json::Value {
        let out = p
            .ladder()
            .arg("plan")
            .arg(&dir)
            .args(extra)
            .args(["--limit-tpm", "1000000", "--format", "json"])
            .assert()
            .success();
        serde_json::from_slice(&out.get_output().stdout).unwrap()
    };
    let plan = json(&["--agents", "3"]);
    let m = &plan["models"][0];
    assert_eq!(m["basis"], "measured", "{m}");
    let step = &m["step"];
    assert_eq!(step["agents"], 4, "the lowest step with 3 agents or more");
    // The step's row of summary.csv.
    let (h, rows) = read_csv(&dir.join("summary.csv"));
    let row = rows
        .iter()
        .find(|r| r[col(&h, "concurrency")] == "4")
        .unwrap();
    let f = |c: &str| -> f64 { row[col(&h, c)].parse().unwrap() };
    let close = |a: f64, b: f64| (a - b).abs() <= 1e-6 * b.abs().max(1.0);
    let (task_ms, turns, tokens) = (
        f("task_e2e_mean_ms"),
        f("task_turns_mean"),
        f("task_tokens_mean"),
    );
    assert!(close(step["task_ms"].as_f64().unwrap(), task_ms), "{step}");
    assert_eq!(turns, 6.0);
    assert!(
        task_ms > 6.0 * 60.0 + 500.0,
        "six turns and five tool runs: {task_ms}"
    );
    let (input, cached, output) = (f("input_tokens"), f("cached_tokens"), f("output_tokens"));
    let per_hour = 3_600_000.0 / task_ms;
    let n = &m["needs"];
    let got = |k: &str| n[k].as_f64().unwrap();
    assert!(close(got("tasks_per_hour"), 3.0 * per_hour), "{n}");
    assert!(close(got("rpm"), 3.0 * per_hour / 60.0 * turns), "{n}");
    let tpm = 3.0 * per_hour / 60.0 * tokens;
    let input_share = input / (input + output);
    assert!(close(got("total_tpm"), tpm), "{n}");
    assert!(
        close(got("cached_input_tpm"), tpm * input_share * cached / input),
        "{n}"
    );
    assert!(
        close(
            got("uncached_input_tpm"),
            tpm * input_share * (1.0 - cached / input)
        ),
        "{n}"
    );
    assert!(close(got("output_tpm"), tpm * (1.0 - input_share)), "{n}");
    assert!(
        close(got("tpm_counted"), tpm),
        "cached input counts by default"
    );
    assert!(
        close(
            got("in_flight"),
            3.0 * turns / (task_ms / 1000.0) * f("e2e_mean_ms") / 1000.0
        ),
        "{n}"
    );
    // The shares are the run's: most input was read from the cache.
    assert!(cached / input > 0.6, "{cached} of {input}");
    let tpm_check = &m["limits"][0];
    assert_eq!(tpm_check["limit"], "tpm");
    assert!(close(
        tpm_check["max_agents"].as_f64().unwrap(),
        1_000_000.0 / (per_hour / 60.0 * tokens)
    ));
    // Leaving the cache reads out of the TPM limit.
    let without = json(&["--agents", "3", "--tpm-excludes-cached"]);
    let counted = without["models"][0]["needs"]["tpm_counted"]
        .as_f64()
        .unwrap();
    assert!(close(counted, tpm * (1.0 - input_share * cached / input)));
    // Tasks per hour: the agents that take, at the step's task time.
    let plan = json(&["--tasks-per-hour", "2000"]);
    let needs = &plan["models"][0]["needs"];
    let at = plan["models"][0]["step"]["task_ms"].as_f64().unwrap();
    assert_eq!(
        needs["agents"].as_u64().unwrap(),
        (2000.0 * at / 3_600_000.0).ceil() as u64,
        "{needs}"
    );
    // In words.
    let out = p
        .ladder()
        .arg("plan")
        .arg(&dir)
        .args(["--agents", "40"])
        .assert()
        .success();
    let text = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    for needle in [
        "plan for 40 agents (no SLO",
        "sim-model: EXTRAPOLATED from 4 agents",
        "cached input TPM",
        "requests in flight",
    ] {
        assert!(text.contains(needle), "{needle:?} in\n{text}");
    }
    // A run of plain requests has no tasks to size agents from.
    let baseline = Path::new(env!("CARGO_MANIFEST_DIR")).join("baselines/demo.csv");
    let out = p
        .ladder()
        .arg("plan")
        .arg(&baseline)
        .args(["--agents", "3"])
        .assert()
        .code(2);
    let err = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(err.contains("no complete agent tasks"), "{err}");
}

/// Issue 38, part 2: with tools declared and a simulator that calls them
/// (`tool_call_share: 1`), an agent's next turn sends the model's own call back, streamed or
/// not, in every dialect: the record says `model`, and the simulator's truth shows the next
/// request answering the very call id the previous answer made (a result that answers no call is
/// refused with 400, so every turn succeeding shows the history valid). A simulator that never
/// calls (`tool_call_share: 0`) gets synthetic calls of the first tool, recorded `synthetic`,
/// and still answered by id. A task's last turn says nothing.
#[test]
fn an_agents_next_turn_sends_the_models_own_call_or_a_synthetic_one() {
    let p = Project::new();
    std::fs::write(
        p.path().join("scenarios/tools.json"),
        r#"[{"type": "function", "function": {"name": "run_tests", "description": "Runs the tests",
             "parameters": {"type": "object", "properties": {"q": {"type": "string"}}}}}]"#,
    )
    .unwrap();
    for api in ["openai-chat", "anthropic-messages", "openai-responses"] {
        for (share, stream, sent) in [
            (1, true, "model"),
            (1, false, "model"),
            (0, true, "synthetic"),
        ] {
            let name = format!("agent-{api}-{share}-{stream}");
            let yaml = format!(
                "name: {name}\ntarget:\n  api: {api}\n  sim: {{ttft: 5ms, tpot: 1ms, output_tokens: 6, \
                 tool_call_share: {share}, prefix_cache: true}}\n  models: [sim-model]\n\
                 request:\n  prompt_file: prompts/p.txt\n  tools: tools.json\n  max_tokens: 16\n  \
                 stream: {stream}\n  cache: auto\nload:\n  ladder: [2]\n  requests_per_worker: 3\n  \
                 agent: {{turns: 3, tool_result_tokens: 30, tool_latency: 0s}}\n"
            )
            .replace("  cache: auto\n", if api == "anthropic-messages" { "  cache: auto\n" } else { "" });
            let f = p.scenario(&name, &yaml);
            p.ladder()
                .args(["run", "--quiet"])
                .arg(&f)
                .assert()
                .success();
            let dir = &p.run_dirs(&name)[0];
            let text = std::fs::read_to_string(dir.join("sim_truth.json")).unwrap();
            let truth: Vec<ladder::sim::TruthRecord> = serde_json::from_str(&text).unwrap();
            let truth: std::collections::HashMap<&str, &ladder::sim::TruthRecord> =
                truth.iter().map(|t| (t.request_id.as_str(), t)).collect();
            let (h, mut rows) = read_csv(&dir.join("requests.csv"));
            assert_eq!(rows.len(), 6, "{name}");
            let cell = |r: &Vec<String>, c: &str| r[col(&h, c)].clone();
            rows.sort_by_key(|r| (cell(r, "worker"), cell(r, "seq").parse::<u32>().unwrap()));
            for pair in rows.windows(2) {
                let (before, after) = (&pair[0], &pair[1]);
                assert_eq!(cell(before, "status"), "ok", "{name}: {before:?}");
                if cell(before, "worker") != cell(after, "worker") {
                    continue;
                }
                let turn = cell(before, "turn");
                let want = if turn == "3" { "" } else { sent };
                assert_eq!(cell(before, "tool_call_sent"), want, "{name}: {before:?}");
                if turn == "3" {
                    continue;
                }
                let (t0, t1) = (
                    truth[cell(before, "request_id").as_str()],
                    truth[cell(after, "request_id").as_str()],
                );
                let answered = t1
                    .answers
                    .last()
                    .unwrap_or_else(|| panic!("{name}: {t1:?}"));
                match &t0.tool_call {
                    // The model's call, answered by its own id.
                    Some(id) => {
                        assert_eq!(sent, "model", "{name}");
                        assert_eq!(answered, id, "{name}");
                    }
                    None => {
                        assert_eq!(sent, "synthetic", "{name}");
                        let prefix = if api == "anthropic-messages" {
                            "toolu_"
                        } else {
                            "call_"
                        };
                        assert!(answered.starts_with(prefix), "{name}: {answered}");
                    }
                }
            }
        }
    }
}

/// A task that the step's budget cuts short sent nothing back after its last request: with
/// 4-turn tasks and 10 requests a worker, each worker's last record is turn 2 of its third task
/// and says nothing in `tool_call_sent` (only a turn that a next turn followed says `model` or
/// `synthetic`), so `synthetic_call_share` counts only calls that were sent.
#[test]
fn a_task_cut_by_the_steps_budget_sent_no_call_back() {
    let p = Project::new();
    std::fs::write(
        p.path().join("scenarios/tools.json"),
        r#"[{"type": "function", "function": {"name": "run_tests", "parameters": {"type": "object"}}}]"#,
    )
    .unwrap();
    let yaml = "name: agent-cut\ntarget:\n  sim: {ttft: 2ms, tpot: 1ms, output_tokens: 4, tool_call_share: 0}\n  \
        models: [sim-model]\nrequest:\n  prompt_file: prompts/p.txt\n  tools: tools.json\n  max_tokens: 8\n\
        load:\n  ladder: [2]\n  requests_per_worker: 10\n  \
        agent: {turns: 4, tool_result_tokens: 10, tool_latency: 0s}\n";
    let f = p.scenario("agent-cut", yaml);
    p.ladder()
        .args(["run", "--quiet"])
        .arg(&f)
        .assert()
        .success();
    let dir = &p.run_dirs("agent-cut")[0];
    let (h, mut rows) = read_csv(&dir.join("requests.csv"));
    assert_eq!(rows.len(), 20);
    let cell = |r: &Vec<String>, c: &str| r[col(&h, c)].clone();
    rows.sort_by_key(|r| (cell(r, "worker"), cell(r, "seq").parse::<u32>().unwrap()));
    for r in &rows {
        let (seq, turn) = (cell(r, "seq"), cell(r, "turn"));
        let want = if seq == "9" || turn == "4" {
            ""
        } else {
            "synthetic"
        };
        assert_eq!(
            cell(r, "tool_call_sent"),
            want,
            "seq {seq} turn {turn}: {r:?}"
        );
        if seq == "9" {
            assert_eq!(turn, "2", "the third task is cut at its second turn");
        }
    }
    let (sh, srows) = read_csv(&dir.join("summary.csv"));
    assert_eq!(
        srows[0][col(&sh, "synthetic_call_share")]
            .parse::<f64>()
            .unwrap(),
        1.0
    );
}
