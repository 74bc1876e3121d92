//! Prompts and prompt sets: each request sends one prompt (the scenario's, the next of a set in
//! round-robin or seeded random order, or synthetic text whose size a prompt-size ladder sets)
//! with its `max_tokens`, or a batch of a set's texts (`request.batch`, embeddings). Bodies
//! that never change are built once per model and step and shared; only cache-busting (a
//! unique prefix per request) and batches of a set build a body per request. The other kinds
//! build on these prompts (`Prompts::build`).

use super::{Bodies, Conversation, Prepared, Settled, StepInput, Workload};
use crate::model::RequestRecord;
use crate::scenario::arrivals::step_seed;
use crate::scenario::{
    synthetic_prompt, LadderOver, PromptContent, PromptItem, PromptOrder, PromptSource, RequestSpec,
};
use bytes::Bytes;
use serde_json::Value;
use std::sync::Arc;
use std::time::Duration;

/// Numbers the cache-busting prefixes of the process.
static BUST_SEQ: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// The prompts of one model × step.
pub(super) struct Prompts {
    /// One spec per prompt (one for a single prompt), with its `max_tokens` applied.
    specs: Vec<RequestSpec>,
    /// The same, as bodies for the model (used when nothing changes per request); empty when
    /// each request builds its own (a batch of a set's prompts).
    bodies: Vec<Bytes>,
    order: PromptOrder,
    /// The step's seed (`step_seed`).
    seed: u64,
    cache_bust: bool,
    /// Distinguishes this run's cache-busting prefixes from every other run's.
    run_tag: String,
    /// Texts per request (`request.batch`, embeddings); above 1 with a prompt set, each request
    /// takes that many prompts of the set and builds its own body.
    batch: u32,
    builder: Box<dyn Bodies>,
}

impl Prompts {
    pub(super) fn new(input: StepInput<'_>) -> Prompts {
        let scenario = input.scenario;
        let base = &scenario.request;
        let specs: Vec<RequestSpec> = match &base.prompts {
            PromptSource::Set(set) => set.items.iter().map(|i| item_spec(base, i)).collect(),
            PromptSource::Synthetic { .. }
                if matches!(scenario.load.ladder_over, LadderOver::PromptTokens { .. }) =>
            {
                vec![RequestSpec {
                    prompt: synthetic_prompt(input.value),
                    ..base.clone()
                }]
            }
            _ => vec![base.clone()],
        };
        let batch = base.batch.max(1);
        // Batches of a set's prompts are built per request (`request`): a body per prompt would
        // be `batch` copies of it, never sent.
        let bodies = if batch > 1 && specs.len() > 1 {
            Vec::new()
        } else {
            specs.iter().map(|s| input.bodies.body(s)).collect()
        };
        Prompts {
            specs,
            bodies,
            order: base.prompt_order,
            seed: step_seed(scenario.load.seed, input.step),
            cache_bust: base.cache_bust,
            run_tag: input.run_tag.to_string(),
            batch,
            builder: input.bodies,
        }
    }

    /// Whether each request takes a batch of the set's prompts.
    pub(super) fn batched(&self) -> bool {
        self.bodies.is_empty()
    }

    /// The step's seed.
    pub(super) fn seed(&self) -> u64 {
        self.seed
    }

    /// The run's tag (for marks unique to the run).
    pub(super) fn run_tag(&self) -> &str {
        &self.run_tag
    }

    /// Prompt `i`'s spec.
    pub(super) fn spec(&self, i: usize) -> &RequestSpec {
        &self.specs[i]
    }

    /// Which prompt request `n` of the step uses.
    pub(super) fn index(&self, n: u64) -> usize {
        let len = self.specs.len() as u64;
        match self.order {
            PromptOrder::RoundRobin => (n % len) as usize,
            PromptOrder::Random => {
                (step_seed(self.seed, n as u32 ^ (n >> 32) as u32) % len) as usize
            }
        }
    }

    /// Request `n` of the step (counted over the whole step): its prompt's shared body, or its
    /// own with a cache-busting prefix, or a batch.
    pub(super) fn request(&self, n: u64) -> Prepared {
        if self.batched() {
            return self.batch(n);
        }
        let i = self.index(n);
        if !self.cache_bust {
            return Prepared::new(self.bodies[i].clone(), self.specs[i].max_tokens);
        }
        self.build(self.specs[i].clone())
    }

    /// `spec`'s body (behind a cache-busting prefix unique over the whole run, when busting).
    pub(super) fn build(&self, mut spec: RequestSpec) -> Prepared {
        let max_tokens = spec.max_tokens;
        if self.cache_bust {
            // Unique over the whole run (every step, model and warmup), not only this step.
            let id = BUST_SEQ.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            bust(&mut spec, &format!("[{}-{id:x}] ", self.run_tag));
        }
        Prepared::new(self.builder.body(&spec), max_tokens)
    }

    /// Request `n` of a batched prompt set (`request.batch` > 1): the set's texts from
    /// `n × batch` on, in the set's order (round-robin) or each drawn at random (random), so
    /// round-robin requests send every prompt once before any twice.
    fn batch(&self, n: u64) -> Prepared {
        let batch = u64::from(self.batch);
        let mut spec = self.specs[0].clone();
        spec.inputs = (0..batch)
            .map(|k| self.specs[self.index(n * batch + k)].prompt.clone())
            .collect();
        self.build(spec)
    }
}

impl Workload for Prompts {
    fn worker(self: Arc<Self>, _: u32) -> Box<dyn Conversation> {
        Box::new(Each {
            work: self,
            worker: true,
        })
    }

    fn arrival(self: Arc<Self>, _: u64) -> Box<dyn Conversation> {
        Box::new(Each {
            work: self,
            worker: false,
        })
    }
}

/// A sender of prompts: each turn its own request, with no wait between; an arrival's is one
/// request.
pub(super) struct Each {
    work: Arc<Prompts>,
    /// A closed-loop worker (turns until the step ends), else an arrival (one turn).
    worker: bool,
}

impl Each {
    /// An open-loop arrival of `work`'s prompts (what the kinds that converse only in the
    /// closed loop send in an open-loop step).
    pub(super) fn arrival(work: &Arc<Prompts>) -> Box<dyn Conversation> {
        Arc::clone(work).arrival(0)
    }
}

impl Conversation for Each {
    fn wait(&mut self) -> Option<Duration> {
        self.worker.then_some(Duration::ZERO)
    }

    fn next(&mut self, n: u64) -> Prepared {
        self.work.request(n)
    }

    fn answered(&mut self, _: &mut RequestRecord) -> Settled {
        Settled::Now
    }
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
    use serde_json::json;

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
}
