//! Account limits as real providers enforce them: a token bucket per limit that refills over one
//! minute, counting one per request (RPM) and prompt tokens + max_tokens (TPM). Also the header
//! value formats (Go-style durations like `6m0s`). Pure: the caller passes the current instant.

use crate::model::LimitKind;
use std::time::{Duration, Instant};

/// A bucket holding up to `capacity` units that refills at `capacity` per minute.
#[derive(Debug, Clone)]
pub struct Bucket {
    capacity: f64,
    level: f64,
    per_sec: f64,
    last: Instant,
}

impl Bucket {
    /// A full bucket for `per_minute` units (must be > 0).
    pub fn new(per_minute: u64, now: Instant) -> Bucket {
        let capacity = per_minute as f64;
        Bucket {
            capacity,
            level: capacity,
            per_sec: capacity / 60.0,
            last: now,
        }
    }

    fn refill(&mut self, now: Instant) {
        let dt = now.saturating_duration_since(self.last).as_secs_f64();
        self.level = (self.level + dt * self.per_sec).min(self.capacity);
        self.last = self.last.max(now);
    }

    /// Time until the bucket holds `amount` (zero if it already does); a request larger than the
    /// whole bucket waits a full minute (and will still not fit).
    fn wait_for(&self, amount: f64) -> Duration {
        if amount > self.capacity {
            return Duration::from_secs(60);
        }
        secs((amount - self.level).max(0.0) / self.per_sec)
    }

    fn state(&self) -> BucketState {
        BucketState {
            limit: self.capacity as u64,
            remaining: self.level.max(0.0).floor() as u64,
            reset: secs((self.capacity - self.level).max(0.0) / self.per_sec),
        }
    }
}

fn secs(s: f64) -> Duration {
    if s.is_finite() && s > 0.0 {
        Duration::from_secs_f64(s.min(1e9))
    } else {
        Duration::ZERO
    }
}

/// What the `x-ratelimit-*` headers report for one limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BucketState {
    pub limit: u64,
    pub remaining: u64,
    /// Time until the bucket is full again.
    pub reset: Duration,
}

/// The state of both limits after a decision; `None` for a limit that is not configured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Snapshot {
    pub requests: Option<BucketState>,
    pub tokens: Option<BucketState>,
}

/// The outcome of admitting one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    Allowed(Snapshot),
    Limited {
        kind: LimitKind,
        retry_after: Duration,
        snapshot: Snapshot,
    },
}

/// RPM and TPM buckets; a request is admitted only if both have room, and then takes from both.
#[derive(Debug, Clone)]
pub struct Limiter {
    requests: Option<Bucket>,
    tokens: Option<Bucket>,
}

impl Limiter {
    pub fn new(rpm: Option<u32>, tpm: Option<u64>, now: Instant) -> Limiter {
        Limiter {
            requests: rpm
                .filter(|&n| n > 0)
                .map(|n| Bucket::new(u64::from(n), now)),
            tokens: tpm.filter(|&n| n > 0).map(|n| Bucket::new(n, now)),
        }
    }

    /// Whether any limit is configured.
    pub fn is_active(&self) -> bool {
        self.requests.is_some() || self.tokens.is_some()
    }

    /// Admits (and charges) one request of `tokens` tokens, or says which limit refused it.
    pub fn admit(&mut self, now: Instant, tokens: u64) -> Decision {
        if let Some(b) = &mut self.requests {
            b.refill(now);
        }
        if let Some(b) = &mut self.tokens {
            b.refill(now);
        }
        let need = tokens as f64;
        let refusal = match (&self.requests, &self.tokens) {
            (Some(r), _) if r.level < 1.0 => Some((LimitKind::Requests, r.wait_for(1.0))),
            (_, Some(t)) if t.level < need || need > t.capacity => {
                Some((LimitKind::Tokens, t.wait_for(need)))
            }
            _ => None,
        };
        if refusal.is_none() {
            if let Some(b) = &mut self.requests {
                b.level -= 1.0;
            }
            if let Some(b) = &mut self.tokens {
                b.level -= need;
            }
        }
        let snapshot = Snapshot {
            requests: self.requests.as_ref().map(Bucket::state),
            tokens: self.tokens.as_ref().map(Bucket::state),
        };
        match refusal {
            None => Decision::Allowed(snapshot),
            Some((kind, retry_after)) => Decision::Limited {
                kind,
                retry_after,
                snapshot,
            },
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
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn go_durations() {
        assert_eq!(go_duration(Duration::ZERO), "0s");
        assert_eq!(go_duration(ms(20)), "20ms");
        assert_eq!(go_duration(Duration::from_micros(1)), "1ms");
        assert_eq!(go_duration(ms(999)), "999ms");
        assert_eq!(go_duration(ms(1000)), "1s");
        assert_eq!(go_duration(ms(1500)), "1.5s");
        assert_eq!(go_duration(ms(1250)), "1.25s");
        assert_eq!(go_duration(ms(59_999)), "59.999s");
        assert_eq!(go_duration(ms(360_000)), "6m0s");
        assert_eq!(go_duration(ms(61_500)), "1m1.5s");
        assert_eq!(go_duration(ms(3_600_000)), "1h0m0s");
        assert_eq!(go_duration(ms(3_723_000)), "1h2m3s");
    }

    #[test]
    fn retry_after_rounds_up() {
        assert_eq!(retry_after_secs(Duration::ZERO), 0);
        assert_eq!(retry_after_secs(ms(1)), 1);
        assert_eq!(retry_after_secs(ms(1000)), 1);
        assert_eq!(retry_after_secs(ms(1001)), 2);
        assert_eq!(retry_after_ms(Duration::from_micros(1500)), 2);
    }

    #[test]
    fn rpm_bucket_refuses_then_refills() {
        let t0 = Instant::now();
        let mut l = Limiter::new(Some(2), None, t0);
        assert!(l.is_active());
        assert!(matches!(l.admit(t0, 100), Decision::Allowed(_)));
        match l.admit(t0, 100) {
            Decision::Allowed(s) => {
                let r = s.requests.unwrap();
                assert_eq!((r.limit, r.remaining), (2, 0));
                assert_eq!(r.reset, ms(60_000)); // 2 per minute: 30 s per request
                assert!(s.tokens.is_none());
            }
            other => panic!("{other:?}"),
        }
        match l.admit(t0, 100) {
            Decision::Limited {
                kind, retry_after, ..
            } => {
                assert_eq!(kind, LimitKind::Requests);
                assert_eq!(retry_after, ms(30_000));
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(l.admit(t0 + ms(30_000), 1), Decision::Allowed(_)));
    }

    #[test]
    fn tpm_bucket_counts_tokens_and_refuses_oversized() {
        let t0 = Instant::now();
        let mut l = Limiter::new(None, Some(600), t0);
        assert!(matches!(l.admit(t0, 500), Decision::Allowed(_)));
        match l.admit(t0, 200) {
            Decision::Limited {
                kind,
                retry_after,
                snapshot,
            } => {
                assert_eq!(kind, LimitKind::Tokens);
                // 100 left, 10 tokens/s: 100 more need 10 s.
                assert_eq!(retry_after, ms(10_000));
                let t = snapshot.tokens.unwrap();
                assert_eq!((t.limit, t.remaining), (600, 100));
                assert_eq!(t.reset, ms(50_000));
            }
            other => panic!("{other:?}"),
        }
        // A refused request is not charged.
        assert!(matches!(l.admit(t0, 100), Decision::Allowed(_)));
        // Larger than the whole bucket: never fits.
        let late = t0 + ms(600_000);
        assert!(matches!(
            l.admit(late, 601),
            Decision::Limited {
                kind: LimitKind::Tokens,
                ..
            }
        ));
        assert!(matches!(l.admit(late, 600), Decision::Allowed(_)));
    }

    #[test]
    fn requests_checked_before_tokens_and_neither_charged_on_refusal() {
        let t0 = Instant::now();
        let mut l = Limiter::new(Some(1), Some(10), t0);
        assert!(matches!(
            l.admit(t0, 20),
            Decision::Limited {
                kind: LimitKind::Tokens,
                ..
            }
        ));
        assert!(matches!(l.admit(t0, 10), Decision::Allowed(_)));
        assert!(matches!(
            l.admit(t0, 1),
            Decision::Limited {
                kind: LimitKind::Requests,
                ..
            }
        ));
    }

    #[test]
    fn no_limits_always_allows() {
        let t0 = Instant::now();
        let mut l = Limiter::new(None, None, t0);
        assert!(!l.is_active());
        assert_eq!(
            l.admit(t0, u64::MAX),
            Decision::Allowed(Snapshot::default())
        );
        assert!(!Limiter::new(Some(0), Some(0), t0).is_active());
    }

    #[test]
    fn time_going_backwards_does_not_refill() {
        let t0 = Instant::now() + ms(1000);
        let mut l = Limiter::new(Some(1), None, t0);
        assert!(matches!(l.admit(t0, 0), Decision::Allowed(_)));
        assert!(matches!(l.admit(t0 - ms(500), 0), Decision::Limited { .. }));
    }
}
