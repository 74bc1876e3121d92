//! When an open-loop step's requests are due: the step's arrivals (its schedule cut by its
//! budget) handed to the dispatcher one at a time, never before their time, on one of two clocks.
//! A real run sleeps on a timerfd (Linux's high-resolution timers, through the runtime's event
//! loop) until just before each send time and yields the last few tens of microseconds; tokio's
//! own timer fires on millisecond ticks, and pacing on it meant busy-yielding through the last
//! 1.5 ms before every send, 85% of a core at 2,000 req/s (benches/RESULTS.md, "Open-loop rate
//! mode", which also says why a separate pacing thread was tried and dropped). Runs in pretend
//! time (`tokio::time::pause`: the runner's tests, `make calibrate`) pace on tokio's timer, which
//! follows the paused clock; a kernel timer would not.

use std::time::Duration;
use tokio::time::Instant;

/// Which clock paces open-loop steps. The binary uses [`Pacing::Precise`] (the default); runs on
/// a paused tokio clock must use [`Pacing::Tokio`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Pacing {
    /// A kernel high-resolution timer (a timerfd on the runtime's event loop, Linux), then a
    /// short cooperative spin; elsewhere, or without a timerfd, as [`Pacing::Tokio`].
    #[default]
    Precise,
    /// tokio's timer: follows `tokio::time::pause`; precise to its millisecond tick, then a
    /// cooperative busy-yield of up to 1.5 ms before each send.
    Tokio,
}

/// The arrivals of one step: (request number, due time), in order, as many as the budget
/// allows (a request limit, or no arrival at or after the step's end).
pub(super) struct Arrivals {
    times: Box<dyn Iterator<Item = f64> + Send>,
    start: Instant,
    next: u64,
    limit: Option<u64>,
    end: Option<Instant>,
}

impl Arrivals {
    /// `times` in seconds after `start`, increasing.
    pub(super) fn new(
        times: Box<dyn Iterator<Item = f64> + Send>,
        start: Instant,
        limit: Option<u64>,
        end: Option<Instant>,
    ) -> Arrivals {
        Arrivals {
            times,
            start,
            next: 0,
            limit,
            end,
        }
    }
}

impl Iterator for Arrivals {
    type Item = (u64, Instant);
    fn next(&mut self) -> Option<(u64, Instant)> {
        if self.limit.is_some_and(|l| self.next >= l) {
            return None;
        }
        let at = self.start + Duration::from_secs_f64(self.times.next()?);
        if self.end.is_some_and(|e| at >= e) {
            return None;
        }
        let n = self.next;
        self.next += 1;
        Some((n, at))
    }
}

/// Hands out a step's arrivals as they fall due, on the clock its [`Pacing`] names.
pub(super) struct Pacer {
    arrivals: Arrivals,
    #[cfg(target_os = "linux")]
    timer: Option<super::timerfd::TimerFd>,
}

impl Pacer {
    /// Needs the runtime's I/O driver for [`Pacing::Precise`] (falls back to tokio's timer).
    pub(super) fn start(pacing: Pacing, arrivals: Arrivals) -> Pacer {
        #[cfg(not(target_os = "linux"))]
        let _ = pacing;
        Pacer {
            arrivals,
            #[cfg(target_os = "linux")]
            timer: match pacing {
                Pacing::Precise => super::timerfd::TimerFd::new().ok(),
                Pacing::Tokio => None,
            },
        }
    }

    /// The next arrival once it is due (never before its time); `None` when the step has no
    /// more. An arrival whose wait is cancelled is lost, which is what a stop wants.
    pub(super) async fn next(&mut self) -> Option<(u64, Instant)> {
        let (n, at) = self.arrivals.next()?;
        #[cfg(target_os = "linux")]
        if let Some(timer) = &self.timer {
            let now = Instant::now();
            let slept = match at.checked_duration_since(now + TIMER_SPIN) {
                Some(d) => timer.sleep(d).await.is_ok(),
                None => true,
            };
            if slept {
                while Instant::now() < at {
                    tokio::task::yield_now().await;
                }
                return Some((n, at));
            }
        }
        wait_until(at).await;
        Some((n, at))
    }
}

/// The timerfd's sleep ends this long before a send time and the rest is yielded (other tasks
/// keep running), so the runtime thread's wake-up latency does not make the send late: at
/// 2,000 req/s at most 2,000 × 60 µs = 12% of a core.
#[cfg(target_os = "linux")]
const TIMER_SPIN: Duration = Duration::from_micros(60);

/// tokio's timer wakes a task on millisecond ticks; the last stretch before a send time is
/// spent yielding (other tasks keep running) so sends go out within microseconds of schedule.
const SPIN: Duration = Duration::from_micros(1500);

/// Waits until `at` on tokio's timer: a timer sleep for most of the wait, then cooperative
/// yielding. The yielding is bounded in real time, so on a paused test clock the final timer
/// sleep advances time. Also how an agent trace's later turn waits for its gap (`open_loop`).
pub(super) async fn wait_until(at: Instant) {
    let now = Instant::now();
    if at > now + SPIN {
        tokio::time::sleep_until(at - SPIN).await;
    }
    let spin_start = std::time::Instant::now();
    while Instant::now() < at {
        if spin_start.elapsed() > SPIN * 2 {
            tokio::time::sleep_until(at).await;
            break;
        }
        tokio::task::yield_now().await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn times(t: Vec<f64>) -> Box<dyn Iterator<Item = f64> + Send> {
        Box::new(t.into_iter())
    }

    #[test]
    fn the_budget_cuts_the_arrivals() {
        let start = Instant::now();
        let ms = Duration::from_millis;
        let all: Vec<_> =
            Arrivals::new(times(vec![0.001, 0.002, 0.003]), start, None, None).collect();
        assert_eq!(
            all,
            vec![(0, start + ms(1)), (1, start + ms(2)), (2, start + ms(3))]
        );
        let limited = Arrivals::new(times(vec![0.001, 0.002, 0.003]), start, Some(2), None);
        assert_eq!(limited.map(|a| a.0).collect::<Vec<_>>(), vec![0, 1]);
        // Nothing at or after the end of a duration budget.
        let timed = Arrivals::new(
            times(vec![0.001, 0.002, 0.003]),
            start,
            None,
            Some(start + ms(2)),
        );
        assert_eq!(timed.map(|a| a.0).collect::<Vec<_>>(), vec![0]);
    }

    #[tokio::test]
    async fn precise_pacing_hands_out_every_arrival_in_order_and_none_early() {
        // 200 arrivals 0.25 ms apart (4,000 req/s), with equal, past and longer gaps.
        let mut t: Vec<f64> = (0..200).map(|i| f64::from(i) * 0.000_25).collect();
        t[50] = t[49];
        t[120..].iter_mut().for_each(|x| *x += 0.02);
        let arrivals = Arrivals::new(times(t), Instant::now(), None, None);
        let mut pacer = Pacer::start(Pacing::Precise, arrivals);
        #[cfg(target_os = "linux")]
        assert!(
            pacer.timer.is_some(),
            "paced on the timerfd, not tokio's timer"
        );
        let mut got = Vec::new();
        while let Some((n, at)) = pacer.next().await {
            got.push((n, at, Instant::now()));
        }
        assert_eq!(
            got.iter().map(|g| g.0).collect::<Vec<_>>(),
            (0..200).collect::<Vec<_>>()
        );
        for (n, at, handed) in &got {
            assert!(handed >= at, "arrival {n} was handed out early");
        }
    }

    #[tokio::test(start_paused = true)]
    async fn tokio_pacing_follows_the_paused_clock() {
        let start = Instant::now();
        let arrivals = Arrivals::new(times(vec![10.0, 3600.0]), start, None, None);
        let mut pacer = Pacer::start(Pacing::Tokio, arrivals);
        assert_eq!(pacer.next().await.map(|a| a.0), Some(0));
        assert!(Instant::now() >= start + Duration::from_secs(10));
        assert_eq!(pacer.next().await.map(|a| a.0), Some(1));
        // An hour of pretend time, not of real time.
        assert!(Instant::now() >= start + Duration::from_secs(3600));
        assert_eq!(pacer.next().await, None);
    }
}
