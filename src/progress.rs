//! Progress on stderr while a ladder runs: on a terminal, the live line (indicatif): step,
//! done/total, in flight, live P50 TTFT, errors, elapsed time and an ETA; when stderr is not a
//! terminal (a CI log), one plain line every 10 s with the same figures. Nothing with `--quiet`.

use crate::record::RequestRecord;
use crate::runner::Progress;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// How often a CI log gets a progress line.
pub const LOG_EVERY: Duration = Duration::from_secs(10);

/// Where progress goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Display {
    /// The live line on a terminal.
    Live,
    /// A plain line every `LOG_EVERY` (stderr is a file or a pipe).
    Log,
    Hidden,
}

impl Display {
    /// `Live` on a terminal, `Log` otherwise, `Hidden` with `quiet`.
    pub fn for_stderr(quiet: bool) -> Self {
        if quiet {
            Display::Hidden
        } else if std::io::IsTerminal::is_terminal(&std::io::stderr()) {
            Display::Live
        } else {
            Display::Log
        }
    }
}

pub struct LiveProgress {
    bar: ProgressBar,
    state: Arc<Mutex<State>>,
    /// Set to stop the log thread; the condvar wakes it at once.
    stop: Arc<(Mutex<bool>, Condvar)>,
    logger: Mutex<Option<std::thread::JoinHandle<()>>>,
}

struct State {
    label: String,
    done: u64,
    total: Option<u64>,
    errors: u64,
    in_flight: usize,
    ttfts: Vec<f64>,
    last_draw: Option<Instant>,
    started: Instant,
    run_done: u64,
    /// Measured requests the whole run plans (`None` when a step runs for a duration).
    planned: Option<u64>,
}

impl State {
    fn new(planned: Option<u64>) -> Self {
        State {
            label: String::new(),
            done: 0,
            total: None,
            errors: 0,
            in_flight: 0,
            ttfts: Vec::new(),
            last_draw: None,
            started: Instant::now(),
            run_done: 0,
            planned,
        }
    }

    fn line(&self) -> String {
        let p50 = crate::stats::quantile(&self.ttfts, 0.5)
            .map(|v| format!("{v:.0} ms"))
            .unwrap_or_else(|| "-".into());
        let total = self
            .total
            .map(|t| t.to_string())
            .unwrap_or_else(|| "?".into());
        let elapsed = self.started.elapsed();
        format!(
            "{}  {}/{}  in flight {}  P50 TTFT {}  errors {}  elapsed {}  ETA {}",
            self.label,
            self.done,
            total,
            self.in_flight,
            p50,
            self.errors,
            clock(elapsed),
            eta(elapsed, self.run_done, self.planned)
                .map_or_else(|| "?".into(), |d| format!("~{}", clock(d)))
        )
    }
}

/// Time left, from the pace so far: elapsed × remaining / done requests. `None` before the
/// first request or without a planned count. Steps at higher concurrency are usually faster
/// per request, so this errs long.
pub fn eta(elapsed: Duration, done: u64, planned: Option<u64>) -> Option<Duration> {
    let planned = planned?;
    if done == 0 {
        return None;
    }
    let left = planned.saturating_sub(done) as f64;
    Some(elapsed.mul_f64(left / done as f64))
}

/// `m:ss`, or `h:mm:ss` from an hour.
pub fn clock(d: Duration) -> String {
    let s = d.as_secs();
    if s >= 3600 {
        format!("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
    } else {
        format!("{}:{:02}", s / 60, s % 60)
    }
}

impl LiveProgress {
    /// `planned`: measured requests in the whole run, for the ETA.
    pub fn new(display: Display, planned: Option<u64>) -> Self {
        let target = if display == Display::Live {
            ProgressDrawTarget::stderr_with_hz(8)
        } else {
            ProgressDrawTarget::hidden()
        };
        let bar = ProgressBar::with_draw_target(None, target);
        bar.set_style(
            ProgressStyle::with_template("{spinner} {msg}")
                .unwrap_or_else(|_| ProgressStyle::default_spinner()),
        );
        bar.enable_steady_tick(Duration::from_millis(125));
        let state = Arc::new(Mutex::new(State::new(planned)));
        let stop = Arc::new((Mutex::new(false), Condvar::new()));
        let logger = (display == Display::Log).then(|| {
            let (state, stop) = (state.clone(), stop.clone());
            std::thread::spawn(move || log_lines(&state, &stop))
        });
        LiveProgress {
            bar,
            state,
            stop,
            logger: Mutex::new(logger),
        }
    }

    pub fn finish(&self) {
        self.bar.finish_and_clear();
        let (flag, wake) = &*self.stop;
        if let Ok(mut f) = flag.lock() {
            *f = true;
            wake.notify_all();
        }
        if let Some(h) = self.logger.lock().ok().and_then(|mut l| l.take()) {
            let _ = h.join();
        }
    }

    fn redraw(&self, s: &mut State, force: bool) {
        let now = Instant::now();
        if !force
            && s.last_draw
                .is_some_and(|t| now - t < Duration::from_millis(100))
        {
            return;
        }
        s.last_draw = Some(now);
        self.bar.set_message(s.line());
    }
}

/// The CI log's progress: a line every `LOG_EVERY` until `finish`.
fn log_lines(state: &Mutex<State>, stop: &(Mutex<bool>, Condvar)) {
    let (flag, wake) = stop;
    let Ok(mut stopped) = flag.lock() else { return };
    loop {
        let Ok((guard, timeout)) = wake.wait_timeout(stopped, LOG_EVERY) else {
            return;
        };
        stopped = guard;
        if *stopped {
            return;
        }
        if timeout.timed_out() {
            if let Ok(s) = state.lock() {
                if !s.label.is_empty() {
                    eprintln!("progress: {}", s.line());
                }
            }
        }
    }
}

impl Progress for LiveProgress {
    fn step_started(
        &self,
        model: &str,
        step: u32,
        steps: u32,
        concurrency: u32,
        total: Option<u64>,
    ) {
        if let Ok(mut s) = self.state.lock() {
            s.label = format!("{model} · step {step}/{steps} · {concurrency} streams");
            s.total = total;
            s.done = 0;
            s.errors = 0;
            s.in_flight = 0;
            s.ttfts.clear();
            self.redraw(&mut s, true);
        }
    }

    fn record(&self, record: &RequestRecord) {
        if let Ok(mut s) = self.state.lock() {
            s.done += 1;
            s.run_done += 1;
            if record.is_ok() {
                if let Some(t) = record.ttft_ms {
                    s.ttfts.push(t);
                }
            } else {
                s.errors += 1;
            }
            self.redraw(&mut s, false);
        }
    }

    fn in_flight(&self, n: usize) {
        if let Ok(mut s) = self.state.lock() {
            s.in_flight = n;
        }
    }

    fn step_finished(&self, _model: &str, _step: u32) {
        if let Ok(mut s) = self.state.lock() {
            self.redraw(&mut s, true);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eta_follows_the_pace_so_far() {
        let e = eta(Duration::from_secs(30), 100, Some(400)).unwrap();
        assert_eq!(e, Duration::from_secs(90));
        assert_eq!(eta(Duration::from_secs(30), 0, Some(400)), None);
        assert_eq!(eta(Duration::from_secs(30), 10, None), None);
        assert_eq!(
            eta(Duration::from_secs(30), 500, Some(400)),
            Some(Duration::ZERO)
        );
        assert_eq!(clock(Duration::from_secs(75)), "1:15");
        assert_eq!(clock(Duration::from_secs(3725)), "1:02:05");
    }
}
