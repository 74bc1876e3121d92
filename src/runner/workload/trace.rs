//! Trace replay (`load.mode: replay`): request n of a step sends the trace's n-th request, its
//! own prompt or messages, or synthetic text of its size whose parts reproduce the trace's
//! sharing. Mooncake `hash_ids` become blocks of [`MOONCAKE_BLOCK_TOKENS`] words drawn from the
//! id, so requests sharing their first k ids share k blocks of text (what a prefix cache keys
//! on); requests of one `session_id` draw from the session, so a later turn extends an earlier
//! one; any other text is unique to the request. Every seed is mixed with the step's, so one
//! step never warms the cache for the next. The trace brings its own arrivals (its sessions'
//! first requests at their recorded times over the speed); an agent trace's later turns are not
//! arrivals: each is sent once the previous turn's answer ended, plus the recorded gap over the
//! speed.

use super::prompts::Prompts;
use super::{Conversation, OwnArrivals, Prepared, Settled, Workload};
use crate::model::RequestRecord;
use crate::scenario::arrivals::step_seed;
use crate::scenario::seeded_words;
use crate::scenario::trace::{Trace, TraceInput, TraceRequest, MOONCAKE_BLOCK_TOKENS};
use crate::scenario::{Budget, PromptContent, RequestSpec};
use std::sync::Arc;
use std::time::Duration;

/// A step's replay of a trace's first `limit` requests at `speed`× their rate.
pub(super) struct Replay {
    prompts: Arc<Prompts>,
    trace: Arc<Trace>,
    speed: f64,
    /// Only requests before it are sent (the step's budget).
    limit: usize,
    /// Arrival k sends trace request `heads[k]` (a session's first turn, or a lone request).
    heads: Vec<usize>,
}

impl Replay {
    /// The replay of `trace` at `speed`; `budget` (the recorded part's) sets how many of its
    /// requests are sent.
    pub(super) fn new(
        prompts: Arc<Prompts>,
        trace: Arc<Trace>,
        speed: f64,
        budget: Budget,
    ) -> Replay {
        let limit = match budget {
            Budget::RequestsPerStep(n) => n as usize,
            _ => trace.requests.len(),
        };
        let heads: Vec<usize> = (0..limit.min(trace.requests.len()))
            .filter(|&i| trace.requests[i].after_previous_ms.is_none())
            .collect();
        Replay {
            prompts,
            trace,
            speed,
            limit,
            heads,
        }
    }

    /// Trace request `n`'s body (the trace wraps around when a warmup runs past its end).
    fn request(&self, n: u64) -> Prepared {
        let req = &self.trace.requests[(n % self.trace.requests.len() as u64) as usize];
        self.prompts
            .build(spec(self.prompts.spec(0), req, self.prompts.seed(), n))
    }
}

impl Workload for Replay {
    /// A warmup's worker: the trace's requests in order, one per ticket.
    fn worker(self: Arc<Self>, _: u32) -> Box<dyn Conversation> {
        Box::new(InOrder { work: self })
    }

    fn arrival(self: Arc<Self>, k: u64) -> Box<dyn Conversation> {
        let at = self.heads[k as usize];
        Box::new(Turns { work: self, at })
    }

    fn arrivals(&self) -> Option<OwnArrivals> {
        let times = self
            .heads
            .iter()
            .map(|&i| self.trace.requests[i].at_ms / 1000.0 / self.speed)
            .collect();
        let offered_rps = self.trace.rate(self.limit).map_or(0.0, |r| r * self.speed);
        Some(OwnArrivals { times, offered_rps })
    }
}

/// A closed-loop worker's replay (a step's warmup): ticket n sends request n.
struct InOrder {
    work: Arc<Replay>,
}

impl Conversation for InOrder {
    fn wait(&mut self) -> Option<Duration> {
        Some(Duration::ZERO)
    }

    fn next(&mut self, n: u64) -> Prepared {
        self.work.request(n)
    }

    fn answered(&mut self, _: &mut RequestRecord) -> Settled {
        Settled::Now
    }
}

/// An arrival's turns: its request, then each next turn of its session (an agent trace), its
/// records its session's (the session's number for the worker, the trace's place for seq).
struct Turns {
    work: Arc<Replay>,
    /// The trace request of the current turn.
    at: usize,
}

impl Conversation for Turns {
    /// The session's next turn after the current one (sent or dropped), and its recorded gap
    /// over the speed; `None` past the session's last turn or the step's requests.
    fn wait(&mut self) -> Option<Duration> {
        let requests = &self.work.trace.requests;
        let next = requests[self.at].next.filter(|i| *i < self.work.limit)?;
        let gap_ms = requests[next].after_previous_ms.unwrap_or(0.0);
        self.at = next;
        Some(Duration::from_secs_f64(gap_ms / 1000.0 / self.work.speed))
    }

    fn next(&mut self, _: u64) -> Prepared {
        let turn = self.work.trace.requests[self.at].turn;
        Prepared {
            turn: turn.map(|t| (t.turn, t.of)),
            origin: Some((
                turn.map_or(0, |t| t.session),
                u32::try_from(self.at).unwrap_or(u32::MAX),
            )),
            ..self.work.request(self.at as u64)
        }
    }

    fn answered(&mut self, _: &mut RequestRecord) -> Settled {
        Settled::Now
    }
}

/// The spec of trace request `n` of a step seeded by `step_seed`, from the scenario's `base`.
fn spec(base: &RequestSpec, req: &TraceRequest, seed: u64, n: u64) -> RequestSpec {
    let mut s = base.clone();
    if let Some(m) = req.output_tokens {
        s.max_tokens = Some(m);
    }
    match &req.input {
        TraceInput::Prompt(PromptContent::Text(t)) => s.prompt = t.clone(),
        TraceInput::Prompt(PromptContent::Messages(m)) => s.messages = m.clone(),
        TraceInput::Tokens { tokens, blocks } => {
            s.prompt = text(*tokens, blocks, req.session.as_deref(), seed, n);
        }
    }
    s
}

/// `tokens` words: the blocks of `blocks`, then text of the session or of this request alone.
fn text(tokens: u32, blocks: &[u64], session: Option<&str>, seed: u64, n: u64) -> String {
    let mut out = String::with_capacity(tokens as usize * 4);
    let mut left = tokens.max(1);
    for &id in blocks {
        if left == 0 {
            break;
        }
        let take = left.min(MOONCAKE_BLOCK_TOKENS);
        out.push_str(&seeded_words(mix(seed, id), take));
        left -= take;
    }
    if left > 0 {
        let own = match session {
            Some(s) => mix(seed ^ 0x5e55, hash(s)),
            None => mix(seed ^ 0x0e1e, n),
        };
        out.push_str(&seeded_words(own, left));
    }
    out
}

fn mix(seed: u64, x: u64) -> u64 {
    step_seed(seed ^ x.rotate_left(17), (x >> 32) as u32 ^ x as u32)
}

/// FNV-1a of a session id.
fn hash(s: &str) -> u64 {
    s.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}
#[cfg(test)]
mod tests {
    use super::*;

    fn req(tokens: u32, blocks: Vec<u64>, session: Option<&str>) -> TraceRequest {
        TraceRequest::new(
            TraceInput::Tokens { tokens, blocks },
            Some(7),
            session.map(str::to_string),
        )
    }

    fn prompt(r: &TraceRequest, seed: u64, n: u64) -> String {
        spec(&RequestSpec::default(), r, seed, n).prompt
    }

    #[test]
    fn shared_hash_ids_share_text_and_nothing_else_does() {
        let a = prompt(&req(1100, vec![1, 2, 3], None), 9, 0);
        let b = prompt(&req(700, vec![1, 2], None), 9, 1);
        let c = prompt(&req(700, vec![5, 2], None), 9, 2);
        assert_eq!(a.len(), 1100 * 4, "one four-character word a token");
        assert_eq!(a[..512 * 4], b[..512 * 4], "block 1 shared");
        assert_eq!(
            a[512 * 4..700 * 4],
            b[512 * 4..],
            "block 2 (partial in b) shared"
        );
        assert_ne!(a[..64], c[..64], "another first id: no shared prefix");
        assert_ne!(
            a[..64],
            prompt(&req(1100, vec![1, 2, 3], None), 10, 0)[..64],
            "steps differ"
        );
        let x = prompt(&req(100, vec![], None), 9, 0);
        let y = prompt(&req(100, vec![], None), 9, 1);
        assert_ne!(x[..64], y[..64], "no ids, no session: unique");
    }

    #[test]
    fn a_session_s_turns_extend_each_other() {
        let t1 = prompt(&req(200, vec![], Some("s1")), 3, 0);
        let t2 = prompt(&req(500, vec![], Some("s1")), 3, 7);
        assert!(t2.starts_with(&t1));
        let other = prompt(&req(200, vec![], Some("s2")), 3, 0);
        assert_ne!(t1[..64], other[..64]);
        let s = spec(&RequestSpec::default(), &req(5, vec![], None), 3, 0);
        assert_eq!(s.max_tokens, Some(7));
    }
}
