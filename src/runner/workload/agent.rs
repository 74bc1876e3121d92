//! Agents (`load.agent`): every closed-loop worker is an agent doing tasks one after another.
//! A task is a conversation of a drawn number of turns that starts from the shared system
//! prompt and a task text unique to the task (its mark), and grows each turn by the answer, the
//! model's tool calls (or a synthetic call) and a tool result per call; the next turn waits for
//! the tool's latency and the think time. A turn's record says whose call went back
//! (`tool_call_sent`), which is true only once the next turn is sent: the record is held until
//! then (the held turn, `Settled::OnNextTurn`). Draws are seeded by the step and the worker, so a
//! rerun draws the same tasks.

use super::prompts::{Each, Prompts};
use super::session::user_messages;
use super::{Conversation, Prepared, Settled, Workload};
use crate::model::{RequestRecord, ToolCallSent};
use crate::scenario::agent::Agent;
use crate::scenario::arrivals::step_seed;
use crate::scenario::{synthetic_prompt, Scenario};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde_json::{json, Value};
use std::sync::Arc;
use std::time::Duration;

/// Numbers the agents' tasks of the process (each task's text is unique).
static TASK_SEQ: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// A step's agents: their prompts (each task's text), their lengths and waits, and how their
/// synthetic tool calls look.
pub(super) struct Agents {
    prompts: Arc<Prompts>,
    spec: Agent,
    calls: SyntheticCalls,
}

/// What an agent's synthetic tool call (after an answer without one) is: with tools declared
/// (`request.tools`), a call of the first tool with `{}` for arguments and an id in the
/// dialect's shape; without, the text form (a real API refuses a call of a tool it was not
/// given).
struct SyntheticCalls {
    /// The first declared tool's name.
    tool: Option<String>,
    /// The dialect's call ids' prefix (`call_`, `toolu_`).
    id_prefix: &'static str,
}

impl Agents {
    pub(super) fn new(prompts: Arc<Prompts>, spec: Agent, scenario: &Scenario) -> Agents {
        let calls = SyntheticCalls {
            tool: scenario
                .request
                .tools
                .as_ref()
                .and_then(|t| t.list.first())
                .map(|t| t.name.clone()),
            id_prefix: scenario.target.api.spec().call_id_prefix,
        };
        Agents {
            prompts,
            spec,
            calls,
        }
    }
}

impl Workload for Agents {
    /// Worker `worker`'s agent, its draws seeded by the step and the worker.
    fn worker(self: Arc<Self>, worker: u32) -> Box<dyn Conversation> {
        let seed = step_seed(self.prompts.seed(), worker ^ 0xa6e7);
        let mut task = Task {
            work: self,
            rng: StdRng::seed_from_u64(seed),
            history: Vec::new(),
            turn: 0,
            turns: 1,
            prompt: 0,
            wait: Duration::ZERO,
            task: 0,
        };
        task.next_task();
        Box::new(task)
    }

    /// Agents run on closed-loop workers only (validation refuses them in open-loop steps): an
    /// arrival sends one prompt.
    fn arrival(self: Arc<Self>, _: u64) -> Box<dyn Conversation> {
        Each::arrival(&self.prompts)
    }
}

/// An agent's draws and its current task.
struct Task {
    work: Arc<Agents>,
    rng: StdRng,
    /// The task's conversation, in chat's message shape (each dialect's body builder converts
    /// it).
    history: Vec<Value>,
    /// Turns done in this task (0 before its first request).
    turn: u32,
    /// The task's turns (drawn).
    turns: u32,
    /// The prompt of the task (chosen at its first turn).
    prompt: usize,
    /// What the agent waits before its next request: the tool's latency and the think time.
    wait: Duration,
    /// The task's number in the process (its mark's), for its synthetic calls' ids.
    task: u64,
}

impl Task {
    /// The agent starts its next task: its turns drawn, its think time before the first one.
    fn next_task(&mut self) {
        self.history.clear();
        self.turn = 0;
        let spec = &self.work.spec;
        let u: f64 = self.rng.gen();
        self.turns = spec.turns.at(u);
        let u: f64 = self.rng.gen();
        self.wait = spec.think_time.at(u);
    }

    /// The answer had the model's calls: a stand-in for the rest of the answer beside them
    /// goes back with them; returns their ids.
    fn model_calls(
        &mut self,
        rec: &mut RequestRecord,
        calls: Vec<crate::model::ToolCall>,
    ) -> Vec<String> {
        let output = rec.output_tokens.unwrap_or(1).min(100_000);
        rec.tool_call_sent = Some(ToolCallSent::Model);
        // The answer's tokens beside its calls' arguments (counted as they streamed, else
        // estimated at four characters a token) are text.
        let args = rec.tool_call_tokens.unwrap_or_else(|| {
            let chars: usize = calls.iter().map(|c| c.arguments.len()).sum();
            chars.div_ceil(4) as u64
        });
        let rest = output.saturating_sub(args) as u32;
        let list: Vec<Value> = calls
            .iter()
            .map(|c| call_json(&c.id, &c.name, &c.arguments))
            .collect();
        // A message that is only calls has an empty `content`: OpenAI also takes a null or
        // none, but llama-cpp-python's server refuses a null (a string when given) and its
        // chatml-function-calling template fails on none. The other dialects leave an empty
        // text out.
        let content = if rest > 0 {
            synthetic_prompt(rest)
        } else {
            String::new()
        };
        self.history
            .push(json!({"role": "assistant", "content": content, "tool_calls": list}));
        calls.into_iter().map(|c| c.id).collect()
    }

    /// The answer made no call: a stand-in of its size and a synthetic call
    /// (`SyntheticCalls`); returns the ids of the calls whose results go back as tool
    /// messages (none for the text form, whose result is written here).
    fn synthetic_call(&mut self, rec: &mut RequestRecord) -> Vec<String> {
        let output = rec.output_tokens.unwrap_or(1).min(100_000);
        rec.tool_call_sent = Some(ToolCallSent::Synthetic);
        let turn = self.turn;
        let text = synthetic_prompt(output.max(1) as u32);
        let calls = &self.work.calls;
        if let Some(tool) = &calls.tool {
            let id = format!("{}ladder{:x}t{turn}", calls.id_prefix, self.task);
            self.history
                .push(json!({"role": "assistant", "content": text,
                "tool_calls": [call_json(&id, tool, "{}")]}));
            return vec![id];
        }
        // No tool declared: the call and its result as text.
        let call = format!(
            "{text}\n<tool_call>{{\"id\": \"call_{turn}\", \"name\": \"run_tool\", \"arguments\": {{\"step\": {turn}}}}}</tool_call>"
        );
        self.history
            .push(json!({"role": "assistant", "content": call}));
        let size = self.work.spec.tool_result_tokens.at(self.rng.gen());
        let result = format!(
            "<tool_result id=\"call_{turn}\">{}</tool_result>",
            synthetic_prompt(size)
        );
        self.history
            .push(json!({"role": "user", "content": result}));
        Vec::new()
    }
}

impl Conversation for Task {
    /// The tool's latency and the think time (before a task's first turn, the think time),
    /// once.
    fn wait(&mut self) -> Option<Duration> {
        Some(std::mem::take(&mut self.wait))
    }

    /// At a task's first turn, prompt `n`'s with the task's unique mark at the start of its
    /// text; later turns, the task's conversation so far (its tool results included). The
    /// system prompt stays the spec's, the same for every turn and agent.
    fn next(&mut self, n: u64) -> Prepared {
        let prompts = &self.work.prompts;
        if self.turn == 0 {
            let i = prompts.index(n);
            self.prompt = i;
            let id = TASK_SEQ.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            self.task = id;
            let mark = format!("[task {}-{id:x}] ", prompts.run_tag());
            let mut first = user_messages(prompts.spec(i));
            let text = first
                .iter_mut()
                .find(|m| m.get("role").and_then(Value::as_str) == Some("user"))
                .and_then(|m| m.get_mut("content"));
            if let Some(Value::String(t)) = text {
                t.insert_str(0, &mark);
            }
            self.history = first;
        }
        let mut spec = prompts.spec(self.prompt).clone();
        spec.messages = self.history.clone();
        Prepared {
            turn: Some((self.turn + 1, self.turns)),
            ..prompts.build(spec)
        }
    }

    /// The answer joins the task with the model's tool calls, or, when it made none, a
    /// stand-in of its size and a synthetic call; then one tool result per call, each of a
    /// size drawn from `tool_result_tokens`, sent after the tool's latency and the think time.
    /// The record says whose call was sent (`tool_call_sent`), so it is held until the next
    /// turn goes. The last turn, or a failed one (the agent gives up), starts the next task.
    fn answered(&mut self, rec: &mut RequestRecord) -> Settled {
        self.turn += 1;
        let calls = std::mem::take(&mut rec.calls);
        if self.turn >= self.turns || !rec.is_ok() {
            self.next_task();
            return Settled::Now;
        }
        let results = if calls.is_empty() {
            self.synthetic_call(rec)
        } else {
            self.model_calls(rec, calls)
        };
        let spec = &self.work.spec;
        for id in results {
            let size = spec.tool_result_tokens.at(self.rng.gen());
            self.history.push(
                json!({"role": "tool", "tool_call_id": id, "content": synthetic_prompt(size)}),
            );
        }
        let latency = spec.tool_latency.at(self.rng.gen());
        self.wait = latency + spec.think_time.at(self.rng.gen());
        Settled::OnNextTurn { unsent }
    }
}

/// No turn followed: no call went back.
fn unsent(rec: &mut RequestRecord) {
    rec.tool_call_sent = None;
}

/// A tool call in chat's shape, the neutral form of a conversation's calls.
fn call_json(id: &str, name: &str, arguments: &str) -> Value {
    json!({"id": id, "type": "function", "function": {"name": name, "arguments": arguments}})
}
