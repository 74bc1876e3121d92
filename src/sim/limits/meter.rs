//! One metered limit: a token bucket refilled continuously (OpenAI, Anthropic) or a fixed window
//! reset at each period's end (Azure's short windows), holding a limit's worth of the period.
//! Pure: the caller passes the current instant.

use std::time::{Duration, Instant};

/// How a limit's amount comes back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refill {
    /// Continuously, at the limit's rate, up to the period's worth (a token bucket).
    Bucket,
    /// All at once at the end of each period, counted from the server's start.
    Window,
}

/// A limit of `per_minute` units, of which a period's worth can be spent at once.
#[derive(Debug, Clone)]
pub struct Meter {
    per_minute: f64,
    depth: f64,
    level: f64,
    refill: Refill,
    period: Duration,
    origin: Instant,
    last: Instant,
}

/// What the rate-limit headers report for one limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BucketState {
    /// The limit per minute.
    pub limit: u64,
    /// What is left, as the same share of the per-minute limit as of the bucket.
    pub remaining: u64,
    /// Time until the bucket is full again (a window: until it resets).
    pub reset: Duration,
}

impl Meter {
    /// A full meter of `per_minute` units (> 0) spendable over `period` (> 0).
    pub fn new(per_minute: u64, refill: Refill, period: Duration, now: Instant) -> Meter {
        let per_minute = per_minute as f64;
        let depth = per_minute * period.as_secs_f64() / 60.0;
        Meter {
            per_minute,
            depth,
            level: depth,
            refill,
            period,
            origin: now,
            last: now,
        }
    }

    pub fn refill(&mut self, now: Instant) {
        match self.refill {
            Refill::Bucket => {
                let dt = now.saturating_duration_since(self.last).as_secs_f64();
                self.level = (self.level + dt * self.per_minute / 60.0).min(self.depth);
            }
            Refill::Window => {
                if self.window_of(now) > self.window_of(self.last) {
                    self.level = self.depth;
                }
            }
        }
        self.last = self.last.max(now);
    }

    fn window_of(&self, t: Instant) -> u128 {
        t.saturating_duration_since(self.origin).as_nanos() / self.period.as_nanos().max(1)
    }

    /// Whether `amount` fits now (`strict: false`: whether anything is left, for a limit
    /// charged after the answer).
    pub fn fits(&self, amount: f64, strict: bool) -> bool {
        if !strict {
            return self.level > 0.0;
        }
        // More than a short period holds, but not more than the minute's limit: it goes when
        // the meter is full, leaving it in debt.
        amount <= self.level || (self.level >= self.depth && amount <= self.per_minute)
    }

    /// Time until `amount` fits; a period when it never will (more than the whole meter).
    pub fn wait_for(&self, amount: f64, now: Instant) -> Duration {
        if amount > self.per_minute {
            return self.period.max(Duration::from_secs(60));
        }
        let short = amount.min(self.depth).max(f64::MIN_POSITIVE) - self.level;
        if short <= 0.0 {
            return Duration::ZERO;
        }
        match self.refill {
            Refill::Bucket => secs(short * 60.0 / self.per_minute),
            Refill::Window => self.until_next_window(now),
        }
    }

    fn until_next_window(&self, now: Instant) -> Duration {
        let next = (self.window_of(now) + 1) * self.period.as_nanos();
        let at = self.origin + Duration::from_nanos(u64::try_from(next).unwrap_or(u64::MAX));
        at.saturating_duration_since(now)
    }

    /// Takes `amount` (a negative amount gives back; the level never exceeds the meter's depth
    /// and may go below zero when a charge after the answer overshoots).
    pub fn take(&mut self, amount: f64) {
        self.level = (self.level - amount).min(self.depth);
    }

    pub fn state(&self, now: Instant) -> BucketState {
        let share = (self.level / self.depth).clamp(0.0, 1.0);
        let reset = match self.refill {
            Refill::Bucket => secs((self.depth - self.level).max(0.0) * 60.0 / self.per_minute),
            Refill::Window if self.level >= self.depth => Duration::ZERO,
            Refill::Window => self.until_next_window(now),
        };
        BucketState {
            limit: self.per_minute as u64,
            remaining: (share * self.per_minute).floor() as u64,
            reset,
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

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn a_bucket_refills_continuously_up_to_its_period() {
        let t0 = Instant::now();
        let mut m = Meter::new(600, Refill::Bucket, Duration::from_secs(60), t0);
        assert!(m.fits(600.0, true) && !m.fits(601.0, true));
        m.take(600.0);
        assert_eq!(m.wait_for(100.0, t0), ms(10_000), "10 tokens a second");
        m.refill(t0 + ms(5_000));
        assert!(m.fits(50.0, true) && !m.fits(51.0, true));
        let s = m.state(t0 + ms(5_000));
        assert_eq!((s.limit, s.remaining, s.reset), (600, 50, ms(55_000)));
        m.refill(t0 + ms(600_000));
        assert_eq!(
            m.state(t0 + ms(600_000)).remaining,
            600,
            "never above the depth"
        );
        assert!(!m.fits(601.0, true));
        assert_eq!(m.wait_for(601.0, t0), Duration::from_secs(60), "never fits");
    }

    #[test]
    fn a_short_period_holds_only_its_share_and_reports_it_per_minute() {
        let t0 = Instant::now();
        let mut m = Meter::new(600, Refill::Bucket, Duration::from_secs(1), t0);
        assert!(m.fits(10.0, true));
        // Larger than the bucket but within the minute's limit: it goes while the bucket is full.
        assert!(m.fits(200.0, true) && !m.fits(601.0, true));
        m.take(5.0);
        assert!(!m.fits(6.0, true) && !m.fits(200.0, true));
        assert_eq!(
            m.wait_for(200.0, t0),
            ms(500),
            "until the bucket is full again"
        );
        assert_eq!(
            m.state(t0).remaining,
            300,
            "half the bucket: half the minute's limit"
        );
    }

    #[test]
    fn a_window_resets_at_its_end_only() {
        let t0 = Instant::now();
        let mut m = Meter::new(60, Refill::Window, Duration::from_secs(10), t0);
        m.take(10.0);
        m.refill(t0 + ms(9_999));
        assert!(!m.fits(1.0, true));
        assert_eq!(m.wait_for(1.0, t0 + ms(9_000)), ms(1_000));
        assert_eq!(m.state(t0 + ms(9_000)).reset, ms(1_000));
        m.refill(t0 + ms(10_000));
        assert!(m.fits(10.0, true));
    }

    #[test]
    fn a_charge_after_the_answer_overshoots_and_then_blocks() {
        let t0 = Instant::now();
        let mut m = Meter::new(100, Refill::Bucket, Duration::from_secs(60), t0);
        assert!(m.fits(0.0, false));
        m.take(150.0);
        assert!(!m.fits(0.0, false), "overspent: nothing is admitted");
        assert_eq!(m.state(t0).remaining, 0);
        m.take(-1000.0);
        assert_eq!(m.state(t0).remaining, 100, "a refund stops at the depth");
    }
}
