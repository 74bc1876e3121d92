//! What a step sends, behind one interface both loops call: the runner's loops only pace and
//! send, and ask the step's [`Workload`] for each sender's [`Conversation`]: the wait before its
//! next turn, its next request, and what an answer changes. One file per kind of workload:
//! prompts and prompt sets (`prompts`, also the bodies and cache-busting every kind shares),
//! multi-turn sessions (`session`), agents (`agent`) and trace replay (`trace`); [`for_step`]
//! picks a step's kind from its scenario. An A/B step shares its senders between two models'
//! workloads (`interleave`). docs/architecture.md, "How to add a workload".

mod agent;
mod interleave;
mod prompts;
mod session;
mod trace;

#[cfg(test)]
pub(super) mod tests;
#[cfg(test)]
mod tests_agent;
#[cfg(test)]
pub(super) mod tests_kind;

use crate::client::Backend;
use crate::model::RequestRecord;
use crate::scenario::{Budget, LoadMode, Scenario};
use bytes::Bytes;
pub(super) use interleave::Interleaved;
use std::sync::Arc;
use std::time::Duration;

/// What one model's step sends: a conversation per sender, made when the sender starts. A
/// closed-loop worker holds one for the whole step; an open-loop arrival holds one for its own
/// turns (one request, or a replayed session's turns). Shared by the step's senders.
pub trait Workload: Send + Sync {
    /// Closed-loop worker `worker`'s conversation, for the whole step: it asks
    /// [`Conversation::wait`] before each turn (its first included), and never ends by itself
    /// unless `wait` says so; the step's budget ends it.
    fn worker(self: Arc<Self>, worker: u32) -> Box<dyn Conversation>;

    /// Open-loop arrival `k`'s conversation: its first turn goes at the arrival; it asks
    /// [`Conversation::wait`] after each turn for the next one, until `wait` says `None`.
    fn arrival(self: Arc<Self>, k: u64) -> Box<dyn Conversation>;

    /// The arrivals this workload brings itself (a trace's: its sessions' first requests at
    /// their recorded times over the speed), in seconds after the step's start, increasing, and
    /// the rate they offer (requests/s); `None`: the step's own schedule paces it.
    fn arrivals(&self) -> Option<OwnArrivals> {
        None
    }
}

/// One sender's conversation with the server: a closed-loop worker's (all its turns in the
/// step), or an open-loop arrival's. Dropped when the sender stops, so a kind that holds a
/// resource for its conversation (a realtime session's socket) holds it here.
pub trait Conversation: Send {
    /// The wait before the next turn (an agent's tool latency and think time, a replayed
    /// session's recorded gap; zero for most), once; `None`: there is no next turn.
    fn wait(&mut self) -> Option<Duration>;

    /// The next turn's request. `n` numbers the request in the step: the closed loop's ticket
    /// (requests started in the step so far), the open loop's arrival.
    fn next(&mut self, n: u64) -> Prepared;

    /// What the answer changes: the conversation grows by it (or starts over), the record may
    /// say more about it, and whether the record is final now or once the next turn goes.
    fn answered(&mut self, rec: &mut RequestRecord) -> Settled;
}

/// One request's body and what its record says of it.
pub struct Prepared {
    pub body: Bytes,
    /// The `max_tokens` it asked for (`None`: it sent no limit).
    pub max_tokens: Option<u32>,
    /// Its turn in its conversation and the conversation's turns (`turn`, `task_turns`).
    pub turn: Option<(u32, u32)>,
    /// Its record's `worker` and `seq`, when the workload numbers its requests itself (a
    /// replayed session's number and the request's place in the trace); else the loop's (the
    /// closed loop's worker and its count; the open loop's 0 and the arrival).
    pub origin: Option<(u32, u32)>,
    /// Its record's model when the workload chose it (an A/B step's `interleave`: which of the
    /// two models it went to); else the step's.
    pub variant: Option<Arc<str>>,
}

impl Prepared {
    /// A request that says nothing more than its body and limit.
    pub(super) fn new(body: Bytes, max_tokens: Option<u32>) -> Prepared {
        Prepared {
            body,
            max_tokens,
            turn: None,
            origin: None,
            variant: None,
        }
    }
}

/// When an answered turn's record is final.
#[derive(Debug, Clone, Copy)]
pub enum Settled {
    /// Now: hand it on.
    Now,
    /// What it says holds only once the next turn is sent (an agent's `tool_call_sent`: the
    /// step's budget, its deadline or an interrupt may end the conversation first). The loop
    /// holds it until then; when no turn follows, `unsent` makes it true.
    OnNextTurn { unsent: fn(&mut RequestRecord) },
}

/// A workload's own arrivals (`Workload::arrivals`).
pub struct OwnArrivals {
    pub times: Vec<f64>,
    pub offered_rps: f64,
}

/// Builds request bodies for the step's model: the backend's builder without its sending, so
/// a workload is not generic over the backend.
pub trait Bodies: Send + Sync {
    fn body(&self, spec: &crate::scenario::RequestSpec) -> Bytes;
}

struct ModelBodies<B> {
    backend: Arc<B>,
    model: String,
}

impl<B: Backend> Bodies for ModelBodies<B> {
    fn body(&self, spec: &crate::scenario::RequestSpec) -> Bytes {
        self.backend.body_for(&self.model, spec)
    }
}

/// `backend`'s bodies for `model`.
pub fn bodies<B: Backend>(backend: &Arc<B>, model: &str) -> Box<dyn Bodies> {
    Box::new(ModelBodies {
        backend: Arc::clone(backend),
        model: model.to_string(),
    })
}

/// What a step's workload is made from.
pub struct StepInput<'a> {
    pub scenario: &'a Scenario,
    pub step: u32,
    /// The step's ladder value (the prompt size of a prompt-size ladder).
    pub value: u32,
    /// The step's load this process runs: streams, requests/s, or a replay's speed.
    pub load: f64,
    /// The recorded part's budget (a replay sends the trace's first n requests).
    pub budget: Budget,
    /// Distinguishes this run's cache-busting prefixes and tasks from every other run's.
    pub run_tag: &'a str,
    pub bodies: Box<dyn Bodies>,
}

/// How a run chooses each step's workload: [`for_step`], or a test's own kind.
pub type Choose = Arc<dyn Fn(StepInput<'_>) -> Arc<dyn Workload> + Send + Sync>;

/// The step's workload, by its scenario: a replayed trace (`load.mode: replay`), agents
/// (`load.agent`), sessions (`request.session.turns` > 1), else prompts.
pub fn for_step(input: StepInput<'_>) -> Arc<dyn Workload> {
    let scenario = input.scenario;
    let trace = match scenario.load.mode {
        LoadMode::Replay { .. } => scenario.load.trace.clone(),
        _ => None,
    };
    let (agent, turns) = (scenario.load.agent, scenario.request.session_turns);
    let (load, budget) = (input.load, input.budget);
    let prompts = Arc::new(prompts::Prompts::new(input));
    if let Some(trace) = trace {
        return Arc::new(trace::Replay::new(prompts, trace, load, budget));
    }
    if prompts.batched() {
        return prompts;
    }
    match agent {
        Some(spec) => Arc::new(agent::Agents::new(prompts, spec, scenario)),
        None if turns > 1 => Arc::new(session::Sessions::new(prompts, turns)),
        None => prompts,
    }
}
