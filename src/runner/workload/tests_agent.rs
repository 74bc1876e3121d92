//! Agents (`load.agent`) against a backend that keeps every body it is sent, on a paused clock:
//! each worker's turns come in order and restart with a new task, the next turn waits for the
//! tool's latency and the think time, the conversation grows by the answer, the tool call and
//! the tool result, and the system prompt (the shared prefix) is byte-identical on every request
//! of every agent.

use super::tests::workload_of;
use super::{Conversation, Settled};
use crate::client::chunk::ChunkInfo;
use crate::client::http::Attempt;
use crate::client::timing::StreamTiming;
use crate::client::Backend;
use crate::model::RequestRecord;
use crate::model::StepRun;
use crate::runner::{run_scheduled, Interrupt, NoProgress, Progress, RunSink, Schedule};
use crate::scenario::RequestSpec;
use crate::scenario::Scenario;
use bytes::Bytes;
use serde_json::{json, Value};
use std::sync::Arc;
use std::sync::Mutex;
use std::time::Duration;
use tokio::time::Instant;

/// Answers every request after 50 ms with 10 tokens 5 ms apart, keeping each body.
#[derive(Default)]
struct Keeper {
    bodies: Mutex<Vec<Value>>,
}

impl Backend for Keeper {
    fn body_for(&self, _: &str, r: &RequestSpec) -> Bytes {
        Bytes::from(
            json!({"system": r.system, "messages": r.messages, "prompt": r.prompt}).to_string(),
        )
    }
    async fn send(&self, body: Bytes, _: &str) -> Attempt {
        self.bodies
            .lock()
            .unwrap()
            .push(serde_json::from_slice(&body).unwrap());
        let sent = Instant::now();
        let ms = |t: Instant| t.duration_since(sent).as_secs_f64() * 1000.0;
        tokio::time::sleep(Duration::from_millis(50)).await;
        let mut timing = StreamTiming::new();
        let token = ChunkInfo {
            content: true,
            ..ChunkInfo::default()
        };
        for i in 0..10 {
            if i > 0 {
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
            timing.on_chunk(ms(Instant::now()), &token);
        }
        let end = ms(Instant::now());
        let last = ChunkInfo {
            output_tokens: Some(10),
            input_tokens: Some(100),
            done: true,
            ..ChunkInfo::default()
        };
        timing.on_chunk(end, &last);
        Attempt {
            sent_at: Some(sent),
            timing: Some(timing.finish(end)),
            elapsed_ms: end,
            ..Attempt::default()
        }
    }
}

#[derive(Default)]
struct Keep(Vec<RequestRecord>);

impl RunSink for Keep {
    fn record(&mut self, record: RequestRecord) {
        self.0.push(record);
    }
    fn step_finished(&mut self, _: StepRun) {}
}

fn agent_scenario(dir: &std::path::Path) -> Scenario {
    std::fs::write(dir.join("p.txt"), "fix the failing test").unwrap();
    std::fs::write(dir.join("sys.txt"), "You are a coding agent. ".repeat(20)).unwrap();
    let yaml = "name: agents\ntarget:\n  sim: {}\n  api: openai-chat\n  models: [m]\n\
        request:\n  prompt_file: p.txt\n  system_file: sys.txt\n  max_tokens: 40\n\
        load:\n  ladder: [2]\n  requests_per_step: 12\n  \
        agent: {turns: 3, tool_result_tokens: 50, tool_latency: 300ms, think_time: 100ms}\n";
    crate::scenario::load_str(yaml, &dir.join("s.yaml"), &|_| None).unwrap()
}

#[tokio::test(start_paused = true)]
async fn agents_take_turns_wait_for_their_tools_and_grow_one_conversation_per_task() {
    let dir = tempfile::tempdir().unwrap();
    let s = agent_scenario(dir.path());
    assert_eq!(s.load.ladder_unit(), crate::model::LadderUnit::Agents);
    let backend = Arc::new(Keeper::default());
    let mut sink = Keep::default();
    let progress: Arc<dyn Progress> = Arc::new(NoProgress);
    let schedule = Schedule::pretend_time();
    run_scheduled(
        &s,
        Arc::clone(&backend),
        progress,
        Interrupt::new(),
        &mut sink,
        schedule,
    )
    .await;
    let mut records = sink.0;
    records.sort_by_key(|r| (r.worker, r.seq));
    assert_eq!(records.len(), 12);
    for w in 0..2 {
        let mine: Vec<&RequestRecord> = records.iter().filter(|r| r.worker == w).collect();
        // Turn order: 1, 2, 3, then the next task from 1.
        let turns: Vec<u32> = mine.iter().map(|r| r.turn.unwrap()).collect();
        assert_eq!(turns, [1, 2, 3, 1, 2, 3], "worker {w}");
        // The model made no call: a synthetic one followed every turn but a task's last.
        let sent: Vec<_> = mine.iter().map(|r| r.tool_call_sent).collect();
        let synthetic = Some(crate::model::ToolCallSent::Synthetic);
        assert_eq!(sent, [synthetic, synthetic, None].repeat(2), "worker {w}");
        assert!(mine.iter().all(|r| r.task_turns == Some(3)));
        for pair in mine.windows(2) {
            let ended = pair[0].started_at_ms + pair[0].e2e_ms.unwrap();
            let gap = pair[1].started_at_ms - ended;
            // Within a task: the tool's 300 ms and 100 ms of thinking; between tasks: thinking.
            let want = if pair[1].turn == Some(1) {
                100.0
            } else {
                400.0
            };
            assert!(
                (gap - want).abs() < 1.0,
                "worker {w}: gap {gap} ms, want {want}"
            );
        }
    }
    let bodies = backend.bodies.lock().unwrap();
    assert_eq!(bodies.len(), 12);
    // The shared prefix: the same system text on every request of every agent.
    let system = &bodies[0]["system"];
    assert!(system
        .as_str()
        .unwrap()
        .starts_with("You are a coding agent."));
    assert!(bodies.iter().all(|b| &b["system"] == system));
    // History growth: each turn's messages extend the previous turn's of the same task by the
    // answer (with its tool call) and the tool result; a first turn is the task alone, its text
    // unique.
    let messages = |b: &Value| b["messages"].as_array().unwrap().clone();
    let firsts: Vec<&Value> = bodies.iter().filter(|b| messages(b).len() == 1).collect();
    assert_eq!(firsts.len(), 4, "two tasks per agent");
    let texts: std::collections::HashSet<String> = firsts
        .iter()
        .map(|b| b["messages"][0]["content"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(texts.len(), 4, "every task's text is its own");
    assert!(texts.iter().all(|t| t.ends_with("fix the failing test")));
    for b in bodies.iter() {
        let m = messages(b);
        if m.len() == 1 {
            continue;
        }
        assert!(m.len() == 3 || m.len() == 5, "{m:?}");
        let before: Vec<Value> = m[..m.len() - 2].to_vec();
        assert!(
            bodies.iter().any(|o| messages(o) == before),
            "a later turn extends an earlier request"
        );
        let (answer, result) = (&m[m.len() - 2], &m[m.len() - 1]);
        assert_eq!(answer["role"], "assistant");
        assert!(answer["content"].as_str().unwrap().contains("<tool_call>"));
        assert_eq!(result["role"], "user");
        let result = result["content"].as_str().unwrap();
        assert!(result.starts_with("<tool_result"));
        // About 50 tokens of tool result (four characters a token).
        let chars = result.chars().count();
        assert!((180..=320).contains(&chars), "{chars} characters");
    }
}

/// With tools declared, an agent's next turn sends the model's own calls back (a stand-in for
/// the rest of its answer beside them), each answered by a tool result; after an answer without
/// a call, a synthetic call of the first tool with an id in the dialect's shape. The record
/// says which, and nothing after a task's last turn.
#[test]
fn the_next_turn_sends_the_models_calls_or_a_synthetic_one_and_the_record_says_which() {
    use crate::model::{ToolCall, ToolCallSent};
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("p.txt"), "find order 7").unwrap();
    std::fs::write(
        dir.path().join("tools.json"),
        r#"[{"type": "function", "function": {"name": "get_order", "parameters": {"type": "object"}}}]"#,
    )
    .unwrap();
    let yaml = "name: a\ntarget:\n  sim: {}\n  api: anthropic-messages\n  models: [m]\n\
        request:\n  prompt_file: p.txt\n  tools: tools.json\n  max_tokens: 40\n\
        load:\n  ladder: [1]\n  requests_per_step: 3\n  \
        agent: {turns: 3, tool_result_tokens: 20, tool_latency: 0s}\n";
    let s = crate::scenario::load_str(yaml, &dir.path().join("s.yaml"), &|_| None).unwrap();
    let backend = Arc::new(Keeper::default());
    let mut session = workload_of(&backend, &s).worker(0);
    let body = |session: &mut Box<dyn Conversation>| -> Vec<Value> {
        let b = session.next(0).body;
        let v: Value = serde_json::from_slice(&b).unwrap();
        v["messages"].as_array().unwrap().clone()
    };
    assert_eq!(body(&mut session).len(), 1);
    let mut answered = RequestRecord {
        output_tokens: Some(12),
        tool_call_tokens: Some(8),
        calls: vec![ToolCall {
            id: "toolu_01model".into(),
            name: "get_order".into(),
            arguments: r#"{"n": 7}"#.into(),
        }],
        ..Default::default()
    };
    let settled = session.answered(&mut answered);
    assert!(matches!(settled, Settled::OnNextTurn { .. }), "held");
    assert_eq!(answered.tool_call_sent, Some(ToolCallSent::Model));
    assert!(answered.calls.is_empty(), "the calls went to the history");
    let m = body(&mut session);
    assert_eq!(m.len(), 3);
    assert_eq!(m[1]["role"], "assistant");
    assert_eq!(m[1]["content"], crate::scenario::synthetic_prompt(4));
    assert_eq!(
        m[1]["tool_calls"],
        json!([{"id": "toolu_01model", "type": "function",
                "function": {"name": "get_order", "arguments": "{\"n\": 7}"}}])
    );
    assert_eq!(m[2]["role"], "tool");
    assert_eq!(m[2]["tool_call_id"], "toolu_01model");
    let mut text_only = RequestRecord {
        output_tokens: Some(5),
        ..Default::default()
    };
    session.answered(&mut text_only);
    assert_eq!(text_only.tool_call_sent, Some(ToolCallSent::Synthetic));
    let m = body(&mut session);
    assert_eq!(m.len(), 5);
    assert_eq!(m[3]["content"], crate::scenario::synthetic_prompt(5));
    let call = &m[3]["tool_calls"][0];
    let id = call["id"].as_str().unwrap();
    assert!(id.starts_with("toolu_"), "{id}");
    assert_eq!(
        call["function"],
        json!({"name": "get_order", "arguments": "{}"})
    );
    assert_eq!(m[4]["tool_call_id"], id);
    let mut last = RequestRecord {
        output_tokens: Some(5),
        ..Default::default()
    };
    assert!(matches!(session.answered(&mut last), Settled::Now));
    assert_eq!(last.tool_call_sent, None);
    assert_eq!(body(&mut session).len(), 1, "a new task");
}

#[test]
fn agents_draw_their_tasks_from_ranges_seeded_per_worker() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("p.txt"), "t").unwrap();
    let yaml = "name: a\ntarget:\n  sim: {}\n  models: [m]\nrequest:\n  prompt_file: p.txt\n\
        load:\n  ladder: [1]\n  requests_per_step: 10\n  \
        agent: {turns: {min: 2, max: 5}, tool_latency: {min: 100ms, max: 200ms}}\n";
    let s = crate::scenario::load_str(yaml, &dir.path().join("s.yaml"), &|_| None).unwrap();
    let agent = s.load.agent.unwrap();
    assert_eq!(agent.turns.min, 2);
    assert_eq!(agent.turns.max, 5);
    assert_eq!(agent.tool_latency.max, Duration::from_millis(200));
    let backend = Arc::new(Keeper::default());
    let work = workload_of(&backend, &s);
    let draws = |w| {
        let mut session = Arc::clone(&work).worker(w);
        let mut turns = Vec::new();
        session.wait();
        for _ in 0..8 {
            let mut ok = RequestRecord {
                output_tokens: Some(3),
                ..Default::default()
            };
            let (turn, of) = session.next(0).turn.unwrap();
            turns.push((turn, of));
            session.answered(&mut ok);
            let wait = session.wait().unwrap();
            if turn < of {
                assert!((100..=200).contains(&wait.as_millis()), "{wait:?}");
            }
        }
        turns
    };
    assert_eq!(draws(0), draws(0), "seeded: a rerun draws the same tasks");
    assert!(draws(0).iter().all(|&(_, of)| (2..=5).contains(&of)));
}

/// An agent trace (OTLP GenAI spans) at 2×: session a's calls at 0–400, 1000–1500 and
/// 2000–2100 ms, session b's at 300–700 and 900–1000 ms, a tool span between.
fn agent_trace_scenario(dir: &std::path::Path) -> Scenario {
    let span = |t: &str, id: &str, op: &str, from: u64, to: u64, input: u64| {
        let ns = |ms: u64| (1_772_373_600_000u64 + ms) * 1_000_000;
        format!(
            "{{\"traceId\":\"{t}\",\"spanId\":\"{id}\",\"startTimeUnixNano\":\"{}\",\
             \"endTimeUnixNano\":{},\"attributes\":[\
             {{\"key\":\"gen_ai.operation.name\",\"value\":{{\"stringValue\":\"{op}\"}}}},\
             {{\"key\":\"gen_ai.usage.input_tokens\",\"value\":{{\"intValue\":{input}}}}},\
             {{\"key\":\"gen_ai.usage.output_tokens\",\"value\":{{\"intValue\":\"10\"}}}}]}}",
            ns(from),
            ns(to)
        )
    };
    let spans = [
        span("a", "a1", "chat", 0, 400, 100),
        span("a", "t1", "execute_tool", 420, 980, 0),
        span("a", "a2", "chat", 1000, 1500, 300),
        span("a", "a3", "chat", 2000, 2100, 500),
        span("b", "b1", "chat", 300, 700, 100),
        span("b", "b2", "chat", 900, 1000, 200),
    ];
    let doc = format!(
        "{{\"resourceSpans\":[{{\"scopeSpans\":[{{\"spans\":[\n{}\n]}}]}}]}}",
        spans.join(",\n")
    );
    std::fs::write(dir.join("t.otlp.json"), doc).unwrap();
    let yaml = "name: r\ntarget:\n  sim: {}\n  api: openai-chat\n  models: [m]\n\
        request:\n  max_tokens: 10\nload:\n  mode: replay\n  trace: t.otlp.json\n  speed: [2]\n";
    crate::scenario::load_str(yaml, &dir.join("s.yaml"), &|_| None).unwrap()
}

#[tokio::test(start_paused = true)]
async fn an_agent_trace_s_turn_waits_for_the_previous_answer_then_the_gap_over_the_speed() {
    let dir = tempfile::tempdir().unwrap();
    let s = agent_trace_scenario(dir.path());
    let backend = Arc::new(Keeper::default());
    let mut sink = Keep::default();
    let progress: Arc<dyn Progress> = Arc::new(NoProgress);
    run_scheduled(
        &s,
        Arc::clone(&backend),
        progress,
        Interrupt::new(),
        &mut sink,
        Schedule::pretend_time(),
    )
    .await;
    let mut records = sink.0;
    records.sort_by_key(|r| (r.worker, r.seq));
    assert_eq!(records.len(), 5);
    let turns: Vec<(u32, u32, u32)> = records
        .iter()
        .map(|r| (r.worker, r.turn.unwrap(), r.task_turns.unwrap()))
        .collect();
    assert_eq!(
        turns,
        [(0, 1, 3), (0, 2, 3), (0, 3, 3), (1, 1, 2), (1, 2, 2)]
    );
    let start = |i: usize| records[i].started_at_ms;
    let end = |i: usize| records[i].started_at_ms + records[i].e2e_ms.unwrap();
    // Each answer takes 95 ms (the recording's took 100 to 500 ms): a later turn goes 95 ms
    // plus the recorded gap / 2 after its previous turn started, not at its timestamp / 2.
    for (turn, after, gap) in [(1, 0, 300.0), (2, 1, 250.0), (4, 3, 100.0)] {
        let got = start(turn) - end(after);
        assert!(
            (got - gap).abs() < 1.0,
            "turn {turn}: {got} ms after, want {gap}"
        );
    }
    // A session's first turn goes at its recorded start / the speed.
    let b = start(3) - start(0);
    assert!((b - 150.0).abs() < 1.0, "session b starts {b} ms in");
    // Each turn's prompt extends its session's previous one.
    let bodies = backend.bodies.lock().unwrap();
    let prompt = |tokens: usize| {
        bodies
            .iter()
            .map(|b| b["prompt"].as_str().unwrap().to_string())
            .find(|p| p.len() == tokens * 4)
            .unwrap()
    };
    assert!(prompt(300).starts_with(&prompt(100)) || prompt(200).starts_with(&prompt(100)));
    assert!(prompt(500).starts_with(&prompt(300)));
}

/// An answer that was only a call goes back with an empty `content` (llama-cpp-python's server
/// refuses a null and its chatml-function-calling template fails on a message without one).
#[test]
fn a_call_only_answer_goes_back_without_content() {
    use crate::model::ToolCall;
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("p.txt"), "find order 7").unwrap();
    std::fs::write(
        dir.path().join("tools.json"),
        r#"[{"type": "function", "function": {"name": "get_order", "parameters": {"type": "object"}}}]"#,
    )
    .unwrap();
    let yaml = "name: a\ntarget:\n  sim: {}\n  api: openai-chat\n  models: [m]\n\
        request:\n  prompt_file: p.txt\n  tools: tools.json\n  max_tokens: 40\n\
        load:\n  ladder: [1]\n  requests_per_step: 3\n  \
        agent: {turns: 3, tool_result_tokens: 20, tool_latency: 0s}\n";
    let s = crate::scenario::load_str(yaml, &dir.path().join("s.yaml"), &|_| None).unwrap();
    let backend = Arc::new(Keeper::default());
    let mut session = workload_of(&backend, &s).worker(0);
    let mut answered = RequestRecord {
        output_tokens: Some(8),
        tool_call_tokens: Some(8),
        calls: vec![ToolCall {
            id: "call_1".into(),
            name: "get_order".into(),
            arguments: r#"{"n": 7}"#.into(),
        }],
        ..Default::default()
    };
    session.answered(&mut answered);
    let b = session.next(0).body;
    let v: Value = serde_json::from_slice(&b).unwrap();
    let assistant = &v["messages"][0];
    assert_eq!(assistant["role"], "assistant", "{v}");
    assert_eq!(assistant["content"], "", "{assistant}");
    assert_eq!(assistant["tool_calls"][0]["id"], "call_1");
    assert_eq!(v["messages"][1]["tool_call_id"], "call_1");
}
