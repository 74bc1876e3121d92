//! Agents (`load.agent`, issue 38) through the real binary against the embedded simulator with a
//! prefix cache: `scenarios/agents.yaml` as shipped. Each agent's turns come in order (1 to 4,
//! then a new task) in `requests.csv`; the step's conversations (the cache hit share overall and
//! by turn, TTFT of first and later turns, complete tasks) are in `summary.csv` and in the
//! terminal table, whose steps count agents.

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
fn the_agents_scenario_records_turns_and_shows_the_cache_hit_share_by_turn() {
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
    let dir = &p.run_dirs("agents")[0];
    let (h, rows) = read_csv(&dir.join("requests.csv"));
    let cell = |r: &Vec<String>, name: &str| r[col(&h, name)].clone();
    // Every agent: turns 1, 2, 3, 4, three times (12 requests per agent and step).
    for step in ["1", "2", "3"] {
        let mine: Vec<&Vec<String>> = rows
            .iter()
            .filter(|r| cell(r, "step") == step && cell(r, "worker") == "0")
            .collect();
        let turns: Vec<String> = mine.iter().map(|r| cell(r, "turn")).collect();
        assert_eq!(turns, ["1", "2", "3", "4"].repeat(3), "step {step}");
        assert!(mine.iter().all(|r| cell(r, "task_turns") == "4"));
    }
    let (h, rows) = read_csv(&dir.join("summary.csv"));
    assert_eq!(rows.len(), 3);
    for (r, agents) in rows.iter().zip([2u32, 4, 8]) {
        assert_eq!(r[col(&h, "ladder_unit")], "agents");
        assert_eq!(r[col(&h, "concurrency")], agents.to_string());
        assert_eq!(r[col(&h, "tasks")], (3 * agents).to_string(), "{r:?}");
        let by_turn: Vec<(u32, f64)> = r[col(&h, "cache_hit_by_turn")]
            .split(' ')
            .map(|c| {
                let (t, s) = c.split_once(':').unwrap();
                (t.parse().unwrap(), s.parse().unwrap())
            })
            .collect();
        assert_eq!(
            by_turn.iter().map(|t| t.0).collect::<Vec<_>>(),
            [1, 2, 3, 4]
        );
        // Later turns hit everything but the new answer and tool result (~80%).
        assert!(
            by_turn[1..].iter().all(|t| (0.6..0.95).contains(&t.1)),
            "{by_turn:?}"
        );
        if agents >= 4 {
            // First turns hit the shared system prompt once an agent has sent it.
            assert!(by_turn[0].1 > 0.9, "{by_turn:?}");
        }
        for c in ["ttft_first_p50_ms", "ttft_later_p90_ms", "task_e2e_p50_ms"] {
            assert!(!r[col(&h, c)].is_empty(), "{c}: {r:?}");
        }
        // A task: four turns and three 100 ms tool runs.
        let task: f64 = r[col(&h, "task_e2e_p50_ms")].parse().unwrap();
        assert!(task > 4.0 * 60.0 + 300.0, "task E2E {task} ms");
    }
}
