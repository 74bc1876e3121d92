//! The live progress line on stderr (indicatif): step, done/total, in flight, live P50 TTFT,
//! errors. Hidden when stderr is not a terminal or with `--quiet`.

use crate::record::RequestRecord;
use crate::runner::Progress;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::sync::Mutex;
use std::time::{Duration, Instant};

pub struct LiveProgress {
    bar: ProgressBar,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    label: String,
    done: u64,
    total: Option<u64>,
    errors: u64,
    in_flight: usize,
    ttfts: Vec<f64>,
    last_draw: Option<Instant>,
}

impl LiveProgress {
    pub fn new(visible: bool) -> Self {
        let target = if visible {
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
        LiveProgress {
            bar,
            state: Mutex::new(State::default()),
        }
    }

    pub fn finish(&self) {
        self.bar.finish_and_clear();
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
        let p50 = crate::stats::quantile(&s.ttfts, 0.5)
            .map(|v| format!("{v:.0} ms"))
            .unwrap_or_else(|| "-".into());
        let total = s.total.map(|t| t.to_string()).unwrap_or_else(|| "?".into());
        self.bar.set_message(format!(
            "{}  {}/{}  in flight {}  P50 TTFT {}  errors {}",
            s.label, s.done, total, s.in_flight, p50, s.errors
        ));
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
            *s = State {
                label: format!("{model} · step {step}/{steps} · {concurrency} streams"),
                total,
                ..State::default()
            };
            self.redraw(&mut s, true);
        }
    }

    fn record(&self, record: &RequestRecord) {
        if let Ok(mut s) = self.state.lock() {
            s.done += 1;
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
