//! Ctrl-C and SIGTERM during a run: the first stops new requests and keeps what was collected,
//! the second exits at once.

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

    async fn next(&mut self) {
        #[cfg(unix)]
        {
            tokio::select! {
                _ = self.interrupt.recv() => {}
                _ = self.terminate.recv() => {}
            }
        }
        #[cfg(not(unix))]
        {
            let _ = tokio::signal::ctrl_c().await;
        }
    }
}

/// First signal: no new requests, in-flight ones are cancelled after a grace period, everything
/// collected is written. Second signal: exit at once (files are written atomically, so none is
/// left half-written).
pub(super) fn install_interrupt(mut signals: StopSignals, interrupt: Interrupt, quiet: bool) {
    const GRACE: Duration = Duration::from_secs(2);
    tokio::spawn(async move {
        signals.next().await;
        interrupt.stop();
        let cancel = interrupt.clone();
        tokio::spawn(async move {
            tokio::time::sleep(GRACE).await;
            cancel.cancel();
        });
        if !quiet {
            eprintln!(
                "\ninterrupted: no new requests; in-flight ones get {}s, then everything collected is written (Ctrl-C again to quit at once)",
                GRACE.as_secs()
            );
        }
        signals.next().await;
        eprintln!("interrupted twice: exiting now");
        std::process::exit(i32::from(ExitCode::Error.code()));
    });
}
