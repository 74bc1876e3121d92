//! Generation timing: a hand-written `Stream` that waits for a slot, waits out TTFT, then emits
//! one pre-serialized frame per token at absolute deadlines (first-token instant + Σ intervals, so
//! TPOT does not drift), injecting mid-stream faults on the way. No task, channel or lock per
//! token. Also the same schedule for non-streaming answers.

use super::faults::{strike_after, FaultKind};
use super::state::Guard;
use super::wire::{Finish, Frames, PING};
use bytes::Bytes;
use futures_util::Stream;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::task::{ready, Context, Poll};
use std::time::{Duration, Instant};
use tokio::time::Sleep;

/// How one admitted request is generated.
#[derive(Debug, Clone)]
pub struct Plan {
    /// Answer tokens to generate.
    pub n: u32,
    /// Reasoning tokens streamed before the answer (0 when reasoning is hidden: then it is
    /// inside `ttft`).
    pub reasoning: u32,
    pub finish: Finish,
    /// Base TTFT + prefill for this prompt, counted from the moment a slot is free.
    pub ttft: Duration,
    pub include_usage: bool,
    pub input_tokens: u64,
    /// The injected fault, if it acts on the body (disconnect, stall, malformed, ...).
    pub fault: Option<FaultKind>,
    pub stall_for: Duration,
    /// Anthropic streams get an `event: ping` every this many tokens.
    pub ping_every: u32,
}

/// Token intervals: `tpot` × (1 ± jitter) × (1 + saturation × streams above `saturation_from`).
#[derive(Debug, Clone)]
pub struct Pacer {
    tpot: f64,
    jitter: f64,
    saturation: f64,
    from: u64,
    rng: SmallRng,
}

impl Pacer {
    pub fn new(tpot: Duration, jitter: f64, saturation: f64, from: u32, seed: u64) -> Pacer {
        Pacer {
            tpot: tpot.as_secs_f64(),
            jitter: jitter.clamp(0.0, 1.0),
            saturation: saturation.max(0.0),
            from: u64::from(from),
            rng: SmallRng::seed_from_u64(seed),
        }
    }

    /// The interval before the next token when `active` streams hold a slot.
    pub fn next(&mut self, active: u64) -> Duration {
        let j = if self.jitter > 0.0 {
            self.jitter * self.rng.gen_range(-1.0..=1.0)
        } else {
            0.0
        };
        let slow = 1.0 + self.saturation * active.saturating_sub(self.from) as f64;
        let s = self.tpot * (1.0 + j) * slow;
        if s.is_finite() && s > 0.0 {
            Duration::from_secs_f64(s.min(1e6))
        } else {
            Duration::ZERO
        }
    }
}

/// Waits in the FIFO queue for a slot (at once when one is free or there is no cap) and takes
/// it: prefill starts. Returns when the slot was taken, or `None` when the simulator shut down.
/// The wait is recorded in the truth (`queue_ms`).
pub async fn admit(guard: &mut Guard, arrival: Instant) -> Option<Instant> {
    let slots = guard.ctx().slots.clone();
    let (permit, at) = match slots {
        None => (None, arrival),
        Some(s) => match s.clone().try_acquire_owned() {
            Ok(p) => (Some(p), arrival),
            Err(_) => {
                guard.enqueue();
                (Some(s.acquire_owned().await.ok()?), Instant::now())
            }
        },
    };
    guard.start(permit);
    guard.truth.queue_ms = Some(at.saturating_duration_since(arrival).as_secs_f64() * 1000.0);
    Some(at)
}

/// The SSE body of one streaming answer.
pub struct TokenStream {
    guard: Guard,
    frames: Frames,
    plan: Plan,
    pacer: Pacer,
    sleep: Option<Pin<Box<Sleep>>>,
    deadline: Instant,
    waiting: bool,
    sent: u32,
    strike: u32,
    fault_armed: bool,
    pending: Option<Bytes>,
    /// Fail the body (which drops the connection) at the next poll.
    drop_next: bool,
    done: bool,
}

impl TokenStream {
    /// The stream of a request that took its slot ([`admit`]) at `admitted`.
    pub fn new(
        guard: Guard,
        frames: Frames,
        plan: Plan,
        pacer: Pacer,
        admitted: Instant,
    ) -> TokenStream {
        let mut s = TokenStream {
            guard,
            frames,
            strike: strike_after(plan.n + plan.reasoning),
            fault_armed: plan.fault.is_some(),
            plan,
            pacer,
            sleep: None,
            deadline: admitted,
            waiting: false,
            sent: 0,
            pending: None,
            drop_next: false,
            done: false,
        };
        // Prefill starts; the opening frame goes out.
        s.deadline = admitted + s.plan.ttft;
        s.arm();
        s.pending = s.frames.opening(s.plan.input_tokens);
        s
    }

    fn arm(&mut self) {
        let deadline = tokio::time::Instant::from_std(self.deadline);
        match &mut self.sleep {
            Some(s) => s.as_mut().reset(deadline),
            None => self.sleep = Some(Box::pin(tokio::time::sleep_until(deadline))),
        }
        self.waiting = true;
    }

    fn finish(&mut self) {
        self.guard.release();
        self.done = true;
    }

    /// The current deadline has passed: do what is due.
    fn step(&mut self) -> Option<Result<Bytes, io::Error>> {
        if self.fault_armed && self.sent == self.strike {
            self.fault_armed = false;
            match self.plan.fault {
                Some(FaultKind::Disconnect) => {
                    // Yield once so the server flushes the tokens already written, then fail.
                    self.finish();
                    self.drop_next = true;
                    return None;
                }
                Some(FaultKind::InbandError) => {
                    self.finish();
                    return Some(Ok(self.frames.inband_error(self.sent)));
                }
                Some(FaultKind::Malformed) => return Some(Ok(self.frames.malformed())),
                Some(FaultKind::Stall) => {
                    self.deadline += self.plan.stall_for;
                    self.arm();
                    return None;
                }
                _ => {}
            }
        }
        let (reasoning, total) = (self.plan.reasoning, self.plan.reasoning + self.plan.n);
        if self.sent < total {
            let frame = if self.sent < reasoning {
                self.frames.reasoning_token(self.sent)
            } else {
                self.answer_frame(self.frames.token(self.sent - reasoning))
            };
            self.guard.token(Instant::now());
            self.sent += 1;
            if self.sent < total {
                self.deadline += self.pacer.next(self.guard.ctx().active());
                self.arm();
                if self.plan.ping_every > 0 && self.sent % self.plan.ping_every == 0 {
                    self.pending = Some(Bytes::from_static(PING.as_bytes()));
                }
            }
            return Some(Ok(frame));
        }
        let usage = self
            .plan
            .include_usage
            .then_some((self.plan.input_tokens, self.sent - reasoning));
        let done = self.plan.fault != Some(FaultKind::NoDone);
        self.finish();
        let closing = self.frames.closing(self.plan.finish, usage, done);
        Some(Ok(self.answer_frame(closing)))
    }

    /// `frame` preceded by the switch from reasoning to the answer when it is the first frame
    /// after streamed reasoning (`Frames::answer_start`).
    fn answer_frame(&self, frame: Bytes) -> Bytes {
        let first = self.plan.reasoning > 0 && self.sent == self.plan.reasoning;
        match self.frames.answer_start().filter(|_| first) {
            Some(start) => [start, frame].concat().into(),
            None => frame,
        }
    }
}

impl Stream for TokenStream {
    type Item = Result<Bytes, io::Error>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        loop {
            if let Some(frame) = this.pending.take() {
                return Poll::Ready(Some(Ok(frame)));
            }
            if std::mem::take(&mut this.drop_next) {
                let err = io::Error::new(io::ErrorKind::ConnectionAborted, "simulated disconnect");
                return Poll::Ready(Some(Err(err)));
            }
            if this.done {
                return Poll::Ready(None);
            }
            if this.waiting {
                if let Some(sleep) = &mut this.sleep {
                    ready!(sleep.as_mut().poll(cx));
                }
                this.waiting = false;
            }
            if let Some(item) = this.step() {
                return Poll::Ready(Some(item));
            }
            if this.drop_next {
                cx.waker().wake_by_ref();
                return Poll::Pending;
            }
        }
    }
}

/// How a non-streaming generation ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// All `n` tokens generated.
    Complete,
    /// The connection is to be dropped (disconnect fault).
    Dropped,
}

/// Runs the same schedule as [`TokenStream`] without sending anything until the end: waits for a
/// slot, TTFT and every token interval, records the truth, and gives the slot back.
pub async fn generate(
    guard: &mut Guard,
    plan: &Plan,
    pacer: &mut Pacer,
    arrival: Instant,
) -> Outcome {
    let Some(at) = admit(guard, arrival).await else {
        return Outcome::Dropped;
    };
    let mut t = at + plan.ttft;
    let strike = strike_after(plan.n);
    let dropped = plan.fault == Some(FaultKind::Disconnect);
    let stop = if dropped { strike } else { plan.n };
    for i in 0..stop {
        if i == strike && plan.fault == Some(FaultKind::Stall) {
            t += plan.stall_for;
        }
        if i > 0 {
            t += pacer.next(guard.ctx().active());
        }
        tokio::time::sleep_until(tokio::time::Instant::from_std(t)).await;
        guard.token(t);
    }
    if plan.n == 0 {
        // Nothing generated (an embedding): a stall holds the whole answer.
        if plan.fault == Some(FaultKind::Stall) {
            t += plan.stall_for;
        }
        tokio::time::sleep_until(tokio::time::Instant::from_std(t)).await;
    }
    guard.release();
    if dropped {
        Outcome::Dropped
    } else {
        Outcome::Complete
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pacer_without_jitter_or_load_is_exact() {
        let mut p = Pacer::new(Duration::from_millis(20), 0.0, 0.0, 1, 7);
        for active in [0, 1, 100] {
            assert_eq!(p.next(active), Duration::from_millis(20));
        }
    }

    #[test]
    fn pacer_jitter_stays_in_bounds_and_averages_out() {
        let mut p = Pacer::new(Duration::from_millis(20), 0.1, 0.0, 1, 7);
        let xs: Vec<f64> = (0..10_000).map(|_| p.next(1).as_secs_f64() * 1e3).collect();
        assert!(xs.iter().all(|&x| (18.0..=22.0).contains(&x)));
        let mean = xs.iter().sum::<f64>() / xs.len() as f64;
        assert!((mean - 20.0).abs() < 0.05, "mean {mean}");
        assert!(xs.iter().any(|&x| x < 19.0) && xs.iter().any(|&x| x > 21.0));
    }

    #[test]
    fn pacer_is_reproducible_from_its_seed() {
        let run = |seed| {
            let mut p = Pacer::new(Duration::from_millis(20), 0.5, 0.0, 1, seed);
            (0..5).map(|_| p.next(1)).collect::<Vec<_>>()
        };
        assert_eq!(run(1), run(1));
        assert_ne!(run(1), run(2));
    }

    #[test]
    fn pacer_saturation_grows_with_streams_above_threshold() {
        let mut p = Pacer::new(Duration::from_millis(10), 0.0, 0.5, 2, 7);
        assert_eq!(p.next(2), Duration::from_millis(10));
        assert_eq!(p.next(3), Duration::from_millis(15));
        assert_eq!(p.next(6), Duration::from_millis(30));
    }
}
