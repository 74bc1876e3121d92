//! What each request of a step sends: the prompt (one text, the next prompt of a set in
//! round-robin or seeded random order, or synthetic text whose size a prompt-size ladder sets),
//! its `max_tokens`, a unique cache-busting prefix, a session's growing conversation, and a
//! replayed trace's requests (`replay`), and an agent's tasks (`load.agent`: the same
//! conversation, grown by tool calls and tool results, with the waits between turns). Bodies
//! that never change are built once per model and step and shared; only cache-busting and
//! sessions build a body per request. Pure apart from the backend's body builder.

use super::replay;
use crate::client::Backend;
use crate::model::{RequestRecord, ToolCallSent};
use crate::scenario::agent::Agent;
use crate::scenario::arrivals::step_seed;
use crate::scenario::trace::Trace;
use crate::scenario::{
    synthetic_prompt, LadderOver, LoadMode, PromptContent, PromptItem, PromptOrder, PromptSource,
    RequestSpec, Scenario,
};
use bytes::Bytes;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde_json::{json, Value};
use std::time::Duration;

/// Numbers the cache-busting prefixes of the process.
static BUST_SEQ: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
/// Numbers the agents' tasks of the process (each task's text is unique).
static TASK_SEQ: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// The prompts of one model × step.
pub struct StepWorkload {
    /// One spec per prompt (one for a single prompt), with its `max_tokens` applied.
    specs: Vec<RequestSpec>,
    /// The same, as bodies for `model` (used when nothing changes per request).
    bodies: Vec<Bytes>,
    order: PromptOrder,
    seed: u64,
    cache_bust: bool,
    /// Distinguishes this run's cache-busting prefixes from every other run's.
    run_tag: String,
    model: String,
    /// `mode: replay`: request n sends the trace's n-th request (`replay`).
    trace: Option<std::sync::Arc<Trace>>,
    /// `load.agent`: every worker is an agent doing tasks.
    agent: Option<Agent>,
    /// Texts per request (`request.batch`, embeddings); above 1 with a prompt set, each request
    /// takes that many prompts of the set and builds its own body.
    batch: u32,
    /// How an agent's synthetic tool call looks (`load.agent`).
    calls: SyntheticCalls,
}

/// What an agent's synthetic tool call (after an answer without one) is: with tools declared
/// (`request.tools`), a call of the first tool with `{}` for arguments and an id in the
/// dialect's shape; without, the text form (a real API refuses a call of a tool it was not
/// given).
#[derive(Debug, Clone, Default)]
struct SyntheticCalls {
    /// The first declared tool's name.
    tool: Option<String>,
    /// The dialect's call ids' prefix (`call_`, `toolu_`).
    id_prefix: &'static str,
}

/// One request's body and the `max_tokens` it asked for (`None`: it sent no limit).
pub struct Prepared {
    pub body: Bytes,
    pub max_tokens: Option<u32>,
}

/// A worker's conversation (`session.turns` > 1, or an agent's task): the messages so far and
/// the turn number; in a chained session (`session.chain`), the previous answer's id instead of
/// the history.
pub struct Session {
    history: Vec<Value>,
    /// Turns done in this conversation (0 before its first request).
    turn: u32,
    previous: Option<String>,
    /// The conversation's turns (`session.turns`, or the agent's draw for this task).
    turns: u32,
    /// Boxed: only an agent has it (over 400 bytes with its generator), and a closed-loop worker's
    /// future, copied whole when spawned, holds the session (issue 39, part 4).
    agent: Option<Box<AgentTask>>,
}

/// An agent's draws and its current task.
struct AgentTask {
    spec: Agent,
    rng: StdRng,
    /// The prompt of the task (chosen at its first turn).
    prompt: usize,
    /// What the worker waits before its next request: the tool's latency and the think time.
    wait: Duration,
    /// The task's number in the process (its mark's), for its synthetic calls' ids.
    task: u64,
    calls: SyntheticCalls,
}

impl StepWorkload {
    /// `step_value` is the step's ladder value (the prompt size for a prompt-size ladder).
    pub fn new<B: Backend>(
        backend: &B,
        scenario: &Scenario,
        model: &str,
        step: u32,
        step_value: u32,
        run_tag: &str,
    ) -> StepWorkload {
        let base = &scenario.request;
        let specs: Vec<RequestSpec> = match &base.prompts {
            PromptSource::Set(set) => set.items.iter().map(|i| item_spec(base, i)).collect(),
            PromptSource::Synthetic { .. }
                if matches!(scenario.load.ladder_over, LadderOver::PromptTokens { .. }) =>
            {
                vec![RequestSpec {
                    prompt: synthetic_prompt(step_value),
                    ..base.clone()
                }]
            }
            _ => vec![base.clone()],
        };
        let batch = base.batch.max(1);
        // Batches of a set's prompts are built per request (`prepare`): a body per prompt would
        // be `batch` copies of it, never sent.
        let bodies = if batch > 1 && specs.len() > 1 {
            Vec::new()
        } else {
            specs.iter().map(|s| backend.body_for(model, s)).collect()
        };
        StepWorkload {
            specs,
            bodies,
            order: base.prompt_order,
            seed: step_seed(scenario.load.seed, step),
            cache_bust: base.cache_bust,
            run_tag: run_tag.to_string(),
            model: model.to_string(),
            trace: match scenario.load.mode {
                LoadMode::Replay { .. } => scenario.load.trace.clone(),
                _ => None,
            },
            batch,
            agent: scenario.load.agent,
            calls: SyntheticCalls {
                tool: base
                    .tools
                    .as_ref()
                    .and_then(|t| t.list.first())
                    .map(|t| t.name.clone()),
                id_prefix: scenario.target.api.spec().call_id_prefix,
            },
        }
    }

    /// Worker `worker`'s conversation: an agent's (seeded by the step and the worker, so a
    /// rerun draws the same tasks), a session of `turns` > 1, or none.
    pub fn session(&self, worker: u32, turns: u32) -> Option<Session> {
        match self.agent {
            Some(spec) => Some(Session::agent(
                spec,
                step_seed(self.seed, worker ^ 0xa6e7),
                self.calls.clone(),
            )),
            None => (turns > 1).then(|| Session::new(turns)),
        }
    }

    /// Which prompt request `n` of the step uses.
    fn index(&self, n: u64) -> usize {
        let len = self.specs.len() as u64;
        match self.order {
            PromptOrder::RoundRobin => (n % len) as usize,
            PromptOrder::Random => {
                (step_seed(self.seed, n as u32 ^ (n >> 32) as u32) % len) as usize
            }
        }
    }

    /// The body of request `n` of the step (counted over the whole step), for `backend`.
    /// With a session, the request carries the conversation so far plus the new prompt.
    pub fn prepare<B: Backend>(
        &self,
        backend: &B,
        n: u64,
        mut session: Option<&mut Session>,
    ) -> Prepared {
        if let Some(trace) = &self.trace {
            let req = &trace.requests[(n % trace.requests.len() as u64) as usize];
            let mut spec = replay::spec(&self.specs[0], req, self.seed, n);
            if self.cache_bust {
                let id = BUST_SEQ.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                bust(&mut spec, &format!("[{}-{id:x}] ", self.run_tag));
            }
            return Prepared {
                body: backend.body_for(&self.model, &spec),
                max_tokens: spec.max_tokens,
            };
        }
        let i = self.index(n);
        let max_tokens = self.specs[i].max_tokens;
        if self.bodies.is_empty() {
            return self.batched(backend, n);
        }
        if !self.cache_bust && session.is_none() {
            return Prepared {
                body: self.bodies[i].clone(),
                max_tokens,
            };
        }
        let mut spec = self.specs[i].clone();
        if let Some(s) = session.as_deref_mut().filter(|s| s.agent.is_some()) {
            spec = self.agent_turn(s, i);
        } else if let Some(s) = session {
            match (spec.session_chain, &s.previous) {
                // A chained turn: its own messages and the previous answer's id.
                (Some(field), Some(previous)) => {
                    spec.messages = user_messages(&spec);
                    spec.extra_body
                        .insert(field.into(), Value::from(previous.as_str()));
                }
                (chain, _) => {
                    if chain.is_some() && s.turn > 0 {
                        // The previous turn failed: nothing to continue, a new conversation.
                        *s = Session::new(s.turns);
                    }
                    s.history.extend(user_messages(&spec));
                    spec.messages = s.history.clone();
                }
            }
        }
        let max_tokens = spec.max_tokens;
        if self.cache_bust {
            // Unique over the whole run (every step, model and warmup), not only this step.
            let id = BUST_SEQ.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            bust(&mut spec, &format!("[{}-{id:x}] ", self.run_tag));
        }
        Prepared {
            body: backend.body_for(&self.model, &spec),
            max_tokens,
        }
    }

    /// An agent's request: at a task's first turn, prompt `i` with the task's unique mark as
    /// its first message; later turns, the task's conversation so far (its tool results
    /// included). The system prompt stays the spec's, the same for every turn and agent.
    fn agent_turn(&self, s: &mut Session, i: usize) -> RequestSpec {
        let task = s.agent.as_mut().expect("an agent's session");
        if s.turn == 0 {
            task.prompt = i;
            let id = TASK_SEQ.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            task.task = id;
            let mark = format!("[task {}-{id:x}] ", self.run_tag);
            let mut first = user_messages(&self.specs[i]);
            let text = first
                .iter_mut()
                .find(|m| m.get("role").and_then(Value::as_str) == Some("user"))
                .and_then(|m| m.get_mut("content"));
            if let Some(Value::String(t)) = text {
                t.insert_str(0, &mark);
            }
            s.history = first;
        }
        let mut spec = self.specs[task.prompt].clone();
        spec.messages = s.history.clone();
        spec
    }

    /// Request `n` of a batched prompt set (`request.batch` > 1): the set's texts from
    /// `n × batch` on, in the set's order (round-robin) or each drawn at random (random), so
    /// round-robin requests send every prompt once before any twice.
    fn batched<B: Backend>(&self, backend: &B, n: u64) -> Prepared {
        let batch = u64::from(self.batch);
        let mut spec = self.specs[0].clone();
        spec.inputs = (0..batch)
            .map(|k| self.specs[self.index(n * batch + k)].prompt.clone())
            .collect();
        if self.cache_bust {
            let id = BUST_SEQ.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            bust(&mut spec, &format!("[{}-{id:x}] ", self.run_tag));
        }
        Prepared {
            body: backend.body_for(&self.model, &spec),
            max_tokens: spec.max_tokens,
        }
    }
}

impl Session {
    /// A session of `turns` turns per conversation.
    pub fn new(turns: u32) -> Session {
        Session {
            history: Vec::new(),
            turn: 0,
            previous: None,
            turns,
            agent: None,
        }
    }

    /// An agent, its draws seeded by `seed`, at the start of its first task.
    fn agent(spec: Agent, seed: u64, calls: SyntheticCalls) -> Session {
        let mut s = Session::new(1);
        s.agent = Some(Box::new(AgentTask {
            spec,
            rng: StdRng::seed_from_u64(seed),
            prompt: 0,
            wait: Duration::ZERO,
            task: 0,
            calls,
        }));
        s.next_task();
        s
    }

    /// The next request's turn (from 1) and its conversation's turns.
    pub fn turn(&self) -> (u32, u32) {
        (self.turn + 1, self.turns)
    }

    /// What the worker waits before its next request (an agent's tool latency and think time),
    /// once.
    pub fn take_wait(&mut self) -> Duration {
        self.agent
            .as_mut()
            .map_or(Duration::ZERO, |a| std::mem::take(&mut a.wait))
    }

    /// An agent starts its next task: its turns drawn, its think time before the first one.
    fn next_task(&mut self) {
        self.history.clear();
        self.turn = 0;
        if let Some(a) = self.agent.as_mut() {
            let u: f64 = a.rng.gen();
            self.turns = a.spec.turns.at(u);
            let u: f64 = a.rng.gen();
            a.wait = a.spec.think_time.at(u);
        }
    }

    /// After an agent's turn: the answer joins the task with the model's tool calls, or, when
    /// it made none, a stand-in of its size and a synthetic call (`SyntheticCalls`); then one
    /// tool result per call, each of a size drawn from `tool_result_tokens`, sent after the
    /// tool's latency and the think time. The record says whose call was sent
    /// (`tool_call_sent`). The last turn, or a failed one (the agent gives up), starts the next
    /// task. The history is kept in chat's shape (an assistant message with `tool_calls`, then
    /// `role: tool` messages); each dialect's body builder converts it.
    fn agent_answered(&mut self, rec: &mut RequestRecord) {
        self.turn += 1;
        let calls = std::mem::take(&mut rec.calls);
        if self.turn >= self.turns || !rec.is_ok() {
            self.next_task();
            return;
        }
        let turn = self.turn;
        let a = self.agent.as_mut().expect("an agent's session");
        let output = rec.output_tokens.unwrap_or(1).min(100_000);
        let mut results = Vec::new();
        if !calls.is_empty() {
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
            // chatml-function-calling template fails on none. The other dialects leave an
            // empty text out.
            let content = if rest > 0 {
                synthetic_prompt(rest)
            } else {
                String::new()
            };
            self.history
                .push(json!({"role": "assistant", "content": content, "tool_calls": list}));
            results.extend(calls.into_iter().map(|c| c.id));
        } else {
            rec.tool_call_sent = Some(ToolCallSent::Synthetic);
            let text = synthetic_prompt(output.max(1) as u32);
            match &a.calls.tool {
                Some(tool) => {
                    let id = format!("{}ladder{:x}t{turn}", a.calls.id_prefix, a.task);
                    self.history
                        .push(json!({"role": "assistant", "content": text,
                        "tool_calls": [call_json(&id, tool, "{}")]}));
                    results.push(id);
                }
                None => {
                    // No tool declared: the call and its result as text.
                    let call = format!(
                        "{text}\n<tool_call>{{\"id\": \"call_{turn}\", \"name\": \"run_tool\", \"arguments\": {{\"step\": {turn}}}}}</tool_call>"
                    );
                    self.history
                        .push(json!({"role": "assistant", "content": call}));
                    let size = a.spec.tool_result_tokens.at(a.rng.gen());
                    let result = format!(
                        "<tool_result id=\"call_{turn}\">{}</tool_result>",
                        synthetic_prompt(size)
                    );
                    self.history
                        .push(json!({"role": "user", "content": result}));
                }
            }
        }
        for id in results {
            let size = a.spec.tool_result_tokens.at(a.rng.gen());
            self.history.push(
                json!({"role": "tool", "tool_call_id": id, "content": synthetic_prompt(size)}),
            );
        }
        let latency = a.spec.tool_latency.at(a.rng.gen());
        a.wait = latency + a.spec.think_time.at(a.rng.gen());
    }

    /// After a turn: the answer joins the conversation (a stand-in of the same number of tokens:
    /// ladder does not keep response text; in a chained session, the answer's id), and after
    /// its turns a new conversation starts. A failed turn leaves a chain nothing to continue:
    /// the next request starts a new conversation.
    pub fn answered(&mut self, rec: &mut RequestRecord) {
        if self.agent.is_some() {
            return self.agent_answered(rec);
        }
        self.turn += 1;
        if self.turn >= self.turns {
            *self = Session::new(self.turns);
            return;
        }
        self.previous = rec.response_id.clone().filter(|_| rec.is_ok());
        let output_tokens = rec.output_tokens.filter(|_| rec.is_ok());
        let n = output_tokens.unwrap_or(1).clamp(1, 100_000) as u32;
        self.history
            .push(json!({"role": "assistant", "content": synthetic_prompt(n)}));
    }
}

/// A tool call in chat's shape, the neutral form of a conversation's calls.
fn call_json(id: &str, name: &str, arguments: &str) -> Value {
    json!({"id": id, "type": "function", "function": {"name": name, "arguments": arguments}})
}

/// A prompt-set item as a spec: its text or messages, and its own `max_tokens`.
fn item_spec(base: &RequestSpec, item: &PromptItem) -> RequestSpec {
    let mut s = base.clone();
    match &item.content {
        PromptContent::Text(t) => s.prompt = t.clone(),
        PromptContent::Messages(m) => s.messages = m.clone(),
    }
    if let Some(m) = item.max_tokens {
        s.max_tokens = Some(m);
    }
    s
}

/// The new turn's messages: the spec's messages, or its prompt as one user message.
fn user_messages(spec: &RequestSpec) -> Vec<Value> {
    if spec.messages.is_empty() {
        vec![json!({"role": "user", "content": spec.prompt})]
    } else {
        spec.messages.clone()
    }
}

/// Puts `prefix` at the very start of what is sent (system text, else the first message, else
/// the prompt), so no earlier request shares a cacheable prefix with this one.
fn bust(spec: &mut RequestSpec, prefix: &str) {
    if !spec.inputs.is_empty() {
        // A batch's texts are embedded one by one: each gets the prefix.
        spec.inputs.iter_mut().for_each(|t| t.insert_str(0, prefix));
        return;
    }
    if let Some(system) = &mut spec.system {
        system.insert_str(0, prefix);
        return;
    }
    if let Some(first) = spec.messages.first_mut() {
        if let Some(Value::String(text)) = first.get_mut("content") {
            text.insert_str(0, prefix);
            return;
        }
    }
    spec.prompt.insert_str(0, prefix);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bust_prefixes_the_first_thing_sent() {
        let mut s = RequestSpec {
            prompt: "p".into(),
            ..Default::default()
        };
        bust(&mut s, "[x] ");
        assert_eq!(s.prompt, "[x] p");
        s.messages = vec![json!({"role": "user", "content": "m"})];
        bust(&mut s, "[y] ");
        assert_eq!(s.messages[0]["content"], "[y] m");
        s.system = Some("sys".into());
        bust(&mut s, "[z] ");
        assert_eq!(s.system.as_deref(), Some("[z] sys"));
    }

    fn ok(output_tokens: u64, id: Option<&str>) -> RequestRecord {
        RequestRecord {
            output_tokens: Some(output_tokens),
            response_id: id.map(Into::into),
            ..Default::default()
        }
    }

    #[test]
    fn sessions_grow_by_the_answer_and_restart_after_the_last_turn() {
        let mut s = Session::new(2);
        s.history.push(json!({"role": "user", "content": "a"}));
        s.answered(&mut ok(3, None));
        assert_eq!(s.history.len(), 2);
        assert_eq!(s.history[1]["content"], synthetic_prompt(3));
        s.answered(&mut ok(3, None));
        assert!(s.history.is_empty() && s.turn == 0);
    }

    /// Bodies as the JSON of what a dialect would build from: messages and extra_body.
    struct Echo;

    impl Backend for Echo {
        fn body_for(&self, _: &str, r: &RequestSpec) -> Bytes {
            Bytes::from(json!({"messages": r.messages, "extra": r.extra_body}).to_string())
        }
        async fn send(&self, _: Bytes, _: &str) -> crate::client::http::Attempt {
            unreachable!("not sent")
        }
    }

    #[test]
    fn a_chained_session_sends_its_turn_and_the_previous_answers_id() {
        let spec = RequestSpec {
            prompt: "next question".into(),
            session_turns: 3,
            session_chain: Some("previous_response_id"),
            ..Default::default()
        };
        let work = StepWorkload {
            bodies: vec![Echo.body_for("m", &spec)],
            specs: vec![spec],
            order: PromptOrder::RoundRobin,
            seed: 1,
            cache_bust: false,
            run_tag: "t".into(),
            model: "m".into(),
            trace: None,
            agent: None,
            batch: 1,
            calls: SyntheticCalls::default(),
        };
        let body = |s: &mut Session, n| -> Value {
            serde_json::from_slice(&work.prepare(&Echo, n, Some(s)).body).unwrap()
        };
        let mut s = Session::new(3);
        let first = body(&mut s, 0);
        assert_eq!(first["messages"].as_array().unwrap().len(), 1);
        assert!(first["extra"].get("previous_response_id").is_none());
        s.answered(&mut ok(5, Some("resp_1")));
        let second = body(&mut s, 1);
        assert_eq!(
            second["messages"],
            json!([{"role": "user", "content": "next question"}])
        );
        assert_eq!(second["extra"]["previous_response_id"], "resp_1");
        // A failed turn leaves nothing to continue: the next request starts over.
        let mut failed = RequestRecord {
            error_class: Some(crate::model::ErrorClass::Http5xx),
            ..Default::default()
        };
        s.answered(&mut failed);
        let third = body(&mut s, 2);
        assert_eq!(third["messages"].as_array().unwrap().len(), 1);
        assert!(third["extra"].get("previous_response_id").is_none());
        assert_eq!(s.turn, 0);
    }
}
