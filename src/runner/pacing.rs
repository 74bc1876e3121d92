//! When an open-loop step's requests are due: the step's arrivals (its schedule cut by its
//! budget) handed to the dispatcher one at a time, never before their time, by one of two clocks.
//! A real run paces on a dedicated OS thread that sleeps with the kernel's high-resolution timers
//! and ends each wait with a short spin, so the runtime's threads sleep between sends (tokio's
//! timer fires on millisecond ticks: pacing on it meant busy-yielding through the last 1.5 ms
//! before every send, which at 2,000 req/s kept the client runnable all the time and exposed it
//! to whole scheduler slices of preemption; benches/RESULTS.md, "Open-loop rate mode"). Runs in
//! pretend time (`tokio::time::pause`: the runner's tests, `make calibrate`) pace on tokio's
//! timer, which follows the paused clock; a thread sleeping in real time would not.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{mpsc, oneshot};
use tokio::time::Instant;

/// Which clock paces open-loop steps. The binary uses [`Pacing::Thread`] (the default); runs on
/// a paused tokio clock must use [`Pacing::Tokio`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Pacing {
    /// A dedicated thread sleeping in real time (high-resolution timers, then a short spin).
    #[default]
    Thread,
    /// tokio's timer: follows `tokio::time::pause`, precise to its millisecond tick plus a
    /// cooperative busy-yield before each send.
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
    clock: Clock,
}

enum Clock {
    Tokio(Arrivals),
    Thread {
        due: mpsc::UnboundedReceiver<(u64, Instant)>,
        /// Asks the thread to end (set, then the thread is unparked).
        stop: Arc<AtomicBool>,
        thread: std::thread::Thread,
        /// Resolves (with an error: the sender is dropped) when the thread has ended.
        ended: Option<oneshot::Receiver<()>>,
    },
}

impl Pacer {
    /// Starts pacing `arrivals`. When no thread can be started, paces on tokio's timer.
    pub(super) fn start(pacing: Pacing, arrivals: Arrivals) -> Pacer {
        let clock = match pacing {
            Pacing::Tokio => Clock::Tokio(arrivals),
            Pacing::Thread => spawn_thread(arrivals),
        };
        Pacer { clock }
    }

    /// The next arrival once it is due (never before its time); `None` when the step has no
    /// more. Cancel-safe on the thread's clock (an arrival not yet taken stays queued); on
    /// tokio's, an arrival whose wait was cancelled is lost, which is what a stop wants.
    pub(super) async fn next(&mut self) -> Option<(u64, Instant)> {
        match &mut self.clock {
            Clock::Tokio(arrivals) => {
                let (n, at) = arrivals.next()?;
                wait_until(at).await;
                Some((n, at))
            }
            Clock::Thread { due, .. } => due.recv().await,
        }
    }

    /// Stops pacing and waits (without blocking a runtime thread) until the thread has ended.
    pub(super) async fn finish(mut self) {
        self.signal_stop();
        if let Clock::Thread { ended, .. } = &mut self.clock {
            if let Some(ended) = ended.take() {
                let _ = ended.await;
            }
        }
    }

    fn signal_stop(&self) {
        if let Clock::Thread { stop, thread, .. } = &self.clock {
            stop.store(true, Ordering::Release);
            thread.unpark();
        }
    }
}

impl Drop for Pacer {
    /// A dispatcher dropped mid-step (its task aborted) still ends the thread.
    fn drop(&mut self) {
        self.signal_stop();
    }
}

fn spawn_thread(arrivals: Arrivals) -> Clock {
    let (tx, due) = mpsc::unbounded_channel();
    let (ended_tx, ended) = oneshot::channel::<()>();
    let stop = Arc::new(AtomicBool::new(false));
    let stop_thread = Arc::clone(&stop);
    // The thread takes the arrivals; when it cannot start, they are taken back.
    let slot = Arc::new(std::sync::Mutex::new(Some(arrivals)));
    let thread_slot = Arc::clone(&slot);
    let spawned = std::thread::Builder::new()
        .name("ladder-pacing".into())
        .spawn(move || {
            // Dropped when the thread ends, however it ends: `finish` then returns.
            let _ended = ended_tx;
            let arrivals = thread_slot.lock().ok().and_then(|mut a| a.take());
            if let Some(arrivals) = arrivals {
                pace(arrivals, &tx, &stop_thread);
            }
        });
    match spawned {
        Ok(handle) => Clock::Thread {
            due,
            stop,
            thread: handle.thread().clone(),
            ended: Some(ended),
        },
        Err(_) => match slot.lock().ok().and_then(|mut a| a.take()) {
            Some(arrivals) => Clock::Tokio(arrivals),
            None => Clock::Tokio(Arrivals::new(
                Box::new(std::iter::empty()),
                Instant::now(),
                None,
                None,
            )),
        },
    }
}

/// The thread's sleep ends this long before a send time; the rest is spun, so the kernel's
/// wake-up latency and timer slack do not make the send late. At 2,000 req/s this spin costs
/// at most 2,000 × 80 µs = 16% of a core, against the 85% the busy-yield cost.
const THREAD_SPIN: Duration = Duration::from_micros(80);

/// The pacing thread: hands each arrival to the dispatcher once it is due; ends when the
/// arrivals end, when it is asked to stop, or when the dispatcher is gone.
fn pace(arrivals: Arrivals, tx: &mpsc::UnboundedSender<(u64, Instant)>, stop: &AtomicBool) {
    precise_timers();
    for (n, at) in arrivals {
        if !sleep_until(at.into_std(), stop) || tx.send((n, at)).is_err() {
            return;
        }
    }
}

/// Sleeps until `at` (parked with a timeout, then spinning the last [`THREAD_SPIN`]); `false`
/// when asked to stop first. An unpark (the stop signal) ends the park at once, so a far-away
/// arrival (a long gap in a replayed trace) never keeps the thread after its step.
fn sleep_until(at: std::time::Instant, stop: &AtomicBool) -> bool {
    loop {
        if stop.load(Ordering::Acquire) {
            return false;
        }
        let now = std::time::Instant::now();
        if now >= at {
            return true;
        }
        let left = at - now;
        if left > THREAD_SPIN {
            std::thread::park_timeout(left - THREAD_SPIN);
        } else {
            while std::time::Instant::now() < at {
                std::hint::spin_loop();
            }
            return true;
        }
    }
}

/// Asks the kernel to wake this thread's timed sleeps on time: Linux may defer a normal
/// thread's timer by up to its "timer slack" (50 µs by default) to batch wake-ups; 1 ns turns
/// that off for this thread only.
fn precise_timers() {
    #[cfg(target_os = "linux")]
    // SAFETY: PR_SET_TIMERSLACK takes an integer argument and changes only the calling thread's
    // timer slack; no memory is passed.
    unsafe {
        libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong, 0, 0, 0);
    }
}

/// tokio's timer wakes a task on millisecond ticks; the last stretch before a send time is
/// spent yielding (other tasks keep running) so sends go out within microseconds of schedule.
const SPIN: Duration = Duration::from_micros(1500);

/// Waits until `at` on tokio's timer: a timer sleep for most of the wait, then cooperative
/// yielding. The yielding is bounded in real time, so on a paused test clock the final timer
/// sleep advances time.
async fn wait_until(at: Instant) {
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

    /// Collects every arrival of `pacer` with the real time it was handed over.
    async fn collect(mut pacer: Pacer) -> Vec<(u64, Instant, std::time::Instant)> {
        let mut got = Vec::new();
        while let Some((n, at)) = pacer.next().await {
            got.push((n, at, std::time::Instant::now()));
        }
        pacer.finish().await;
        got
    }

    #[tokio::test]
    async fn the_thread_hands_out_every_arrival_in_order_and_none_early() {
        // 200 arrivals 0.25 ms apart (4,000 req/s), with a few equal and a few longer gaps.
        let mut t: Vec<f64> = (0..200).map(|i| f64::from(i) * 0.000_25).collect();
        t[50] = t[49];
        t[120..].iter_mut().for_each(|x| *x += 0.02);
        let arrivals = Arrivals::new(times(t), Instant::now(), None, None);
        let got = collect(Pacer::start(Pacing::Thread, arrivals)).await;
        assert_eq!(
            got.iter().map(|g| g.0).collect::<Vec<_>>(),
            (0..200).collect::<Vec<_>>()
        );
        for (n, at, handed) in &got {
            assert!(*handed >= at.into_std(), "arrival {n} was handed out early");
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

    /// A long gap in a trace: stopping while the thread waits an hour ends it at once, whether
    /// the step stops it (`finish`) or its dispatcher is dropped.
    #[tokio::test]
    async fn the_thread_ends_when_stopped_during_a_far_away_wait() {
        for finish in [true, false] {
            let arrivals = Arrivals::new(times(vec![0.0, 3600.0]), Instant::now(), None, None);
            let mut pacer = Pacer::start(Pacing::Thread, arrivals);
            assert_eq!(pacer.next().await.map(|a| a.0), Some(0));
            let Clock::Thread { ended, .. } = &mut pacer.clock else {
                panic!("not paced on a thread");
            };
            let ended = ended.take().unwrap();
            tokio::time::sleep(Duration::from_millis(20)).await;
            if finish {
                pacer.finish().await;
            } else {
                drop(pacer);
            }
            let waited = tokio::time::timeout(Duration::from_secs(30), ended).await;
            assert!(
                waited.is_ok(),
                "the pacing thread still waits (finish: {finish})"
            );
        }
    }
}
