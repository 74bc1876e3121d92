//! What every sender of a run shares: the backend, the retry policy, the redactor, the run's
//! start, request ids, the count of requests in flight, the progress display, the clock
//! open-loop steps are paced on and a test's ceiling on the requests in flight.

use super::pacing::Pacing;
use super::sink::Progress;
use crate::client::request_id::RequestIds;
use crate::model::RequestRecord;
use crate::scenario::RetryPolicy;
use crate::util::redact::Redactor;
use std::sync::atomic::{AtomicU64, AtomicUsize};
use std::sync::Arc;
use tokio::time::Instant;

/// Everything a worker needs, shared.
pub(super) struct Shared<B> {
    pub(super) backend: Arc<B>,
    pub(super) retry: RetryPolicy,
    pub(super) redactor: Redactor,
    pub(super) run_start: Instant,
    pub(super) ids: RequestIds,
    pub(super) next_id: AtomicU64,
    pub(super) in_flight: AtomicUsize,
    pub(super) progress: Arc<dyn Progress>,
    /// The clock open-loop steps are paced on.
    pub(super) pacing: Pacing,
    /// How each step's workload is chosen (`workload::for_step`, or a test's own kind).
    pub(super) workloads: super::workload::Choose,
    /// A test's ceiling on the requests in flight (`Schedule::max_in_flight`).
    pub(super) ceiling: Option<tokio::sync::Semaphore>,
}

impl<B> Shared<B> {
    /// A recorded request ended: shown as progress; returns when it ended (ms since the run's
    /// start), which travels with it to the sink.
    pub(super) fn ended(&self, rec: &RequestRecord) -> f64 {
        let ended_ms = self.run_start.elapsed().as_secs_f64() * 1000.0;
        self.progress.record(rec);
        ended_ms
    }
}
