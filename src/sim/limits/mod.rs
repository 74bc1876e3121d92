//! Account limits as providers enforce them (docs/simulator.md, "Account limits"): requests,
//! tokens, input and output tokens per minute, each metered as its provider counts it
//! (`rules`), requests in flight, and a ramp refused while every limit still has room
//! (acceleration), for the whole account or per API key. Also the header value formats
//! (Go-style durations like `6m0s`). Pure: the caller passes the current instant.

mod meter;
mod rules;

use crate::model::LimitKind;
pub use meter::BucketState;
use meter::Meter;
pub use rules::{CachedInput, LimitPreset, LimitScope, LimitWindow, Rules, TpmCounts};
use std::collections::{HashMap, VecDeque};
use std::hash::{Hash, Hasher};
use std::time::{Duration, Instant};

/// What a request asks of the limits.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Ask {
    pub input_tokens: u64,
    /// Of which read from the prefix cache.
    pub cached_tokens: u64,
    /// Its output limit (the server's own when it sets none); 0 for an embedding.
    pub max_tokens: u64,
}

/// The state of every configured limit after a decision, for the rate-limit headers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Snapshot {
    pub requests: Option<BucketState>,
    pub tokens: Option<BucketState>,
    pub input_tokens: Option<BucketState>,
    pub output_tokens: Option<BucketState>,
}

impl Snapshot {
    /// The state of the limit of `kind`, when it is metered.
    pub fn of(&self, kind: LimitKind) -> Option<BucketState> {
        match kind {
            LimitKind::Requests => self.requests,
            LimitKind::Tokens => self.tokens,
            LimitKind::InputTokens => self.input_tokens,
            LimitKind::OutputTokens => self.output_tokens,
            LimitKind::Concurrency | LimitKind::Acceleration => None,
        }
    }
}

/// What an admitted request settles when its answer ends ([`Limiter::settle`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Admission {
    account: u64,
    input_tokens: u64,
    reserved_output: u64,
}

/// The outcome of admitting one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    Allowed(Snapshot, Admission),
    Limited {
        kind: LimitKind,
        /// The limit refused against: per minute, or requests in flight.
        limit: u64,
        retry_after: Duration,
        snapshot: Snapshot,
    },
}

/// One account's (or key's) meters and traffic.
#[derive(Debug, Clone)]
struct Account {
    requests: Option<Meter>,
    tokens: Option<Meter>,
    input: Option<Meter>,
    output: Option<Meter>,
    in_flight: u64,
    /// Admissions in the last two acceleration windows.
    admitted: VecDeque<Instant>,
}

/// The limits in force and each account's state.
#[derive(Debug, Clone)]
pub struct Limiter {
    rules: Rules,
    accounts: HashMap<u64, Account>,
}

impl Limiter {
    pub fn new(rules: Rules) -> Limiter {
        Limiter {
            rules,
            accounts: HashMap::new(),
        }
    }

    /// Whether any limit is in force.
    pub fn is_active(&self) -> bool {
        self.rules.any()
    }

    /// The account a request with API key `key` counts against: one for all, or one per key
    /// (a hash: the key itself is never kept).
    fn account_of(&self, key: Option<&str>) -> u64 {
        if !self.rules.per_key {
            return 0;
        }
        let mut h = std::collections::hash_map::DefaultHasher::new();
        key.unwrap_or("").hash(&mut h);
        h.finish()
    }

    fn account(&mut self, id: u64, now: Instant) -> &mut Account {
        let r = &self.rules;
        let meter = |limit: Option<u64>| limit.map(|n| Meter::new(n, r.refill, r.period, now));
        self.accounts.entry(id).or_insert_with(|| Account {
            requests: meter(r.rpm),
            tokens: meter(r.tpm),
            input: meter(r.itpm),
            output: meter(r.otpm),
            in_flight: 0,
            admitted: VecDeque::new(),
        })
    }

    /// Admits (and charges) one request of API key `key`, or says which limit refused it.
    pub fn admit(&mut self, now: Instant, key: Option<&str>, ask: Ask) -> Decision {
        let id = self.account_of(key);
        let rules = self.rules.clone();
        let a = self.account(id, now);
        for m in a.meters_mut() {
            m.refill(now);
        }
        let charges = Charges::of(&rules, ask);
        let refusal = a.refusal(&rules, &charges, now);
        if refusal.is_none() {
            a.charge(&charges, now);
        }
        let snapshot = a.snapshot(now);
        match refusal {
            None => Decision::Allowed(
                snapshot,
                Admission {
                    account: id,
                    input_tokens: ask.input_tokens,
                    reserved_output: charges.output,
                },
            ),
            Some((kind, limit, retry_after)) => Decision::Limited {
                kind,
                limit,
                retry_after,
                snapshot,
            },
        }
    }

    /// An admitted request's answer ended with `output_tokens` generated: a TPM charged after
    /// the answer takes its tokens, an OTPM reservation is settled to what was generated, and
    /// its place in flight is freed.
    pub fn settle(&mut self, now: Instant, admission: Admission, output_tokens: u64) {
        let after = self.rules.tpm_counts == TpmCounts::After;
        let Some(a) = self.accounts.get_mut(&admission.account) else {
            return;
        };
        for m in a.meters_mut() {
            m.refill(now);
        }
        if after {
            if let Some(m) = &mut a.tokens {
                m.take((admission.input_tokens + output_tokens) as f64);
            }
        }
        if let Some(m) = &mut a.output {
            m.take(output_tokens as f64 - admission.reserved_output as f64);
        }
        a.in_flight = a.in_flight.saturating_sub(1);
    }
}

/// What one request is charged at admission against each limit.
#[derive(Debug, Clone, Copy)]
struct Charges {
    /// Against TPM; `None` when it is charged after the answer.
    tokens: Option<f64>,
    input: f64,
    output: u64,
}

impl Charges {
    fn of(r: &Rules, ask: Ask) -> Charges {
        let tokens = match r.tpm_counts {
            TpmCounts::Reserve => Some((ask.input_tokens + ask.max_tokens) as f64),
            TpmCounts::Larger => Some(ask.input_tokens.max(ask.max_tokens) as f64),
            TpmCounts::After => None,
        };
        let input = match r.cached_input {
            CachedInput::Free => ask.input_tokens.saturating_sub(ask.cached_tokens),
            CachedInput::Counted => ask.input_tokens,
        };
        Charges {
            tokens,
            input: input as f64,
            output: ask.max_tokens,
        }
    }
}

impl Account {
    fn meters_mut(&mut self) -> impl Iterator<Item = &mut Meter> {
        [
            &mut self.requests,
            &mut self.tokens,
            &mut self.input,
            &mut self.output,
        ]
        .into_iter()
        .flatten()
    }

    /// The first limit that refuses: requests in flight, then a ramp, then each meter.
    fn refusal(
        &mut self,
        r: &Rules,
        c: &Charges,
        now: Instant,
    ) -> Option<(LimitKind, u64, Duration)> {
        if let Some(n) = r.concurrency.filter(|&n| self.in_flight >= n) {
            return Some((LimitKind::Concurrency, n, Duration::from_secs(1)));
        }
        if let Some(factor) = r.accel {
            let window = rules::ACCEL_WINDOW;
            while self
                .admitted
                .front()
                .is_some_and(|&t| now.saturating_duration_since(t) >= window * 2)
            {
                self.admitted.pop_front();
            }
            let last = self
                .admitted
                .iter()
                .filter(|&&t| now.saturating_duration_since(t) < window)
                .count() as f64;
            let before = self.admitted.len() as f64 - last;
            let allowed = factor * before.max(r.accel_floor * window.as_secs_f64());
            if last + 1.0 > allowed {
                return Some((LimitKind::Acceleration, 0, Duration::from_secs(1)));
            }
        }
        let meters = [
            (LimitKind::Requests, &self.requests, Some(1.0)),
            (LimitKind::Tokens, &self.tokens, c.tokens),
            (LimitKind::InputTokens, &self.input, Some(c.input)),
            (LimitKind::OutputTokens, &self.output, Some(c.output as f64)),
        ];
        meters.into_iter().find_map(|(kind, meter, amount)| {
            let m = meter.as_ref()?;
            let fits = m.fits(amount.unwrap_or(0.0), amount.is_some());
            (!fits).then(|| {
                let limit = m.state(now).limit;
                (kind, limit, m.wait_for(amount.unwrap_or(0.0), now))
            })
        })
    }

    fn charge(&mut self, c: &Charges, now: Instant) {
        let amounts = [
            (&mut self.requests, 1.0),
            (&mut self.tokens, c.tokens.unwrap_or(0.0)),
            (&mut self.input, c.input),
            (&mut self.output, c.output as f64),
        ];
        for (meter, amount) in amounts {
            if let Some(m) = meter {
                m.take(amount);
            }
        }
        self.in_flight += 1;
        self.admitted.push_back(now);
    }

    fn snapshot(&self, now: Instant) -> Snapshot {
        let state = |m: &Option<Meter>| m.as_ref().map(|m| m.state(now));
        Snapshot {
            requests: state(&self.requests),
            tokens: state(&self.tokens),
            input_tokens: state(&self.input),
            output_tokens: state(&self.output),
        }
    }
}

/// A duration as Go's `time.Duration.String()` writes it, at millisecond precision rounded up:
/// `0s`, `20ms`, `1.5s`, `6m0s`, `1h0m0s` (the form OpenAI's `x-ratelimit-reset-*` use).
pub fn go_duration(d: Duration) -> String {
    let ms = d.as_nanos().div_ceil(1_000_000);
    if ms == 0 {
        return "0s".into();
    }
    if ms < 1000 {
        return format!("{ms}ms");
    }
    let (h, m) = (ms / 3_600_000, (ms / 60_000) % 60);
    let s_ms = ms % 60_000;
    let mut s = format!("{}", s_ms / 1000);
    if s_ms % 1000 != 0 {
        let frac = format!("{:03}", s_ms % 1000);
        s.push('.');
        s.push_str(frac.trim_end_matches('0'));
    }
    if h > 0 {
        format!("{h}h{m}m{s}s")
    } else if m > 0 {
        format!("{m}m{s}s")
    } else {
        format!("{s}s")
    }
}

/// `retry-after` in whole seconds, rounded up (at least 1 when any wait is needed).
pub fn retry_after_secs(d: Duration) -> u64 {
    d.as_nanos().div_ceil(1_000_000_000) as u64
}

/// `retry-after-ms`, rounded up.
pub fn retry_after_ms(d: Duration) -> u64 {
    d.as_nanos().div_ceil(1_000_000) as u64
}

#[cfg(test)]
mod tests;
