//! Stopping a run: the stop signal (no new request), the cancel (in-flight requests end as
//! `interrupted`, `cancel`), the fail-fast rule (`failfast`) and why the run stopped early.

use super::cancel::Cancel;
use super::failfast::{FailFast, Tripped};
use crate::model::{RequestRecord, StoppedBy};
use std::sync::Arc;
use tokio::sync::watch;

/// Stop/cancel signals shared by the runner and whoever handles Ctrl-C.
#[derive(Clone)]
pub struct Interrupt {
    stop: watch::Sender<u8>,
    /// Level 2 of `stop`, as the in-flight sends wait for it (`cancel`).
    pub(super) cancel: Arc<Cancel>,
    /// The fail-fast rule, when on (`failfast`), and why it stopped the run.
    fail_fast: Option<Arc<std::sync::Mutex<FailFast>>>,
    /// The signal that stopped the run, when one did (`stop_by_signal`).
    signal: Arc<std::sync::OnceLock<String>>,
}

impl Default for Interrupt {
    fn default() -> Self {
        Self::new()
    }
}

impl Interrupt {
    pub fn new() -> Self {
        Interrupt {
            stop: watch::channel(0).0,
            cancel: Arc::default(),
            fail_fast: None,
            signal: Arc::default(),
        }
    }
    /// Also stop when the first requests show the target cannot work (`failfast`).
    pub fn with_fail_fast(mut self) -> Self {
        self.fail_fast = Some(Arc::default());
        self
    }
    /// One finished request (warm-ups included), for the fail-fast rule.
    pub(super) fn observe(&self, record: &RequestRecord) {
        let Some(ff) = &self.fail_fast else { return };
        let tripped = ff.lock().is_ok_and(|mut g| g.observe(record).is_some());
        if tripped {
            self.stop();
        }
    }
    /// Why the run stopped early, when the fail-fast rule stopped it.
    pub fn tripped(&self) -> Option<Tripped> {
        self.fail_fast
            .as_ref()
            .and_then(|ff| ff.lock().ok().and_then(|g| g.tripped.clone()))
    }
    /// Why the run stopped before its plan ended: the fail-fast rule, else a signal; `None`
    /// while it has not stopped.
    pub fn stopped_by(&self) -> Option<StoppedBy> {
        if let Some(t) = self.tripped() {
            return Some(t.stopped_by());
        }
        self.is_stopped().then(|| StoppedBy::Interrupted {
            signal: self.signal.get().cloned(),
        })
    }
    /// Start no new request, because of the stop signal `name` (`SIGTERM`).
    pub fn stop_by_signal(&self, name: &str) {
        let _ = self.signal.set(name.to_string());
        self.stop();
    }
    /// Start no new request.
    pub fn stop(&self) {
        self.stop.send_if_modified(|v| {
            if *v < 1 {
                *v = 1;
                true
            } else {
                false
            }
        });
    }
    /// End in-flight requests now (they are recorded as `interrupted`).
    pub fn cancel(&self) {
        // Level 2 says so to whoever reads the stop signal; the sends wait on `cancel`.
        self.stop.send_replace(2);
        self.cancel.cancel();
    }
    pub fn is_stopped(&self) -> bool {
        *self.stop.borrow() >= 1
    }
    /// Returns once no new request may start (at once when that is already so).
    pub async fn stopped(&self) {
        let mut rx = self.stop.subscribe();
        let _ = rx.wait_for(|v| *v >= 1).await;
    }
    pub(super) fn subscribe(&self) -> watch::Receiver<u8> {
        self.stop.subscribe()
    }
}
