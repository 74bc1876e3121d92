//! Multi-turn sessions (`request.session`): each closed-loop worker holds a conversation of
//! `turns` requests; every turn sends the conversation so far plus the next prompt, and the
//! answer joins it as a stand-in of its size (ladder keeps no response text). In a chained
//! session (`session.chain`) a turn sends only its own messages and the previous answer's id.
//! The conversation is kept in chat's message shape; each dialect's body builder converts it.

use super::prompts::{Each, Prompts};
use super::{Conversation, Prepared, Settled, Workload};
use crate::model::RequestRecord;
use crate::scenario::{synthetic_prompt, RequestSpec};
use serde_json::{json, Value};
use std::sync::Arc;
use std::time::Duration;

/// Sessions of `turns` turns over a step's prompts.
pub(super) struct Sessions {
    prompts: Arc<Prompts>,
    turns: u32,
}

impl Sessions {
    pub(super) fn new(prompts: Arc<Prompts>, turns: u32) -> Sessions {
        Sessions { prompts, turns }
    }
}

impl Workload for Sessions {
    fn worker(self: Arc<Self>, _: u32) -> Box<dyn Conversation> {
        let turns = self.turns;
        Box::new(Session {
            work: self,
            state: State::new(turns),
        })
    }

    /// Sessions run on closed-loop workers only (validation refuses them in open-loop steps):
    /// an arrival sends one prompt.
    fn arrival(self: Arc<Self>, _: u64) -> Box<dyn Conversation> {
        Each::arrival(&self.prompts)
    }
}

/// A worker's conversation.
struct Session {
    work: Arc<Sessions>,
    state: State,
}

/// The messages so far and the turn number; in a chained session, the previous answer's id
/// instead of the history.
struct State {
    history: Vec<Value>,
    /// Turns done in this conversation (0 before its first request).
    turn: u32,
    previous: Option<String>,
    turns: u32,
}

impl State {
    fn new(turns: u32) -> State {
        State {
            history: Vec::new(),
            turn: 0,
            previous: None,
            turns,
        }
    }
}

impl Conversation for Session {
    fn wait(&mut self) -> Option<Duration> {
        Some(Duration::ZERO)
    }

    /// The conversation so far plus prompt `n`'s messages; in a chained session, its own
    /// messages and the previous answer's id.
    fn next(&mut self, n: u64) -> Prepared {
        let prompts = &self.work.prompts;
        let mut spec = prompts.spec(prompts.index(n)).clone();
        let s = &mut self.state;
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
                    *s = State::new(s.turns);
                }
                s.history.extend(user_messages(&spec));
                spec.messages = s.history.clone();
            }
        }
        Prepared {
            turn: Some((s.turn + 1, s.turns)),
            ..prompts.build(spec)
        }
    }

    /// The answer joins the conversation (a stand-in of the same number of tokens; in a
    /// chained session, the answer's id), and after its turns a new conversation starts. A
    /// failed turn leaves a chain nothing to continue: the next request starts a new one.
    fn answered(&mut self, rec: &mut RequestRecord) -> Settled {
        let s = &mut self.state;
        s.turn += 1;
        if s.turn >= s.turns {
            *s = State::new(s.turns);
            return Settled::Now;
        }
        s.previous = rec.response_id.clone().filter(|_| rec.is_ok());
        let output_tokens = rec.output_tokens.filter(|_| rec.is_ok());
        let n = output_tokens.unwrap_or(1).clamp(1, 100_000) as u32;
        s.history
            .push(json!({"role": "assistant", "content": synthetic_prompt(n)}));
        Settled::Now
    }
}

/// The new turn's messages: the spec's messages, or its prompt as one user message.
pub(super) fn user_messages(spec: &RequestSpec) -> Vec<Value> {
    if spec.messages.is_empty() {
        vec![json!({"role": "user", "content": spec.prompt})]
    } else {
        spec.messages.clone()
    }
}
