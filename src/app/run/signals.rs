//! Ctrl-C and SIGTERM during a run: the first stops new requests and keeps what was collected;
//! signals that arrive together with it are the same stop; a later one cancels in-flight
//! requests at once (still writing everything), a third exits at once.

use crate::error::ExitCode;
use crate::runner::Interrupt;
use anyhow::{Context, Result};
use std::time::Duration;

/// Ctrl-C and SIGTERM as one stream of "please stop" signals. Registered synchronously, before
/// any traffic, so a signal that arrives early is never lost to the default handler.
pub(super) struct StopSignals {
    #[cfg(unix)]
    interrupt: tokio::signal::unix::Signal,
    #[cfg(unix)]
    terminate: tokio::signal::unix::Signal,
}

impl StopSignals {
    pub(super) fn register() -> Result<Self> {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{signal, SignalKind};
            Ok(StopSignals {
                interrupt: signal(SignalKind::interrupt()).context("cannot handle SIGINT")?,
                terminate: signal(SignalKind::terminate()).context("cannot handle SIGTERM")?,
            })
        }
        #[cfg(not(unix))]
        {
            Ok(StopSignals {})
        }
    }

    /// The next stop signal that arrives at least `together` (see [`StopTiming::together`]) after the last
    /// one; the ones in between belong to the same stop and are dropped.
    async fn next_deliberate(&mut self, together: Duration) {
        let last = tokio::time::Instant::now();
        loop {
            self.next().await;
            if last.elapsed() >= together {
                return;
            }
        }
    }

    /// The next stop signal, by name.
    async fn next(&mut self) -> &'static str {
        #[cfg(unix)]
        {
            tokio::select! {
                _ = self.interrupt.recv() => "SIGINT",
                _ = self.terminate.recv() => "SIGTERM",
            }
        }
        #[cfg(not(unix))]
        {
            let _ = tokio::signal::ctrl_c().await;
            "Ctrl-C"
        }
    }
}

/// How a run's stop signals are timed, read from the environment once (docs/running.md).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct StopTiming {
    /// Signals closer together than this are one stop: 1 s, or `LADDER_STOP_WINDOW` (a
    /// duration such as `250ms`). GNU `timeout`, CI runners and container stops signal the
    /// process *and* its process group, so one stop arrives as two or three signals (SIGTERM
    /// twice, or SIGINT and SIGTERM) within milliseconds; only a later, deliberate one means
    /// "faster".
    pub together: Duration,
    /// How long in-flight requests get after the first stop: 2 s, or `LADDER_STOP_GRACE` (a
    /// duration such as `10s`).
    pub grace: Duration,
}

impl StopTiming {
    pub(super) fn from_env(var: impl Fn(&str) -> Option<String>) -> StopTiming {
        let duration = |name: &str, default: Duration| {
            var(name)
                .and_then(|v| crate::util::duration::parse(&v).ok())
                .unwrap_or(default)
        };
        StopTiming {
            together: duration("LADDER_STOP_WINDOW", Duration::from_secs(1)),
            grace: duration("LADDER_STOP_GRACE", Duration::from_secs(2)),
        }
    }
}

/// First stop: no new requests, in-flight ones are cancelled after a grace period, everything
/// collected is written. A second, deliberate stop (at least [`StopTiming::together`] later) cancels the
/// in-flight requests at once, and still everything collected is written (summary, findings,
/// the `--against` document). A third exits at once (files are written atomically, so none is
/// left half-written).
pub(super) fn install_interrupt(
    mut signals: StopSignals,
    interrupt: Interrupt,
    timing: StopTiming,
    quiet: bool,
) {
    let StopTiming { grace, together } = timing;
    tokio::spawn(async move {
        let signal = signals.next().await;
        interrupt.stop_by_signal(signal);
        let cancel = interrupt.clone();
        tokio::spawn(async move {
            tokio::time::sleep(grace).await;
            cancel.cancel();
        });
        if !quiet {
            let later = if together == Duration::from_secs(1) {
                "a second".to_string()
            } else {
                crate::util::duration::format(together)
            };
            eprintln!(
                "\ninterrupted: no new requests; in-flight ones get {}, then everything collected is written (Ctrl-C again, {later} or more later, to cancel them now)",
                crate::util::duration::format(grace)
            );
        }
        signals.next_deliberate(together).await;
        // Said before cancelling: once cancelled, the run may write its files and exit before
        // this task runs again (it did on a loaded machine, and the notice was lost).
        if !quiet {
            eprintln!(
                "interrupted again: in-flight requests cancelled now; writing what was collected (once more to exit without writing)"
            );
        }
        interrupt.cancel();
        signals.next_deliberate(together).await;
        eprintln!("interrupted three times: exiting now");
        std::process::exit(i32::from(ExitCode::Error.code()));
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stop_timing_reads_its_two_variables_and_defaults_otherwise() {
        let none = StopTiming::from_env(|_| None);
        assert_eq!(none.together, Duration::from_secs(1));
        assert_eq!(none.grace, Duration::from_secs(2));
        let set = StopTiming::from_env(|n| match n {
            "LADDER_STOP_WINDOW" => Some("0s".into()),
            "LADDER_STOP_GRACE" => Some("10s".into()),
            _ => None,
        });
        assert_eq!(set.together, Duration::ZERO);
        assert_eq!(set.grace, Duration::from_secs(10));
        let bad = StopTiming::from_env(|_| Some("soon".into()));
        assert_eq!(bad, none);
    }
}
