//! An A/B step (`compare: {interleave: true}`): two models' workloads share one step's senders,
//! so that whatever the provider's load does during the step, it does to both alike. A
//! closed-loop worker alternates between its two conversations request by request (worker 0
//! starts with A, worker 1 with B, …), so at any moment about half the step's streams wait on
//! each model and both sides' requests span the whole step; an open-loop arrival goes to A or
//! B by its number's parity. Each model numbers its own requests (its prompts cycle as they
//! would in a run of that model alone), and every request says which model it went to
//! (`Prepared::variant`), which its record then carries.

use super::{Conversation, Prepared, Settled, Workload};
use crate::model::RequestRecord;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// The two models' workloads of one A/B step, A first.
pub struct Interleaved {
    sides: [(Arc<str>, Arc<dyn Workload>); 2],
    counts: Arc<Counts>,
}

/// Each model's requests so far (what its conversations number their requests with), and the
/// most each may send in the step.
struct Counts {
    sent: [AtomicU64; 2],
    limit: Option<u64>,
}

impl Counts {
    /// The next request number of side `i`, reserved; `None` when the side has sent its share.
    fn reserve(&self, i: usize) -> Option<u64> {
        let limit = self.limit.unwrap_or(u64::MAX);
        self.sent[i]
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |c| {
                (c < limit).then_some(c + 1)
            })
            .ok()
    }
}

impl Interleaved {
    /// `per_side`: each model's requests in the step (a step of `requests_per_step`: exactly
    /// that many each, whichever model is faster); `None`: as many as the step's time allows.
    pub fn new(
        a: (&str, Arc<dyn Workload>),
        b: (&str, Arc<dyn Workload>),
        per_side: Option<u64>,
    ) -> Interleaved {
        Interleaved {
            sides: [(Arc::from(a.0), a.1), (Arc::from(b.0), b.1)],
            counts: Arc::new(Counts {
                sent: [AtomicU64::new(0), AtomicU64::new(0)],
                limit: per_side,
            }),
        }
    }
}

impl Workload for Interleaved {
    fn worker(self: Arc<Self>, worker: u32) -> Box<dyn Conversation> {
        let side = |i: usize| Side {
            model: Arc::clone(&self.sides[i].0),
            conversation: Arc::clone(&self.sides[i].1).worker(worker),
            ended: false,
        };
        Box::new(Alternating {
            sides: [side(0), side(1)],
            next: (worker % 2) as usize,
            reserved: None,
            last: 0,
            counts: Arc::clone(&self.counts),
        })
    }

    fn arrival(self: Arc<Self>, k: u64) -> Box<dyn Conversation> {
        let i = (k % 2) as usize;
        let (model, work) = &self.sides[i];
        // Arrival k is model i's (k / 2)-th: each model's arrivals are numbered as if alone.
        Box::new(OneSide {
            model: Arc::clone(model),
            conversation: Arc::clone(work).arrival(k / 2),
            n: k / 2,
        })
    }
}

/// One model's conversation in an alternating worker.
struct Side {
    model: Arc<str>,
    conversation: Box<dyn Conversation>,
    /// Its conversation said it has no next turn.
    ended: bool,
}

/// A closed-loop worker's two conversations, taken in turn; when one ends, the other goes on
/// alone.
struct Alternating {
    sides: [Side; 2],
    /// The side whose turn is next.
    next: usize,
    /// The number `wait` reserved for the next turn, of side `next`.
    reserved: Option<u64>,
    /// The side of the turn sent last (whose answer comes back).
    last: usize,
    counts: Arc<Counts>,
}

impl Conversation for Alternating {
    /// The wait before the next side's turn; a side that ended, or sent its share of the step,
    /// gives its turn to the other.
    fn wait(&mut self) -> Option<Duration> {
        for _ in 0..2 {
            let i = self.next;
            if !self.sides[i].ended {
                if let Some(n) = self.reserved.take().or_else(|| self.counts.reserve(i)) {
                    match self.sides[i].conversation.wait() {
                        Some(w) => {
                            self.reserved = Some(n);
                            return Some(w);
                        }
                        None => self.sides[i].ended = true,
                    }
                }
            }
            self.next = 1 - i;
        }
        None
    }

    fn next(&mut self, _: u64) -> Prepared {
        let i = self.next;
        (self.last, self.next) = (i, 1 - i);
        // `wait` reserved it (the loops ask `wait` before every turn).
        let n = self.reserved.take().unwrap_or(0);
        let side = &mut self.sides[i];
        Prepared {
            variant: Some(Arc::clone(&side.model)),
            ..side.conversation.next(n)
        }
    }

    fn answered(&mut self, rec: &mut RequestRecord) -> Settled {
        self.sides[self.last].conversation.answered(rec)
    }
}

/// An open-loop arrival's conversation, all of it with one model.
struct OneSide {
    model: Arc<str>,
    conversation: Box<dyn Conversation>,
    /// The arrival's number among its model's arrivals.
    n: u64,
}

impl Conversation for OneSide {
    fn wait(&mut self) -> Option<Duration> {
        self.conversation.wait()
    }

    fn next(&mut self, _: u64) -> Prepared {
        Prepared {
            variant: Some(Arc::clone(&self.model)),
            ..self.conversation.next(self.n)
        }
    }

    fn answered(&mut self, rec: &mut RequestRecord) -> Settled {
        self.conversation.answered(rec)
    }
}
