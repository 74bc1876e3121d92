//! Progress on stderr while a ladder runs: on a terminal, the live line (indicatif): step,
//! done/total, in flight, live P50 TTFT, errors, elapsed time and an ETA; when stderr is not a
//! terminal (a CI log), one plain line every 10 s with the same figures, and one as each step
//! starts (`progress: sim-model · step 2/4 · 10 streams · started`: a CI log shows where each
//! step began, and tests wait for it instead of guessing). Nothing with `--quiet`.

use crate::model::RequestRecord;
use crate::runner::Progress;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// What the ETA knows of the run ahead.
#[derive(Debug, Clone, PartialEq)]
pub enum EtaPlan {
    /// Closed loop: the pace so far over this many planned measured requests.
    Pace(Option<u64>),
    /// Every step's planned seconds, in run order (model × step), and the pause between steps:
    /// an open-loop step lasts its arrivals / the rate whatever the server does, and a step with
    /// a duration budget lasts its duration, so the time ahead is known.
    Schedule { steps_s: Vec<f64>, pause_s: f64 },
}

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
    /// Plain lines (a CI log): also one as each step starts.
    log: bool,
    /// The live line is drawn (a terminal): only then is a line built as records arrive.
    live: bool,
}

/// How often the live line may change: faster than a person reads it is CPU spent on nothing
/// (each draw builds the line and takes the P50 of the step's TTFTs so far).
const REDRAW_EVERY: Duration = Duration::from_millis(250);

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
    plan: EtaPlan,
    /// Steps started so far, and when the current one started.
    steps_started: usize,
    step_started: Instant,
}

impl State {
    fn new(plan: EtaPlan) -> Self {
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
            plan,
            steps_started: 0,
            step_started: Instant::now(),
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
            self.eta()
                .map_or_else(|| "?".into(), |d| format!("~{}", clock(d)))
        )
    }
}

impl State {
    fn eta(&self) -> Option<Duration> {
        match &self.plan {
            EtaPlan::Pace(planned) => eta(self.started.elapsed(), self.run_done, *planned),
            EtaPlan::Schedule { steps_s, pause_s } => Some(eta_on_schedule(
                steps_s,
                *pause_s,
                self.steps_started.checked_sub(1)?,
                self.step_started.elapsed(),
            )),
        }
    }
}

/// Time left on a known schedule: the rest of step `current` (counted from 0; `in_step` into
/// it, at least nothing), the steps after it and the pauses before them. A step's tail (its
/// last requests' latency) counts only as far as the plan knew it.
pub fn eta_on_schedule(
    steps_s: &[f64],
    pause_s: f64,
    current: usize,
    in_step: Duration,
) -> Duration {
    let rest = steps_s
        .get(current)
        .map_or(0.0, |s| (s - in_step.as_secs_f64()).max(0.0));
    let later = steps_s.get(current + 1..).unwrap_or(&[]);
    let secs = rest + later.iter().sum::<f64>() + pause_s * later.len() as f64;
    Duration::from_secs_f64(secs.max(0.0))
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
    /// `plan`: what the ETA knows of the run ahead.
    pub fn new(display: Display, plan: EtaPlan) -> Self {
        let live = display == Display::Live;
        let target = if live {
            ProgressDrawTarget::stderr_with_hz(4)
        } else {
            ProgressDrawTarget::hidden()
        };
        let bar = ProgressBar::with_draw_target(None, target);
        bar.set_style(
            ProgressStyle::with_template("{spinner} {msg}")
                .unwrap_or_else(|_| ProgressStyle::default_spinner()),
        );
        // The spinner's ticker is a thread waking on its own: only for a line someone sees.
        if live {
            bar.enable_steady_tick(REDRAW_EVERY);
        }
        let state = Arc::new(Mutex::new(State::new(plan)));
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
            log: display == Display::Log,
            live,
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
        if !self.live {
            return;
        }
        let now = Instant::now();
        if !force && s.last_draw.is_some_and(|t| now - t < REDRAW_EVERY) {
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
    fn step_started(&self, model: &str, step: u32, steps: u32, label: &str, total: Option<u64>) {
        if let Ok(mut s) = self.state.lock() {
            s.label = format!("{model} · step {step}/{steps} · {label}");
            s.steps_started += 1;
            s.step_started = Instant::now();
            s.total = total;
            s.done = 0;
            s.errors = 0;
            s.in_flight = 0;
            s.ttfts.clear();
            if self.log {
                eprintln!("progress: {} · started", s.label);
            }
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
        // A rate ladder of 120 arrivals at 5, 10, 20, 40 req/s with 2 s pauses, 4 s into step 2:
        // 8 s of it left, then 6 s and 3 s, and two pauses.
        let steps = [24.0, 12.0, 6.0, 3.0];
        let left = eta_on_schedule(&steps, 2.0, 1, Duration::from_secs(4));
        assert_eq!(left, Duration::from_secs(8 + 6 + 3 + 4));
        // An overrunning step counts as ending now.
        let left = eta_on_schedule(&steps, 0.0, 3, Duration::from_secs(9));
        assert_eq!(left, Duration::ZERO);
        assert_eq!(clock(Duration::from_secs(3725)), "1:02:05");
    }
}
